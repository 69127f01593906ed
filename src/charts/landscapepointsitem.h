// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QList>
#include <QPointF>
#include <QRectF>

namespace moetune {

// Draws many points as one item: a point list per colour, drawn with drawPoints and a round pen, so
// 30,000 points cost one paint call per colour instead of 30,000 graphics items. Keeps a pixel grid of
// the drawn positions for the nearest-point lookup of hover. Coordinates: the parent chart's.
class LandscapePointsItem : public QGraphicsItem {
public:
    explicit LandscapePointsItem(QGraphicsItem *parent = nullptr);

    // values: (x, latency µs); colour: an index into colours per point.
    void setData(const QList<QPointF> &values, const QList<int> &colour, const QList<QColor> &colours);
    // The plot area and the axis ranges the points map into (x linear, y log10).
    void setMapping(const QRectF &plotArea, double xMin, double xMax, double yMin, double yMax);
    int nearest(const QPointF &chartPos, double radius) const;
    QPointF position(int i) const { return m_pixels.at(i); }

    // Vector output (the PDF) must not come from the on-screen pixmap cache.
    void setCached(bool cached) { setCacheMode(cached ? DeviceCoordinateCache : NoCache); }

    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    void remap();

    QList<QPointF> m_values;
    QList<int> m_colour;
    QList<QColor> m_colours;
    QList<QPointF> m_pixels;
    QList<QList<QPointF>> m_byColour;
    QRectF m_plot;
    double m_xMin = 0, m_xMax = 1, m_yMin = 1, m_yMax = 10;
    // Grid of point indices by pixel cell, for hover.
    static constexpr double kCell = 8;
    int m_cols = 0, m_rows = 0;
    QList<QList<int>> m_grid;
};

} // namespace moetune
