// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/report/report.h"

#include "core/diagnosis/moerule.h"
#include "core/run/kernelconfigjson.h"
#include "core/run/referencecost.h"
#include "core/run/workspacerun.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QSet>

#include <cmath>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

Report::Finding finding(const QJsonObject &f) {
    Report::Finding out;
    out.severity = f.value("severity"_L1).toString();
    out.title = f.value("title"_L1).toString();
    out.occurrences = f.value("occurrences"_L1).toInt();
    QStringList sources;
    for (const auto &s : f.value("sources"_L1).toArray())
        sources.append(s.toString());
    out.sources = sources.size() > 4
                      ? u"%1 ... %2 (%3)"_s.arg(sources.first(), sources.last()).arg(sources.size())
                      : sources.join(u", "_s);
    return out;
}

// A finding about this run's shape: its tuning target names the same E and N.
bool aboutShape(const QJsonObject &f, int e, int n) {
    const QJsonObject t = f.value("target"_L1).toObject();
    return !t.isEmpty() && t.value("E"_L1).toInt() == e && t.value("N"_L1).toInt() == n;
}

bool isMoeConfigProblem(const QJsonObject &f) {
    const QString rule = f.value("rule"_L1).toString();
    const QString severity = f.value("severity"_L1).toString();
    const MoeRuleRow *row = MoeRules::find(rule);
    return row && row->family == MoeRuleFamily::MoeKernel && severity != "info"_L1;
}

QString gpuText(const QJsonObject &g) {
    QString name = g.value("raw_name"_L1).toString(g.value("name"_L1).toString());
    QString s = u"GPU %1: %2"_s.arg(g.value("index"_L1).toInt()).arg(name);
    if (g.value("memory_total_mib"_L1).isDouble())
        s += u" (%1 GiB)"_s.arg(g.value("memory_total_mib"_L1).toDouble() / 1024.0, 0, 'f', 0);
    return s;
}

} // namespace

Report Report::fromRun(const WorkspaceRun &run, const QDateTime &generated) {
    const SweepResult &r = run.result;
    Report rep;
    rep.generated = generated;
    rep.recorded = r.createdAt > 0 ? QDateTime::fromSecsSinceEpoch(qint64(r.createdAt), Qt::UTC)
                                         .toString(u"yyyy-MM-dd HH:mm 'UTC'"_s)
                                   : u"unknown"_s;
    rep.simulated = r.simulated;
    rep.runId = run.runId;
    rep.status = r.status;
    rep.title = run.displayTitle();
    rep.host = run.host;
    rep.deviceName = r.deviceName;
    rep.framework = r.framework;
    rep.note = run.note;
    rep.warnings = run.warnings;

    if (run.hostFacts) {
        const QJsonObject &h = *run.hostFacts;
        if (rep.host.isEmpty())
            rep.host = h.value("host"_L1).toObject().value("hostname"_L1).toString();
        for (const auto &g : h.value("gpus"_L1).toArray())
            rep.gpus.append(gpuText(g.toObject()));
        const QJsonObject py = h.value("python"_L1).toObject();
        if (!py.value("version"_L1).toString().isEmpty())
            rep.versions.append({u"Python"_s, py.value("version"_L1).toString()});
        if (!py.value("torch"_L1).toString().isEmpty())
            rep.versions.append({u"torch"_s, py.value("torch"_L1).toString()});
        for (const auto &fw : h.value("frameworks"_L1).toArray()) {
            const QJsonObject o = fw.toObject();
            if (o.value("importable"_L1).toBool())
                rep.versions.append({o.value("name"_L1).toString(), o.value("version"_L1).toString()});
        }
    }
    if (!r.tritonVersion.isEmpty())
        rep.versions.append({u"Triton"_s, r.tritonVersion});
    if (!r.agentVersion.isEmpty())
        rep.versions.append({u"moetune agent"_s, r.agentVersion});
    if (rep.gpus.isEmpty() && !r.gpus.isEmpty()) {
        for (int g : r.gpus)
            rep.gpus.append(u"GPU %1: %2"_s.arg(g).arg(r.deviceName));
    }

    if (run.diagnosisBefore) {
        rep.hasDiagnosis = true;
        rep.diagnosisSummary = run.diagnosisBefore->value("summary"_L1).toString();
        for (const auto &f : run.diagnosisBefore->value("findings"_L1).toArray())
            rep.findings.append(finding(f.toObject()));
    }

    auto sizes = [](const QList<int> &l) {
        QStringList s;
        for (int m : l)
            s.append(QString::number(m));
        return s.join(u", "_s);
    };
    QStringList ops;
    for (auto op : r.ops)
        ops.append(sweepOpName(op));
    rep.job = {{u"Framework"_s, r.framework},
               {u"Shape"_s, r.shapeText()},
               {u"Device"_s, r.deviceName},
               {u"Ops"_s, r.ops == QList<SweepOp>{SweepOp::Both}
                              ? u"up (one file; the whole MoE call timed)"_s
                              : u"up + down (separate files)"_s},
               {u"Batch sizes"_s, sizes(r.batchSizes)},
               {u"Strategy"_s, r.strategy},
               {u"Backend"_s, r.simulated ? r.backend + u" (SIMULATED)"_s : r.backend}};
    QStringList gpuIds;
    for (int g : r.gpus)
        gpuIds.append(QString::number(g));
    // "GPU 0" (one device, index 0), never "GPUs 0", which reads as no GPU at all.
    rep.job.append({gpuIds.size() == 1 ? u"GPU"_s : u"GPUs"_s,
                    gpuIds.isEmpty() ? u"all of the host's"_s : gpuIds.join(u", "_s)});
    const double budget = run.spec.value("time_budget_s"_L1).toDouble();
    if (budget > 0)
        rep.job.append(
            {u"Time budget"_s, u"%1 s%2"_s.arg(budget).arg(r.budgetHit ? u" (reached)"_s : QString())});

    double logSum = 0;
    int logCount = 0;
    for (const auto &b : r.perBatch) {
        Row row;
        row.m = b.m;
        QStringList keys;
        for (auto op : r.ops)
            if (const SweepEntry *w = r.winner(op, b.m))
                keys.append((r.ops.size() > 1 ? sweepOpName(op) + u" "_s : QString()) +
                            KernelConfigJson::key(w->config));
        row.config = keys.join(u" / "_s);
        if (b.chosenDefault)
            row.config += u" (default kept)"_s;
        row.tunedUs = b.bestUs;
        row.defaultUs = b.defaultUs;
        row.speedup = b.speedup;
        row.floorUs = b.rooflineUs;
        row.floorFraction = b.rooflineFraction;
        if (known(b.speedup) && b.speedup > 0) {
            logSum += std::log(b.speedup);
            ++logCount;
        }
        rep.rows.append(row);
    }
    if (logCount)
        rep.geomeanSpeedup = std::exp(logSum / logCount);

    rep.wallSeconds = r.wallSeconds;
    rep.unitsMeasured = r.measuredCount();
    rep.unitsFailed = r.failedCount();
    QSet<quint64> distinct;
    for (const auto &m : r.measurements)
        distinct.insert(KernelConfigJson::packed(m.config));
    rep.distinctConfigs = int(distinct.size());
    if (!r.batchSizes.isEmpty()) {
        rep.referenceSeconds = ReferenceCost::estimateSeconds(r.batchSizes) * r.ops.size();
        rep.referenceBasis = ReferenceCost::basis();
    }

    for (const auto &f : r.files) {
        // The job's framework only (the agent writes a vLLM copy of an SGLang job's file too), and
        // where in the run folder, not the recording host's absolute path.
        if (!r.framework.isEmpty() && !f.framework.isEmpty() && f.framework != r.framework)
            continue;
        QString where = f.path;
        if (const qsizetype at = where.indexOf(QString(u'/' + r.runId + u'/')); !r.runId.isEmpty() && at >= 0)
            where = where.mid(at + r.runId.size() + 2);
        else if (where.startsWith(u'/'))
            where = (f.framework.isEmpty() ? f.kind : f.framework) + u'/' + f.fileName;
        rep.resultFiles.append({f.fileName, where});
    }
    if (run.push) {
        rep.installFolder = run.push->value("target_folder"_L1).toString();
        for (const auto &v : run.push->value("installed"_L1).toArray()) {
            const QJsonObject o = v.toObject();
            rep.installed.append(
                InstalledFile{o.value("file_name"_L1).toString(), o.value("target"_L1).toString(),
                              o.value("backup"_L1).toString(), o.value("sha256"_L1).toString(),
                              o.value("unchanged"_L1).toBool()});
        }
    }

    if (run.diagnosisBefore && run.diagnosisAfter) {
        Proof proof;
        proof.beforeSummary = run.diagnosisBefore->value("summary"_L1).toString();
        proof.afterSummary = run.diagnosisAfter->value("summary"_L1).toString();
        for (const auto &f : run.diagnosisBefore->value("findings"_L1).toArray())
            if (aboutShape(f.toObject(), r.experts, r.n) && isMoeConfigProblem(f.toObject()))
                proof.before.append(finding(f.toObject()));
        for (const auto &v : run.diagnosisAfter->value("findings"_L1).toArray()) {
            const QJsonObject f = v.toObject();
            if (!aboutShape(f, r.experts, r.n))
                continue;
            if (isMoeConfigProblem(f))
                proof.after.append(finding(f));
            else if (f.value("severity"_L1).toString() == "info"_L1)
                proof.inUse.append(f.value("title"_L1).toString());
        }
        proof.gone = proof.after.isEmpty();
        rep.proof = proof;
    }
    if (run.headroom) {
        QString why;
        rep.headroom = HeadroomResult::fromJson(*run.headroom, &why);
        if (!rep.headroom)
            rep.warnings.append(u"headroom.json cannot be read: "_s + why);
    }
    return rep;
}

} // namespace moetune
