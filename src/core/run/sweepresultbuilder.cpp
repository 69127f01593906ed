// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/sweepresultbuilder.h"

#include "core/run/agentprotocolparser.h"
#include "core/run/kernelconfigjson.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

void SweepResultBuilder::setEntry(QList<SweepEntry> &list, const SweepEntry &entry) {
    for (auto &e : list) {
        if (e.op == entry.op && e.m == entry.m) {
            e = entry;
            return;
        }
    }
    list.append(entry);
}

void SweepResultBuilder::applyRunStarted(const QJsonObject &o) {
    SweepResult &r = m_result;
    r.runId = o.value("run_id"_L1).toString(r.runId);
    r.backend = o.value("backend"_L1).toString(r.backend);
    r.deviceName = o.value("device_name"_L1).toString(r.deviceName);
    r.tritonVersion = o.value("triton_version"_L1).toString();
    r.strategy = o.value("strategy"_L1).toString(r.strategy);
    r.simulated = r.simulated || o.value("simulated"_L1).toBool();
    r.status = u"running"_s;
    r.finishedAt = 0;
    if (r.createdAt == 0)
        r.createdAt = o.value("ts"_L1).toDouble();
    r.gpus.clear();
    for (const auto &g : o.value("gpus"_L1).toArray())
        r.gpus.append(g.toInt());
    const QJsonObject spec = o.value("spec"_L1).toObject();
    r.framework = spec.value("framework"_L1).toString(r.framework);
    r.experts = spec.value("E"_L1).toInt();
    r.n = spec.value("N"_L1).toInt();
    r.k = spec.value("K"_L1).toInt();
    r.topk = spec.value("topk"_L1).toInt();
    r.dtype = spec.value("dtype"_L1).toString();
    if (r.dtype == "bf16"_L1)
        r.dtype.clear();
    const QJsonArray bs = spec.value("block_shape"_L1).toArray();
    r.blockShape.reset();
    if (bs.size() == 2)
        r.blockShape = std::array<int, 2>{bs.at(0).toInt(), bs.at(1).toInt()};
    r.perChannelQuant = spec.value("per_channel_quant"_L1).toBool();
    r.ops = spec.value("ops"_L1).toString() == "up+down"_L1 ? QList<SweepOp>{SweepOp::Up, SweepOp::Down}
                                                            : QList<SweepOp>{SweepOp::Both};
    r.batchSizes.clear();
    for (const auto &m : spec.value("batch_sizes"_L1).toArray())
        r.batchSizes.append(m.toInt());
    r.unitsFromJournal = o.value("journal_entries"_L1).toInt(r.unitsFromJournal);
}

SweepResultBuilder::Change SweepResultBuilder::add(const AgentEvent &event) {
    Change change;
    if (event.isError())
        return change;
    const QJsonObject &o = event.object;
    const qint64 seq = event.seq();
    if (seq >= 0) {
        // attach --from can repeat the event it resumed at; a run's seq is its line in events.jsonl.
        if (seq <= m_lastSeq)
            return change;
        m_lastSeq = seq;
    }
    ++m_events;
    const double ts = o.value("ts"_L1).toDouble();
    if (ts > 0) {
        if (m_firstTs == 0)
            m_firstTs = ts;
        m_lastTs = ts;
    }
    if (o.value("simulated"_L1).toBool())
        m_result.simulated = true;
    const QString &type = event.type;
    if (type == "run_started"_L1) {
        applyRunStarted(o);
    } else if (type == "measurement"_L1 || type == "candidate_error"_L1) {
        const auto op = sweepOpFromName(o.value("op"_L1).toString());
        const auto config = KernelConfigJson::fromJson(o.value("config"_L1).toObject());
        if (!op || !config || o.value("round"_L1).toInt() < -1)
            return change; // correctness checks are not timings
        SweepMeasurement m;
        m.op = *op;
        m.m = o.value("m"_L1).toInt();
        m.config = *config;
        if (o.value("config_down"_L1).isObject())
            m.configDown = KernelConfigJson::fromJson(o.value("config_down"_L1).toObject());
        m.round = o.value("round"_L1).toInt();
        m.replays = o.value("replays"_L1).toInt();
        m.gpu = o.value("gpu"_L1).toInt();
        if (type == "measurement"_L1) {
            m.medianUs = numberOrUnknown(o.value("median_us"_L1));
            m.minUs = numberOrUnknown(o.value("min_us"_L1));
            m.maxUs = numberOrUnknown(o.value("max_us"_L1));
            m.spread = numberOrUnknown(o.value("spread"_L1));
            if (!known(m.medianUs))
                m.errorKind = u"other"_s;
        } else {
            m.errorKind = o.value("kind"_L1).toString(u"other"_s);
            m.error = o.value("message"_L1).toString();
        }
        if (m.round == -1 && m.ok())
            setEntry(m_result.defaults, SweepEntry{m.op, m.m, m.config, m.medianUs});
        if (m.ok())
            ++m_result.unitsMeasured;
        else
            ++m_result.unitsFailed;
        m_result.measurements.append(std::move(m));
        change.measurement = true;
    } else if (type == "best"_L1) {
        const auto op = sweepOpFromName(o.value("op"_L1).toString());
        const auto config = KernelConfigJson::fromJson(o.value("config"_L1).toObject());
        if (!op || !config)
            return change;
        SweepEntry w{*op, o.value("m"_L1).toInt(), *config, numberOrUnknown(o.value("median_us"_L1))};
        setEntry(m_result.winners, w);
        const double d = numberOrUnknown(o.value("default_us"_L1));
        if (known(d) && !m_result.defaultEntry(*op, w.m)) {
            // The best event knows the default's latency before (or without) its measurement line.
            KernelConfig none;
            setEntry(m_result.defaults, SweepEntry{*op, w.m, none, d});
        }
        change.best = true;
        change.bestM = w.m;
    } else if (type == "result_written"_L1) {
        const QString kind = o.value("kind"_L1).toString();
        if (kind != "result"_L1) {
            SweepFile f;
            f.kind = kind;
            f.framework = kind == "vllm"_L1 ? u"vllm"_s : u"sglang"_s;
            f.fileName = o.value("file_name"_L1).toString();
            f.path = o.value("path"_L1).toString();
            f.sha256 = o.value("sha256"_L1).toString();
            bool replaced = false;
            for (auto &existing : m_result.files)
                if (existing.kind == f.kind) {
                    existing = f;
                    replaced = true;
                }
            if (!replaced)
                m_result.files.append(f);
        }
    } else if (type == "done"_L1) {
        const QString status = o.value("status"_L1).toString();
        if (status == "ok"_L1 || status == "cancelled"_L1)
            m_result.status = status;
        else if (status != "detached"_L1 && status != "interrupted"_L1)
            m_result.status = u"failed"_s; // unknown statuses count as failed (PROTOCOL.md 1)
        if (o.contains("wall_s"_L1))
            m_result.wallSeconds = numberOrUnknown(o.value("wall_s"_L1));
        if (ts > 0 && status != "detached"_L1 && status != "interrupted"_L1)
            m_result.finishedAt = ts;
        change.finished = status != "detached"_L1 && status != "interrupted"_L1;
    } else if (type == "result"_L1) {
        const auto r = SweepResult::fromJson(o.value("result"_L1).toObject());
        if (r) {
            setResult(*r);
            change.replaced = true;
        }
        return change;
    }
    if (!m_haveResult && (change.best || change.measurement || type == "run_started"_L1))
        m_result.recomputePerBatch();
    return change;
}

QStringList SweepResultBuilder::addEventsFile(const QByteArray &bytes) {
    AgentProtocolParser parser;
    QStringList errors;
    auto consume = [&](const QList<AgentEvent> &events) {
        for (const auto &e : events) {
            if (e.isError())
                errors.append(u"events.jsonl line %1: %2"_s.arg(e.lineNumber).arg(e.error));
            else
                add(e);
        }
    };
    consume(parser.feed(bytes));
    consume(parser.finish());
    return errors;
}

void SweepResultBuilder::setResult(const SweepResult &result) {
    const bool simulated = m_result.simulated || result.simulated;
    m_result = result;
    m_result.simulated = simulated; // a simulated event never turns into a measurement
    m_haveResult = true;
}

} // namespace moetune
