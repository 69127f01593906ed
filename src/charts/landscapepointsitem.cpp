// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "charts/landscapepointsitem.h"

#include <QPainter>

#include <cmath>

namespace moetune {

LandscapePointsItem::LandscapePointsItem(QGraphicsItem *parent)
    : QGraphicsItem(parent) {
    setZValue(5); // above the grid, below the winner/default markers
    // Hover repaints a few pixels around the highlight; the points come from a cached pixmap then.
    setCacheMode(QGraphicsItem::DeviceCoordinateCache);
}

void LandscapePointsItem::setData(const QList<QPointF> &values, const QList<int> &colour,
                                  const QList<QColor> &colours) {
    m_values = values;
    m_colour = colour;
    m_colours = colours;
    remap();
}

void LandscapePointsItem::setMapping(const QRectF &plotArea, double xMin, double xMax, double yMin,
                                     double yMax) {
    m_plot = plotArea;
    m_xMin = xMin;
    m_xMax = xMax;
    m_yMin = yMin;
    m_yMax = yMax;
    remap();
}

void LandscapePointsItem::remap() {
    prepareGeometryChange();
    m_pixels.resize(m_values.size());
    m_byColour = QList<QList<QPointF>>(m_colours.size());
    const double lx = m_xMax > m_xMin ? m_plot.width() / (m_xMax - m_xMin) : 0;
    const double l0 = std::log10(m_yMin);
    const double ly = m_yMax > m_yMin ? m_plot.height() / (std::log10(m_yMax) - l0) : 0;
    m_cols = qMax(1, int(std::ceil(m_plot.width() / kCell)) + 1);
    m_rows = qMax(1, int(std::ceil(m_plot.height() / kCell)) + 1);
    m_grid = QList<QList<int>>(qsizetype(m_cols) * m_rows);
    for (qsizetype i = 0; i < m_values.size(); ++i) {
        const QPointF &v = m_values.at(i);
        const QPointF p(m_plot.left() + (v.x() - m_xMin) * lx,
                        m_plot.bottom() - (std::log10(qMax(v.y(), 1e-9)) - l0) * ly);
        m_pixels[i] = p;
        const int c = m_colour.value(i);
        if (c >= 0 && c < m_byColour.size())
            m_byColour[c].append(p);
        const int cx = int((p.x() - m_plot.left()) / kCell);
        const int cy = int((p.y() - m_plot.top()) / kCell);
        if (cx >= 0 && cy >= 0 && cx < m_cols && cy < m_rows)
            m_grid[qsizetype(cy) * m_cols + cx].append(int(i));
    }
    update();
}

int LandscapePointsItem::nearest(const QPointF &chartPos, double radius) const {
    const int cx = int(std::floor((chartPos.x() - m_plot.left()) / kCell));
    const int cy = int(std::floor((chartPos.y() - m_plot.top()) / kCell));
    const int reach = int(std::ceil(radius / kCell));
    int best = -1;
    double bestD = radius * radius;
    for (int y = cy - reach; y <= cy + reach; ++y) {
        if (y < 0 || y >= m_rows)
            continue;
        for (int x = cx - reach; x <= cx + reach; ++x) {
            if (x < 0 || x >= m_cols)
                continue;
            for (int i : m_grid.at(qsizetype(y) * m_cols + x)) {
                const QPointF d = m_pixels.at(i) - chartPos;
                const double dd = d.x() * d.x() + d.y() * d.y();
                if (dd <= bestD) {
                    bestD = dd;
                    best = i;
                }
            }
        }
    }
    return best;
}

QRectF LandscapePointsItem::boundingRect() const {
    return m_plot.adjusted(-4, -4, 4, 4);
}

void LandscapePointsItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *) {
    painter->save();
    painter->setClipRect(m_plot.adjusted(-3, -3, 3, 3));
    const double size =
        m_values.size() > 5000 ? 3.0 : (m_values.size() > 500 ? 4.5 : (m_values.size() > 100 ? 6.0 : 8.0));
    for (qsizetype c = 0; c < m_byColour.size(); ++c) {
        if (m_byColour.at(c).isEmpty())
            continue;
        QColor colour = m_colours.at(c);
        colour.setAlphaF(m_values.size() > 5000 ? 0.6f : 0.85f);
        QPen pen(colour, size, Qt::SolidLine, Qt::RoundCap);
        painter->setPen(pen);
        painter->drawPoints(m_byColour.at(c).constData(), int(m_byColour.at(c).size()));
    }
    painter->restore();
}

} // namespace moetune
