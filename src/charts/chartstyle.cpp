// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "charts/chartstyle.h"

#include <QtGlobal>

#include <array>

using namespace Qt::StringLiterals;

namespace moetune {

QColor ChartStyle::tuned() {
    return QColor(0x1f, 0x77, 0xb4);
}

QColor ChartStyle::defaultConfig() {
    return QColor(0xd6, 0x27, 0x28);
}

QColor ChartStyle::floor() {
    return QColor(0x55, 0x55, 0x55);
}

QColor ChartStyle::simulated() {
    return QColor(0xc0, 0x39, 0x2b);
}

QColor ChartStyle::ramp(int index, int count) {
    // Viridis anchors: ordered in lightness, readable for colour-blind readers and in grey print.
    static constexpr std::array<QRgb, 6> anchors = {0x440154, 0x414487, 0x2a788e,
                                                    0x22a884, 0x7ad151, 0xfde725};
    if (count <= 1)
        return QColor::fromRgb(anchors[2]);
    const double t = qBound(0.0, double(index) / double(count - 1), 1.0) * (anchors.size() - 1);
    const int i = qMin(int(t), int(anchors.size()) - 2);
    const double f = t - i;
    const QColor a = QColor::fromRgb(anchors[i]);
    const QColor b = QColor::fromRgb(anchors[i + 1]);
    return QColor::fromRgbF(float(a.redF() + f * (b.redF() - a.redF())),
                            float(a.greenF() + f * (b.greenF() - a.greenF())),
                            float(a.blueF() + f * (b.blueF() - a.blueF())));
}

QString ChartStyle::simulatedBanner() {
    return u"SIMULATED (synthetic backend): not measurements"_s;
}

QString ChartStyle::microseconds(double us) {
    if (us >= 1000)
        return u"%1 ms"_s.arg(us / 1000.0, 0, 'f', 2);
    return u"%1 µs"_s.arg(us, 0, 'f', us >= 100 ? 0 : 1);
}

} // namespace moetune
