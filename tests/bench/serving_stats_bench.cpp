// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The serving verdict's error rates, through the code the app and the CLI use (ServingComparison's
// verdict, primary interval and adaptive stopping rule; docs/serving-statistics.md). Simulated legs, one
// benchmark run per concurrency (1, 16, 64, decode preset: the primary metric is median TPOT), in the
// A B B A order, for several noise models of the boot-to-boot variation; prints:
//   - the false-claim rate (Faster or Slower) when nothing changed, at 2..8 pairs (goal <= 5%);
//   - the primary 95% interval's coverage of the true change for changes of 0, 3 and 10% (goal >= 93%);
//   - the power (Faster said) at the default number of pairs for changes of 3, 5, 10 and 20%;
//   - the adaptive mode (pairs added until the interval is narrower than the 5% margin, cap 8): its
//     false-claim rate, coverage and mean number of pairs.
// Usage: serving_stats_bench [trials per cell, default 4000] [seed, default 1]. A figure printed, not a
// timed test: ctest runs it once with few trials as a smoke test only.
#include "core/serving/servingcomparison.h"

#include <QCoreApplication>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

struct Model {
    const char *name;
    const char *description;
    // The log noise of leg `index` (of `total`) at one boot: its boot-to-boot part.
    std::function<double(std::mt19937_64 &, int index, int total, int outlierLeg)> boot;
};

double normal(std::mt19937_64 &g) {
    return std::normal_distribution<double>(0.0, 1.0)(g);
}

QList<Model> models() {
    return {
        {"independent", "independent boots, 3% log-normal",
         [](std::mt19937_64 &g, int, int, int) { return 0.03 * normal(g); }},
        {"quiet", "independent boots, 1% log-normal",
         [](std::mt19937_64 &g, int, int, int) { return 0.01 * normal(g); }},
        {"drift", "2% boots + drift of +1% per leg over the session",
         [](std::mt19937_64 &g, int i, int, int) { return 0.02 * normal(g) + 0.01 * i; }},
        {"outlier", "3% boots + one leg 30% slow",
         [](std::mt19937_64 &g, int i, int, int out) {
             return 0.03 * normal(g) + (i == out ? std::log(1.3) : 0.0);
         }},
        {"heavy tails", "boots t(3)-distributed, scale 2%",
         [](std::mt19937_64 &g, int, int, int) {
             const double chi = std::chi_squared_distribution<double>(3.0)(g);
             return 0.02 * normal(g) / std::sqrt(chi / 3.0);
         }},
    };
}

const QList<int> kConcurrencies{1, 16, 64};

// One leg: per concurrency a run whose TPOT is base * exp(boot + change (B) + 0.5% per-run noise).
ServingComparison::Leg leg(QChar arm, double bootLog, double changeLog, std::mt19937_64 &g) {
    ServingComparison::Leg l;
    l.arm = arm;
    for (int c : kConcurrencies) {
        ServingResult r;
        r.concurrency = c;
        r.completed = 200;
        const double f = std::exp(bootLog + (arm == u'B' ? changeLog : 0.0) + 0.005 * normal(g));
        r.medianTpotMs = (8.0 + 0.05 * c) * f;
        r.medianTtftMs = (40.0 + 2.0 * c) * std::exp(0.03 * normal(g));
        r.outputThroughput = 100.0 * c / f;
        l.results.append(r);
    }
    return l;
}

ServingComparison base(int pairs) {
    ServingComparison c;
    c.workload = *ServingWorkload::fromPreset(u"decode"_s);
    c.workload.concurrencies = kConcurrencies;
    c.rigorous = true;
    c.pairs = pairs;
    return c;
}

struct Cell {
    int trials = 0;
    int claims = 0;       // Faster or Slower said
    int faster = 0;       // Faster said
    int covered = 0;      // the primary interval holds the true change
    int withInterval = 0; // trials with an interval
    long pairsUsed = 0;
};

void record(Cell &cell, const ServingComparison &c, double truePct) {
    ++cell.trials;
    const ServingComparison::Verdict v = c.verdict();
    cell.claims += v == ServingComparison::Verdict::Faster || v == ServingComparison::Verdict::Slower;
    cell.faster += v == ServingComparison::Verdict::Faster;
    const ServingChange p = c.primaryChange();
    cell.pairsUsed += p.pairs;
    if (p.hasInterval()) {
        ++cell.withInterval;
        // 1e-9: a change of exactly 0 and an interval of exactly 0 (no noise) hold it.
        cell.covered += p.lowPct <= truePct + 1e-9 && truePct - 1e-9 <= p.highPct;
    }
}

// The fixed design: `pairs` pairs in A B B A order.
Cell fixedDesign(const Model &m, int pairs, double changePct, int trials, std::mt19937_64 &g) {
    Cell cell;
    const double changeLog = std::log1p(-changePct / 100.0); // TPOT falls by changePct: faster
    const QString order = ServingComparison::legOrder(pairs, true);
    for (int t = 0; t < trials; ++t) {
        ServingComparison c = base(pairs);
        const int outlier = int(g() % quint64(order.size()));
        for (int i = 0; i < order.size(); ++i)
            c.legs.append(leg(order.at(i), m.boot(g, i, int(order.size()), outlier), changeLog, g));
        record(cell, c, std::expm1(changeLog) * 100.0);
    }
    return cell;
}

// The adaptive mode: legs are added a pair at a time, the comparison's own stopping rule asked at each
// pair boundary, as ServingFlow does.
Cell adaptiveDesign(const Model &m, int cap, double marginPct, double changePct, int trials,
                    std::mt19937_64 &g) {
    Cell cell;
    const double changeLog = std::log1p(-changePct / 100.0);
    const QString order = ServingComparison::legOrder(cap, true);
    for (int t = 0; t < trials; ++t) {
        ServingComparison c = base(cap);
        c.adaptive = true;
        c.marginPct = marginPct;
        // The outlier falls on one of the legs the run may reach.
        const int outlier = int(g() % quint64(order.size()));
        for (int i = 0; i < order.size(); ++i) {
            if (i % 2 == 0 && !c.adaptiveStop().isEmpty())
                break;
            c.legs.append(leg(order.at(i), m.boot(g, i, int(order.size()), outlier), changeLog, g));
        }
        record(cell, c, std::expm1(changeLog) * 100.0);
    }
    return cell;
}

QString rate(int k, int n) {
    return n ? QString::number(100.0 * k / n, 'f', 1) : u"-"_s;
}

} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    const int trials = args.size() > 1 ? args[1].toInt() : 4000;
    const quint64 seed = args.size() > 2 ? args[2].toULongLong() : 1;
    std::mt19937_64 g(seed);
    const int defaultPairs = 4; // ServingFlow::Plan's default
    const QList<Model> ms = models();
    // A goal is missed when a figure is past it by more than 2 Monte Carlo standard errors (a test at
    // exactly 5% lands above 5.0 in half the cells by chance); cells past it at all are counted too.
    int beyondError = 0;
    int pastStrictly = 0;
    const auto checkAtMost = [&](double ratePct, int n, double goal) {
        const double se = 100.0 * std::sqrt(goal / 100.0 * (1 - goal / 100.0) / n);
        pastStrictly += ratePct > goal;
        beyondError += ratePct > goal + 2 * se;
    };
    const auto checkAtLeast = [&](double ratePct, int n, double goal) {
        const double se = 100.0 * std::sqrt(goal / 100.0 * (1 - goal / 100.0) / n);
        pastStrictly += ratePct < goal;
        beyondError += ratePct < goal - 2 * se;
    };
    std::printf(
        "serving_stats_bench: %d trials per cell, seed %llu; decode preset (primary: median TPOT pooled "
        "over concurrency 1, 16, 64), A B B A order, margin 5%%, minimum effect 1%%\n",
        trials, static_cast<unsigned long long>(seed));
    std::printf("noise models:\n");
    for (const Model &m : ms)
        std::printf("  %-12s %s (+0.5%% per run)\n", m.name, m.description);

    std::printf("\n1. false-claim rate under no change (Faster or Slower said), %% - goal <= 5.0\n");
    std::printf("  %-12s", "model");
    for (int n = 2; n <= 8; ++n)
        std::printf(" %6s", qPrintable(u"n=%1"_s.arg(n)));
    std::printf("\n");
    for (const Model &m : ms) {
        std::printf("  %-12s", m.name);
        for (int n = 2; n <= 8; ++n) {
            const Cell c = fixedDesign(m, n, 0.0, trials, g);
            checkAtMost(100.0 * c.claims / c.trials, c.trials, 5.0);
            std::printf(" %6s", qPrintable(rate(c.claims, c.trials)));
        }
        std::printf("\n");
    }

    std::printf("\n2. coverage of the primary 95%% interval (true change of TPOT), %% - goal >= 93.0\n");
    std::printf("  %-12s %7s", "model", "change");
    for (int n = 2; n <= 8; ++n)
        std::printf(" %6s", qPrintable(u"n=%1"_s.arg(n)));
    std::printf("\n");
    for (const Model &m : ms) {
        for (double change : {0.0, 3.0, 10.0}) {
            std::printf("  %-12s %6.0f%%", m.name, -change);
            for (int n = 2; n <= 8; ++n) {
                const Cell c = fixedDesign(m, n, change, trials, g);
                checkAtLeast(100.0 * c.covered / c.withInterval, c.withInterval, 93.0);
                std::printf(" %6s", qPrintable(rate(c.covered, c.withInterval)));
            }
            std::printf("\n");
        }
    }

    std::printf("\n3. power at the default %d pairs (Faster said when TPOT falls by the change), %%\n",
                defaultPairs);
    std::printf("  %-12s %6s %6s %6s %6s\n", "model", "3%", "5%", "10%", "20%");
    for (const Model &m : ms) {
        std::printf("  %-12s", m.name);
        for (double change : {3.0, 5.0, 10.0, 20.0}) {
            const Cell c = fixedDesign(m, defaultPairs, change, trials, g);
            std::printf(" %6s", qPrintable(rate(c.faster, c.trials)));
        }
        std::printf("\n");
    }

    std::printf("\n4. adaptive (looks at 2, 4, 6, 8 pairs with 98.75%% intervals; stops when the interval is "
                "narrower than the 5%% margin, cap 8 pairs)\n");
    std::printf("  %-12s %7s %12s %10s %10s %11s\n", "model", "change", "false claim", "coverage", "Faster",
                "mean pairs");
    for (const Model &m : ms) {
        for (double change : {0.0, 3.0, 10.0}) {
            const Cell c = adaptiveDesign(m, 8, 5.0, change, trials, g);
            if (change == 0.0)
                checkAtMost(100.0 * c.claims / c.trials, c.trials, 5.0);
            checkAtLeast(100.0 * c.covered / c.withInterval, c.withInterval, 93.0);
            std::printf("  %-12s %6.0f%% %12s %10s %10s %11.2f\n", m.name, -change,
                        qPrintable(change == 0.0 ? rate(c.claims, c.trials) : u"-"_s),
                        qPrintable(rate(c.covered, c.withInterval)), qPrintable(rate(c.faster, c.trials)),
                        double(c.pairsUsed) / c.trials);
        }
    }
    std::printf("\nMonte Carlo standard error of a 5.0%% rate at %d trials: %.2f points\n", trials,
                100.0 * std::sqrt(0.05 * 0.95 / trials));
    std::printf("cells past a goal by more than 2 standard errors: %d; past it at all: %d\n", beyondError,
                pastStrictly);
    std::printf("every goal met (within Monte Carlo error): %s\n", beyondError == 0 ? "yes" : "NO");
    return 0;
}
