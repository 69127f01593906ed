// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/serving/servingcomparison.h"

#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QPainter;
QT_END_NAMESPACE

namespace moetune {

// The serving benchmark before and after a push: one row per metric and concurrency, the improvement
// after the push in percent (lower TTFT/TPOT and higher throughput count as positive, so right of the
// zero line is faster) as a point, its 95% interval as a bar (rows of one boot each have a point only),
// green when the interval excludes 0 on the good side, red on the bad side. Live: setComparison() after
// each leg. Rendered as vectors for the PDF (renderTo).
class ServingChart : public QWidget {
    Q_OBJECT
public:
    explicit ServingChart(QWidget *parent = nullptr);
    ~ServingChart() override;

    void setComparison(const ServingComparison &comparison);
    void clear();
    void renderTo(QPainter *painter, const QRectF &rect, const QSizeF &layoutSize = {});

    QChart *chart() const;
    int rowCount() const { return m_rows; }
    int intervalCount() const { return m_intervals; } // rows drawn with an interval bar
    // Improvement in percent (positive = better) of a change of a metric.
    static double improvement(double changePct, bool lowerIsBetter) {
        return lowerIsBetter ? -changePct : changePct;
    }

private:
    QChartView *m_view;
    QChart *m_chart;
    int m_rows = 0;
    int m_intervals = 0;
};

} // namespace moetune
