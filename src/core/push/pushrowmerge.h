// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"
#include "core/moe/configname.h"
#include "core/moe/kernelconfig.h"
#include "core/push/pushrecord.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// What a push does to the file already at its target, row by row (issue 20, items 3 and 4), from the
// agent's `merge` object of a `diff` / `installed` event (remote_agent/PROTOCOL.md): a row is replaced only
// where the run measured the new config faster than that file's own row; unmeasured rows are kept. Also
// which other K's read the same file (a file name has no K), and the folder's files of sibling device
// names that the server never reads.
struct PushRowMerge {
    enum class Decision { Kept, Replaced, Added, KeptUnmeasured, NotAdded, Unknown };
    struct Row {
        int m = 0;
        Decision decision = Decision::Unknown;
        std::optional<double> gain; // the head-to-head's default / tuned median
        std::optional<double> defaultUs;
        std::optional<double> tunedUs;
        int rounds = 0;
        QString h2hDecision; // the head-to-head's: "tuned_faster", "default_fastest", "tie_default_kept", ...
        std::optional<KernelConfig> oldConfig;
        std::optional<KernelConfig> newConfig;
        QString note;
        QList<int> unmeasuredK; // other K's reading the file, for rows this push changes
        int servesFrom = 0;     // Added: the M range the new key takes over (servesTo 0 = every larger M)
        int servesTo = 0;
        bool operator==(const Row &) const = default;
    };
    struct OtherK {
        int k = 0;
        QString source; // "moetune's push record ...", "the running server (pid 42) serves ..."
        bool operator==(const OtherK &) const = default;
    };

    QString fileName;
    QString target;
    QString
        mode; // "new" (no file there), "merged", "whole" (nothing to merge with: a lone file, invalid file)
    std::optional<bool> measuredDefault;
    QString note;
    QList<Row> rows;
    QList<OtherK> otherK;
    QStringList siblings; // file names in the target folder for sibling device names
    QString deviceName;   // of this file (for the sibling sentence)
    // What the run timed against, in words ("the server's built-in default", "the file /x/y.json (...)");
    // "" = unknown (an older agent). The push flow names a fallback file the server's log shows instead.
    QString baseline;
    bool simulated = false; // the run's numbers are simulated (synthetic backend): never called measured
    QString oldSha256;      // of the file at the target now (the event's old_sha256); "" = no file there
    // > 0: the file there is byte for byte what this run pushed at this time (seconds since the epoch,
    // from the run's push.json), so its rows are the run's own winners, not "kept, unmeasured".
    double installedByRunAt = 0;

    // From a `diff` or `installed` event; nullopt when the event has no `merge` (an older agent).
    static std::optional<PushRowMerge> fromEvent(const QJsonObject &event, QString *error = nullptr);
    // Adds the K's of running servers whose model has this file's shape but another hidden size than
    // runK (the run's K), from the probe; rows this push changes are marked unmeasured for them.
    void addServedK(const HostProbe &probe, Framework framework, int runK);
    void addOtherK(const OtherK &other);
    // Sets installedByRunAt when a push of the run not undone installed the bytes now at the target.
    void markInstalledByRun(const PushHistory &history);

    int count(Decision d) const;
    static QString decisionText(Decision d);
    // The preview's lines: a summary, one line per row, the K and sibling warnings.
    QStringList lines() const;
    QJsonObject toJson() const;
    bool operator==(const PushRowMerge &) const = default;
};

} // namespace moetune
