// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/serving/servingchange.h"

#include <QHash>
#include <QMutex>

#include <algorithm>
#include <numeric>
#include <vector>

namespace moetune {

namespace {

// The regularized incomplete beta function I_x(a, b) by its continued fraction (modified Lentz), the
// standard evaluation; relative error below 1e-12 for the arguments the t distribution needs.
double betaContinuedFraction(double a, double b, double x) {
    constexpr double kTiny = 1e-300;
    constexpr double kEps = 1e-14;
    const double qab = a + b;
    const double qap = a + 1.0;
    const double qam = a - 1.0;
    double c = 1.0;
    double d = 1.0 - qab * x / qap;
    if (std::abs(d) < kTiny)
        d = kTiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 500; ++m) {
        const double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = std::abs(d) < kTiny ? kTiny : d;
        c = 1.0 + aa / c;
        c = std::abs(c) < kTiny ? kTiny : c;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = std::abs(d) < kTiny ? kTiny : d;
        c = 1.0 + aa / c;
        c = std::abs(c) < kTiny ? kTiny : c;
        d = 1.0 / d;
        const double del = d * c;
        h *= del;
        if (std::abs(del - 1.0) < kEps)
            break;
    }
    return h;
}

double incompleteBeta(double a, double b, double x) {
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    const double front =
        std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0))
        return front * betaContinuedFraction(a, b, x) / a;
    return 1.0 - front * betaContinuedFraction(b, a, 1.0 - x) / b;
}

} // namespace

double ServingChange::tTwoSidedP(double t, int df) {
    if (df < 1 || !std::isfinite(t))
        return std::isinf(t) ? 0.0 : NAN;
    const double v = df;
    return incompleteBeta(v / 2.0, 0.5, v / (v + t * t));
}

double ServingChange::tQuantile(double p, int df) {
    if (df < 1 || !(p > 0.5 && p < 1))
        return NAN;
    static QMutex mutex;
    static QHash<QPair<qint64, int>, double> cache;
    const QPair<qint64, int> key(qint64(std::llround(p * 1e12)), df);
    {
        const QMutexLocker lock(&mutex);
        if (const auto it = cache.constFind(key); it != cache.constEnd())
            return *it;
    }
    // P(T > q) = tTwoSidedP(q) / 2 falls from 1/2 at 0: bisection on [0, hi].
    const double tail = 2.0 * (1.0 - p);
    double lo = 0;
    double hi = 1;
    while (tTwoSidedP(hi, df) > tail && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = (lo + hi) / 2;
        (tTwoSidedP(mid, df) > tail ? lo : hi) = mid;
    }
    const double q = (lo + hi) / 2;
    const QMutexLocker lock(&mutex);
    cache.insert(key, q);
    return q;
}

double ServingChange::median(QList<double> values) {
    values.removeIf([](double v) { return !std::isfinite(v); });
    if (values.isEmpty())
        return NAN;
    std::sort(values.begin(), values.end());
    const qsizetype n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

ServingChange ServingChange::fromLogRatios(const QList<double> &in, double level) {
    std::vector<double> d;
    for (double v : in) {
        if (std::isfinite(v))
            d.push_back(v);
    }
    ServingChange c;
    c.level = level;
    c.pairs = int(d.size());
    if (d.empty())
        return c;
    const double n = double(d.size());
    const double mean = std::accumulate(d.begin(), d.end(), 0.0) / n;
    c.changePct = std::expm1(mean) * 100.0;
    if (d.size() < 2)
        return c;
    double ss = 0;
    for (double v : d)
        ss += (v - mean) * (v - mean);
    c.sdLog = std::sqrt(ss / (n - 1));
    const double se = c.sdLog / std::sqrt(n);
    const int df = int(d.size()) - 1;
    const double q = tQuantile(1.0 - (1.0 - level) / 2.0, df);
    c.lowPct = std::expm1(mean - q * se) * 100.0;
    c.highPct = std::expm1(mean + q * se) * 100.0;
    // se == 0 (identical ratios): the test is decided by the sign alone; the minimum effect guards it.
    c.pValue = se > 0 ? tTwoSidedP(mean / se, df) : (mean == 0 ? 1.0 : 0.0);
    return c;
}

ServingChange ServingChange::paired(const QList<double> &a, const QList<double> &b, double level) {
    QList<double> d;
    QList<double> keptA;
    QList<double> keptB;
    const auto usable = [](double v) { return std::isfinite(v) && v > 0; };
    for (qsizetype i = 0; i < qMin(a.size(), b.size()); ++i) {
        if (!usable(a[i]) || !usable(b[i]))
            continue;
        d.append(std::log(b[i] / a[i]));
        keptA.append(a[i]);
        keptB.append(b[i]);
    }
    ServingChange c = fromLogRatios(d, level);
    c.medianA = median(keptA);
    c.medianB = median(keptB);
    c.legsA = int(keptA.size());
    c.legsB = int(keptB.size());
    return c;
}

ServingChange::Outcome ServingChange::outcome(bool lowerIsBetter, double minEffectPct) const {
    if (!hasInterval() || std::abs(changePct) < minEffectPct)
        return Outcome::NoChange;
    if (highPct < 0)
        return lowerIsBetter ? Outcome::Better : Outcome::Worse;
    if (lowPct > 0)
        return lowerIsBetter ? Outcome::Worse : Outcome::Better;
    return Outcome::NoChange;
}

double ServingChange::detectablePct(double sdLog, int pairs, double power) {
    if (pairs < 2 || !std::isfinite(sdLog))
        return NAN;
    const int df = pairs - 1;
    const double logEffect = (tQuantile(0.975, df) + tQuantile(power, df)) * sdLog / std::sqrt(double(pairs));
    return std::expm1(logEffect) * 100.0;
}

int ServingChange::pairsToDetect(double sdLog, double changePct, int maxPairs, double power) {
    for (int n = 2; n <= maxPairs; ++n) {
        if (detectablePct(sdLog, n, power) <= std::abs(changePct))
            return n;
    }
    return 0;
}

} // namespace moetune
