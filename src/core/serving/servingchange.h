// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>

#include <cmath>

namespace moetune {

// The change of one serving metric from the boots before the push (A) to the boots after it (B),
// estimated from the order-balanced pairs of boots (docs/serving-statistics.md): per pair the log
// ratio ln(B / A), their mean and a Student t interval with n - 1 degrees of freedom (n pairs), shown as
// a relative change exp(.) - 1 in percent. The pairing cancels linear drift over the session (A B then
// B A) and the log ratio makes the change relative. The t interval's coverage is right for normal
// per-pair log ratios at every n >= 2 (at 2 pairs the 95% quantile is t(1) = 12.71: it rarely decides,
// which is the honest answer); one pair gives no interval. Deterministic: no resampling.
struct ServingChange {
    enum class Outcome { Better, NoChange, Worse };

    double medianA = NAN; // medians over the legs (for display; the estimate comes from the pairs)
    double medianB = NAN;
    double changePct = NAN; // (exp(mean log ratio) - 1) * 100
    double lowPct = NAN;    // the interval of the change at `level`, percent; NaN with fewer than 2 pairs
    double highPct = NAN;
    double pValue = NAN; // two-sided paired t test of "no change"; NaN with fewer than 2 pairs
    double sdLog = NAN;  // standard deviation of the per-pair log ratios (the boot-to-boot noise)
    double level = 0.95;
    int pairs = 0;
    int legsA = 0;
    int legsB = 0;

    static double median(QList<double> values); // NaN for none
    // From per-pair log ratios ln(B / A) (non-finite ones dropped).
    static ServingChange fromLogRatios(const QList<double> &logRatios, double level = 0.95);
    // From paired values: a[i] and b[i] are the i-th pair's A and B legs (pairs with a value that is
    // not finite or not positive are dropped). medianA / medianB are the medians of the kept legs.
    static ServingChange paired(const QList<double> &a, const QList<double> &b, double level = 0.95);
    bool hasInterval() const { return std::isfinite(lowPct) && std::isfinite(highPct); }
    // Better / Worse only when the interval excludes 0 on that side and the change is at least
    // minEffectPct (legs a fraction of a percent apart with no spread claim nothing).
    Outcome outcome(bool lowerIsBetter, double minEffectPct = 0) const;

    // Student t: the two-sided p value of |t| with df degrees of freedom, and the quantile
    // P(T <= q) = p (p in (0.5, 1)). Cached per (p, df).
    static double tTwoSidedP(double t, int df);
    static double tQuantile(double p, int df);
    // The smallest relative change (percent, either way) that `pairs` pairs detect with probability
    // `power` by the two-sided 95% test when the per-pair log ratios spread by sdLog; NaN below 2 pairs.
    static double detectablePct(double sdLog, int pairs, double power = 0.8);
    // The fewest pairs (2..maxPairs) that detect changePct at that noise; 0 when even maxPairs cannot.
    static int pairsToDetect(double sdLog, double changePct, int maxPairs = 64, double power = 0.8);
};

} // namespace moetune
