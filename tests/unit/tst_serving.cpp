// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The serving proof's core (src/core/serving): the interval and verdict arithmetic on known samples,
// the tools' outputs parsed, the command lines built and quoted (and the host script run by /bin/sh
// against a stub tool), the workload presets.
#include "core/serving/servingbenchcommand.h"
#include "core/serving/servingchange.h"
#include "core/serving/servingcomparison.h"
#include "core/serving/servingresult.h"
#include "core/serving/servingworkload.h"

#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

using Doubles = QList<double>;

ServingResult result(int c, double ttft, double tpot, double tput) {
    ServingResult r;
    r.concurrency = c;
    r.completed = 200; // the workload's numPrompts: a full run
    r.medianTtftMs = ttft;
    r.medianTpotMs = tpot;
    r.outputThroughput = tput;
    return r;
}

// Legs in the given order; each leg's figures from the lists (index by leg).
ServingComparison comparison(const QString &order, const Doubles &ttft, const Doubles &tpot,
                             const Doubles &tput) {
    ServingComparison c;
    c.workload.concurrencies = {16};
    c.rigorous = order.size() > 2;
    c.pairs = int(order.size() / 2);
    for (qsizetype i = 0; i < order.size(); ++i) {
        ServingComparison::Leg l;
        l.arm = order.at(i);
        l.results.append(result(16, ttft.value(i), tpot.value(i), tput.value(i)));
        c.legs.append(l);
    }
    return c;
}

const char *kVllmBlock = R"(INFO 12-01 10:00:00 [benchmark] Starting
============ Serving Benchmark Result ============
Successful requests:                     200       
Maximum request concurrency:             16        
Benchmark duration (s):                  21.05     
Total input tokens:                      204800    
Total generated tokens:                  25600     
Request throughput (req/s):              9.50      
Output token throughput (tok/s):         1216.15   
Total Token throughput (tok/s):          10945.37  
---------------Time to First Token----------------
Mean TTFT (ms):                          134.37    
Median TTFT (ms):                        120.12    
P99 TTFT (ms):                           389.61    
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          12.31     
Median TPOT (ms):                        12.02     
P99 TPOT (ms):                           15.50     
---------------Inter-token Latency----------------
Mean ITL (ms):                           12.30     
Median ITL (ms):                         11.20     
P99 ITL (ms):                            30.00     
==================================================
)";

} // namespace

class TestServing : public QObject {
    Q_OBJECT
private slots:
    void tDistribution() {
        // Closed forms: t(1) is Cauchy, q = tan(pi (p - 1/2)); t(2): q = (2p - 1) sqrt(2 / (4 p (1 - p))).
        QVERIFY(std::abs(ServingChange::tQuantile(0.975, 1) - std::tan(M_PI * 0.475)) < 1e-8);
        QVERIFY(std::abs(ServingChange::tQuantile(0.975, 2) - 0.95 * std::sqrt(2 / (4 * 0.975 * 0.025))) <
                1e-8);
        QVERIFY(std::abs(ServingChange::tQuantile(0.975, 30) - 2.0422724563) < 1e-7); // the t table
        QVERIFY(std::abs(ServingChange::tTwoSidedP(12.706204736, 1) - 0.05) < 1e-8);
        QVERIFY(std::abs(ServingChange::tTwoSidedP(0, 5) - 1.0) < 1e-12);
        QVERIFY(std::isnan(ServingChange::tQuantile(0.975, 0)));
    }

    void pairedKnown_data() {
        QTest::addColumn<Doubles>("a"); // the pairs' A legs
        QTest::addColumn<Doubles>("b"); // and their B legs
        QTest::addColumn<double>("change");
        QTest::addColumn<double>("low"); // NaN: no interval
        QTest::addColumn<double>("high");
        QTest::addColumn<int>("latencyOutcome"); // -1 better (lower), 0 no change, 1 worse
        // 2+2 legs: log ratios ln 0.9 and ln 0.81, mean m = -0.15805, sd |d1 - d2| / sqrt 2, the interval
        // m +- t(1) sd / sqrt 2 with t(1) = 12.706: it spans -56% to +67% and cannot decide.
        const double m = (std::log(0.9) + std::log(0.81)) / 2;
        const double half = std::tan(M_PI * 0.475) * std::abs(std::log(0.9) - std::log(0.81)) / 2;
        QTest::newRow("2+2 legs") << Doubles{10, 10} << Doubles{9, 8.1} << std::expm1(m) * 100
                                  << std::expm1(m - half) * 100 << std::expm1(m + half) * 100 << 0;
        // Ties: the same figure before and after: no change, a zero-width interval at 0.
        QTest::newRow("ties") << Doubles{5, 5, 5} << Doubles{5, 5, 5} << 0.0 << 0.0 << 0.0 << 0;
        // Zero variance 0.1% apart: the interval is [0.1%, 0.1%], it excludes 0, but 0.1% is below the
        // minimum effect (1%): no claim.
        QTest::newRow("zero variance") << Doubles{10, 20} << Doubles{10.01, 20.02} << 0.1 << 0.1 << 0.1 << 0;
        // The same 20% on every pair: a real change, claimed.
        QTest::newRow("doubled") << Doubles{1, 2} << Doubles{1.2, 2.4} << 20.0 << 20.0 << 20.0 << 1;
        QTest::newRow("one pair") << Doubles{10} << Doubles{8} << -20.0 << qQNaN() << qQNaN() << 0;
        QTest::newRow("no pair") << Doubles{10, 11} << Doubles{} << qQNaN() << qQNaN() << qQNaN() << 0;
        QTest::newRow("bad values dropped")
            << Doubles{10, 0, 10} << Doubles{8, 8, qQNaN()} << -20.0 << qQNaN() << qQNaN() << 0;
    }
    void pairedKnown() {
        QFETCH(Doubles, a);
        QFETCH(Doubles, b);
        QFETCH(double, change);
        QFETCH(double, low);
        QFETCH(double, high);
        QFETCH(int, latencyOutcome);
        const ServingChange c = ServingChange::paired(a, b);
        QCOMPARE(std::isfinite(c.changePct), std::isfinite(change));
        if (std::isfinite(change))
            QVERIFY2(std::abs(c.changePct - change) < 1e-6, qPrintable(QString::number(c.changePct)));
        QCOMPARE(c.hasInterval(), std::isfinite(low));
        if (std::isfinite(low)) {
            QVERIFY2(std::abs(c.lowPct - low) < 1e-6, qPrintable(QString::number(c.lowPct)));
            QVERIFY2(std::abs(c.highPct - high) < 1e-6, qPrintable(QString::number(c.highPct)));
        }
        const auto o = c.outcome(true, ServingComparison::kDefaultMinEffectPct);
        QCOMPARE(o == ServingChange::Outcome::Better  ? -1
                 : o == ServingChange::Outcome::Worse ? 1
                                                      : 0,
                 latencyOutcome);
    }

    void pairedSeparatedSamples() {
        // 4 pairs, every B about 20% below its A: the interval excludes 0 on the good side (p < 0.05);
        // the same legs give the same interval every time (no resampling).
        const Doubles a{10.0, 10.2, 9.9, 10.1};
        const Doubles b{8.0, 8.1, 7.9, 8.2};
        const ServingChange c = ServingChange::paired(a, b);
        QCOMPARE(c.pairs, 4);
        QVERIFY(c.lowPct <= c.changePct && c.changePct <= c.highPct);
        QVERIFY(c.highPct < -15 && c.lowPct > -25);
        QVERIFY(c.pValue < 0.001);
        QCOMPARE(c.outcome(true), ServingChange::Outcome::Better); // a latency went down
        QCOMPARE(c.outcome(false), ServingChange::Outcome::Worse); // a throughput went down
        const ServingChange again = ServingChange::paired(a, b);
        QCOMPARE(again.lowPct, c.lowPct);
        QCOMPARE(again.highPct, c.highPct);
        // Pairs that disagree: the interval includes 0.
        const ServingChange mixed = ServingChange::paired({10, 11, 9, 10.5}, {10.2, 9.8, 10.9, 9.1});
        QVERIFY(mixed.lowPct < 0 && mixed.highPct > 0);
        QCOMPARE(mixed.outcome(true), ServingChange::Outcome::NoChange);
        QCOMPARE(ServingChange::median({3, 1, 2}), 2.0);
        QCOMPARE(ServingChange::median({4, 1, 2, 3}), 2.5);
        QVERIFY(std::isnan(ServingChange::median({})));
        // What a number of pairs can see at a noise: more pairs, smaller changes; 2 pairs see little.
        const double sd = 0.03;
        QVERIFY(ServingChange::detectablePct(sd, 2) > 30);
        QVERIFY(ServingChange::detectablePct(sd, 8) < ServingChange::detectablePct(sd, 4));
        const int need = ServingChange::pairsToDetect(sd, 5.0);
        QVERIFY(need > 4 && ServingChange::detectablePct(sd, need) <= 5.0 &&
                ServingChange::detectablePct(sd, need - 1) > 5.0);
    }

    void verdict_data() {
        QTest::addColumn<QString>("order");
        QTest::addColumn<Doubles>("ttft");
        QTest::addColumn<Doubles>("tpot"); // the decode preset's primary metric
        QTest::addColumn<Doubles>("tput");
        QTest::addColumn<QString>("verdict");
        QTest::addColumn<QString>("says");
        // 4 pairs (A B B A A B B A): TPOT 20% lower after on every pair, TTFT and throughput in the noise.
        QTest::newRow("faster") << u"ABBAABBA"_s << Doubles{50, 51, 49, 50.5, 50, 51, 49, 50.5}
                                << Doubles{10, 8, 8.1, 10.1, 10.2, 8.2, 7.9, 9.9}
                                << Doubles{100, 101, 99, 100.5, 100, 101, 99, 100.5} << u"faster"_s
                                << u"Faster: median TPOT -"_s;
        QTest::newRow("slower") << u"ABBAABBA"_s << Doubles{50, 51, 49, 50.5, 50, 51, 49, 50.5}
                                << Doubles{8, 10, 10.1, 8.1, 8.2, 10.2, 9.9, 7.9}
                                << Doubles{100, 101, 99, 100.5, 100, 101, 99, 100.5} << u"slower"_s
                                << u"Undo push"_s;
        // TPOT (primary) better, TTFT (secondary) 20% worse: the primary decides; TTFT is a secondary row.
        QTest::newRow("primary decides")
            << u"ABBAABBA"_s << Doubles{50, 60, 61, 50.5, 50, 60, 61, 50.5}
            << Doubles{10, 8, 8.1, 10.1, 10.2, 8.2, 7.9, 9.9}
            << Doubles{100, 101, 99, 100.5, 100, 101, 99, 100.5} << u"faster"_s << u"primary metric"_s;
        // Noise well inside the margin: no change larger than 5%, with the interval.
        QTest::newRow("no change") << u"ABBAABBA"_s << Doubles{50, 51, 49, 50.5, 50, 51, 49, 50.5}
                                   << Doubles{10, 10.1, 9.9, 10.05, 10, 9.95, 10.02, 10}
                                   << Doubles{100, 99, 101, 100.5, 100, 99, 101, 100.5} << u"no-change"_s
                                   << u"No change larger than 5.0% (95% interval"_s;
        // 2 pairs, 10% apart each way: t(1) makes the interval far wider than the margin.
        QTest::newRow("inconclusive")
            << u"ABBA"_s << Doubles{50, 51, 49, 50.5} << Doubles{10, 9, 11.5, 11}
            << Doubles{100, 99, 101, 100.5} << u"inconclusive"_s << u"Inconclusive: the interval"_s;
        // Ties: the same figures on every leg: no change, interval +0.0% to +0.0%.
        QTest::newRow("ties") << u"ABBA"_s << Doubles{50, 50, 50, 50} << Doubles{10, 10, 10, 10}
                              << Doubles{100, 100, 100, 100} << u"no-change"_s << u"+0.0% to +0.0%"_s;
        // Zero variance 0.1% apart: below the minimum effect, no claim.
        QTest::newRow("zero variance 0.1%")
            << u"ABBA"_s << Doubles{50, 50, 50, 50} << Doubles{10, 10.01, 10.01, 10}
            << Doubles{100, 100, 100, 100} << u"no-change"_s << u"+0.1% to +0.1%"_s;
        // One boot each: no interval, so no claim whatever the difference.
        QTest::newRow("plain") << u"AB"_s << Doubles{50, 40} << Doubles{10, 5} << Doubles{100, 200}
                               << u"inconclusive"_s << u"one pair of boots"_s;
        QTest::newRow("alone") << u"A"_s << Doubles{50} << Doubles{10} << Doubles{100} << u"unpaired"_s
                               << u"TPOT 10.00 ms"_s;
    }
    void verdict() {
        QFETCH(QString, order);
        QFETCH(Doubles, ttft);
        QFETCH(Doubles, tpot);
        QFETCH(Doubles, tput);
        QFETCH(QString, verdict);
        QFETCH(QString, says);
        const ServingComparison c = comparison(order, ttft, tpot, tput);
        QCOMPARE(c.primary(), ServingResult::Metric::TpotMedian);
        QCOMPARE(ServingComparison::verdictId(c.verdict()), verdict);
        QVERIFY2(c.verdictSentence().contains(says), qPrintable(c.verdictSentence()));
        QVERIFY2(c.verdictSentence().startsWith(ServingComparison::verdictName(c.verdict())),
                 qPrintable(c.verdictSentence()));
        if (c.verdict() != ServingComparison::Verdict::Unpaired && c.completePairs() >= 2)
            QVERIFY2(c.verdictSentence().contains(u"95% interval"_s) ||
                         c.verdictSentence().contains(u"interval "_s),
                     qPrintable(c.verdictSentence())); // the sentence always carries the interval
        // The record round-trips (the workspace run, the report and the CLI's JSON read it back).
        const auto back = ServingComparison::fromJson(c.toJson());
        QVERIFY(back);
        QCOMPARE(ServingComparison::verdictId(back->verdict()), verdict);
        QCOMPARE(back->verdictSentence(), c.verdictSentence());
    }

    void primaryPerPreset() {
        QCOMPARE(ServingComparison::primaryMetric(*ServingWorkload::fromPreset(u"decode"_s)),
                 ServingResult::Metric::TpotMedian);
        QCOMPARE(ServingComparison::primaryMetric(*ServingWorkload::fromPreset(u"prefill"_s)),
                 ServingResult::Metric::TtftMedian);
        QCOMPARE(ServingComparison::primaryMetric(*ServingWorkload::fromPreset(u"standard"_s)),
                 ServingResult::Metric::OutputThroughput);
        // Prefill: TTFT 20% better on every pair decides although TPOT got worse.
        ServingComparison c =
            comparison(u"ABBA"_s, {100, 80, 80, 100}, {10, 12, 12, 10}, {100, 100, 100, 100});
        c.workload.preset = u"prefill"_s;
        QCOMPARE(c.verdict(), ServingComparison::Verdict::Faster);
        QVERIFY(c.verdictSentence().contains(u"median TTFT -20.0%"_s));
        // Secondary rows carry Bonferroni intervals: 3 rows at one concurrency -> 1 - 0.05 / 3.
        QVERIFY(std::abs(c.secondaryLevel() - (1 - 0.05 / 3)) < 1e-12);
        const auto rs = c.rows();
        QCOMPARE(rs.size(), 4);
        QVERIFY(rs.first().primary);
        QVERIFY(std::abs(rs[1].change.level - (1 - 0.05 / 3)) < 1e-12);
    }

    void sensitivity() {
        // After two pairs the noise is known: the sentence says what the planned pairs can tell.
        ServingComparison c =
            comparison(u"ABBA"_s, {50, 50, 50, 50}, {10, 10.3, 10.1, 10}, {100, 100, 100, 100});
        c.pairs = 4;
        const QString s = c.sensitivitySentence();
        QVERIFY2(s.contains(u"4 pairs can tell about"_s) && s.contains(u"needs about"_s), qPrintable(s));
        QVERIFY(comparison(u"AB"_s, {50, 50}, {10, 10}, {100, 100}).sensitivitySentence().isEmpty());
    }

    void failedLegIsNoResult() {
        ServingComparison c = comparison(u"ABBA"_s, {50, 40, 40, 50}, {10, 5, 5, 10}, {100, 200, 200, 100});
        c.legs[1].results.clear();
        c.legs[1].error = c.error =
            u"The serving benchmark python3 -m sglang.bench_serving is not installed"_s;
        QCOMPARE(c.verdict(), ServingComparison::Verdict::Failed);
        QVERIFY(c.verdictSentence().startsWith(u"Not measured: "_s));
        QVERIFY(c.verdictSentence().contains(u"not installed"_s));
        QVERIFY(!c.text().contains(u"after 40"_s)); // the failed leg gives no "after" figure
        QVERIFY(!c.text().contains(u"n/a"_s) && !c.text().contains(u"no measurable change"_s));
        QVERIFY(c.toJson().value("changes"_L1).toArray().isEmpty());
    }

    void simulatedFiguresSaySo() {
        // A practice double of the tool marks its JSON "simulated": every sentence says SIMULATED, never
        // "measured".
        QJsonObject tool{{"completed"_L1, 200},           {"max_concurrency"_L1, 16},
                         {"median_ttft_ms"_L1, 40.0},     {"median_tpot_ms"_L1, 10.0},
                         {"output_throughput"_L1, 900.0}, {"simulated"_L1, true}};
        const auto r = ServingResult::fromToolJson(tool);
        QVERIFY(r && r->simulated);
        QVERIFY(ServingResult::fromJson(r->toJson()).simulated);
        ServingComparison c = comparison(u"ABBA"_s, {50, 50, 50, 50}, {10, 8, 8, 10}, {100, 100, 100, 100});
        c.legs[0].results[0].simulated = true;
        const auto back = ServingComparison::fromJson(c.toJson());
        QVERIFY(back && back->servingSimulated);
        QVERIFY2(back->verdictSentence().contains(u"SIMULATED serving figures, not a measurement"_s),
                 qPrintable(back->verdictSentence()));
        QVERIFY(back->text().contains(u"the serving figures are SIMULATED"_s));
        const auto printed = ServingResult::fromPrintedBlock(
            QString::fromLatin1(kVllmBlock)
                .replace(u"Serving Benchmark Result"_s, u"Serving Benchmark Result (SIMULATED)"_s));
        QVERIFY(printed && printed->simulated);
        QVERIFY(!ServingResult::fromPrintedBlock(QString::fromLatin1(kVllmBlock))->simulated);
    }

    void legWithFailedRequestsIsNoResult_data() {
        QTest::addColumn<int>("completed");
        QTest::addColumn<int>("failed");
        QTest::addColumn<double>("tpot");
        QTest::addColumn<QString>("says");
        QTest::newRow("198 of 200 failed") << 2 << 198 << 5.0 << u"198 of 200 requests failed"_s;
        QTest::newRow("fewer completed") << 150 << 0 << 5.0 << u"Only 150 of the 200 requests"_s;
        QTest::newRow("zero latency") << 200 << 0 << 0.0 << u"median TPOT = 0"_s;
        QTest::newRow("negative latency") << 200 << 0 << -1.0 << u"median TPOT = -1"_s;
    }
    void legWithFailedRequestsIsNoResult() {
        QFETCH(int, completed);
        QFETCH(int, failed);
        QFETCH(double, tpot);
        QFETCH(QString, says);
        // The leg after the push "faster by half" only because its requests failed: no verdict.
        ServingComparison c = comparison(u"ABBA"_s, {50, 50, 50, 50}, {10, 5, 5, 10}, {100, 100, 100, 100});
        for (int i : {1, 2}) {
            c.legs[i].results[0].completed = completed;
            c.legs[i].results[0].failed = failed;
            c.legs[i].results[0].medianTpotMs = tpot;
        }
        QCOMPARE(c.verdict(), ServingComparison::Verdict::Failed);
        QVERIFY2(c.verdictSentence().contains(says), qPrintable(c.verdictSentence()));
        QVERIFY(c.verdictSentence().contains(u"Leg 2 (B)"_s));
        const auto back = ServingComparison::fromJson(c.toJson());
        QCOMPARE(back->verdict(), ServingComparison::Verdict::Failed);
    }

    void legOrder_data() {
        QTest::addColumn<int>("pairs");
        QTest::addColumn<bool>("rigorous");
        QTest::addColumn<QString>("order");
        QTest::newRow("plain") << 4 << false << u"AB"_s;
        QTest::newRow("1 pair") << 1 << true << u"AB"_s;
        QTest::newRow("2 pairs") << 2 << true << u"ABBA"_s;
        QTest::newRow("3 pairs") << 3 << true << u"ABBAAB"_s;
        QTest::newRow("4 pairs") << 4 << true << u"ABBAABBA"_s;
    }
    void legOrder() {
        QFETCH(int, pairs);
        QFETCH(bool, rigorous);
        QFETCH(QString, order);
        QCOMPARE(ServingComparison::legOrder(pairs, rigorous), order);
    }

    void parse_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<double>("ttft");
        QTest::addColumn<double>("tpot");
        QTest::addColumn<double>("tput");
        QTest::addColumn<QString>("error");
        QTest::newRow("vllm block") << u"block"_s << QByteArray(kVllmBlock) << 120.12 << 12.02 << 1216.15
                                    << QString();
        QTest::newRow("vllm json") << u"lines"_s
                                   << QByteArray(
                                          "{\n  \"completed\": 200,\n  \"max_concurrency\": 16,\n"
                                          "  \"median_ttft_ms\": 120.12,\n  \"median_tpot_ms\": 12.02,\n"
                                          "  \"output_throughput\": 1216.15\n}\n")
                                   << 120.12 << 12.02 << 1216.15 << QString();
        QTest::newRow("sglang lines, last wins")
            << u"lines"_s
            << QByteArray("{\"median_ttft_ms\": 1, \"median_tpot_ms\": 2, \"output_throughput\": 3}\n"
                          "{\"completed\": 5, \"median_ttft_ms\": 40.5, \"median_tpot_ms\": 7.25, "
                          "\"output_throughput\": 880.0, \"max_concurrency\": 16}\n\n")
            << 40.5 << 7.25 << 880.0 << QString();
        QTest::newRow("block without TPOT")
            << u"block"_s << QByteArray("== Serving Benchmark Result ==\nMedian TTFT (ms): 3\n") << 0.0 << 0.0
            << 0.0 << u"lacks"_s;
        QTest::newRow("no block") << u"block"_s << QByteArray("Traceback (most recent call last):\n") << 0.0
                                  << 0.0 << 0.0 << u"no \"Serving Benchmark Result\""_s;
        QTest::newRow("not json") << u"lines"_s << QByteArray("oops\n") << 0.0 << 0.0 << 0.0 << u"not JSON"_s;
        QTest::newRow("json without figures") << u"lines"_s << QByteArray("{\"completed\": 3}\n") << 0.0
                                              << 0.0 << 0.0 << u"no median_ttft_ms"_s;
    }
    void parse() {
        QFETCH(QString, kind);
        QFETCH(QByteArray, text);
        QFETCH(double, ttft);
        QFETCH(double, tpot);
        QFETCH(double, tput);
        QFETCH(QString, error);
        QString err;
        const auto r = kind == "block"_L1 ? ServingResult::fromPrintedBlock(QString::fromUtf8(text), &err)
                                          : ServingResult::fromJsonLines(text, &err);
        QCOMPARE(bool(r), error.isEmpty());
        if (!r) {
            QVERIFY2(err.contains(error), qPrintable(err));
            return;
        }
        QCOMPARE(r->medianTtftMs, ttft);
        QCOMPARE(r->medianTpotMs, tpot);
        QCOMPARE(r->outputThroughput, tput);
        if (kind == "block"_L1) {
            QCOMPARE(r->completed, 200);
            QCOMPARE(r->concurrency, 16);
            QCOMPARE(r->p99TtftMs, 389.61);
            QCOMPARE(r->medianItlMs, 11.2);
        }
    }

    void commands() {
        ServingWorkload w = *ServingWorkload::fromPreset(u"standard"_s);
        ServingBenchCommand s;
        s.framework = Framework::SGLang;
        s.port = 30001;
        s.python = u"/opt/venv/bin/python"_s;
        s.model = u"my model's dir"_s;
        QCOMPARE(
            s.manualCommand(w, 16),
            u"/opt/venv/bin/python -m sglang.bench_serving --backend sglang --host 127.0.0.1 --port 30001 "
            u"--model 'my model'\\''s dir' --dataset-name random --random-input-len 1024 "
            u"--random-output-len 128 --random-range-ratio 1 --num-prompts 200 --max-concurrency 16 "
            u"--seed 0 --output-file out.jsonl"_s);
        ServingBenchCommand v;
        v.framework = Framework::VLLM;
        v.port = 8000;
        v.python = u"/opt/venv/bin/python"_s;
        v.model = u"Qwen/Qwen3-30B-A3B"_s;
        QCOMPARE(v.manualCommand(w, 16),
                 u"/opt/venv/bin/vllm bench serve --backend vllm --base-url http://127.0.0.1:8000 --model "
                 u"Qwen/Qwen3-30B-A3B --dataset-name random --random-input-len 1024 --random-output-len 128 "
                 u"--ignore-eos --num-prompts 200 --max-concurrency 16 --seed 0 --save-result --result-dir . "
                 u"--result-filename out.json"_s);
        v.container = u"vllm server"_s;
        QVERIFY(v.manualCommand(w, 4).startsWith(u"docker exec 'vllm server' vllm bench serve "_s));
        QVERIFY(v.script(w, 4, u"abc"_s)
                    .contains(u"docker exec 'vllm server' cat -- /tmp/moetune-bench-abc/result.json"_s));
        s.host = u"::1"_s;
        QCOMPARE(s.baseUrl(), u"http://[::1]:30001"_s);
        s.port = 0;
        QVERIFY(s.validate().contains(u"port"_s));
    }

    void scriptRunsAgainstStub() {
        // The host script through a real /bin/sh: a stub "python" that writes the JSON line where
        // --output-file says; the marker and the file's text come back on stdout, the exit status kept.
        QTemporaryDir dir(QDir::tempPath() + u"/moetune serving XXXXXX"_s);
        QVERIFY(dir.isValid());
        const QString stub = dir.filePath(u"py thon"_s);
        QFile f(stub);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("#!/bin/sh\nout=\nwhile [ $# -gt 0 ]; do [ \"$1\" = --output-file ] && out=$2; shift; done\n"
                "echo '{\"completed\": 3, \"median_ttft_ms\": 9.5, \"median_tpot_ms\": 4.25, "
                "\"output_throughput\": 77}' >> \"$out\"\nexit 0\n");
        f.close();
        f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        ServingBenchCommand c;
        c.python = stub;
        ServingWorkload w = *ServingWorkload::fromPreset(u"decode"_s);
        QProcess sh;
        sh.start(u"/bin/sh"_s, {u"-c"_s, c.script(w, 16, u"n0nce"_s)});
        QVERIFY(sh.waitForFinished(10000));
        QCOMPARE(sh.exitCode(), 0);
        const QStringList out = QString::fromUtf8(sh.readAllStandardOutput()).split(u'\n');
        const qsizetype at = out.indexOf(ServingBenchCommand::resultMarker(u"n0nce"_s));
        QVERIFY2(at >= 0, qPrintable(out.join(u'\n')));
        const auto r = ServingResult::fromJsonLines(out.mid(at + 1).join(u'\n').toUtf8());
        QVERIFY(r);
        QCOMPARE(r->medianTpotMs, 4.25);
        // A missing tool: exit 127 from sh, and the sentence says so.
        c.python = dir.filePath(u"missing"_s);
        sh.start(u"/bin/sh"_s, {u"-c"_s, c.script(w, 16, u"n0nce"_s)});
        QVERIFY(sh.waitForFinished(10000));
        QCOMPARE(sh.exitCode(), 127);
        QVERIFY(ServingBenchCommand::missingToolSentence(127, QString::fromUtf8(sh.readAllStandardError()),
                                                         Framework::SGLang)
                    .contains(u"was not found"_s));
        QVERIFY(ServingBenchCommand::missingToolSentence(
                    1, u"/usr/bin/python3: No module named sglang.bench_serving"_s, Framework::SGLang)
                    .contains(u"not installed"_s));
        QVERIFY(ServingBenchCommand::missingToolSentence(1, u"Traceback: ValueError"_s, Framework::SGLang)
                    .isEmpty());
    }

    void workload() {
        QCOMPARE(ServingWorkload::presetIds(), (QStringList{u"decode"_s, u"prefill"_s, u"standard"_s}));
        QVERIFY(!ServingWorkload::fromPreset(u"nope"_s));
        const auto p = ServingWorkload::fromPreset(u"prefill"_s);
        QVERIFY(p && p->inputLen > p->outputLen && p->validate().isEmpty());
        QCOMPARE(ServingWorkload::fromJson(p->toJson()), *p);
        QString err;
        QCOMPARE(*ServingWorkload::parseConcurrencies(u"1, 16 64,16"_s), (QList<int>{1, 16, 64}));
        QVERIFY(!ServingWorkload::parseConcurrencies(u"1,x"_s, &err));
        QVERIFY(err.contains(u"\"x\""_s));
        ServingWorkload bad = *p;
        bad.concurrencies.clear();
        QVERIFY(bad.validate().contains(u"concurrency"_s));
    }
};

QTEST_GUILESS_MAIN(TestServing)
#include "tst_serving.moc"
