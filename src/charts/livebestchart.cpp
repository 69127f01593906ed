// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "charts/livebestchart.h"

#include "charts/chartstyle.h"

#include <QChart>
#include <QChartView>
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QJsonArray>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QSet>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

int opId(const QString &op) {
    if (op == "up"_L1)
        return 1;
    if (op == "down"_L1)
        return 2;
    return 0;
}

quint64 opKey(int op, int m) {
    return (quint64(op) << 32) | quint32(m);
}

} // namespace

double LiveBestChart::niceTickStep(double span) {
    if (!(span > 5))
        return 1;
    const double raw = span / 5;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double f : {1.0, 2.0, 5.0})
        if (f * power >= raw)
            return f * power;
    return 10 * power;
}

LiveBestChart::LiveBestChart(QWidget *parent)
    : QWidget(parent)
    , m_view(new QChartView(this))
    , m_chart(new QChart())
    , m_x(new QValueAxis(m_chart))
    , m_y(new QLogValueAxis(m_chart))
    , m_timer(new QTimer(this)) {
    setObjectName(u"liveBestChart"_s);
    m_chart->setTitle(tr("Best so far per batch size (log scale)"));
    m_chart->legend()->setAlignment(Qt::AlignRight);
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_defaultMargins = m_chart->margins();
    m_x->setTitleText(tr("evaluations"));
    m_x->setLabelFormat(u"%d"_s);
    // The empty chart's axis as redraw() sets it: the default five ticks over 0..1 printed "0 0 0 0 1"
    // under the chart a user sees before the first measurement.
    setXSpan(1);
    m_y->setBase(10);
    // Short: the axis title runs along the plot's height, which is about 150 px at the minimum window size;
    // the chart's title says the scale is logarithmic.
    m_y->setTitleText(tr("µs"));
    m_y->setLabelFormat(u"%g"_s);
    m_y->setMinorTickCount(8);
    m_y->setRange(1, 1000);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    m_view->setChart(m_chart); // the view owns the chart
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setObjectName(u"liveBestChartView"_s);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    m_timer->setSingleShot(true);
    m_timer->setInterval(100);
    connect(m_timer, &QTimer::timeout, this, &LiveBestChart::redraw);
    // The labels follow the plot area (a resize, new axis label widths) to where the curves end now.
    connect(m_chart, &QChart::plotAreaChanged, this, &LiveBestChart::placeEndLabels);
    // Labels move and vanish between redraws: repaint the whole view, never leave a fragment behind.
    m_view->setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
}

LiveBestChart::~LiveBestChart() = default;

QChart *LiveBestChart::chart() const {
    return m_chart;
}

void LiveBestChart::setRedrawInterval(int ms) {
    m_timer->setInterval(qMax(0, ms));
}

int LiveBestChart::redrawInterval() const {
    return m_timer->interval();
}

void LiveBestChart::reset() {
    for (auto *s : std::as_const(m_series)) {
        m_chart->removeSeries(s);
        delete s;
    }
    m_series.clear();
    qDeleteAll(m_endLabels);
    m_endLabels.clear();
    m_steps.clear();
    m_opBest.clear();
    m_partialOp.clear();
    m_ops.clear();
    m_plannedSizes.clear();
    m_evaluations = 0;
    m_startTs = m_lastTs = 0;
    m_lastSeq = -1;
    m_simulated = m_finished = m_started = false;
    scheduleRedraw();
}

void LiveBestChart::setXAxis(XAxis axis) {
    if (axis == m_xAxis)
        return;
    m_xAxis = axis;
    m_x->setTitleText(axis == XAxis::Evaluations ? tr("evaluations") : tr("seconds since the run started"));
    m_x->setLabelFormat(axis == XAxis::Evaluations ? u"%d"_s : u"%.0f"_s);
    scheduleRedraw();
}

double LiveBestChart::elapsed(const QJsonObject &o) const {
    const double ts = o.value("ts"_L1).toDouble();
    return ts > 0 && m_startTs > 0 ? ts - m_startTs : (m_lastTs > 0 ? m_lastTs - m_startTs : 0);
}

void LiveBestChart::addEvents(const QList<AgentEvent> &events) {
    for (const auto &e : events)
        addEvent(e);
}

void LiveBestChart::addEvent(const AgentEvent &event) {
    if (event.isError() || event.kind == AgentEvent::Kind::Hello)
        return;
    const qint64 seq = event.seq();
    if (seq >= 0) {
        if (seq <= m_lastSeq)
            return; // a re-attach repeats the event it resumed at
        m_lastSeq = seq;
    }
    const QJsonObject &o = event.object;
    const double ts = o.value("ts"_L1).toDouble();
    if (ts > 0) {
        if (m_startTs == 0)
            m_startTs = ts;
        m_lastTs = qMax(m_lastTs, ts);
    }
    if (o.value("simulated"_L1).toBool() && !m_simulated) {
        m_simulated = true;
        m_dirty = true;
    }
    const QString &type = event.type;
    if (type == "run_started"_L1) {
        if (!m_started) {
            m_started = true;
            const QJsonObject spec = o.value("spec"_L1).toObject();
            m_ops = spec.value("ops"_L1).toString() == "up+down"_L1 ? QList<int>{1, 2} : QList<int>{0};
            for (const auto &m : spec.value("batch_sizes"_L1).toArray())
                m_plannedSizes.append(m.toInt());
            m_finished = false;
        } else {
            m_finished = false; // resumed: the curves go on
        }
    } else if (type == "measurement"_L1 || type == "candidate_error"_L1) {
        if (o.value("round"_L1).toInt() >= 0)
            ++m_evaluations;
    } else if (type == "best"_L1) {
        const int op = opId(o.value("op"_L1).toString());
        const int m = o.value("m"_L1).toInt();
        const double us = o.value("median_us"_L1).toDouble(std::numeric_limits<double>::quiet_NaN());
        if (std::isnan(us) || us <= 0)
            return;
        m_opBest.insert(opKey(op, m), us);
        // Like with like: the up + down total once both GEMMs have a best; until then the GEMM that has
        // one on its own curve ("M=16 (up only)"), so an up+down run's chart fills from its first best.
        double total = 0;
        int partialOp = -1;
        const QList<int> ops = m_ops.isEmpty() ? QList<int>{op} : m_ops;
        for (int each : ops) {
            const auto it = m_opBest.constFind(opKey(each, m));
            if (it == m_opBest.cend()) {
                partialOp = op;
                break;
            }
            total += *it;
        }
        if (partialOp >= 0) {
            const auto first = m_partialOp.constFind(m);
            if (first != m_partialOp.cend() && *first != op)
                return; // that size's curve is of the other GEMM until the total exists
            m_partialOp.insert(m, op);
            total = us;
        } else if (m_partialOp.remove(m) > 0) {
            m_steps.remove(m); // the curve changes meaning: up+down from here on
        }
        QList<Step> &steps = m_steps[m];
        if (!steps.isEmpty() && steps.last().us == total)
            return;
        steps.append(Step{m_evaluations, elapsed(o), total});
    } else if (type == "done"_L1) {
        const QString status = o.value("status"_L1).toString();
        if (status != "detached"_L1 && status != "interrupted"_L1)
            m_finished = true;
    } else {
        return;
    }
    scheduleRedraw();
}

void LiveBestChart::scheduleRedraw() {
    m_dirty = true;
    if (!m_timer->isActive())
        m_timer->start();
}

QLineSeries *LiveBestChart::seriesFor(int m) {
    if (auto *s = m_series.value(m))
        return s;
    auto *s = new QLineSeries();
    s->setPointsVisible(false);
    m_series.insert(m, s);
    // The legend lists the series in the order they were added: re-add them all by batch size.
    for (auto *each : std::as_const(m_series))
        if (each != s)
            m_chart->removeSeries(each);
    for (auto *each : std::as_const(m_series)) { // QMap: ascending batch size
        m_chart->addSeries(each);
        each->attachAxis(m_x);
        each->attachAxis(m_y);
    }
    // Colours follow the planned sizes so a batch size keeps its colour while others appear.
    QList<int> sizes = m_plannedSizes;
    for (auto it = m_steps.cbegin(); it != m_steps.cend(); ++it)
        if (!sizes.contains(it.key()))
            sizes.append(it.key());
    std::sort(sizes.begin(), sizes.end());
    int i = 0;
    for (int size : std::as_const(sizes)) {
        if (auto *each = m_series.value(size)) {
            QPen pen(ChartStyle::ramp(i, int(sizes.size())));
            pen.setWidthF(2);
            each->setPen(pen);
        }
        ++i;
    }
    return s;
}

QString LiveBestChart::seriesName(int m) const {
    const auto it = m_partialOp.constFind(m);
    if (it == m_partialOp.cend())
        return u"M=%1"_s.arg(m);
    return tr("M=%1 (%2 only)").arg(m).arg(*it == 1 ? u"up"_s : u"down"_s);
}

QList<int> LiveBestChart::batchSizes() const {
    return m_steps.keys();
}

QStringList LiveBestChart::legendNames() const {
    QStringList names;
    for (const auto *s : m_chart->series())
        names.append(s->name());
    return names;
}

double LiveBestChart::bestUs(int m) const {
    const auto it = m_steps.constFind(m);
    return it == m_steps.cend() || it->isEmpty() ? std::numeric_limits<double>::quiet_NaN() : it->last().us;
}

QList<QPointF> LiveBestChart::curve(int m) const {
    QList<QPointF> points;
    const auto it = m_steps.constFind(m);
    if (it == m_steps.cend())
        return points;
    const double now =
        m_xAxis == XAxis::Evaluations ? double(m_evaluations) : (m_lastTs > 0 ? m_lastTs - m_startTs : 0.0);
    points.reserve(it->size() * 2 + 1);
    for (qsizetype i = 0; i < it->size(); ++i) {
        const Step &s = it->at(i);
        const double x = m_xAxis == XAxis::Evaluations ? double(s.evaluation) : s.seconds;
        if (i > 0)
            points.append(QPointF(x, it->at(i - 1).us)); // a step: the old best holds until here
        points.append(QPointF(x, s.us));
    }
    points.append(QPointF(qMax(now, points.last().x()), it->last().us));
    return points;
}

void LiveBestChart::thinLegend() {
    // 18 batch sizes do not fit the legend of a 200 px chart (1024x640): Qt's legend drops the entries
    // past its bottom (the largest size went missing) and leaves holes for hidden ones. Then this chart
    // draws its own short legend: an evenly spaced few, the smallest and the largest always (the colours
    // are one ramp between them), in the room Qt's legend had.
    qDeleteAll(m_legendItems);
    m_legendItems.clear();
    QLegend *legend = m_chart->legend();
    const QList<QAbstractSeries *> all = m_chart->series();
    QFont font = legend->font();
    const QFontMetricsF fm(font);
    const qreal step = fm.height() + 6;
    const QRectF plot = m_chart->plotArea();
    const qreal room = plot.height();
    const auto fit = qMax<qsizetype>(2, qsizetype(room / step));
    const qsizetype n = all.size();
    const bool own = n > fit && !plot.isEmpty();
    if (legend->isVisible() == own)
        legend->setVisible(!own);
    if (!own) {
        m_legendNames.clear();
        if (m_chart->margins() != m_defaultMargins)
            m_chart->setMargins(m_defaultMargins);
        return;
    }
    QList<qsizetype> shown;
    for (qsizetype k = 0; k < fit; ++k) {
        const qsizetype i = qRound(double(k) * double(n - 1) / double(fit - 1));
        if (shown.isEmpty() || shown.last() != i)
            shown.append(i);
    }
    qreal width = 0;
    for (qsizetype i : std::as_const(shown))
        width = qMax(width, fm.horizontalAdvance(all.at(i)->name()));
    const qreal box = fm.height() * 0.6;
    const qreal x = m_chart->size().width() - width - box - 22;
    qreal y = plot.top();
    m_legendNames.clear();
    for (qsizetype i : std::as_const(shown)) {
        const auto *series = static_cast<const QLineSeries *>(all.at(i));
        auto *mark = new QGraphicsRectItem(x, y + (fm.height() - box) / 2, box, box, m_chart);
        mark->setBrush(series->pen().color());
        mark->setPen(Qt::NoPen);
        auto *text = new QGraphicsSimpleTextItem(series->name(), m_chart);
        text->setFont(font);
        text->setBrush(m_chart->legend()->labelColor());
        text->setPos(x + box + 5, y);
        m_legendItems.append(mark);
        m_legendItems.append(text);
        m_legendNames.append(series->name());
        y += step;
    }
    // Keep the plot clear of it (Qt's hidden legend gave its room back to the plot).
    const QMargins margins = m_defaultMargins + QMargins(0, 0, int(width + box + 24), 0);
    if (m_chart->margins() != margins)
        m_chart->setMargins(margins);
}

QStringList LiveBestChart::visibleLegendNames() const {
    if (!m_chart->legend()->isVisible())
        return m_legendNames;
    QStringList names;
    for (QLegendMarker *marker : m_chart->legend()->markers())
        names.append(marker->label());
    return names;
}

void LiveBestChart::placeEndLabels() {
    thinLegend();
    // The batch size at the curve's end too (18 shades of one ramp are hard to match to a legend):
    // placed here, not as Qt's point labels, which drew over one another where curves end close together
    // and outside the plot, where a redraw left fragments of them.
    qDeleteAll(m_endLabels);
    m_endLabels.clear();
    const QRectF plot = m_chart->plotArea();
    if (plot.isEmpty())
        return;
    QFont font = m_chart->font();
    font.setPointSizeF(qMax(6.0, font.pointSizeF() - 1));
    const QFontMetricsF fm(font);
    struct End {
        int m;
        QPointF at;
    };
    QList<End> ends;
    for (auto it = m_series.cbegin(); it != m_series.cend(); ++it) {
        const QList<QPointF> points = curve(it.key());
        if (!points.isEmpty())
            ends.append(End{it.key(), m_chart->mapToPosition(points.last(), *it)});
    }
    std::sort(ends.begin(), ends.end(), [](const End &a, const End &b) { return a.at.y() < b.at.y(); });
    QList<QRectF> taken;
    for (const End &e : std::as_const(ends)) {
        const QString text = u"M=%1"_s.arg(e.m);
        const QSizeF size(fm.horizontalAdvance(text) + 2, fm.height());
        // Left of the curve's end, just above it; kept inside the plot.
        QRectF r(QPointF(qMin(e.at.x(), plot.right()) - size.width() - 3, e.at.y() - size.height()), size);
        r.moveTop(qBound(plot.top(), r.top(), plot.bottom() - size.height()));
        r.moveLeft(qMax(plot.left(), r.left()));
        if (r.right() > plot.right() + 0.5)
            continue; // a plot narrower than the label: the legend names it
        bool free = true;
        for (const QRectF &t : std::as_const(taken))
            free = free && !t.intersects(r);
        if (!free)
            continue;
        taken.append(r);
        auto *item = new QGraphicsSimpleTextItem(text, m_chart);
        item->setFont(font);
        const QLineSeries *series = m_series.value(e.m);
        item->setBrush(series->pen().color().darker(120));
        item->setPos(r.topLeft() + QPointF(1, 0));
        item->setZValue(10);
        item->setData(0, r);
        m_endLabels.append(item);
    }
}

QStringList LiveBestChart::endLabels() const {
    QStringList out;
    for (const auto *item : m_endLabels)
        out.append(item->text());
    return out;
}

QList<QRectF> LiveBestChart::endLabelRects() const {
    QList<QRectF> out;
    for (const auto *item : m_endLabels)
        out.append(item->data(0).toRectF());
    return out;
}

void LiveBestChart::setXSpan(double xmax) {
    // Whole-number ticks at 1, 2 or 5 times a power of ten, at most six of them: the default five ticks
    // over 0..1 evaluations (or seconds) printed "0" twice with a whole-number label format.
    const double step = niceTickStep(xmax);
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(0);
    m_x->setTickInterval(step);
    m_x->setRange(0, std::ceil(xmax / step) * step);
}

void LiveBestChart::redraw() {
    if (!m_dirty)
        return;
    m_dirty = false;
    double lo = std::numeric_limits<double>::max(), hi = 0, xmax = 1;
    for (auto it = m_steps.cbegin(); it != m_steps.cend(); ++it) {
        const QList<QPointF> points = curve(it.key());
        if (points.isEmpty())
            continue;
        QLineSeries *series = seriesFor(it.key());
        series->replace(points);
        series->setName(seriesName(it.key()));
        for (const auto &p : points) {
            lo = qMin(lo, p.y());
            hi = qMax(hi, p.y());
        }
        xmax = qMax(xmax, points.last().x());
    }
    setXSpan(xmax);
    if (hi > 0)
        m_y->setRange(std::pow(10.0, std::floor(std::log10(lo * 0.95))),
                      std::pow(10.0, std::ceil(std::log10(hi * 1.05))));
    QString title = m_finished ? tr("Best per batch size (run ended, log scale)")
                               : tr("Best so far per batch size (log scale)");
    if (m_simulated) {
        m_chart->setTitleBrush(ChartStyle::simulated());
        title = ChartStyle::simulatedBanner() + u" - "_s + title;
    } else {
        m_chart->setTitleBrush(palette().windowText());
    }
    m_chart->setTitle(title);
    placeEndLabels();
    ++m_redraws;
    Q_EMIT redrawn();
}

} // namespace moetune
