// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/agentevent.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QMap>
#include <QMargins>
#include <QPointF>
#include <QStringList>
#include <QWidget>

#include <memory>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QGraphicsItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QLogValueAxis;
class QTimer;
class QValueAxis;
QT_END_NAMESPACE

namespace moetune {

// The live best-so-far chart of a running sweep: one line per batch size, best latency (log axis) over
// evaluations or seconds since the run started.
//
// API for the Tune page: feed it EVERY agent event of the run as it arrives, in order -
//     chart->addEvent(event);            // or addEvents(list) for a batch (attach replay)
// It takes what it needs and ignores the rest:
//   run_started        first one resets the chart and reads the batch sizes and ops from its spec
//                      (a resumed run's later run_started keeps the curves);
//   measurement / candidate_error   count one evaluation (x axis "evaluations");
//   best               moves that batch size's curve (up + down summed when tuned separately, once
//                      both have a best; until then the one GEMM's curve, named "M=16 (up only)");
//   done               freezes the curves at the run's end;
//   any event with "simulated": true marks the chart SIMULATED (title, in red).
// Events with a seq at or below the last seen are dropped, so re-attaching from the last event seen
// repeats nothing. addEvent() never draws: it updates a few numbers; the series are rebuilt at most
// once per redrawInterval() (default 100 ms) on a timer, so 1000 events a second stay cheap.
// reset() clears everything (a new run); setXAxis() switches evaluations <-> seconds (redraws).
class LiveBestChart : public QWidget {
    Q_OBJECT
public:
    enum class XAxis { Evaluations, Seconds };

    explicit LiveBestChart(QWidget *parent = nullptr);
    ~LiveBestChart() override;

    void addEvent(const AgentEvent &event);
    void addEvents(const QList<AgentEvent> &events);
    void reset();
    void setXAxis(XAxis axis);
    XAxis xAxis() const { return m_xAxis; }
    void setRedrawInterval(int ms);
    int redrawInterval() const;

    // What is shown, for tests and for the Tune page's own labels.
    QList<int> batchSizes() const;   // those with a curve, ascending
    QStringList legendNames() const; // the series' names in legend order
    // The names the legend shows: all of them when they fit its height, else an evenly spaced few that
    // always include the smallest and the largest batch size (the colours are one ramp between them).
    QStringList visibleLegendNames() const;
    QList<QPointF> curve(int m) const; // (x, best µs) steps in the current x axis, as drawn
    double bestUs(int m) const;        // current best total at m, NaN if none
    int evaluations() const { return m_evaluations; }
    bool isSimulated() const { return m_simulated; }
    bool isFinished() const { return m_finished; }
    int redraws() const { return m_redraws; }
    // The batch-size labels at the curves' ends, as placed (chart scene coordinates): inside the plot
    // area, never overlapping one another, each size at most once; a curve whose label would overlap
    // another's has none (the legend names every curve).
    QStringList endLabels() const;
    QList<QRectF> endLabelRects() const;
    QChart *chart() const;
    // The x axis' tick step for a span of `span` evaluations or seconds: 1, 2 or 5 times a power of ten,
    // at least 1, so that at most six whole-number ticks are labelled and no label repeats.
    static double niceTickStep(double span);

Q_SIGNALS:
    void redrawn(); // after the series were rebuilt

private:
    struct Step {
        int evaluation = 0;
        double seconds = 0;
        double us = 0;
    };
    void scheduleRedraw();
    void redraw();
    void setXSpan(double xmax); // the x axis over 0..xmax with whole-number ticks
    double elapsed(const QJsonObject &o) const;
    QLineSeries *seriesFor(int m);
    QString seriesName(int m) const;
    void placeEndLabels();
    void thinLegend();

    QChartView *m_view;
    QChart *m_chart;
    QValueAxis *m_x;
    QLogValueAxis *m_y;
    QTimer *m_timer;
    QMap<int, QLineSeries *> m_series;
    QList<QGraphicsSimpleTextItem *> m_endLabels; // owned by the chart (its child items)
    QList<QGraphicsItem *> m_legendItems;         // the short legend, when Qt's does not fit
    QStringList m_legendNames;
    QMargins m_defaultMargins;
    QMap<int, QList<Step>> m_steps;  // per m, each improvement
    QHash<quint64, double> m_opBest; // (op << 32 | m) -> best µs of that op
    QMap<int, int> m_partialOp;      // m -> the one GEMM its curve shows until the total exists
    QList<int> m_ops;                // op ids from run_started; empty: sum what was seen
    QList<int> m_plannedSizes;       // from run_started, for colours
    XAxis m_xAxis = XAxis::Evaluations;
    int m_evaluations = 0;
    double m_startTs = 0;
    double m_lastTs = 0;
    qint64 m_lastSeq = -1;
    bool m_simulated = false;
    bool m_finished = false;
    bool m_dirty = false;
    bool m_started = false;
    int m_redraws = 0;
};

} // namespace moetune
