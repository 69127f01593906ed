// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/sweepresult.h"

#include <QList>
#include <QSizeF>
#include <QStringList>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QPainter;
QT_END_NAMESPACE

namespace moetune {

// The speedup itself per batch size (default / tuned, one bar each, its value on it) over a line at
// 1.0x (the default): gains of a few percent that a log-latency chart cannot show are read here. Sizes
// without both latencies have no bar. Renders as vectors for the PDF (renderTo) like the other charts.
class SpeedupChart : public QWidget {
    Q_OBJECT
public:
    explicit SpeedupChart(QWidget *parent = nullptr);
    ~SpeedupChart() override;

    void setResult(const SweepResult &result);
    void renderTo(QPainter *painter, const QRectF &rect, const QSizeF &layoutSize = {});

    QChart *chart() const;
    QList<int> batchSizes() const { return m_sizes; } // the bars, in order
    QList<double> speedups() const { return m_speedups; }

private:
    QChartView *m_view;
    QChart *m_chart;
    QList<int> m_sizes;
    QList<double> m_speedups;
};

} // namespace moetune
