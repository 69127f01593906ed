// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/serving/servingcomparison.h"

#include <QRectF>
#include <QSizeF>
#include <QString>

QT_BEGIN_NAMESPACE
class QPainter;
QT_END_NAMESPACE

namespace moetune {

// The PDF report's page "Serving before and after": the verdict, the workload, the tool and the exact
// commands, the legs in their order, the primary metric's change with its interval and per metric and
// concurrency the secondary rows (docs/serving-statistics.md), then the chart (ServingChart), then the
// commands. Nothing measured: the reason per leg, no table and no chart.
class ServingReportPage {
public:
    // HTML for the report's text flow (the report's stylesheet classes good/bad/muted/sim).
    static QString html(const ServingComparison &comparison);
    // The commands run for each leg (and the error, if any), after the chart.
    static QString commandsHtml(const ServingComparison &comparison);
    // A chart only where there is a change to draw (not for "not measured" or a benchmark alone).
    static bool hasChart(const ServingComparison &comparison);
    static void drawChart(const ServingComparison &comparison, QPainter *painter, const QRectF &rect,
                          const QSizeF &layoutSize);
};

} // namespace moetune
