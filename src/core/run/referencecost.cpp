// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/referencecost.h"

#include <QtGlobal>

using namespace Qt::StringLiterals;

namespace moetune {

double ReferenceCost::timingSeconds(int m) {
    // Large batches are compute-bound, so the replay time grows with M; 18 sizes give ~9 h as measured.
    const double t = (qBound(1.0, double(m), 4096.0) - 1.0) / 4095.0;
    return kTimeAtM1 + t * (kTimeAtM4096 - kTimeAtM1);
}

double ReferenceCost::estimateSeconds(const QList<int> &batchSizes, int configs) {
    double total = 0;
    for (int m : batchSizes)
        total += configs * (kCompileSeconds + timingSeconds(m));
    return total;
}

QString ReferenceCost::basis() {
    return u"the reference tuners brute-force %1 configs for each batch size on one GPU: %2 s compile "
           u"plus %3-%4 s timing per config and size, as measured on one H200"_s.arg(kConfigs)
               .arg(kCompileSeconds)
               .arg(kTimeAtM1)
               .arg(kTimeAtM4096);
}

} // namespace moetune
