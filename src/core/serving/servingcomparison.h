// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/serving/servingbenchcommand.h"
#include "core/serving/servingchange.h"
#include "core/serving/servingresult.h"
#include "core/serving/servingworkload.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// A serving benchmark before and after a push: the workload and the commands, every leg (one boot of
// the server, A = the files it had, B = the pushed files; one benchmark run per concurrency), the
// change of each metric with its interval, and the verdict (docs/serving-statistics.md). Plain mode is
// one A leg (the server as it is) and one B leg (after push + restart): one pair, no interval, never a
// verdict; rigorous mode runs order-balanced pairs (A B, B A, ...), a restart per leg, optionally
// adaptive (pairs added until the interval is narrower than the margin, or a cap). The verdict comes
// from ONE primary metric declared by the workload's preset (decode-heavy: median TPOT; prefill-heavy:
// median TTFT; the standard line: output throughput), pooled over the concurrencies per pair; the other
// rows are secondary, with Bonferroni-corrected intervals, and never decide. A leg that failed, or whose
// benchmark had failed requests, fewer completed than asked, or a zero or negative figure, makes the
// whole comparison "not measured". Also a benchmark of a server on its own (only A legs, no verdict).
struct ServingComparison {
    enum class Verdict { Faster, NoChange, Slower, Failed, Unpaired, Inconclusive };
    static constexpr double kDefaultMarginPct = 5.0;
    static constexpr double kDefaultMinEffectPct = 1.0;
    static constexpr double kLevel = 0.95;
    struct Leg {
        QChar arm = u'A';             // 'A' before (the old files), 'B' after (the pushed files)
        QList<ServingResult> results; // one per concurrency, in the workload's order
        QString error;                // why the leg stopped ("" = all runs parsed)
        QStringList commands;         // what ran on the host for it (the tool's command lines)
        bool ok() const { return error.isEmpty(); }
        const ServingResult *at(int concurrency) const;
        // Why this leg is not a result ("" when it is): its error, or the first run's problem
        // (ServingResult::problem), or a concurrency of the workload it has no run for.
        QString problem(const ServingWorkload &w) const;
    };
    struct Row {
        bool primary = false; // the primary metric pooled over the concurrencies (concurrency 0)
        int concurrency = 0;
        ServingResult::Metric metric = ServingResult::Metric::TpotMedian;
        ServingChange change;
        ServingChange::Outcome outcome = ServingChange::Outcome::NoChange;
    };

    ServingWorkload workload;
    ServingBenchCommand bench;
    bool rigorous = false;
    int pairs = 1; // pairs planned (adaptive: the cap)
    bool adaptive = false;
    double marginPct = kDefaultMarginPct;       // "no change" means the interval lies within +-margin
    double minEffectPct = kDefaultMinEffectPct; // no Faster / Slower below this change
    QString stopReason;                         // adaptive: why it stopped adding pairs
    QString runId;                 // the run whose files were pushed ("" for a benchmark on its own)
    bool configsSimulated = false; // the pushed configs came from the synthetic backend
    bool servingSimulated = false; // the serving figures came from a practice double, not a server
    QList<Leg> legs;
    QString error; // the comparison stopped: the sentence, and what to try by hand
    QString note;  // e.g. the server was left on the old files after an undo

    // "AB" for plain mode, "ABBA", "ABBAABBA" for 2 and 4 pairs (pairs alternate AB and BA).
    static QString legOrder(int pairs, bool rigorous);
    // The metric the verdict is taken from, declared by the workload's preset ("custom": TTFT when the
    // prompt is at least 4 times the answer, else TPOT).
    static ServingResult::Metric primaryMetric(const ServingWorkload &w);
    ServingResult::Metric primary() const { return primaryMetric(workload); }
    // Values of the A legs (benchmark alone) for display.
    QList<double> values(QChar arm, int concurrency, ServingResult::Metric m) const;
    // Complete pairs of legs: the indexes of the A and the B leg of each (legs 2k and 2k+1).
    QList<QPair<int, int>> legPairs() const;
    int completePairs() const { return int(legPairs().size()); }
    // The primary metric's change: per pair the mean over the concurrencies of ln(B / A), a t interval.
    ServingChange primaryChange() const;
    Row primaryRow() const;
    // The primary row first, then per concurrency and metric (secondary: Bonferroni over those rows).
    QList<Row> rows() const;
    // The adaptive mode looks at its interval at every complete A B B A block (2, 4, 6 ... pairs) and at
    // the cap: looks() of them (1 for a fixed number of pairs). Each look's interval is at level
    // 1 - 0.05 / looks(), so that whatever look the stopping rule picks, the chance that the interval
    // misses the true change is at most 5% (Bonferroni over the looks).
    int looks() const;
    double primaryLevel() const;   // 1 - 0.05 / looks()
    double secondaryLevel() const; // 1 - 0.05 / (looks() * number of secondary rows)
    // The adaptive mode's stopping rule, asked at a pair boundary: the reason to stop ("" = add a pair).
    // It stops when the primary metric's interval is narrower than the margin (precision, never the
    // size or sign of the change) or at the cap of `pairs`; asked at every complete A B B A block.
    QString adaptiveStop() const;
    // Why nothing was measured ("" when the legs are results).
    QString notMeasuredReason() const;
    Verdict verdict() const;
    static QString verdictId(Verdict v); // "faster", "no-change", "slower", "failed", "unpaired", ...
    static QString verdictName(Verdict v);
    // The whole verdict line for people ("Faster: median TPOT -9.8% (95% interval ...)"); it always
    // carries the interval when there is one.
    QString verdictSentence() const;
    // What the pairs run so far can see: "At this server's noise ..., 4 pairs can tell about 5%; 2%
    // needs about 14 pairs." "" before 2 pairs.
    QString sensitivitySentence() const;
    QString text() const;                   // the table and the verdict, for the CLI and the report
    QStringList manualCommands() const;     // the tool's command per concurrency, to run by hand
    static QString pct(double v);           // "+1.2%", "n/a"
    static QString levelText(double level); // 0.95 -> "95%", 0.9875 -> "98.75%"

    QJsonObject toJson() const;
    static std::optional<ServingComparison> fromJson(const QJsonObject &o, QString *error = nullptr);
};

} // namespace moetune
