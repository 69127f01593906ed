// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "report/pdfreport.h"

#include "charts/landscapechart.h"
#include "charts/latencychart.h"
#include "charts/speedupchart.h"
#include "core/report/report.h"
#include "core/report/reporttext.h"
#include "core/run/workspacerun.h"
#include "report/servingreportpage.h"

#include <QAbstractTextDocumentLayout>
#include <QDir>
#include <QFileInfo>
#include <QPageLayout>
#include <QPainter>
#include <QPdfWriter>
#include <QTextDocument>

#include <cmath>
#include <functional>
#include <memory>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString esc(const QString &s) {
    return s.toHtmlEscaped();
}

QString css() {
    return u"<style>"
           u"body { font-family: 'DejaVu Sans'; font-size: 9pt; color: #111; }"
           u"h1 { font-size: 17pt; margin: 0 0 4pt 0; } h2 { font-size: 12pt; margin: 10pt 0 3pt 0; }"
           u"table { border-collapse: collapse; } td, th { padding: 2pt 5pt; border: 0.5pt solid #999; }"
           u"th { background: #e8eef5; text-align: left; } td.n { text-align: right; }"
           u".sim { color: #ffffff; background: #c0392b; font-weight: bold; padding: 4pt; }"
           u".muted { color: #555; } .good { color: #1a7f37; font-weight: bold; } .bad { color: #c0392b; "
           u"font-weight: bold; }"
           u"</style>"_s;
}

QString simulatedBox() {
    return u"<p class='sim'>SIMULATED (synthetic backend): these numbers are not measurements of a GPU.</p>"_s;
}

QString pairsTable(const QList<QPair<QString, QString>> &rows) {
    QString h = u"<table>"_s;
    for (const auto &[k, v] : rows)
        h += u"<tr><th>%1</th><td>%2</td></tr>"_s.arg(esc(k), esc(v));
    return h + u"</table>"_s;
}

QString headerHtml(const Report &r) {
    QString h = css() + u"<h1>moetune report: %1</h1>"_s.arg(esc(r.title));
    if (r.simulated)
        h += simulatedBox();
    QList<QPair<QString, QString>> meta{{u"Report date"_s, r.generated.toString(u"yyyy-MM-dd HH:mm 'UTC'"_s)},
                                        {u"Run recorded"_s, r.recorded},
                                        {u"Run"_s, r.runId + u" (" + r.status + u')'},
                                        {u"Host"_s, r.host.isEmpty() ? u"unknown"_s : r.host}};
    meta.append({u"GPUs"_s, r.gpus.isEmpty() ? u"unknown"_s : r.gpus.join(u"; "_s)});
    meta.append({u"Device"_s, r.deviceName});
    meta.append({u"Framework"_s, r.framework});
    for (const auto &v : r.versions)
        meta.append(v);
    h += pairsTable(meta);
    if (!r.note.isEmpty())
        h += u"<p class='muted'>%1</p>"_s.arg(esc(r.note));
    h += u"<h2>Diagnosis</h2>"_s;
    if (!r.hasDiagnosis) {
        h += u"<p class='muted'>No server-log diagnosis was recorded with this run.</p>"_s;
    } else {
        h += u"<p>%1</p>"_s.arg(esc(r.diagnosisSummary));
        if (!r.findings.isEmpty()) {
            h += u"<table><tr><th>severity</th><th>finding</th><th>times</th><th>seen on</th></tr>"_s;
            for (const auto &f : r.findings)
                h += u"<tr><td>%1</td><td>%2</td><td class='n'>%3</td><td>%4</td></tr>"_s.arg(
                    esc(f.severity), esc(f.title), QString::number(f.occurrences), esc(f.sources));
            h += u"</table>"_s;
        }
    }
    h += u"<h2>Tuning job</h2>"_s + pairsTable(r.job);
    return h;
}

QString tableHtml(const Report &r) {
    QString h =
        css() + u"<h2>Chosen config per batch size%1</h2>"_s.arg(r.simulated ? u" (SIMULATED)"_s : QString());
    h += u"<table><tr><th>M</th><th>chosen config</th><th>tuned µs</th><th>default µs</th><th>speedup</th>"
         u"<th>HBM floor µs</th><th>of floor</th></tr>"_s;
    for (const auto &row : r.rows) {
        const QString cls =
            std::isnan(row.speedup)
                ? QString()
                : (row.speedup < 1.0 ? u"bad"_s : (row.speedup >= 1.1 ? u"good"_s : QString()));
        h += u"<tr><td class='n'>%1</td><td>%2</td><td class='n'>%3</td><td class='n'>%4</td>"
             u"<td class='n'><span class='%5'>%6</span></td><td class='n'>%7</td><td class='n'>%8</td></tr>"_s
                 .arg(QString::number(row.m), esc(row.config), ReportText::us(row.tunedUs),
                      ReportText::us(row.defaultUs), cls, ReportText::speedup(row.speedup),
                      ReportText::us(row.floorUs), ReportText::percent(row.floorFraction));
    }
    h += u"</table><p>Geometric mean speedup over the default config: <b>%1</b>. Speedup = default / tuned "
         u"latency "
         u"of one MoE call; \"of floor\" = the HBM weight-streaming floor / tuned latency (100% = at the "
         u"floor; "
         u"large batches are compute-bound, so the fraction falls there).</p>"_s.arg(
             ReportText::speedup(r.geomeanSpeedup));
    return h;
}

QString ratioText(const Report &r) {
    if (r.simulated) // the synthetic backend's seconds time no GPU: a ratio to them means nothing
        return u"- (a simulated run: its wall time is not that of a GPU)"_s;
    if (std::isnan(r.wallSeconds) || std::isnan(r.referenceSeconds) || r.wallSeconds <= 0)
        return u"-"_s;
    return u"%1x less wall time"_s.arg(r.referenceSeconds / r.wallSeconds, 0, 'f', 0);
}

QString tailHtml(const Report &r) {
    QString h = css() + u"<h2>Tuning cost</h2>"_s;
    h += pairsTable({{u"Wall time"_s, ReportText::duration(r.wallSeconds)},
                     {u"Units timed"_s, u"%1 (%2 failed)"_s.arg(r.unitsMeasured).arg(r.unitsFailed)},
                     {u"Distinct configs"_s, QString::number(r.distinctConfigs)},
                     {u"Reference method (estimate)"_s, ReportText::duration(r.referenceSeconds)},
                     {u"Ratio"_s, ratioText(r)}});
    h += u"<p class='muted'>Reference estimate: %1.</p>"_s.arg(esc(r.referenceBasis));
    h += u"<h2>Files</h2>"_s;
    if (!r.resultFiles.isEmpty()) {
        h += u"<table><tr><th>config file</th><th>in the run folder</th></tr>"_s;
        for (const auto &[name, path] : r.resultFiles)
            h += u"<tr><td>%1</td><td>%2</td></tr>"_s.arg(esc(name), esc(path));
        h += u"</table>"_s;
    }
    if (r.installed.isEmpty()) {
        h += u"<p>Not installed on a server from this workspace (no push recorded).</p>"_s;
    } else {
        if (!r.installFolder.isEmpty())
            h += u"<p>Installed into <b>%1</b>.</p>"_s.arg(esc(r.installFolder));
        h += u"<table><tr><th>file</th><th>target</th><th>backup of the replaced file</th></tr>"_s;
        for (const auto &f : r.installed)
            h += u"<tr><td>%1</td><td>%2</td><td>%3</td></tr>"_s.arg(
                esc(f.fileName), esc(f.target),
                f.unchanged ? u"unchanged (same bytes already there)"_s
                            : (f.backup.isEmpty() ? u"none (no file was there)"_s : esc(f.backup)));
        h += u"</table>"_s;
    }
    if (r.headroom) { // the check before the tune: what it predicted, beside what the tune found above
        const HeadroomResult &hr = *r.headroom;
        h += u"<h2>Headroom check before tuning</h2><p><b>%1</b></p>"_s.arg(esc(hr.headline()));
        h += u"<table><tr><th>batch sizes</th><th>likely gain</th><th>min-max</th></tr>"_s;
        for (const auto &rg : hr.ranges)
            h += u"<tr><td>%1</td><td class='n'>%2</td><td class='n'>%3-%4</td></tr>"_s.arg(
                esc(rg.label), ReportText::speedup(rg.gain), ReportText::speedup(rg.gainMin),
                ReportText::speedup(rg.gainMax));
        h +=
            u"</table><p class='muted'>%1 timings in %2 s on %3 (%4 backend); the server's config: %5.%6</p>"_s
                .arg(hr.units)
                .arg(hr.wallSeconds, 0, 'f', 1)
                .arg(esc(hr.deviceName), esc(hr.backend),
                     hr.defaultSourceKind == "file"_L1 ? esc(hr.defaultSourcePath)
                                                       : u"its built-in heuristic"_s,
                     hr.assumed.isEmpty() ? QString() : u" Not seen: "_s + esc(hr.assumed) + u'.');
    }
    h += u"<h2>Before / after</h2>"_s;
    if (!r.proof) {
        h += u"<p class='muted'>No restart and re-diagnosis was recorded with this run, so there is no "
             u"before/after proof here.</p>"_s;
    } else {
        h +=
            u"<p>Before: %1<br/>After: %2</p>"_s.arg(esc(r.proof->beforeSummary), esc(r.proof->afterSummary));
        h += r.proof->gone
                 ? u"<p class='good'>The MoE config warning for this shape is gone on every rank.</p>"_s
                 : u"<p class='bad'>Still reported after the restart:</p>"_s;
        for (const auto &f : r.proof->after)
            h += u"<p>%1 (x%2, %3)</p>"_s.arg(esc(f.title)).arg(f.occurrences).arg(esc(f.sources));
        for (const auto &line : r.proof->inUse)
            h += u"<p>%1</p>"_s.arg(esc(line));
    }
    for (const auto &w : r.warnings)
        h += u"<p class='muted'>Note: %1</p>"_s.arg(esc(w));
    return h;
}

// Lays blocks down the pages: text documents (split across pages when taller than one) and charts.
class PageFlow {
public:
    PageFlow(QPdfWriter *writer, QPainter *painter, const QString &footer)
        : m_writer(writer)
        , m_painter(painter)
        , m_footer(footer) {
        const QRect page = m_writer->pageLayout().paintRectPixels(m_writer->resolution());
        m_width = page.width();
        m_height = page.height() - footerHeight();
        drawFooter();
    }

    double width() const { return m_width; }
    int footerHeight() const { return m_writer->resolution() / 3; }

    void text(const QString &html) {
        QTextDocument doc;
        doc.documentLayout()->setPaintDevice(m_writer);
        QFont font(u"DejaVu Sans"_s, 9);
        doc.setDefaultFont(font);
        doc.setDocumentMargin(0);
        doc.setHtml(html);
        doc.setTextWidth(m_width);
        double top = 0;
        const double total = doc.size().height();
        // A block that fits on a page is not split (a table cut between two rows is hard to read).
        if (m_y > 0 && total > m_height - m_y && total <= m_height)
            newPage();
        while (top < total) {
            double room = m_height - m_y;
            if (room < m_writer->resolution() * 0.6 && m_y > 0) {
                newPage();
                room = m_height;
            }
            const double slice = qMin(room, total - top);
            m_painter->save();
            m_painter->translate(0, m_y - top);
            doc.drawContents(m_painter, QRectF(0, top, m_width, slice));
            m_painter->restore();
            top += slice;
            m_y += slice;
            if (top < total)
                newPage();
        }
    }

    void block(double height, const std::function<void(const QRectF &)> &draw) {
        if (m_y + height > m_height)
            newPage();
        draw(QRectF(0, m_y, m_width, height));
        m_y += height + m_writer->resolution() * 0.08;
    }

    void newPage() {
        m_writer->newPage();
        m_y = 0;
        drawFooter();
    }

private:
    void drawFooter() {
        ++m_page;
        m_painter->save();
        QFont f(u"DejaVu Sans"_s);
        f.setPointSizeF(7.5);
        m_painter->setFont(f);
        m_painter->setPen(QColor(0x55, 0x55, 0x55));
        m_painter->drawText(QRectF(0, m_height, m_width, footerHeight()), Qt::AlignLeft | Qt::AlignBottom,
                            m_footer);
        m_painter->drawText(QRectF(0, m_height, m_width, footerHeight()), Qt::AlignRight | Qt::AlignBottom,
                            u"page %1"_s.arg(m_page));
        m_painter->restore();
    }

    QPdfWriter *m_writer;
    QPainter *m_painter;
    QString m_footer;
    double m_width = 0;
    double m_height = 0;
    double m_y = 0;
    int m_page = 0;
};

} // namespace

bool PdfReport::write(const WorkspaceRun &run, const QString &path, QString *error) {
    return write(run, path, Options(), error);
}

bool PdfReport::write(const WorkspaceRun &run, const QString &path, const Options &options, QString *error) {
    const Report report = Report::fromRun(run);
    QPdfWriter writer(path);
    writer.setResolution(300);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageMargins(QMarginsF(15, 14, 15, 12), QPageLayout::Millimeter);
    writer.setTitle(u"moetune report: "_s + report.title +
                    (report.simulated ? u" (SIMULATED)"_s : QString()));
    writer.setCreator(u"moetune"_s);
    QPainter painter;
    if (!painter.begin(&writer)) {
        if (error)
            *error = u"Could not write %1: check that its folder exists and is writable."_s.arg(path);
        return false;
    }
    QString footer = u"moetune report, run %1"_s.arg(report.runId);
    if (report.simulated)
        footer = u"SIMULATED (synthetic backend), not measurements. "_s + footer;
    PageFlow flow(&writer, &painter, footer);
    flow.text(headerHtml(report));

    const double chartHeight = flow.width() * options.chartLayout.height() / options.chartLayout.width();
    LatencyChart latency;
    latency.setResult(run.result);
    flow.block(chartHeight,
               [&](const QRectF &rect) { latency.renderTo(&painter, rect, options.chartLayout); });
    // The speedup itself: a few percent is invisible on the log-latency chart above.
    SpeedupChart speedup;
    speedup.setResult(run.result);
    if (!speedup.batchSizes().isEmpty())
        flow.block(chartHeight * 0.8, [&](const QRectF &rect) {
            speedup.renderTo(&painter, rect,
                             QSizeF(options.chartLayout.width(), options.chartLayout.height() * 0.8));
        });
    flow.text(tableHtml(report));

    // One landscape: where tuning mattered most, unless asked for another size.
    int m = options.landscapeM;
    if (m == 0) {
        double best = 0;
        for (const auto &b : run.result.perBatch)
            if (known(b.speedup) && b.speedup > best &&
                !run.result.landscape(run.result.ops.value(0), b.m).isEmpty()) {
                best = b.speedup;
                m = b.m;
            }
    }
    const SweepOp op = run.result.ops.value(0, SweepOp::Both);
    const auto points = m > 0 ? run.result.landscape(op, m) : QList<LandscapePoint>();
    if (!points.isEmpty()) {
        LandscapeChart landscape;
        landscape.resize(options.chartLayout.toSize());
        landscape.setPoints(points, u"Every config timed at M=%1 (%2)"_s.arg(m).arg(sweepOpName(op)),
                            run.result.simulated);
        flow.block(chartHeight,
                   [&](const QRectF &rect) { landscape.renderTo(&painter, rect, options.chartLayout); });
    }
    flow.text(tailHtml(report));
    // The serving benchmark before and after the push, on a page of its own.
    if (const auto serving = run.serving ? ServingComparison::fromJson(*run.serving) : std::nullopt) {
        flow.newPage();
        flow.text(css() + ServingReportPage::html(*serving));
        if (ServingReportPage::hasChart(*serving))
            flow.block(chartHeight * 0.8, [&](const QRectF &rect) {
                ServingReportPage::drawChart(*serving, &painter, rect, options.chartLayout);
            });
        flow.text(css() + ServingReportPage::commandsHtml(*serving));
    }
    if (!painter.end()) {
        if (error)
            *error = u"Could not finish %1."_s.arg(path);
        return false;
    }
    if (QFileInfo(path).size() == 0) {
        if (error)
            *error = u"%1 came out empty."_s.arg(path);
        return false;
    }
    return true;
}

QString PdfReport::markedPath(const WorkspaceRun &run, const QString &path) {
    const QFileInfo info(path);
    if (!run.result.simulated || info.fileName().contains(u"SIMULATED"_s, Qt::CaseInsensitive))
        return path;
    return info.dir().filePath(u"SIMULATED-"_s + info.fileName());
}

QString PdfReport::suggestedFileName(const WorkspaceRun &run) {
    return run.fileStem() + u".pdf"_s;
}

} // namespace moetune
