// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "charts/latencychart.h"

#include "charts/chartrender.h"
#include "charts/chartstyle.h"

#include <QChart>
#include <QChartView>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QVBoxLayout>

#include <cmath>

using namespace Qt::StringLiterals;

namespace moetune {

LatencyChart::LatencyChart(QWidget *parent)
    : QWidget(parent)
    , m_view(new QChartView(this))
    , m_chart(new QChart()) {
    setObjectName(u"latencyChart"_s);
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_view->setChart(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    connect(m_chart, &QChart::plotAreaChanged, this, &LatencyChart::placeLabels);
}

LatencyChart::~LatencyChart() = default;

QChart *LatencyChart::chart() const {
    return m_chart;
}

void LatencyChart::clear() {
    qDeleteAll(m_labels);
    m_labels.clear();
    m_labelAnchors.clear();
    m_chart->removeAllSeries();
    const auto axes = m_chart->axes();
    for (auto *axis : axes) {
        m_chart->removeAxis(axis);
        delete axis;
    }
    m_tuned = nullptr;
}

void LatencyChart::setResult(const SweepResult &result) {
    clear();
    auto *tuned = new QLineSeries();
    tuned->setName(tr("tuned"));
    QPen tp(ChartStyle::tuned());
    tp.setWidthF(2.5);
    tuned->setPen(tp);
    tuned->setPointsVisible(true);
    tuned->setMarkerSize(5);
    auto *dflt = new QLineSeries();
    dflt->setName(tr("default config"));
    // Wide and pale under the tuned line: where the two are equal the default still shows on both sides.
    QColor pale = ChartStyle::defaultConfig();
    pale.setAlphaF(0.55f);
    QPen dp(pale);
    dp.setWidthF(6);
    dflt->setPen(dp);
    dflt->setPointsVisible(true);
    dflt->setMarkerSize(8);
    auto *floor = new QLineSeries();
    floor->setName(tr("HBM floor"));
    QPen fp(ChartStyle::floor());
    fp.setWidthF(1.5);
    fp.setStyle(Qt::DashLine);
    floor->setPen(fp);

    double lo = 1e300, hi = 0;
    int mMin = 1 << 30, mMax = 1;
    for (const auto &b : result.perBatch) {
        if (b.m <= 0)
            continue;
        mMin = qMin(mMin, b.m);
        mMax = qMax(mMax, b.m);
        auto add = [&](QLineSeries *s, double us) {
            if (!known(us) || us <= 0)
                return;
            s->append(b.m, us);
            lo = qMin(lo, us);
            hi = qMax(hi, us);
        };
        add(tuned, b.bestUs);
        add(dflt, b.defaultUs);
        add(floor, b.rooflineUs);
        if (known(b.bestUs) && known(b.speedup)) {
            auto *label = new QGraphicsSimpleTextItem(u"%1x"_s.arg(b.speedup, 0, 'f', 2), m_chart);
            QFont f = label->font();
            f.setPointSizeF(8);
            f.setBold(b.speedup >= 1.10);
            label->setFont(f);
            label->setBrush(b.speedup < 1.0 ? ChartStyle::defaultConfig() : QColor(Qt::black));
            label->setZValue(20);
            m_labels.append(label);
            m_labelAnchors.append(QPointF(b.m, known(b.defaultUs) ? qMax(b.bestUs, b.defaultUs) : b.bestUs));
        }
    }
    // The floor is in the legend only when the run measured it (a legend entry with no line misleads).
    QList<QLineSeries *> shown{dflt, tuned};
    if (floor->count() > 0)
        shown.prepend(floor);
    else
        delete floor;
    for (auto *s : std::as_const(shown))
        m_chart->addSeries(s);
    m_tuned = tuned;

    auto *x = new QLogValueAxis();
    x->setBase(2);
    x->setLabelFormat(u"%d"_s);
    x->setTitleText(tr("batch size M (tokens, log scale)"));
    x->setRange(qMax(0.5, mMin / 1.5), mMax * 1.5);
    auto *y = new QLogValueAxis();
    y->setBase(10);
    y->setLabelFormat(u"%g"_s);
    y->setMinorTickCount(8);
    y->setTitleText(tr("µs per call (log)"));
    if (hi > 0)
        y->setRange(std::pow(10.0, std::floor(std::log10(lo * 0.9))),
                    std::pow(10.0, std::ceil(std::log10(hi * 1.25))));
    m_chart->addAxis(x, Qt::AlignBottom);
    m_chart->addAxis(y, Qt::AlignLeft);
    for (auto *s : std::as_const(shown)) {
        s->attachAxis(x);
        s->attachAxis(y);
    }
    QString title = tr("Tuned vs default, %1 on %2").arg(result.shapeText(), result.deviceName);
    if (result.simulated) {
        title = ChartStyle::simulatedBanner() + u"<br>"_s + title; // HTML: "\n" showed as a space
        m_chart->setTitleBrush(ChartStyle::simulated());
    } else {
        m_chart->setTitleBrush(QColor(Qt::black));
    }
    m_chart->setTitle(title);
    placeLabels();
}

void LatencyChart::placeLabels() {
    if (!m_tuned)
        return;
    // Left to right; a label that would overlap the last one shown is left out (the speedup chart and
    // the table have every value), so neighbouring sizes (1536, 2048) never print over each other.
    QRectF last;
    for (qsizetype i = 0; i < m_labels.size(); ++i) {
        const QPointF at = m_chart->mapToPosition(m_labelAnchors.at(i), m_tuned);
        QGraphicsSimpleTextItem *label = m_labels.at(i);
        const QRectF box = label->boundingRect();
        label->setPos(at.x() - box.width() / 2, at.y() - box.height() - 6);
        const QRectF placed = label->sceneBoundingRect().adjusted(-2, 0, 2, 0);
        const bool overlaps = !last.isNull() && placed.intersects(last);
        label->setVisible(!overlaps);
        if (!overlaps)
            last = placed;
    }
}

void LatencyChart::renderTo(QPainter *painter, const QRectF &rect, const QSizeF &layoutSize) {
    ChartRender::render(m_chart, painter, rect, layoutSize);
}

QList<QRectF> LatencyChart::visibleLabelRects() const {
    QList<QRectF> out;
    for (const auto *l : m_labels)
        if (l->isVisible())
            out.append(l->sceneBoundingRect());
    return out;
}

QStringList LatencyChart::speedupLabels() const {
    QStringList out;
    for (const auto *l : m_labels)
        out.append(l->text());
    return out;
}

int LatencyChart::pointCount(const QString &seriesName) const {
    const auto series = m_chart->series();
    for (const auto *s : series)
        if (s->name() == seriesName)
            return int(static_cast<const QXYSeries *>(s)->count());
    return -1;
}

} // namespace moetune
