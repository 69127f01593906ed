// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/kernelconfigjson.h"
#include "core/run/sweepresult.h"

#include <QList>
#include <QPointF>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QGraphicsEllipseItem;
class QLabel;
class QPainter;
class QScatterSeries;
QT_END_NAMESPACE

namespace moetune {

class LandscapePointsItem;

// Every config measured at one batch size: latency on a log axis, x by rank (fastest first) or by a
// chosen kernel parameter (jittered within its column), coloured by another parameter, the winner and
// the default config marked. Hovering shows the config, its latency and spread. The points are drawn by
// one graphics item (not one item per point) and hover uses a pixel grid, so 30,000 points stay fast.
class LandscapeChart : public QWidget {
    Q_OBJECT
public:
    enum class XMode { Rank, Parameter };
    using Parameter = KernelConfigJson::Parameter;

    explicit LandscapeChart(QWidget *parent = nullptr);
    ~LandscapeChart() override;

    void setPoints(const QList<LandscapePoint> &points, const QString &title, bool simulated);
    void setXMode(XMode mode, Parameter xParameter = Parameter::BlockN);
    void setColorBy(Parameter parameter);
    XMode xMode() const { return m_xMode; }
    Parameter colorBy() const { return m_colorBy; }

    int pointCount() const { return int(m_points.size()); }
    const LandscapePoint &point(int i) const { return m_points.at(i); }
    // Nearest point within a few pixels of a position in this widget's coordinates, -1 if none.
    int pointAt(const QPoint &pos) const;
    // What a mouse move does: highlight the nearest point and show its text; returns its index.
    int hoverAt(const QPoint &pos);
    QString hoverText() const;
    // Where point i is drawn, in this widget's coordinates (tests move the mouse there).
    QPoint pointPosition(int i) const;

    void renderTo(QPainter *painter, const QRectF &rect, const QSizeF &layoutSize = {});
    QChart *chart() const;

    static QString describe(const LandscapePoint &p, int rank, int count);

Q_SIGNALS:
    void hovered(int index, const QString &text);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void rebuild();

    QChartView *m_view;
    QChart *m_chart;
    LandscapePointsItem *m_item;
    QLabel *m_hoverLabel;
    QScatterSeries *m_winner = nullptr;
    QScatterSeries *m_default = nullptr;
    QGraphicsEllipseItem *m_highlight;
    QList<LandscapePoint> m_points;
    QList<int> m_rank; // rank of each point by latency (0 = fastest)
    QString m_title;
    bool m_simulated = false;
    XMode m_xMode = XMode::Rank;
    Parameter m_xParameter = Parameter::BlockN;
    Parameter m_colorBy = Parameter::BlockM;
    int m_hovered = -1;
};

} // namespace moetune
