// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/serving/servingchange.h"

#include <algorithm>
#include <random>
#include <vector>

namespace moetune {

double ServingChange::median(QList<double> values) {
    values.removeIf([](double v) { return !std::isfinite(v); });
    if (values.isEmpty())
        return NAN;
    std::sort(values.begin(), values.end());
    const qsizetype n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

ServingChange ServingChange::compute(const QList<double> &aIn, const QList<double> &bIn, int resamples,
                                     unsigned long long seed) {
    QList<double> a = aIn;
    QList<double> b = bIn;
    a.removeIf([](double v) { return !std::isfinite(v) || v <= 0; });
    b.removeIf([](double v) { return !std::isfinite(v) || v <= 0; });
    ServingChange c;
    c.legsA = int(a.size());
    c.legsB = int(b.size());
    c.medianA = median(a);
    c.medianB = median(b);
    if (c.legsA == 0 || c.legsB == 0)
        return c;
    c.changePct = (c.medianB / c.medianA - 1.0) * 100.0;
    if (c.legsA < 2 || c.legsB < 2 || resamples < 40)
        return c;
    // mt19937_64 is specified bit for bit by the standard; the modulo keeps the draw portable (the
    // standard distributions are not), its bias is below 1e-17 for a few legs.
    std::mt19937_64 gen(seed);
    std::vector<double> stats;
    stats.reserve(size_t(resamples));
    QList<double> ra(a.size());
    QList<double> rb(b.size());
    for (int r = 0; r < resamples; ++r) {
        for (double &v : ra)
            v = a[qsizetype(gen() % quint64(a.size()))];
        for (double &v : rb)
            v = b[qsizetype(gen() % quint64(b.size()))];
        stats.push_back((median(rb) / median(ra) - 1.0) * 100.0);
    }
    std::sort(stats.begin(), stats.end());
    // Percentile interval: the 2.5% and 97.5% order statistics.
    c.lowPct = stats[size_t(std::floor(0.025 * resamples))];
    c.highPct = stats[size_t(std::ceil(0.975 * resamples)) - 1];
    return c;
}

ServingChange::Outcome ServingChange::outcome(bool lowerIsBetter) const {
    if (!hasInterval())
        return Outcome::NoChange;
    if (highPct < 0)
        return lowerIsBetter ? Outcome::Better : Outcome::Worse;
    if (lowPct > 0)
        return lowerIsBetter ? Outcome::Worse : Outcome::Better;
    return Outcome::NoChange;
}

} // namespace moetune
