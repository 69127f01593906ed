// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "charts/speedupchart.h"

#include "charts/chartrender.h"
#include "charts/chartstyle.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <cmath>

using namespace Qt::StringLiterals;

namespace moetune {

SpeedupChart::SpeedupChart(QWidget *parent)
    : QWidget(parent)
    , m_view(new QChartView(this))
    , m_chart(new QChart()) {
    setObjectName(u"speedupChart"_s);
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_view->setChart(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
}

SpeedupChart::~SpeedupChart() = default;

QChart *SpeedupChart::chart() const {
    return m_chart;
}

void SpeedupChart::setResult(const SweepResult &result) {
    m_chart->removeAllSeries();
    for (auto *axis : m_chart->axes()) {
        m_chart->removeAxis(axis);
        delete axis;
    }
    m_sizes.clear();
    m_speedups.clear();
    QStringList categories;
    auto *bars = new QBarSet(tr("tuned: default / tuned latency"));
    bars->setColor(ChartStyle::tuned());
    bars->setBorderColor(ChartStyle::tuned().darker(130));
    bars->setLabelColor(QColor(Qt::black));
    double lo = 1.0, hi = 1.0;
    for (const BatchSummary &b : result.perBatch) {
        if (!known(b.speedup) || b.speedup <= 0)
            continue;
        m_sizes.append(b.m);
        m_speedups.append(b.speedup);
        categories.append(QString::number(b.m));
        bars->append(b.speedup);
        lo = qMin(lo, b.speedup);
        hi = qMax(hi, b.speedup);
    }
    auto *series = new QBarSeries();
    series->append(bars);
    series->setBarWidth(0.7);
    series->setLabelsVisible(true);
    series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    series->setLabelsFormat(u"@valuex"_s);
    series->setLabelsPrecision(3);
    series->setLabelsAngle(categories.size() > 12 ? -90 : 0); // 18 sizes: upright labels do not collide
    m_chart->addSeries(series);

    // The default is 1.0x: a dashed line across every bar.
    auto *one = new QLineSeries();
    one->setName(tr("default config (1.0x)"));
    QPen pen(ChartStyle::defaultConfig());
    pen.setWidthF(1.5);
    pen.setStyle(Qt::DashLine);
    one->setPen(pen);
    one->append(-0.5, 1.0);
    one->append(qMax(0.5, double(categories.size()) - 0.5), 1.0);
    m_chart->addSeries(one);

    auto *x = new QBarCategoryAxis();
    x->append(categories);
    x->setTitleText(tr("batch size M (tokens)"));
    auto *lineX = new QValueAxis(); // the 1.0 line's x: the categories' centres are 0, 1, ...
    lineX->setRange(-0.5, qMax(0.5, double(categories.size()) - 0.5));
    lineX->setVisible(false);
    auto *y = new QValueAxis();
    // Bars start at the axis' bottom: a little below the smallest value, so a 2% gain is a visible bar.
    const double span = qMax(0.04, hi - lo);
    y->setRange(qMax(0.0, qMin(lo, 1.0) - span * 0.35), hi + span * 0.3);
    y->setLabelFormat(u"%.2fx"_s);
    y->setTickCount(6);
    y->applyNiceNumbers(); // 0.80x, 1.00x, 1.20x... rather than 0.99x, 1.18x
    y->setTitleText(tr("speedup over the default"));
    m_chart->addAxis(x, Qt::AlignBottom);
    m_chart->addAxis(lineX, Qt::AlignTop);
    m_chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    one->attachAxis(lineX);
    one->attachAxis(y);
    QString title = tr("Speedup per batch size, %1 on %2").arg(result.shapeText(), result.deviceName);
    if (categories.isEmpty())
        title += tr(" (no batch size has both latencies)");
    if (result.simulated) {
        title = ChartStyle::simulatedBanner() + u"<br>"_s + title; // HTML: "\n" showed as a space
        m_chart->setTitleBrush(ChartStyle::simulated());
    } else {
        m_chart->setTitleBrush(QColor(Qt::black));
    }
    m_chart->setTitle(title);
}

void SpeedupChart::renderTo(QPainter *painter, const QRectF &rect, const QSizeF &layoutSize) {
    ChartRender::render(m_chart, painter, rect, layoutSize);
}

} // namespace moetune
