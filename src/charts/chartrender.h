#pragma once

#include <QRectF>

QT_BEGIN_NAMESPACE
class QChart;
class QPainter;
QT_END_NAMESPACE

namespace moetune {

// Renders a chart into any painter (a QPdfWriter's too) as vector drawing: the chart is laid out at
// the target size for the call and put back afterwards, so the on-screen view is unchanged.
class ChartRender {
public:
    static void render(QChart *chart, QPainter *painter, const QRectF &target);
};

} // namespace moetune
