// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "charts/landscapechart.h"

#include "charts/chartrender.h"
#include "charts/chartstyle.h"
#include "charts/landscapepointsitem.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QGraphicsEllipseItem>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace Qt::StringLiterals;

namespace moetune {

LandscapeChart::LandscapeChart(QWidget *parent)
    : QWidget(parent)
    , m_view(new QChartView(this))
    , m_chart(new QChart())
    , m_item(new LandscapePointsItem(m_chart))
    , m_hoverLabel(new QLabel(this))
    , m_highlight(new QGraphicsEllipseItem(-8, -8, 16, 16, m_chart)) {
    m_highlight->setPen(QPen(Qt::black, 2));
    m_highlight->setBrush(Qt::NoBrush);
    m_highlight->setZValue(30);
    m_highlight->hide();
    setObjectName(u"landscapeChart"_s);
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->legend()->setAlignment(Qt::AlignRight);
    m_view->setChart(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setObjectName(u"landscapeView"_s);
    m_view->setMouseTracking(true);
    m_view->viewport()->setMouseTracking(true);
    m_view->viewport()->installEventFilter(this);
    m_hoverLabel->setObjectName(u"landscapeHover"_s);
    m_hoverLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_hoverLabel->setText(tr("Hover a point to see its config."));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_hoverLabel);
    connect(m_chart, &QChart::plotAreaChanged, this, [this](const QRectF &area) {
        const auto axes = m_chart->axes();
        double x0 = 0, x1 = 1, y0 = 1, y1 = 10;
        for (auto *a : axes) {
            if (a->orientation() == Qt::Horizontal) {
                if (auto *v = qobject_cast<QValueAxis *>(a)) {
                    x0 = v->min();
                    x1 = v->max();
                }
            } else if (auto *l = qobject_cast<QLogValueAxis *>(a)) {
                y0 = l->min();
                y1 = l->max();
            }
        }
        m_item->setMapping(area, x0, x1, y0, y1);
        if (m_hovered >= 0)
            m_highlight->setPos(m_item->position(m_hovered));
    });
}

LandscapeChart::~LandscapeChart() = default;

QChart *LandscapeChart::chart() const {
    return m_chart;
}

void LandscapeChart::setPoints(const QList<LandscapePoint> &points, const QString &title, bool simulated) {
    m_points = points;
    m_title = title;
    m_simulated = simulated;
    QList<int> order(m_points.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [this](int a, int b) { return m_points.at(a).medianUs < m_points.at(b).medianUs; });
    m_rank = QList<int>(m_points.size());
    for (qsizetype r = 0; r < order.size(); ++r)
        m_rank[order.at(r)] = int(r);
    rebuild();
}

void LandscapeChart::setXMode(XMode mode, Parameter xParameter) {
    m_xMode = mode;
    m_xParameter = xParameter;
    rebuild();
}

void LandscapeChart::setColorBy(Parameter parameter) {
    m_colorBy = parameter;
    rebuild();
}

void LandscapeChart::rebuild() {
    m_hovered = -1;
    m_chart->removeAllSeries();
    m_winner = m_default = nullptr;
    m_highlight->hide();
    const auto oldAxes = m_chart->axes();
    for (auto *a : oldAxes) {
        m_chart->removeAxis(a);
        delete a;
    }

    // Colour classes: the distinct values of the colour parameter, ascending.
    QList<int> colourValues;
    for (const auto &p : std::as_const(m_points)) {
        const int v = KernelConfigJson::value(p.config, m_colorBy);
        if (!colourValues.contains(v))
            colourValues.append(v);
    }
    std::sort(colourValues.begin(), colourValues.end());
    QList<QColor> colours;
    for (qsizetype i = 0; i < colourValues.size(); ++i)
        colours.append(ChartStyle::ramp(int(i), int(colourValues.size())));

    QList<int> xValues; // the x parameter's distinct values (Parameter mode)
    if (m_xMode == XMode::Parameter) {
        for (const auto &p : std::as_const(m_points)) {
            const int v = KernelConfigJson::value(p.config, m_xParameter);
            if (!xValues.contains(v))
                xValues.append(v);
        }
        std::sort(xValues.begin(), xValues.end());
    }

    QList<QPointF> values;
    QList<int> colourOf;
    values.reserve(m_points.size());
    colourOf.reserve(m_points.size());
    double lo = 1e300, hi = 0;
    for (qsizetype i = 0; i < m_points.size(); ++i) {
        const auto &p = m_points.at(i);
        double x = m_rank.at(i) + 1;
        if (m_xMode == XMode::Parameter) {
            // Deterministic jitter inside the column so equal values do not hide each other.
            const quint64 h = KernelConfigJson::packed(p.config) * 0x9E3779B97F4A7C15ull;
            const double jitter = (double((h >> 40) & 0xffff) / 65535.0 - 0.5) * 0.7;
            x = double(xValues.indexOf(KernelConfigJson::value(p.config, m_xParameter))) + jitter;
        }
        values.append(QPointF(x, p.medianUs));
        colourOf.append(int(colourValues.indexOf(KernelConfigJson::value(p.config, m_colorBy))));
        lo = qMin(lo, p.medianUs);
        hi = qMax(hi, p.medianUs);
    }
    if (hi <= 0) {
        lo = 1;
        hi = 10;
    }

    QAbstractAxis *xAxis = nullptr;
    double x0 = 0, x1 = 1;
    if (m_xMode == XMode::Rank) {
        auto *axis = new QValueAxis();
        x0 = 0;
        x1 = qMax(2.0, double(m_points.size()) + 1);
        axis->setRange(x0, x1);
        axis->setLabelFormat(u"%d"_s);
        axis->setTitleText(tr("rank (1 = fastest)"));
        xAxis = axis;
    } else {
        auto *axis = new QCategoryAxis();
        x0 = -0.5;
        x1 = qMax(0.5, double(xValues.size()) - 0.5);
        axis->setMin(x0);
        axis->setMax(x1);
        for (qsizetype i = 0; i < xValues.size(); ++i)
            axis->append(QString::number(xValues.at(i)), double(i) + 0.5);
        axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
        axis->setTitleText(KernelConfigJson::name(m_xParameter));
        xAxis = axis;
    }
    auto *yAxis = new QLogValueAxis();
    // Base 2 labels a narrow latency range (one config space spans ~2-5x) with more than one tick; the
    // range reaches out to the powers of the base around the points, so there are always two or more
    // labelled ticks (412-900 µs alone would show only 512).
    const double base = hi / lo > 20 ? 10 : 2;
    yAxis->setBase(base);
    yAxis->setLabelFormat(u"%g"_s);
    yAxis->setMinorTickCount(8);
    const double logBase = std::log(base);
    const double y0 = std::pow(base, std::floor(std::log(lo / 1.08) / logBase));
    const double y1 = std::pow(base, std::ceil(std::log(hi * 1.08) / logBase));
    yAxis->setRange(y0, y1);
    yAxis->setTitleText(tr("latency (µs, log scale)"));
    m_chart->addAxis(xAxis, Qt::AlignBottom);
    m_chart->addAxis(yAxis, Qt::AlignLeft);

    // Legend entries for the colour classes (the points themselves are drawn by m_item).
    for (qsizetype i = 0; i < colourValues.size(); ++i) {
        auto *legend = new QScatterSeries();
        legend->setName(u"%1=%2"_s.arg(KernelConfigJson::shortName(m_colorBy)).arg(colourValues.at(i)));
        legend->setColor(colours.at(i));
        legend->setBorderColor(colours.at(i));
        legend->setMarkerSize(9);
        m_chart->addSeries(legend);
        legend->attachAxis(xAxis);
        legend->attachAxis(yAxis);
    }
    auto marker = [&](const QString &name, QScatterSeries::MarkerShape shape, const QColor &fill,
                      const QColor &border, double size) {
        auto *s = new QScatterSeries();
        s->setName(name);
        s->setMarkerShape(shape);
        s->setMarkerSize(size);
        s->setColor(fill);
        QPen pen(border);
        pen.setWidthF(2);
        s->setPen(pen);
        m_chart->addSeries(s);
        s->attachAxis(xAxis);
        s->attachAxis(yAxis);
        return s;
    };
    m_winner = marker(tr("winner"), QScatterSeries::MarkerShapeStar, QColor(0x2c, 0xa0, 0x2c), Qt::black, 18);
    m_default = marker(tr("default config"), QScatterSeries::MarkerShapeRectangle,
                       ChartStyle::defaultConfig(), Qt::black, 12);
    for (qsizetype i = 0; i < m_points.size(); ++i) {
        if (m_points.at(i).winner)
            m_winner->append(values.at(i));
        if (m_points.at(i).isDefault)
            m_default->append(values.at(i));
    }

    QString title = m_title.isEmpty() ? tr("Landscape") : m_title;
    title += tr(" (%n configs)", nullptr, int(m_points.size()));
    if (m_simulated) {
        title = ChartStyle::simulatedBanner() + u"<br>"_s + title; // HTML: "\n" showed as a space
        m_chart->setTitleBrush(ChartStyle::simulated());
    } else {
        m_chart->setTitleBrush(QColor(Qt::black));
    }
    m_chart->setTitle(title);
    m_item->setData(values, colourOf, colours);
    m_item->setMapping(m_chart->plotArea(), x0, x1, y0, y1);
    m_hoverLabel->setText(m_points.isEmpty() ? tr("No config was timed at this batch size.")
                                             : tr("Hover a point to see its config."));
}

QString LandscapeChart::describe(const LandscapePoint &p, int rank, int count) {
    QString s =
        u"%1  %2  rank %3 of %4"_s.arg(KernelConfigJson::key(p.config), ChartStyle::microseconds(p.medianUs))
            .arg(rank + 1)
            .arg(count);
    if (known(p.spread))
        s += u"  spread %1%"_s.arg(p.spread * 100.0, 0, 'f', 1);
    s += u"  (%1 timing%2)"_s.arg(p.timings).arg(p.timings == 1 ? QString() : u"s"_s);
    if (p.winner)
        s += u"  WINNER"_s;
    if (p.isDefault)
        s += u"  DEFAULT CONFIG"_s;
    return s;
}

int LandscapeChart::pointAt(const QPoint &pos) const {
    const QPoint viewportPos = m_view->viewport()->mapFrom(this, pos);
    const QPointF scenePos = m_view->mapToScene(viewportPos);
    const QPointF chartPos = m_chart->mapFromScene(scenePos);
    return m_item->nearest(chartPos, 6.0);
}

QPoint LandscapeChart::pointPosition(int i) const {
    const QPointF scenePos = m_chart->mapToScene(m_item->position(i));
    return m_view->viewport()->mapTo(this, m_view->mapFromScene(scenePos));
}

int LandscapeChart::hoverAt(const QPoint &pos) {
    const int i = pointAt(pos);
    if (i == m_hovered)
        return i;
    m_hovered = i;
    // A plain graphics item, not a chart series: moving it repaints a few pixels, not the chart.
    if (i >= 0)
        m_highlight->setPos(m_item->position(i));
    m_highlight->setVisible(i >= 0);
    const QString text = i >= 0 ? describe(m_points.at(i), m_rank.at(i), int(m_points.size()))
                                : tr("Hover a point to see its config.");
    m_hoverLabel->setText(text);
    Q_EMIT hovered(i, text);
    return i;
}

QString LandscapeChart::hoverText() const {
    return m_hoverLabel->text();
}

bool LandscapeChart::eventFilter(QObject *watched, QEvent *event) {
    if (watched == m_view->viewport() && event->type() == QEvent::MouseMove) {
        const auto *me = static_cast<QMouseEvent *>(event);
        hoverAt(m_view->viewport()->mapTo(this, me->position().toPoint()));
    }
    return QWidget::eventFilter(watched, event);
}

void LandscapeChart::renderTo(QPainter *painter, const QRectF &rect, const QSizeF &layoutSize) {
    m_item->setCached(false);
    ChartRender::render(m_chart, painter, rect, layoutSize);
    m_item->setCached(true);
}

} // namespace moetune
