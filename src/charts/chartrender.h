// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QRectF>
#include <QSizeF>

QT_BEGIN_NAMESPACE
class QChart;
class QPainter;
QT_END_NAMESPACE

namespace moetune {

// Renders a chart into any painter (a QPdfWriter's too) as vector drawing: the chart is laid out at
// layoutSize (default: the target's size) for the call, scaled into target, and put back afterwards,
// so the on-screen view is unchanged. A screen-like layoutSize keeps fonts legible on a 1200 dpi page.
class ChartRender {
public:
    static void render(QChart *chart, QPainter *painter, const QRectF &target, const QSizeF &layoutSize = {});
};

} // namespace moetune
