// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "charts/servingchart.h"

#include "charts/chartrender.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <cmath>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QColor outcomeColour(ServingChange::Outcome o) {
    switch (o) {
    case ServingChange::Outcome::Better:
        return QColor(0x1a, 0x7f, 0x37);
    case ServingChange::Outcome::Worse:
        return QColor(0xc0, 0x39, 0x2b);
    case ServingChange::Outcome::NoChange:
        break;
    }
    return QColor(0x55, 0x60, 0x70);
}

} // namespace

ServingChart::ServingChart(QWidget *parent)
    : QWidget(parent)
    , m_view(new QChartView(this))
    , m_chart(new QChart()) {
    setObjectName(u"servingChart"_s);
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->legend()->hide();
    m_view->setChart(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    clear();
}

ServingChart::~ServingChart() = default;

QChart *ServingChart::chart() const {
    return m_chart;
}

void ServingChart::clear() {
    m_chart->removeAllSeries();
    for (QAbstractAxis *a : m_chart->axes())
        m_chart->removeAxis(a);
    m_rows = 0;
    m_intervals = 0;
    m_chart->setTitle(u"Serving before and after: no benchmark yet"_s);
}

void ServingChart::setComparison(const ServingComparison &c) {
    clear();
    QList<ServingComparison::Row> rows;
    for (const ServingComparison::Row &r : c.rows()) {
        if (std::isfinite(r.change.changePct))
            rows.append(r);
    }
    const int done = c.completePairs();
    // Short lines (the title is HTML): one long line was cut at 1440x900 ("serving fig...", issue 45).
    QString title = u"Serving after the push vs before (%1)<br>improvement, primary 95% interval, "
                    u"secondary Bonferroni"_s.arg(done >= 2 ? u"%1 pairs of boots"_s.arg(done)
                                                            : u"%1 pair, no interval"_s.arg(done));
    if (c.servingSimulated)
        title += u"<br>serving figures SIMULATED"_s;
    else if (c.configsSimulated)
        title += u"<br>pushed configs SIMULATED"_s;
    m_chart->setTitle(rows.isEmpty() ? u"Serving before and after: waiting for a leg before and after"_s
                                     : title);
    if (rows.isEmpty())
        return;
    auto *x = new QValueAxis;
    x->setTitleText(u"improvement after the push (%): right of 0 is faster"_s);
    x->setLabelFormat(u"%+.0f"_s);
    auto *y = new QCategoryAxis;
    y->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_chart->addAxis(x, Qt::AlignBottom);
    m_chart->addAxis(y, Qt::AlignLeft);
    // The axis spans the points and the primary interval; a secondary interval (Bonferroni, very wide at
    // 2 pairs) widens it only up to twice that span, beyond which its bar runs off the plot's edge.
    double lo = 0;
    double hi = 0;
    for (const ServingComparison::Row &r : rows) {
        const bool lower = ServingResult::lowerIsBetter(r.metric);
        const double at = improvement(r.change.changePct, lower);
        lo = qMin(lo, at);
        hi = qMax(hi, at);
        if (r.primary && r.change.hasInterval()) {
            lo = qMin(lo, qMin(improvement(r.change.lowPct, lower), improvement(r.change.highPct, lower)));
            hi = qMax(hi, qMax(improvement(r.change.lowPct, lower), improvement(r.change.highPct, lower)));
        }
    }
    const double reach = 2 * qMax(10.0, qMax(-lo, hi));
    for (const ServingComparison::Row &r : rows) {
        if (r.primary || !r.change.hasInterval())
            continue;
        const bool lower = ServingResult::lowerIsBetter(r.metric);
        for (double e : {improvement(r.change.lowPct, lower), improvement(r.change.highPct, lower)}) {
            lo = qMin(lo, qMax(-reach, e));
            hi = qMax(hi, qMin(reach, e));
        }
    }
    const int n = int(rows.size());
    QList<QPair<QString, double>> labels;
    for (int i = 0; i < n; ++i) {
        const ServingComparison::Row &r = rows[i];
        const bool lower = ServingResult::lowerIsBetter(r.metric);
        const double at = improvement(r.change.changePct, lower);
        const double yv = n - 1 - i; // first row on top
        const QColor colour = outcomeColour(r.outcome);
        if (r.change.hasInterval()) {
            // Clipped to the axis: the plot draws nothing past its edge.
            const double a = qBound(lo - 1000, improvement(r.change.lowPct, lower), hi + 1000);
            const double b = qBound(lo - 1000, improvement(r.change.highPct, lower), hi + 1000);
            auto *bar = new QLineSeries;
            bar->append(a, yv);
            bar->append(b, yv);
            bar->setPen(QPen(colour, 4, Qt::SolidLine, Qt::RoundCap));
            m_chart->addSeries(bar);
            bar->attachAxis(x);
            bar->attachAxis(y);
            ++m_intervals;
        }
        auto *dot = new QScatterSeries;
        dot->append(at, yv);
        dot->setMarkerSize(r.primary ? 15 : 11);
        dot->setColor(colour);
        dot->setBorderColor(Qt::white);
        m_chart->addSeries(dot);
        dot->attachAxis(x);
        dot->attachAxis(y);
        labels.prepend({u"%1, %2: %3%4%"_s.arg(ServingResult::metricName(r.metric))
                            .arg(r.primary ? u"PRIMARY, all c"_s : u"c=%1"_s.arg(r.concurrency))
                            .arg(at >= 0 ? u"+"_s : QString())
                            .arg(at, 0, 'f', 1),
                        yv});
    }
    // QCategoryAxis takes categories in increasing order only (the first row is on top).
    for (const auto &[label, value] : labels)
        y->append(label, value);
    const double pad = qMax(2.0, (hi - lo) * 0.12);
    x->setRange(lo - pad, hi + pad);
    y->setRange(-0.6, n - 0.4);
    y->setStartValue(-0.6);
    auto *zero = new QLineSeries;
    zero->append(0, -0.6);
    zero->append(0, n - 0.4);
    zero->setPen(QPen(QColor(0x33, 0x33, 0x33), 1.2, Qt::DashLine));
    m_chart->addSeries(zero);
    zero->attachAxis(x);
    zero->attachAxis(y);
    m_rows = n;
}

void ServingChart::renderTo(QPainter *painter, const QRectF &rect, const QSizeF &layoutSize) {
    ChartRender::render(m_chart, painter, rect, layoutSize);
}

} // namespace moetune
