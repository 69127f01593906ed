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
                        : v == ServingComparison::Verdict::Failed ? u"bad"_s
                                                                  : u"muted"_s;
    QString h = u"<h2>Serving before and after</h2>"_s;
    if (c.servingSimulated)
        h += u"<p class='sim'>The serving figures are SIMULATED: a practice double of the benchmark tool "
             u"produced them; no server was measured.</p>"_s;
    else if (c.configsSimulated)
        h += u"<p class='sim'>The pushed configs are SIMULATED (synthetic backend); the serving figures were "
             u"measured against the server the host runs.</p>"_s;
    h += u"<p class='%1'><b>%2</b></p>"_s.arg(cls, asHtml(c.verdictSentence()));
    if (const QString see = c.sensitivitySentence(); !see.isEmpty())
        h += u"<p>%1</p>"_s.arg(asHtml(see));
    if (!c.stopReason.isEmpty())
        h += u"<p class='muted'>%1</p>"_s.arg(asHtml(c.stopReason));
    if (!c.note.isEmpty())
        h += u"<p class='muted'>%1</p>"_s.arg(asHtml(c.note));
    h += u"<table>"_s;
    const auto row = [&h](const QString &k, const QString &val) {
        h += u"<tr><th>%1</th><td>%2</td></tr>"_s.arg(asHtml(k), asHtml(val));
    };
    row(u"Workload"_s,
        c.workload.summary() + u" (" + ServingWorkload::presetDescription(c.workload.preset) + u')');
    row(u"Tool"_s,
        c.bench.toolName() + u" against "_s + c.bench.baseUrl() + c.bench.addressNote() +
            (c.bench.container.isEmpty() ? QString() : u" inside container "_s + c.bench.container));
    row(u"Mode"_s,
        !c.rigorous ? u"one leg before (the server as it was), one after push + restart: one pair gives no "
                      u"interval and no verdict"_s
        : c.adaptive
            ? u"rigorous, adaptive: order-balanced pairs, a restart per leg, added until the 95% interval is "
              u"narrower than the margin, at most %1 pairs"_s.arg(c.pairs)
            : u"rigorous: %1 order-balanced pairs, a restart per leg, the old files put back for A"_s.arg(
                  c.pairs));
    row(u"Legs (A before, B after)"_s,
        c.legs.isEmpty()
            ? u"none"_s
            : ServingComparison::legOrder(int(c.legs.size() + 1) / 2, c.rigorous).left(int(c.legs.size())) +
                  u" (%1 run)"_s.arg(c.legs.size()));
    if (v == ServingComparison::Verdict::Failed) {
        h += u"</table>"_s;
        h += u"<p class='bad'>Nothing was measured, so there is no comparison and no verdict: %1</p>"_s.arg(
            asHtml(c.notMeasuredReason()));
        for (qsizetype i = 0; i < c.legs.size(); ++i) {
            const QString p = c.legs[i].problem(c.workload);
            h += u"<p>Leg %1 (%2): %3</p>"_s.arg(i + 1)
                     .arg(c.legs[i].arm)
                     .arg(p.isEmpty() ? u"ran"_s : asHtml(p));
        }
    } else {
        row(u"Verdict from"_s,
            u"the primary metric %1 declared by the %2 preset, pooled over the concurrencies per pair; "
            u"margin \u00b1%3%, minimum effect %4%"_s
                .arg(ServingResult::metricName(c.primary()), c.workload.preset)
                .arg(c.marginPct, 0, 'f', 1)
                .arg(c.minEffectPct, 0, 'f', 1));
        row(u"Interval"_s,
            u"Student t on the per-pair log ratios ln(after / before), n - 1 degrees of freedom: %1 for the "
            u"primary metric%2, %3 (Bonferroni) for the secondary rows, which never decide; one pair gives "
            u"none (docs/serving-statistics.md)"_s.arg(
                ServingComparison::levelText(c.primaryLevel()),
                c.looks() > 1 ? u" (95% spread over the adaptive mode's %1 looks)"_s.arg(c.looks())
                              : QString(),
                ServingComparison::levelText(c.secondaryLevel())));
        h += u"</table>"_s;
        h +=
            u"<p><b>Per metric</b> (medians over the legs; change and interval from the pairs)</p><table><tr>"
            u"<th>concurrency</th><th>metric</th><th>before</th><th>after</th><th>change</th><th>interval "
            u"(%1 "
            u"primary, %2 secondary)</th><th>outcome</th></tr>"_s.arg(
                ServingComparison::levelText(c.primaryLevel()),
                ServingComparison::levelText(c.secondaryLevel()));
        for (const ServingComparison::Row &r : c.rows()) {
            const QString unit = ServingResult::metricUnit(r.metric);
            const QString out =
                r.outcome == ServingChange::Outcome::Better  ? u"<span class='good'>better</span>"_s
                : r.outcome == ServingChange::Outcome::Worse ? u"<span class='bad'>worse</span>"_s
                : !r.change.hasInterval()                    ? u"no interval"_s
                                                             : u"interval includes 0"_s;
            const QString interval = r.change.hasInterval()
                                         ? u"%1 to %2"_s.arg(pct(r.change.lowPct), pct(r.change.highPct))
                                         : u"none"_s;
            const QString fa = std::isfinite(r.change.medianA) ? fig(r.change.medianA) + u' ' + unit : u"-"_s;
            const QString fb = std::isfinite(r.change.medianB) ? fig(r.change.medianB) + u' ' + unit : u"-"_s;
            h += u"<tr><td class='n'>%1</td><td>%2</td><td class='n'>%3</td><td class='n'>%4</td>"
                 u"<td class='n'>%5</td><td class='n'>%6</td><td>%7</td></tr>"_s.arg(
                     r.primary ? u"<b>all (primary)</b>"_s : QString::number(r.concurrency),
                     asHtml(ServingResult::metricName(r.metric)), asHtml(fa), asHtml(fb),
                     pct(r.change.changePct), interval, out);
        }
        h += u"</table>"_s;
    }
    return h;
}

QString ServingReportPage::commandsHtml(const ServingComparison &c) {
    const ServingComparison::Verdict v = c.verdict();
    QString h = u"<p><b>Commands</b> (as run on the host for each leg; to repeat by hand)</p>"_s;
    for (const QString &cmd : c.manualCommands())
        h += u"<p style='font-family: DejaVu Sans Mono; font-size: 7pt;'>%1</p>"_s.arg(asHtml(cmd));
    if (!c.error.isEmpty() && v != ServingComparison::Verdict::Failed)
        h += u"<p class='bad'>%1</p>"_s.arg(asHtml(c.error));
    return h;
}

bool ServingReportPage::hasChart(const ServingComparison &c) {
    return c.verdict() != ServingComparison::Verdict::Failed &&
           c.verdict() != ServingComparison::Verdict::Unpaired;
}

void ServingReportPage::drawChart(const ServingComparison &c, QPainter *painter, const QRectF &rect,
                                  const QSizeF &layoutSize) {
    ServingChart chart;
    chart.resize(layoutSize.toSize());
    chart.setComparison(c);
    chart.renderTo(painter, rect, layoutSize);
}

} // namespace moetune
