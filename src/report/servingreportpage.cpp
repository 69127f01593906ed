// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "report/servingreportpage.h"

#include "charts/servingchart.h"

#include <cmath>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// Text into the page's HTML as text.
QString asHtml(const QString &s) {
    return s.toHtmlEscaped();
}

QString fig(double v) {
    return std::isfinite(v) ? QString::number(v, 'f', v >= 100 ? 1 : 2) : u"n/a"_s;
}

QString pct(double v) {
    return std::isfinite(v) ? u"%1%2%"_s.arg(v >= 0 ? u"+"_s : QString()).arg(v, 0, 'f', 1) : u"n/a"_s;
}

} // namespace

QString ServingReportPage::html(const ServingComparison &c) {
    const ServingComparison::Verdict v = c.verdict();
    const QString cls = v == ServingComparison::Verdict::Faster   ? u"good"_s
                        : v == ServingComparison::Verdict::Slower ? u"bad"_s
                                                                  : u"muted"_s;
    QString h = u"<h2>Serving before and after</h2>"_s;
    if (c.configsSimulated)
        h += u"<p class='sim'>The pushed configs are SIMULATED (synthetic backend); the serving figures were "
             u"measured against the server the host runs.</p>"_s;
    h += u"<p class='%1'>%2: %3</p>"_s.arg(cls, asHtml(ServingComparison::verdictName(v)),
                                           asHtml(c.verdictSentence()));
    if (!c.note.isEmpty())
        h += u"<p class='muted'>%1</p>"_s.arg(asHtml(c.note));
    h += u"<table>"_s;
    const auto row = [&h](const QString &k, const QString &val) {
        h += u"<tr><th>%1</th><td>%2</td></tr>"_s.arg(asHtml(k), asHtml(val));
    };
    row(u"Workload"_s,
        c.workload.summary() + u" (" + ServingWorkload::presetDescription(c.workload.preset) + u')');
    row(u"Tool"_s,
        c.bench.toolName() + u" against "_s + c.bench.baseUrl() +
            (c.bench.container.isEmpty() ? QString() : u" inside container "_s + c.bench.container));
    row(u"Mode"_s, c.rigorous
                       ? u"rigorous: %1 order-balanced pairs, a restart per leg, the old files put back "
                         u"for A"_s.arg(c.pairs)
                       : u"one leg before (the server as it was), one after push + restart"_s);
    row(u"Legs (A before, B after)"_s,
        ServingComparison::legOrder(c.pairs, c.rigorous).left(int(c.legs.size())) +
            u" (%1 run)"_s.arg(c.legs.size()));
    row(u"Interval"_s,
        u"95%, percentile bootstrap over the legs (each side resampled on its own, %1 resamples, "
        u"seed %2); one leg a side gives none"_s.arg(ServingChange::kResamples)
            .arg(ServingChange::kSeed));
    h += u"</table>"_s;
    h += u"<p><b>Per metric</b> (medians over the legs)</p><table><tr><th>concurrency</th><th>metric</th>"
         u"<th>before</th><th>after</th><th>change</th><th>95% interval</th><th>outcome</th></tr>"_s;
    for (const ServingComparison::Row &r : c.rows()) {
        const QString unit = ServingResult::metricUnit(r.metric);
        const QString out = r.outcome == ServingChange::Outcome::Better
                                ? u"<span class='good'>better</span>"_s
                            : r.outcome == ServingChange::Outcome::Worse ? u"<span class='bad'>worse</span>"_s
                                                                         : u"no measurable change"_s;
        h += u"<tr><td class='n'>%1</td><td>%2</td><td class='n'>%3 %4</td><td class='n'>%5 %4</td>"
             u"<td class='n'>%6</td><td class='n'>%7</td><td>%8</td></tr>"_s.arg(r.concurrency)
                 .arg(asHtml(ServingResult::metricName(r.metric)), fig(r.change.medianA), unit,
                      fig(r.change.medianB), pct(r.change.changePct),
                      r.change.hasInterval() ? pct(r.change.lowPct) + u" to "_s + pct(r.change.highPct)
                                             : u"none"_s,
                      out);
    }
    h += u"</table>"_s;
    h += u"<p><b>Commands</b> (as run on the host for each leg; to repeat by hand)</p>"_s;
    for (const QString &cmd : c.manualCommands())
        h += u"<p style='font-family: DejaVu Sans Mono; font-size: 7pt;'>%1</p>"_s.arg(asHtml(cmd));
    if (!c.error.isEmpty())
        h += u"<p class='bad'>%1</p>"_s.arg(asHtml(c.error));
    return h;
}

void ServingReportPage::drawChart(const ServingComparison &c, QPainter *painter, const QRectF &rect,
                                  const QSizeF &layoutSize) {
    ServingChart chart;
    chart.resize(layoutSize.toSize());
    chart.setComparison(c);
    chart.renderTo(painter, rect, layoutSize);
}

} // namespace moetune
