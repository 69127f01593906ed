#include "charts/chartrender.h"

#include <QChart>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QPainter>

namespace moetune {

void ChartRender::render(QChart *chart, QPainter *painter, const QRectF &target) {
    const QRectF old = chart->geometry();
    // Lay out in the target's own units so fonts keep their size relative to the page.
    chart->resize(target.size());
    chart->setPos(0, 0);
    QGraphicsScene *scene = chart->scene();
    QGraphicsScene own;
    if (!scene) {
        own.addItem(chart);
        scene = &own;
    }
    // Layout happens on the next event otherwise; force it so axes and labels are placed now.
    if (chart->layout())
        chart->layout()->activate();
    scene->render(painter, target, QRectF(QPointF(0, 0), target.size()), Qt::IgnoreAspectRatio);
    if (scene == &own)
        own.removeItem(chart);
    chart->setGeometry(old);
}

} // namespace moetune
