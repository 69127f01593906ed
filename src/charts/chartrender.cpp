// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "charts/chartrender.h"

#include <QChart>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QPainter>

namespace moetune {

void ChartRender::render(QChart *chart, QPainter *painter, const QRectF &target, const QSizeF &layoutSize) {
    const QRectF old = chart->geometry();
    const QSizeF size = layoutSize.isEmpty() ? target.size() : layoutSize;
    chart->resize(size);
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
    scene->render(painter, target, QRectF(QPointF(0, 0), size), Qt::IgnoreAspectRatio);
    if (scene == &own)
        own.removeItem(chart);
    chart->setGeometry(old);
}

} // namespace moetune
