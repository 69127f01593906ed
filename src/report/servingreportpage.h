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
// commands, the legs in their order, per metric and concurrency the medians before and after with the
// change and its 95% interval (and how that interval is computed), then the chart (ServingChart).
class ServingReportPage {
public:
    // HTML for the report's text flow (the report's stylesheet classes good/bad/muted/sim).
    static QString html(const ServingComparison &comparison);
    static void drawChart(const ServingComparison &comparison, QPainter *painter, const QRectF &rect,
                          const QSizeF &layoutSize);
};

} // namespace moetune
