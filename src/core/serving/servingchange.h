// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>

#include <cmath>

namespace moetune {

// The change of one serving metric from the boots before the push (A) to the boots after it (B): the
// medians over the legs and a 95% interval of the relative change median(B)/median(A) - 1, by a
// percentile bootstrap over the legs (each side resampled with replacement on its own, a fixed seed and
// resample count, so the same legs always give the same interval). A leg is one boot, so the interval
// covers the boot-to-boot variance that order-balanced pairs are run for; one leg a side gives no
// interval. With few legs the bootstrap interval is narrower than the truth: 4+4 legs is the usual
// minimum (docs/servers.md section 10).
struct ServingChange {
    enum class Outcome { Better, NoChange, Worse };
    static constexpr int kResamples = 4000;
    static constexpr unsigned long long kSeed = 20;

    double medianA = NAN;
    double medianB = NAN;
    double changePct = NAN; // (medianB / medianA - 1) * 100
    double lowPct = NAN;    // 95% interval of the change, percent; NaN with fewer than 2 legs a side
    double highPct = NAN;
    int legsA = 0;
    int legsB = 0;

    static double median(QList<double> values); // NaN for none
    static ServingChange compute(const QList<double> &a, const QList<double> &b, int resamples = kResamples,
                                 unsigned long long seed = kSeed);
    bool hasInterval() const { return std::isfinite(lowPct) && std::isfinite(highPct); }
    // Better: the interval excludes 0 on the good side (below for latencies, above for throughput).
    Outcome outcome(bool lowerIsBetter) const;
};

} // namespace moetune
