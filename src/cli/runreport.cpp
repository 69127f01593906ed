// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/runreport.h"

#include "cli/console.h"
#include "core/host/hosttext.h"

#include <QDateTime>
#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune::cli {

QString RunReport::preflightText(const Preflight &p) {
    QString s;
    for (const Preflight::Gpu &g : p.gpus) {
        s += u"GPU %1 %2: %3 of %4 MiB used%5\n"_s.arg(g.index)
                 .arg(g.name)
                 .arg(g.usedMiB)
                 .arg(g.totalMiB)
                 .arg(g.heldByServer ? u" (held by the inference server)"_s : QString());
        for (const GpuProcess &h : g.holders)
            s += u"  pid %1 %2: %3 MiB\n"_s.arg(h.pid).arg(h.name).arg(h.usedMiB);
    }
    if (p.gpus.isEmpty())
        s += u"GPUs: none listed%1\n"_s.arg(p.gpuError.isEmpty() ? QString() : u" ("_s + p.gpuError + u')');
    for (const QString &problem : p.problems)
        s += u"Cannot start: "_s + problem + u'\n';
    return s;
}

QJsonObject RunReport::preflightJson(const Preflight &p) {
    QJsonArray gpus;
    for (const Preflight::Gpu &g : p.gpus) {
        QJsonArray holders;
        for (const GpuProcess &h : g.holders)
            holders.append(QJsonObject{{"pid"_L1, h.pid}, {"name"_L1, h.name}, {"used_mib"_L1, h.usedMiB}});
        gpus.append(QJsonObject{{"index"_L1, g.index},
                                {"name"_L1, g.name},
                                {"total_mib"_L1, g.totalMiB},
                                {"used_mib"_L1, g.usedMiB},
                                {"held_by_server"_L1, g.heldByServer},
                                {"enough_memory"_L1, g.enough},
                                {"holders"_L1, holders}});
    }
    return QJsonObject{{"can_start"_L1, p.canStart()},
                       {"needed_mib"_L1, p.neededMiB},
                       {"server_holds_gpus"_L1, p.serverHoldsGpus},
                       {"gpu_error"_L1, p.gpuError},
                       {"problems"_L1, QJsonArray::fromStringList(p.problems)},
                       {"gpus"_L1, gpus}};
}

QString RunReport::summaryText(const RunProgress &r) {
    QString s = u"Run %1: %2%3\n"_s.arg(hostText(r.runId), hostText(r.state),
                                        r.simulated ? u" [SIMULATED: synthetic backend]"_s : QString());
    s += u"  %1 measured, %2 failed, %3 events%4\n"_s.arg(r.measurements)
             .arg(r.failures)
             .arg(r.lastSeq + 1)
             .arg(r.wallS > 0 ? u", %1 s"_s.arg(r.wallS, 0, 'f', 1) : QString());
    for (auto it = r.gpus.begin(); it != r.gpus.end(); ++it)
        s += u"  GPU %1: %2 measured, %3 failed\n"_s.arg(it.key()).arg(it->measured).arg(it->failed);
    const QMap<int, double> best = r.bestPerBatch();
    if (!best.isEmpty())
        s += u"  %1 %2 %3 %4\n"_s.arg(u"batch"_s, 6)
                 .arg(u"best us"_s, 10)
                 .arg(u"default us"_s, 11)
                 .arg(u"speedup"_s, 8);
    for (auto it = best.begin(); it != best.end(); ++it) {
        const double def = r.defaultUs.value(it.key());
        s += u"  %1 %2 %3 %4%5\n"_s.arg(it.key(), 6)
                 .arg(it.value(), 10, 'f', 2)
                 .arg(def > 0 ? QString::number(def, 'f', 2) : u"-"_s, 11)
                 .arg(def > 0 ? u"%1x"_s.arg(def / it.value(), 0, 'f', 2) : u"-"_s, 8)
                 .arg(r.simulated ? u"  simulated"_s : QString());
    }
    for (const QString &f : r.files)
        s += u"  file: %1%2\n"_s.arg(hostText(f), r.simulated ? u" (simulated)"_s : QString());
    if (!r.error.isEmpty())
        s += u"  error: "_s + hostText(r.error, 4096) + u'\n';
    return s;
}

QJsonObject RunReport::summaryJson(const RunProgress &r) {
    QJsonArray perBatch;
    const QMap<int, double> best = r.bestPerBatch();
    for (auto it = best.begin(); it != best.end(); ++it) {
        const double def = r.defaultUs.value(it.key());
        perBatch.append(QJsonObject{{"m"_L1, it.key()},
                                    {"best_us"_L1, it.value()},
                                    {"default_us"_L1, def > 0 ? QJsonValue(def) : QJsonValue()},
                                    {"speedup"_L1, def > 0 ? QJsonValue(def / it.value()) : QJsonValue()}});
    }
    QJsonObject gpus;
    for (auto it = r.gpus.begin(); it != r.gpus.end(); ++it)
        gpus.insert(QString::number(it.key()),
                    QJsonObject{{"measured"_L1, it->measured}, {"failed"_L1, it->failed}});
    return QJsonObject{{"run_id"_L1, r.runId},
                       {"run_dir"_L1, r.runDir},
                       {"state"_L1, r.state},
                       {"simulated"_L1, r.simulated},
                       {"backend"_L1, r.backend},
                       {"last_seq"_L1, r.lastSeq},
                       {"done"_L1, r.done},
                       {"total"_L1, r.total},
                       {"measurements"_L1, r.measurements},
                       {"failures"_L1, r.failures},
                       {"duplicates_dropped"_L1, r.duplicatesDropped},
                       {"gpus"_L1, gpus},
                       {"per_batch"_L1, perBatch},
                       {"files"_L1, QJsonArray::fromStringList(r.files)},
                       {"result"_L1, r.resultPath},
                       {"error"_L1, r.error},
                       {"wall_s"_L1, r.wallS}};
}

int RunReport::exitFor(const RunProgress &r) {
    return r.doneStatus == "ok"_L1 ? 0 : 1;
}

void RunProgressLine::update(const RunProgress &r) {
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (Console::stderrIsTerminal()) {
        if (now - m_lastDraw < 200)
            return;
        m_lastDraw = now;
        Console::errControl(u"\r\x1b[K"_s);
        Console::err(hostText(r.runId, 64) + u": "_s + r.progressLine());
        m_drawn = true;
        return;
    }
    const int decile = r.total > 0 ? int(10 * r.done / r.total) : 0;
    if (decile != m_lastDecile) {
        m_lastDecile = decile;
        Console::err(hostText(r.runId, 64) + u": "_s + r.progressLine() + u'\n');
    }
}

void RunProgressLine::finish() {
    if (m_drawn)
        Console::errControl(u"\r\x1b[K"_s);
    m_drawn = false;
}

} // namespace moetune::cli
