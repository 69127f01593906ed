// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QSizeF>
#include <QString>

namespace moetune {

struct WorkspaceRun;

// Writes the multi-page PDF report of one run: title, date, host, GPUs, framework and versions; the
// diagnosis; the tuning job; the tuned-vs-default chart and one landscape as vector graphics; the
// config table with speedups and floor fractions; the tuning cost against the reference method; where
// the files went and their backups; the before/after proof. SIMULATED runs say so on every page.
// Needs a QApplication (Qt Charts draws through QGraphicsWidget); the CLI uses the offscreen platform.
class PdfReport {
public:
    struct Options {
        int landscapeM = 0;                    // 0: the batch size with the largest speedup
        QSizeF chartLayout = QSizeF(980, 500); // the charts are laid out at this size, then scaled
    };

    static bool write(const WorkspaceRun &run, const QString &path, QString *error = nullptr);
    static bool write(const WorkspaceRun &run, const QString &path, const Options &options, QString *error);
    // "SIMULATED-moetune-report-<run>.pdf" for simulated runs (a suggestion: the name chosen is written).
    static QString suggestedFileName(const WorkspaceRun &run);
    // path, with "SIMULATED-" put before the file name of a simulated run's report when it lacks it.
    static QString markedPath(const WorkspaceRun &run, const QString &path);
};

} // namespace moetune
