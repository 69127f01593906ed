// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "report/fleetreport.h"

#include "core/fleet/fleetrecord.h"

#include <QAbstractTextDocumentLayout>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPageLayout>
#include <QPainter>
#include <QPdfWriter>
#include <QTextDocument>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString fleetEsc(const QString &s) {
    return s.toHtmlEscaped();
}

QString fleetWhen(double secs) {
    if (secs <= 0)
        return u"-"_s;
    return QDateTime::fromMSecsSinceEpoch(qint64(secs * 1000))
        .toUTC()
        .toString(u"yyyy-MM-dd HH:mm:ss 'UTC'"_s);
}

QString fleetCss() {
    return u"<style>"
           u"body { font-family: 'DejaVu Sans'; font-size: 9pt; color: #111; }"
           u"h1 { font-size: 17pt; margin: 0 0 4pt 0; } h2 { font-size: 12pt; margin: 12pt 0 3pt 0; }"
           u"table { border-collapse: collapse; } td, th { padding: 2pt 5pt; border: 0.5pt solid #999; }"
           u"th { background: #e8eef5; text-align: left; } td.n { text-align: right; }"
           u".sim { color: #ffffff; background: #c0392b; font-weight: bold; padding: 4pt; }"
           u".muted { color: #555; } .good { color: #1a7f37; font-weight: bold; } .bad { color: #c0392b; "
           u"font-weight: bold; }"
           u"</style>"_s;
}

QString fleetPairs(const QList<QPair<QString, QString>> &rows) {
    QString h = u"<table width='100%'>"_s;
    for (const auto &[k, v] : rows)
        h += u"<tr><th width='24%'>%1</th><td>%2</td></tr>"_s.arg(fleetEsc(k), fleetEsc(v));
    return h + u"</table>"_s;
}

bool stageUnderWay(FleetHostStage s) {
    switch (s) {
    case FleetHostStage::Waiting:
    case FleetHostStage::Connecting:
    case FleetHostStage::Diagnosing:
    case FleetHostStage::Tuning:
    case FleetHostStage::Importing:
    case FleetHostStage::Pushing:
    case FleetHostStage::Restarting:
    case FleetHostStage::Undoing:
        return true;
    default:
        return false;
    }
}

bool fleetFactsKnown(const FleetHostRecord &h) {
    return !h.facts.framework.isEmpty() || !h.gpu.isEmpty() || !h.framework.isEmpty();
}

QString fleetOutcomeClass(const FleetHostRecord &h) {
    if (fleetStageIsTerminalFailure(h.stage))
        return u"bad"_s;
    if (h.stage == FleetHostStage::Proved)
        return u"good"_s;
    return QString();
}

bool fleetResultSimulated(const QString &file) {
    if (file.isEmpty())
        return false;
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly) || f.size() > (qint64(64) << 20))
        return false;
    return QJsonDocument::fromJson(f.readAll()).object().value("simulated"_L1).toBool();
}

QString fleetShortHash(const QString &hash) {
    return hash.isEmpty() ? u"unknown"_s : hash.left(12);
}

} // namespace

FleetTotals FleetTotals::of(const FleetRecord &record) {
    FleetTotals t;
    t.hosts = int(record.hosts.size());
    t.groups = int(record.groups.size());
    t.nothingMissing = int(record.nothingMissing.size());
    for (const FleetGroupRecord &g : record.groups)
        if (!g.runId.isEmpty())
            ++t.tuned;
    for (const FleetHostRecord &h : record.hosts) {
        if (fleetFactsKnown(h))
            ++t.diagnosed;
        if (stageUnderWay(h.stage))
            ++t.inProgress;
        if (!h.push.files.isEmpty())
            ++t.pushed;
        if (h.undone || h.stage == FleetHostStage::Undone)
            ++t.undone;
        switch (h.stage) {
        case FleetHostStage::Unreachable:
            ++t.unreachable;
            break;
        case FleetHostStage::Failed:
            ++t.failed;
            break;
        case FleetHostStage::Proved:
            ++t.proved;
            break;
        case FleetHostStage::ProofFailed:
            ++t.proofFailed;
            break;
        case FleetHostStage::UndoFailed:
            ++t.undoFailed;
            break;
        case FleetHostStage::Skipped:
            ++t.skipped;
            break;
        default:
            break;
        }
    }
    return t;
}

QString FleetTotals::text() const {
    auto part = [](QStringList *parts, int n, const QString &words) {
        if (n > 0)
            parts->append(u"%1 %2"_s.arg(n).arg(words));
    };
    QStringList reach;
    part(&reach, diagnosed, u"diagnosed"_s);
    part(&reach, inProgress, u"in progress"_s);
    part(&reach, unreachable, u"unreachable"_s);
    part(&reach, failed, u"failed"_s);
    part(&reach, nothingMissing, u"missing nothing"_s);
    QStringList tune;
    part(&tune, groups, groups == 1 ? u"group"_s : u"groups"_s);
    part(&tune, tuned, u"tuned"_s);
    QStringList roll;
    part(&roll, pushed, u"pushed"_s);
    part(&roll, proved, u"proved"_s);
    part(&roll, proofFailed, u"proof failed"_s);
    part(&roll, undone, u"undone"_s);
    part(&roll, undoFailed, u"undo failed"_s);
    part(&roll, skipped, u"skipped"_s);
    QString s = hosts == 1 ? u"1 host"_s : u"%1 hosts"_s.arg(hosts);
    if (!reach.isEmpty())
        s += u": "_s + reach.join(u", "_s);
    for (const QStringList &p : {tune, roll})
        if (!p.isEmpty())
            s += u" \u00b7 "_s + p.join(u", "_s);
    return s;
}

QString FleetReport::outcome(const FleetHostRecord &h) {
    const bool pushed = !h.push.files.isEmpty();
    QStringList parts;
    switch (h.stage) {
    case FleetHostStage::Unreachable:
        return h.reason.isEmpty() ? u"unreachable"_s : u"unreachable: "_s + h.reason;
    case FleetHostStage::Failed:
        return h.reason.isEmpty() ? u"failed"_s : u"failed: "_s + h.reason;
    case FleetHostStage::Proved:
        parts.append(u"pushed, restarted, proved"_s);
        break;
    case FleetHostStage::ProofFailed:
        parts.append(u"pushed, restarted, proof failed"_s +
                     (h.reason.isEmpty() ? QString() : u": "_s + h.reason));
        break;
    case FleetHostStage::Undone:
        parts.append(pushed ? u"pushed, then undone"_s : u"undone"_s);
        if (!h.reason.isEmpty())
            parts.append(h.reason);
        break;
    case FleetHostStage::UndoFailed:
        parts.append(u"undo failed"_s + (h.reason.isEmpty() ? QString() : u": "_s + h.reason));
        break;
    case FleetHostStage::Skipped:
        return h.reason.isEmpty() ? u"not touched"_s : u"not touched: "_s + h.reason;
    case FleetHostStage::Diagnosed:
    case FleetHostStage::Tuned:
        parts.append(pushed ? u"pushed"_s : u"diagnosed, not pushed"_s);
        break;
    default: // still under way when the record was read
        parts.append(fleetStageText(h.stage).toLower() + u" (under way when recorded)"_s);
        break;
    }
    if (h.undone && h.stage != FleetHostStage::Undone)
        parts.append(u"undone"_s);
    return parts.join(u"; "_s);
}

bool FleetReport::groupSimulated(const FleetRecord &record, int group) {
    if (group < 0 || group >= record.groups.size())
        return false;
    for (const FleetHostRecord &h : record.hosts)
        if (h.group == group && h.push.simulated)
            return true;
    return fleetResultSimulated(record.groups.at(group).resultFile);
}

bool FleetReport::simulated(const FleetRecord &record) {
    for (int g = 0; g < record.groups.size(); ++g)
        if (groupSimulated(record, g))
            return true;
    return false;
}

QString FleetReport::html(const FleetRecord &record) {
    const FleetTotals totals = FleetTotals::of(record);
    QString h = fleetCss() + u"<h1>moetune fleet report</h1>"_s;
    const bool sim = simulated(record);
    if (sim)
        h += u"<p class='sim'>SIMULATED: a tuning run of this fleet used the synthetic backend; its "
             u"numbers are not measurements of a GPU.</p>"_s;
    h +=
        fleetPairs({{u"Fleet record"_s, record.id},
                    {u"Started"_s, fleetWhen(record.createdAt)},
                    {u"Report date"_s, QDateTime::currentDateTimeUtc().toString(u"yyyy-MM-dd HH:mm 'UTC'"_s)},
                    {u"Inventory"_s, record.inventory.isEmpty() ? u"the app's hosts and ~/.ssh/config"_s
                                                                : QDir::toNativeSeparators(record.inventory)},
                    {u"Selection"_s, record.selection.isEmpty() ? u"-"_s : record.selection},
                    {u"Totals"_s, totals.text()}});

    // Label and count pairs, four to a row (a one-row table of twelve columns wraps its headers).
    const QList<QPair<QString, int>> counts{{u"hosts"_s, totals.hosts},
                                            {u"diagnosed"_s, totals.diagnosed},
                                            {u"unreachable"_s, totals.unreachable},
                                            {u"failed"_s, totals.failed},
                                            {u"groups"_s, totals.groups},
                                            {u"tuned"_s, totals.tuned},
                                            {u"pushed"_s, totals.pushed},
                                            {u"proved"_s, totals.proved},
                                            {u"proof failed"_s, totals.proofFailed},
                                            {u"undone"_s, totals.undone},
                                            {u"undo failed"_s, totals.undoFailed},
                                            {u"skipped"_s, totals.skipped}};
    h += u"<h2>Totals</h2><table width='100%'>"_s;
    for (int i = 0; i < counts.size(); ++i) {
        if (i % 4 == 0)
            h += u"<tr>"_s;
        h += u"<th>%1</th><td class='n'>%2</td>"_s.arg(counts.at(i).first).arg(counts.at(i).second);
        if (i % 4 == 3)
            h += u"</tr>"_s;
    }
    h += u"</table>"_s;

    for (int g = 0; g < record.groups.size(); ++g) {
        const FleetGroupRecord &gr = record.groups.at(g);
        const FleetHostFacts &k = gr.group.key;
        const bool gsim = groupSimulated(record, g);
        const qsizetype n = gr.group.hosts.size();
        h += u"<h2>Group %1: %2, %3</h2>"_s.arg(g + 1)
                 .arg(n == 1 ? u"1 host"_s : u"%1 hosts"_s.arg(n))
                 .arg(fleetEsc(gr.state.isEmpty() ? u"diagnosed"_s : gr.state));
        QString run = u"not tuned"_s;
        if (!gr.runId.isEmpty())
            run = u"on %1, run %2%3"_s.arg(gr.tuneHost, gr.runId, gsim ? u" (SIMULATED)"_s : QString());
        else if (!gr.tuneHost.isEmpty())
            run = u"on %1 (no run recorded)"_s.arg(gr.tuneHost);
        QStringList shape{u"E=%1"_s.arg(k.experts), u"N=%1"_s.arg(k.intermediate)};
        if (!k.dtype.isEmpty())
            shape.append(k.dtype);
        if (!k.blockShape.isEmpty())
            shape.append(u"block "_s + k.blockShape);
        QList<QPair<QString, QString>> rows{
            {u"Config file"_s, k.missingConfig.isEmpty() ? u"(no file named)"_s : k.missingConfig},
            {u"Config folder"_s, k.tritonFolder.isEmpty() ? u"unknown"_s : k.tritonFolder},
            {u"Device, shape"_s, k.deviceName + u", "_s + shape.join(u", "_s)},
            {u"Framework"_s, k.framework + u" "_s + gr.group.frameworkVersions.join(u", "_s) +
                                 u", Triton "_s + k.tritonVersion},
            {u"Kernel source (sha256)"_s, fleetShortHash(k.kernelSourceHash)},
            {u"Hosts"_s, u"%1: %2"_s.arg(gr.group.hosts.size()).arg(gr.group.hosts.join(u", "_s))},
            {u"Tuning run"_s, run},
            {u"Canary"_s, gr.canary.isEmpty() ? u"-"_s : gr.canary},
            {u"State"_s, gr.state + (gr.reason.isEmpty() ? QString() : u": "_s + gr.reason)}};
        for (const FleetGroupDifference &d : record.differences) {
            if (d.first != g && d.second != g)
                continue;
            const int other = d.first == g ? d.second : d.first;
            rows.append({u"Apart from group %1"_s.arg(other + 1), d.reasons.join(u"; "_s)});
        }
        h += fleetPairs(rows);
        // <thead>: the header row repeats on the next page when the table goes on there.
        h += u"<p></p><table width='100%'><thead><tr><th>host</th><th>run on the host</th><th>outcome</th>"
             u"<th>proof</th><th>serving verdict</th></tr></thead>"_s;
        for (const FleetHostRecord &host : record.hosts) {
            if (host.group != g)
                continue;
            h +=
                u"<tr><td>%1%2</td><td>%3</td><td><span class='%4'>%5</span></td><td>%6</td><td>%7</td></tr>"_s
                    .arg(fleetEsc(host.host.name), host.host.name == gr.canary ? u" (canary)"_s : QString(),
                         fleetEsc(host.runId.isEmpty() ? u"-"_s : host.runId), fleetOutcomeClass(host),
                         fleetEsc(outcome(host)), fleetEsc(host.proof.isEmpty() ? u"-"_s : host.proof),
                         fleetEsc(host.servingVerdict.isEmpty() ? u"not measured"_s : host.servingVerdict));
        }
        h += u"</table>"_s;
    }

    QString apart;
    for (const FleetHostRecord &host : record.hosts) {
        if (host.group >= 0)
            continue;
        QString why = outcome(host);
        if (record.nothingMissing.contains(host.host.name))
            why = u"its server found its config: nothing to tune"_s;
        apart += u"<tr><td>%1</td><td><span class='%2'>%3</span></td></tr>"_s.arg(
            fleetEsc(host.host.name), fleetOutcomeClass(host), fleetEsc(why));
    }
    if (!apart.isEmpty())
        h += u"<h2>Hosts in no group</h2><table width='100%'><tr><th>host</th><th>outcome</th></tr>"_s +
             apart + u"</table>"_s;
    return h;
}

QString FleetReport::text(const FleetRecord &record) {
    QTextDocument doc;
    doc.setHtml(html(record));
    return doc.toPlainText() + u'\n';
}

QString FleetReport::suggestedFileName(const FleetRecord &record) {
    return (simulated(record) ? u"SIMULATED-"_s : QString()) + u"moetune-fleet-report-"_s + record.id +
           u".pdf"_s;
}

bool FleetReport::write(const FleetRecord &record, const QString &path, QString *error) {
    const bool sim = simulated(record);
    QPdfWriter writer(path);
    writer.setResolution(300);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageMargins(QMarginsF(15, 14, 15, 12), QPageLayout::Millimeter);
    writer.setTitle(u"moetune fleet report: "_s + record.id + (sim ? u" (SIMULATED)"_s : QString()));
    writer.setCreator(u"moetune"_s);
    QPainter painter;
    if (!painter.begin(&writer)) {
        if (error)
            *error = u"Could not write %1: check that its folder exists and is writable."_s.arg(path);
        return false;
    }
    const QRect page = writer.pageLayout().paintRectPixels(writer.resolution());
    const double footer = writer.resolution() / 3.0;
    const double width = page.width();
    const double height = page.height() - footer;

    QTextDocument doc;
    doc.documentLayout()->setPaintDevice(&writer);
    doc.setDefaultFont(QFont(u"DejaVu Sans"_s, 9));
    doc.setDocumentMargin(0);
    doc.setHtml(html(record));
    doc.setPageSize(QSizeF(width, height)); // paginated by the layout: no line is cut between pages
    const int pages = doc.pageCount();
    QString foot = u"moetune fleet report, %1"_s.arg(record.id);
    if (sim)
        foot = u"SIMULATED (a synthetic tuning run), not measurements. "_s + foot;
    for (int p = 0; p < pages; ++p) {
        if (p > 0)
            writer.newPage();
        painter.save();
        painter.translate(0, -p * height);
        doc.drawContents(&painter, QRectF(0, p * height, width, height));
        painter.restore();
        painter.save();
        QFont f(u"DejaVu Sans"_s);
        f.setPointSizeF(7.5);
        painter.setFont(f);
        painter.setPen(QColor(0x55, 0x55, 0x55));
        painter.drawText(QRectF(0, height, width, footer), Qt::AlignLeft | Qt::AlignBottom, foot);
        painter.drawText(QRectF(0, height, width, footer), Qt::AlignRight | Qt::AlignBottom,
                         u"page %1 of %2"_s.arg(p + 1).arg(pages));
        painter.restore();
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

} // namespace moetune
