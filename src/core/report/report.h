// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/headroomresult.h"

#include <QDateTime>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <cmath>
#include <limits>
#include <optional>

namespace moetune {

struct WorkspaceRun;

// What a report says about one tuning run, as plain data; rendered as text/Markdown (ReportText) and
// as a PDF (src/report). Built from a workspace run, so the report of a run reopened offline is the same.
struct Report {
    struct Finding {
        QString severity; // "info" | "warning" | "error"
        QString title;
        int occurrences = 0;
        QString sources; // "TP0-7"
    };
    struct Row {
        int m = 0;
        QString config; // compact key of the chosen config ("m16n64k128g1w4s3"), "" if none
        double tunedUs = std::numeric_limits<double>::quiet_NaN();
        double defaultUs = std::numeric_limits<double>::quiet_NaN();
        double speedup = std::numeric_limits<double>::quiet_NaN();
        double floorUs = std::numeric_limits<double>::quiet_NaN();
        double floorFraction = std::numeric_limits<double>::quiet_NaN();
    };
    struct InstalledFile {
        QString fileName;
        QString target;
        QString backup; // "" when nothing was replaced
        QString sha256;
        bool unchanged = false;
    };
    struct Proof {
        QString beforeSummary;
        QString afterSummary;
        QList<Finding> before; // MoE config findings for this shape
        QList<Finding> after;
        bool gone = false; // no MoE config warning for this shape remains
        QStringList inUse; // "tuned config in use" lines after the restart
    };

    QString title;
    QDateTime generated;
    QString recorded; // when the run started, "2026-11-29 00:00 UTC" ("unknown")
    bool simulated = false;
    QString runId;
    QString status;
    QString host;
    QStringList gpus;
    QString deviceName;
    QString framework;
    QList<QPair<QString, QString>> versions; // ("Triton", "3.6.0"), ("torch", ..), ("agent", ..), ...
    QString note;

    bool hasDiagnosis = false;
    QString diagnosisSummary;
    QList<Finding> findings;

    QList<QPair<QString, QString>> job; // field, value

    QList<Row> rows;
    double geomeanSpeedup = std::numeric_limits<double>::quiet_NaN();

    double wallSeconds = std::numeric_limits<double>::quiet_NaN();
    int unitsMeasured = 0;
    int unitsFailed = 0;
    int distinctConfigs = 0;
    double referenceSeconds = std::numeric_limits<double>::quiet_NaN();
    QString referenceBasis;

    QList<QPair<QString, QString>> resultFiles; // file name, where it is in the run folder
    QList<InstalledFile> installed;
    QString installFolder;
    std::optional<Proof> proof;
    std::optional<HeadroomResult> headroom; // the check before the tune (headroom.json), if one ran
    QStringList warnings;                   // what the workspace could not tell (unreadable parts)

    static Report fromRun(const WorkspaceRun &run,
                          const QDateTime &generated = QDateTime::currentDateTimeUtc());
};

} // namespace moetune
