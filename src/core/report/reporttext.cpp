// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/report/reporttext.h"

#include "core/report/report.h"

#include <cmath>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool isKnown(double v) {
    return !std::isnan(v);
}

QString simulatedLine() {
    return u"SIMULATED: these numbers come from the agent's synthetic backend, not from a GPU."_s;
}

} // namespace

QString ReportText::us(double v) {
    return isKnown(v) ? QString::number(v, 'f', 1) : u"-"_s;
}

QString ReportText::speedup(double v) {
    return isKnown(v) ? QString::number(v, 'f', 2) + u'x' : u"-"_s;
}

QString ReportText::percent(double v) {
    return isKnown(v) ? QString::number(v * 100.0, 'f', 0) + u'%' : u"-"_s;
}

QString ReportText::duration(double s) {
    if (!isKnown(s))
        return u"-"_s;
    if (s < 120)
        return u"%1 s"_s.arg(s, 0, 'f', 1);
    if (s < 7200)
        return u"%1 min %2 s"_s.arg(int(s) / 60).arg(int(s) % 60);
    return u"%1 h"_s.arg(s / 3600.0, 0, 'f', 1);
}

QString ReportText::toText(const Report &r) {
    QString t;
    if (r.simulated)
        t += simulatedLine() + u"\n\n"_s;
    t += r.title + u'\n';
    t += u"Run %1 (%2), report of %3\n"_s.arg(r.runId, r.status, r.generated.toString(Qt::ISODate));
    if (!r.host.isEmpty())
        t += u"Host: %1\n"_s.arg(r.host);
    for (const auto &g : r.gpus)
        t += u"  %1\n"_s.arg(g);
    for (const auto &[name, version] : r.versions)
        t += u"%1 %2\n"_s.arg(name, version);
    t += u"\nJob\n"_s;
    for (const auto &[field, value] : r.job)
        t += u"  %1: %2\n"_s.arg(field, value);
    if (r.hasDiagnosis) {
        t += u"\nDiagnosis: %1\n"_s.arg(r.diagnosisSummary);
        for (const auto &f : r.findings)
            t += u"  [%1] %2 (x%3)\n"_s.arg(f.severity, f.title).arg(f.occurrences);
    }
    t += u"\n%1 %2 %3 %4 %5 %6 %7\n"_s.arg(u"M"_s, -6)
             .arg(u"config"_s, -24)
             .arg(u"tuned us"_s, 10)
             .arg(u"default"_s, 10)
             .arg(u"speedup"_s, 8)
             .arg(u"floor us"_s, 9)
             .arg(u"of floor"_s, 9);
    for (const auto &row : r.rows)
        t += u"%1 %2 %3 %4 %5 %6 %7\n"_s.arg(row.m, -6)
                 .arg(row.config, -24)
                 .arg(us(row.tunedUs), 10)
                 .arg(us(row.defaultUs), 10)
                 .arg(speedup(row.speedup), 8)
                 .arg(us(row.floorUs), 9)
                 .arg(percent(row.floorFraction), 9);
    t += u"Geometric mean speedup: %1\n"_s.arg(speedup(r.geomeanSpeedup));
    t += u"\nCost: %1 wall, %2 units timed (%3 failed), %4 distinct configs; reference method ~%5 (%6)\n"_s
             .arg(duration(r.wallSeconds))
             .arg(r.unitsMeasured)
             .arg(r.unitsFailed)
             .arg(r.distinctConfigs)
             .arg(duration(r.referenceSeconds), r.referenceBasis);
    if (!r.resultFiles.isEmpty()) {
        t += u"\nFiles written by the run:\n"_s;
        for (const auto &[name, path] : r.resultFiles)
            t += u"  %1  %2\n"_s.arg(name, path);
    }
    if (!r.installed.isEmpty()) {
        t += u"\nInstalled:\n"_s;
        for (const auto &f : r.installed)
            t += u"  %1 -> %2%3\n"_s.arg(f.fileName, f.target,
                                         f.backup.isEmpty() ? u" (no earlier file)"_s
                                                            : u", backup "_s + f.backup);
    } else {
        t += u"\nNot installed on a server from this workspace.\n"_s;
    }
    if (r.proof) {
        t += u"\nBefore: %1\nAfter: %2\n"_s.arg(r.proof->beforeSummary, r.proof->afterSummary);
        t += r.proof->gone ? u"The MoE config warning for this shape is gone on every rank.\n"_s
                           : u"Still reported after the restart:\n"_s;
        for (const auto &f : r.proof->after)
            t += u"  [%1] %2 (x%3)\n"_s.arg(f.severity, f.title).arg(f.occurrences);
    }
    for (const auto &w : r.warnings)
        t += u"Note: %1\n"_s.arg(w);
    if (r.simulated)
        t += u'\n' + simulatedLine() + u'\n';
    return t;
}

QString ReportText::toMarkdown(const Report &r) {
    QString t;
    t += u"# %1\n\n"_s.arg(r.title);
    if (r.simulated)
        t += u"> **%1**\n\n"_s.arg(simulatedLine());
    t += u"Run `%1` (%2), report of %3"_s.arg(r.runId, r.status, r.generated.toString(Qt::ISODate));
    if (!r.host.isEmpty())
        t += u", host **%1**"_s.arg(r.host);
    t += u"\n\n"_s;
    for (const auto &g : r.gpus)
        t += u"- %1\n"_s.arg(g);
    for (const auto &[name, version] : r.versions)
        t += u"- %1 %2\n"_s.arg(name, version);
    t += u"\n## Job\n\n| field | value |\n|---|---|\n"_s;
    for (const auto &[field, value] : r.job)
        t += u"| %1 | %2 |\n"_s.arg(field, value);
    if (r.hasDiagnosis) {
        t += u"\n## Diagnosis\n\n%1\n\n"_s.arg(r.diagnosisSummary);
        for (const auto &f : r.findings)
            t += u"- **%1** %2 (x%3)\n"_s.arg(f.severity, f.title).arg(f.occurrences);
    }
    t += u"\n## Chosen configs\n\n| M | config | tuned µs | default µs | speedup | floor µs | of floor |\n"
         u"|---|---|---|---|---|---|---|\n"_s;
    for (const auto &row : r.rows)
        t += u"| %1 | `%2` | %3 | %4 | %5 | %6 | %7 |\n"_s.arg(row.m).arg(
            row.config, us(row.tunedUs), us(row.defaultUs), speedup(row.speedup), us(row.floorUs),
            percent(row.floorFraction));
    t += u"\nGeometric mean speedup %1.\n"_s.arg(speedup(r.geomeanSpeedup));
    t +=
        u"\n## Cost\n\n%1 wall, %2 units timed (%3 failed), %4 distinct configs. The reference method: ~%5 (%6).\n"_s
            .arg(duration(r.wallSeconds))
            .arg(r.unitsMeasured)
            .arg(r.unitsFailed)
            .arg(r.distinctConfigs)
            .arg(duration(r.referenceSeconds), r.referenceBasis);
    t += u"\n## Files\n\n"_s;
    for (const auto &[name, path] : r.resultFiles)
        t += u"- `%1` (run folder: `%2`)\n"_s.arg(name, path);
    for (const auto &f : r.installed)
        t += u"- installed `%1` -> `%2`%3\n"_s.arg(
            f.fileName, f.target, f.backup.isEmpty() ? QString() : u", backup `"_s + f.backup + u'`');
    if (r.installed.isEmpty())
        t += u"\nNot installed on a server from this workspace.\n"_s;
    if (r.proof) {
        t += u"\n## Before / after\n\nBefore: %1\n\nAfter: %2\n\n"_s.arg(r.proof->beforeSummary,
                                                                         r.proof->afterSummary);
        t += r.proof->gone ? u"**The MoE config warning for this shape is gone on every rank.**\n"_s
                           : u"**Still reported after the restart:**\n"_s;
        for (const auto &f : r.proof->after)
            t += u"- %1 (x%2)\n"_s.arg(f.title).arg(f.occurrences);
    }
    return t;
}

} // namespace moetune
