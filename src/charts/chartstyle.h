// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QColor>
#include <QFont>
#include <QString>

namespace moetune {

// Colours and wording shared by the charts and the PDF, so print and screen agree.
class ChartStyle {
public:
    static QColor tuned();
    static QColor defaultConfig();
    static QColor floor();
    static QColor simulated();
    // A colour for item index of count along a perceptually ordered ramp (small M dark blue -> large yellow).
    static QColor ramp(int index, int count);
    static QString simulatedBanner(); // "SIMULATED (synthetic backend): not measurements"
    static QString microseconds(double us);
};

} // namespace moetune
