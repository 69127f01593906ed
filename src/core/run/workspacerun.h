// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/sweepresult.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// One tuning run kept locally, a folder that reopens offline:
//   run.json               {"format":"moetune-run","version":1, run_id, host, title, note, source, saved_at}
//   spec.json              the normalised tune spec (PROTOCOL.md 6)
//   events.jsonl           the run's events as the agent wrote them (PROTOCOL.md 4)
//   result.json            the agent's result (PROTOCOL.md 5), when the run finished
//   host.json              the host's probe object (PROTOCOL.md 3 "probe")
//   diagnosis-before.json  the server log's diagnosis before the push ("moetune.diagnosis/1")
//   diagnosis-after.json   ... after the restart (the proof)
//   push.json              {"installed":[installed events], "target_folder":..}: where the files went
//   headroom.json          the headroom check before the tune (the agent's `headroom` event, issue 19)
//   serving.json           the serving benchmark before and after the push ("moetune-serving",
//   ServingComparison)
// Everything but one of spec/events/result is optional. An agent's own run folder (spec.json,
// events.jsonl, result.json) copied from the host opens as it is.
struct WorkspaceRun {
    QString dir;
    QString runId;
    QString host;  // the app's host name it ran on ("" unknown)
    QString title; // shown in lists; defaults to the shape
    QString note;  // e.g. where a demo came from
    QString source;
    QJsonObject spec;
    QByteArray events;  // empty when the file was over kMaxKeptEventsBytes (eventsFile says where)
    QString eventsFile; // the events.jsonl read by open() when events were not kept (save() copies it)
    bool hasResultFile = false;
    SweepResult result; // from result.json, else built from the events
    std::optional<QJsonObject> hostFacts;
    std::optional<QJsonObject> diagnosisBefore;
    std::optional<QJsonObject> diagnosisAfter;
    std::optional<QJsonObject> push;
    std::optional<QJsonObject> headroom; // HeadroomResult::fromJson reads it
    std::optional<QJsonObject> serving;  // ServingComparison::toJson()
    QStringList warnings; // problems that lost nothing (an unreadable optional file, a bad event line)

    // events.jsonl of at most this size is kept in memory whole (save() writes it back); a larger one is
    // read once, line by line, into the result and copied as a file by save().
    static constexpr qint64 kMaxKeptEventsBytes = 32LL << 20;
    // A run id that names a folder: 1-128 of [A-Za-z0-9._-], not starting with '.' and never "..": a
    // hostile host's run_started must not name a path outside the workspace. false + *why otherwise.
    static bool isSafeRunId(const QString &id, QString *why = nullptr);
    // A regular file's bytes, opened non-blocking (a FIFO or device is refused by its fstat, never read),
    // at most maxBytes; false + a sentence otherwise.
    static bool readRegularFile(const QString &path, QByteArray *out, QString *why, qint64 maxBytes);

    static bool looksLikeRun(const QString &dir);
    // Reads a run folder; nullopt with a sentence when it holds no spec, events or result.
    static std::optional<WorkspaceRun> open(const QString &dir, QString *error = nullptr);
    // Writes every part that is set into dir (created), each file atomically.
    bool save(QString *error = nullptr) const;
    // Appends event lines to dir/events.jsonl as they arrive (the Tune page); creates the folder.
    static bool appendEvents(const QString &dir, const QByteArray &lines, QString *error = nullptr);

    QString displayTitle() const;
    // A file name part that says what it is; "simulated-" prefixed when the numbers are simulated.
    QString fileStem() const;
};

} // namespace moetune
