// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The fleet report (issue 46): per tuning group the hosts, the tuning run (host, run id, SIMULATED when
// so) and each host's outcome (pushed, proved, serving verdict, undone, unreachable with the reason),
// with totals; built from a FleetRecord as the workspace holds it. One HTML for the Results page's Fleet
// tab, the PDF and `moetune-cli report --fleet` (as text), so every shell says the same.

#include <QString>
#include <QStringList>

namespace moetune {

struct FleetRecord;
struct FleetHostRecord;

// The counts of the totals line (the Fleet view, the report, the CLI).
struct FleetTotals {
    int hosts = 0;
    int diagnosed = 0;  // facts known (reached, probed, log diagnosed)
    int inProgress = 0; // waiting, connecting, diagnosing, tuning, importing, pushing, restarting, undoing
    int unreachable = 0;
    int failed = 0; // a step failed on a reachable host
    int groups = 0;
    int tuned = 0;  // groups with a tuning run
    int pushed = 0; // hosts where a push changed files (undone ones included)
    int proved = 0;
    int proofFailed = 0;
    int undone = 0;
    int undoFailed = 0;
    int skipped = 0;
    int nothingMissing = 0;

    static FleetTotals of(const FleetRecord &record);
    // "12 hosts: 10 diagnosed, 1 unreachable · 3 groups, 2 tuned · 5 pushed, 4 proved, 1 undone"; parts
    // that are 0 are left out, except the hosts.
    QString text() const;
};

class FleetReport {
public:
    // One host's outcome in words: "proved", "pushed; proof failed: ...; undone", "unreachable: ...".
    static QString outcome(const FleetHostRecord &host);
    // Whether the group's tuning run is simulated (its result.json, or a push record, says so).
    static bool groupSimulated(const FleetRecord &record, int group);
    static bool simulated(const FleetRecord &record); // any group's

    // The report's body (Qt rich text: QTextDocument and QTextBrowser).
    static QString html(const FleetRecord &record);
    // The same as plain text (the CLI).
    static QString text(const FleetRecord &record);
    // Writes the A4 PDF; a simulated record says SIMULATED on every page.
    static bool write(const FleetRecord &record, const QString &path, QString *error = nullptr);
    // "moetune-fleet-report-<id>.pdf", "SIMULATED-" first when a group's run is simulated.
    static QString suggestedFileName(const FleetRecord &record);
};

} // namespace moetune
