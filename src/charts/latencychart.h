// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/sweepresult.h"

#include <QList>
#include <QRectF>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QLogValueAxis;
class QPainter;
class QScatterSeries;
QT_END_NAMESPACE

namespace moetune {

// Tuned vs default latency per batch size: log-scale batch axis (base 2) and latency axis, the HBM
// floor on the same chart, the speedup written above each batch size. The chart lives in a QChartView
// for the page and can be rendered alone (renderTo) as vectors for the PDF.
class LatencyChart : public QWidget {
    Q_OBJECT
public:
    explicit LatencyChart(QWidget *parent = nullptr);
    ~LatencyChart() override;

    void setResult(const SweepResult &result);
    void clear();
    // Draws the chart into rect of painter (vector output on a QPdfWriter); the chart is laid out
    // for rect's size while drawing and restored after.
    void renderTo(QPainter *painter, const QRectF &rect, const QSizeF &layoutSize = {});

    QChart *chart() const;
    QStringList speedupLabels() const;       // every label, in batch size order ("1.40x")
    QList<QRectF> visibleLabelRects() const; // those drawn (overlapping ones are left out)
    int pointCount(const QString &seriesName) const;

private:
    void placeLabels();

    QChartView *m_view;
    QChart *m_chart;
    QList<QGraphicsSimpleTextItem *> m_labels;
    QList<QPointF> m_labelAnchors; // (m, latency) each label sits above
    QLineSeries *m_tuned = nullptr;
};

} // namespace moetune
