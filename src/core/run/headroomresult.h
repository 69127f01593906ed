// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace moetune {

// The agent's headroom check (remote_agent/PROTOCOL.md, "headroom"): per batch size the server's
// config, the best screened and the HBM floor, the gain a full tune is likely to find, and the verdict
// per range of sizes. Parsed from the final `headroom` event; kept beside a run in the workspace
// (headroom.json, the same object) and shown in the PDF report.
struct HeadroomResult {
    enum class Kind { WorthTuning, SomeGain, LittleToGain, Unknown };
    struct Size {
        int m = 0;
        double defaultUs = 0;  // the server's config (0 = could not be timed)
        double bestUs = 0;     // the best screened (= defaultUs when nothing beat it)
        double gain = 0;       // defaultUs / bestUs (0 = unknown)
        double floorUs = 0;    // HBM floor (0 = unknown)
        double bound = 0;      // defaultUs / floorUs: no tune gains more (0 = unknown)
        QString defaultConfig; // config keys like "m16n32k64g1w4s3" ("" for up+down)
        QString bestConfig;
    };
    struct Range {
        QString gainClass; // "none" | "small" | "large" | "unknown"
        int mFrom = 0;
        int mTo = 0;
        double gain = 0; // geometric mean over the range (0 = unknown)
        double gainMin = 0;
        double gainMax = 0;
        QString label; // "M >= 256", "M 1-128"
    };

    QString verdict; // the agent's sentence ("worth tuning: about 1.45x at M >= 256, nothing at M <= 128")
    Kind kind = Kind::Unknown;
    QList<Range> ranges;
    QList<Size> sizes;
    QString backend;
    QString deviceName;
    QString framework;
    QString defaultSourceKind; // "file" | "heuristic" | ""
    QString defaultSourcePath; // the server's file when it read one
    QString assumed;           // what the check could not see and assumed ("" = nothing)
    bool simulated = false;
    double wallSeconds = 0;
    int units = 0;
    int prewarmUnits = 0; // the tune's first configs the host now compiles in the background (0 = none)
    QJsonObject raw;      // the whole event, for the workspace

    static std::optional<HeadroomResult> fromJson(const QJsonObject &headroomEvent, QString *error = nullptr);
    QJsonObject toJson() const { return raw; }
    static QString kindId(Kind k); // "worth_tuning", ...
    QString headline() const;      // the verdict with SIMULATED / assumption notes, one line
    QString tableText() const;     // the per-range and per-size table for the CLI and the report
    double maxGain() const;        // the largest per-size gain (0 = none)
    QString prewarmNote() const;   // what the host compiles for the tune meanwhile ("" = nothing)
};

} // namespace moetune
