// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/sweepresult.h"
#include "core/util/errorout.h"

#include "core/run/kernelconfigjson.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonValue>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

QString sweepOpName(SweepOp op) {
    switch (op) {
    case SweepOp::Up:
        return u"up"_s;
    case SweepOp::Down:
        return u"down"_s;
    case SweepOp::Both:
        break;
    }
    return u"both"_s;
}

std::optional<SweepOp> sweepOpFromName(QStringView name) {
    if (name == u"both")
        return SweepOp::Both;
    if (name == u"up")
        return SweepOp::Up;
    if (name == u"down")
        return SweepOp::Down;
    return std::nullopt;
}

namespace {

QJsonValue orNull(double v) {
    return known(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null);
}

QList<int> intList(const QJsonValue &v) {
    QList<int> out;
    const QJsonArray a = v.toArray();
    out.reserve(a.size());
    for (const auto &x : a)
        out.append(x.toInt());
    return out;
}

QJsonArray intArray(const QList<int> &l) {
    QJsonArray a;
    for (int v : l)
        a.append(v);
    return a;
}

bool parseEntries(const QJsonValue &v, const QString &what, QList<SweepEntry> *out, bool withConfig,
                  QString *error) {
    const QJsonArray a = v.toArray();
    out->reserve(a.size());
    for (qsizetype i = 0; i < a.size(); ++i) {
        const QJsonObject o = a.at(i).toObject();
        SweepEntry e;
        const auto op = sweepOpFromName(o.value("op"_L1).toString());
        if (!op)
            return failWith(
                error, u"result.json: %1[%2].op must be \"both\", \"up\" or \"down\""_s.arg(what).arg(i));
        e.op = *op;
        e.m = o.value("m"_L1).toInt();
        if (withConfig) {
            QString why;
            const auto c = KernelConfigJson::fromJson(o.value("config"_L1).toObject(), &why);
            if (!c)
                return failWith(error, u"result.json: %1[%2]: %3"_s.arg(what).arg(i).arg(why));
            e.config = *c;
            e.medianUs = numberOrUnknown(o.value("median_us"_L1));
        } else {
            e.medianUs = numberOrUnknown(o.value("us"_L1));
        }
        out->append(e);
    }
    return true;
}

QJsonArray entriesJson(const QList<SweepEntry> &entries, bool withConfig) {
    QJsonArray a;
    for (const auto &e : entries) {
        QJsonObject o{{"op"_L1, sweepOpName(e.op)}, {"m"_L1, e.m}};
        if (withConfig) {
            o.insert("config"_L1, KernelConfigJson::toJson(e.config));
            o.insert("median_us"_L1, orNull(e.medianUs));
        } else {
            o.insert("us"_L1, orNull(e.medianUs));
        }
        a.append(o);
    }
    return a;
}

} // namespace

std::optional<SweepResult> SweepResult::fromJson(const QJsonObject &o, QString *error) {
    if (o.value("format"_L1).toString() != "moetune-result"_L1) {
        failWith(error, u"not a moetune result: its \"format\" is not \"moetune-result\""_s);
        return std::nullopt;
    }
    if (o.value("version"_L1).toInt() != 1) {
        failWith(error, u"result.json has version %1; this build reads version 1 (update moetune)"_s.arg(
                            o.value("version"_L1).toVariant().toString()));
        return std::nullopt;
    }
    SweepResult r;
    r.runId = o.value("run_id"_L1).toString();
    r.agentVersion = o.value("agent_version"_L1).toString();
    r.framework = o.value("framework"_L1).toString();
    r.backend = o.value("backend"_L1).toString();
    r.deviceName = o.value("device_name"_L1).toString();
    r.tritonVersion = o.value("triton_version"_L1).toString();
    r.strategy = o.value("strategy"_L1).toString();
    r.simulated = o.value("simulated"_L1).toBool();
    r.createdAt = o.value("created_at"_L1).toDouble();
    r.finishedAt = o.value("finished_at"_L1).toDouble();
    r.status = o.value("status"_L1).toString(u"ok"_s); // a written result.json is a finished run
    r.gpus = intList(o.value("gpus"_L1));
    for (const auto &v : o.value("ops"_L1).toArray()) {
        const auto op = sweepOpFromName(v.toString());
        if (!op) {
            failWith(error, u"result.json: unknown op \"%1\" in \"ops\""_s.arg(v.toString()));
            return std::nullopt;
        }
        r.ops.append(*op);
    }
    if (r.ops.isEmpty())
        r.ops.append(SweepOp::Both);
    r.batchSizes = intList(o.value("batch_sizes"_L1));
    const QJsonObject shape = o.value("shape"_L1).toObject();
    r.experts = shape.value("E"_L1).toInt();
    r.n = shape.value("N"_L1).toInt();
    r.k = shape.value("K"_L1).toInt();
    r.topk = shape.value("topk"_L1).toInt();
    r.dtype = shape.value("dtype"_L1).toString();
    if (r.dtype == "bf16"_L1)
        r.dtype.clear();
    const QJsonArray bs = shape.value("block_shape"_L1).toArray();
    if (bs.size() == 2)
        r.blockShape = std::array<int, 2>{bs.at(0).toInt(), bs.at(1).toInt()};
    r.perChannelQuant = shape.value("per_channel_quant"_L1).toBool();

    const QJsonArray ms = o.value("measurements"_L1).toArray();
    r.measurements.reserve(ms.size());
    for (qsizetype i = 0; i < ms.size(); ++i) {
        const QJsonObject mo = ms.at(i).toObject();
        SweepMeasurement m;
        const auto op = sweepOpFromName(mo.value("op"_L1).toString());
        if (!op)
            continue; // correctness checks ("check:up") and future unit kinds are not timings
        m.op = *op;
        m.m = mo.value("m"_L1).toInt();
        QString why;
        const auto c = KernelConfigJson::fromJson(mo.value("config"_L1).toObject(), &why);
        if (!c) {
            failWith(error, u"result.json: measurements[%1]: %2"_s.arg(i).arg(why));
            return std::nullopt;
        }
        m.config = *c;
        const QJsonValue down = mo.value("config_down"_L1);
        if (down.isObject())
            m.configDown = KernelConfigJson::fromJson(down.toObject());
        m.round = mo.value("round"_L1).toInt();
        m.replays = mo.value("replays"_L1).toInt();
        m.medianUs = numberOrUnknown(mo.value("median_us"_L1));
        m.minUs = numberOrUnknown(mo.value("min_us"_L1));
        m.maxUs = numberOrUnknown(mo.value("max_us"_L1));
        m.spread = numberOrUnknown(mo.value("spread"_L1));
        m.gpu = mo.value("gpu"_L1).toInt();
        m.errorKind = mo.value("error_kind"_L1).toString();
        m.error = mo.value("error"_L1).toString();
        if (!known(m.medianUs) && m.errorKind.isEmpty())
            m.errorKind = u"other"_s;
        r.measurements.append(std::move(m));
    }
    if (!parseEntries(o.value("winners"_L1), u"winners"_s, &r.winners, true, error) ||
        !parseEntries(o.value("default"_L1), u"default"_s, &r.defaults, true, error) ||
        !parseEntries(o.value("roofline"_L1), u"roofline"_s, &r.roofline, false, error))
        return std::nullopt;

    const QJsonArray pb = o.value("per_batch"_L1).toArray();
    for (const auto &v : pb) {
        const QJsonObject b = v.toObject();
        BatchSummary s;
        s.m = b.value("m"_L1).toInt();
        s.bestUs = numberOrUnknown(b.value("best_us"_L1));
        s.defaultUs = numberOrUnknown(b.value("default_us"_L1));
        s.speedup = numberOrUnknown(b.value("speedup"_L1));
        s.rooflineUs = numberOrUnknown(b.value("roofline_us"_L1));
        s.rooflineFraction = numberOrUnknown(b.value("roofline_fraction"_L1));
        s.decision = b.value("decision"_L1).toString();
        s.chosenDefault = b.value("chosen_default"_L1).toBool();
        r.perBatch.append(s);
    }
    if (r.perBatch.isEmpty())
        r.recomputePerBatch();
    if (r.batchSizes.isEmpty())
        for (const auto &b : std::as_const(r.perBatch))
            r.batchSizes.append(b.m);

    const QJsonObject t = o.value("timings"_L1).toObject();
    r.wallSeconds = numberOrUnknown(t.value("wall_s"_L1));
    r.unitsMeasured = t.value("units_measured"_L1).toInt();
    r.unitsFailed = t.value("units_failed"_L1).toInt();
    r.unitsFromJournal = t.value("units_from_journal"_L1).toInt();
    r.workerCrashes = t.value("worker_crashes"_L1).toInt();
    r.budgetHit = o.value("budget_hit"_L1).toBool();

    for (const auto &v : o.value("files"_L1).toArray()) {
        const QJsonObject f = v.toObject();
        SweepFile file;
        file.framework = f.value("framework"_L1).toString();
        file.kind = f.value("kind"_L1).toString();
        file.fileName = f.value("file_name"_L1).toString();
        file.path = f.value("path"_L1).toString();
        file.sha256 = f.value("sha256"_L1).toString();
        const QJsonObject entries = f.value("entries"_L1).toObject();
        for (auto it = entries.begin(); it != entries.end(); ++it) {
            bool isInt = false;
            const int m = it.key().toInt(&isInt);
            const auto c = KernelConfigJson::fromJson(it->toObject());
            if (isInt && c)
                file.config.entries.insert(m, *c);
        }
        r.files.append(file);
    }
    return r;
}

QJsonObject SweepResult::toJson() const {
    QJsonObject o{{"format"_L1, u"moetune-result"_s}, {"version"_L1, 1}};
    o.insert("run_id"_L1, runId);
    o.insert("agent_version"_L1, agentVersion);
    o.insert("simulated"_L1, simulated);
    o.insert("created_at"_L1, createdAt);
    o.insert("finished_at"_L1, finishedAt);
    o.insert("status"_L1, status);
    o.insert("framework"_L1, framework);
    o.insert("backend"_L1, backend);
    o.insert("device_name"_L1, deviceName);
    o.insert("triton_version"_L1, tritonVersion.isEmpty() ? QJsonValue() : QJsonValue(tritonVersion));
    o.insert("strategy"_L1, strategy);
    o.insert("gpus"_L1, intArray(gpus));
    QJsonArray opsJson;
    for (auto op : ops)
        opsJson.append(sweepOpName(op));
    o.insert("ops"_L1, opsJson);
    o.insert("batch_sizes"_L1, intArray(batchSizes));
    QJsonObject shape{{"E"_L1, experts},
                      {"N"_L1, n},
                      {"K"_L1, k},
                      {"topk"_L1, topk},
                      {"dtype"_L1, dtype.isEmpty() ? u"bf16"_s : dtype},
                      {"per_channel_quant"_L1, perChannelQuant}};
    shape.insert("block_shape"_L1,
                 blockShape ? QJsonValue(QJsonArray{(*blockShape)[0], (*blockShape)[1]}) : QJsonValue());
    o.insert("shape"_L1, shape);
    QJsonArray ms;
    for (const auto &m : measurements) {
        QJsonObject mo{{"op"_L1, sweepOpName(m.op)},
                       {"m"_L1, m.m},
                       {"config"_L1, KernelConfigJson::toJson(m.config)},
                       {"config_down"_L1,
                        m.configDown ? QJsonValue(KernelConfigJson::toJson(*m.configDown)) : QJsonValue()},
                       {"round"_L1, m.round},
                       {"replays"_L1, m.replays},
                       {"median_us"_L1, orNull(m.medianUs)},
                       {"min_us"_L1, orNull(m.minUs)},
                       {"max_us"_L1, orNull(m.maxUs)},
                       {"spread"_L1, orNull(m.spread)},
                       {"gpu"_L1, m.gpu},
                       {"error_kind"_L1, m.errorKind.isEmpty() ? QJsonValue() : QJsonValue(m.errorKind)},
                       {"error"_L1, m.error.isEmpty() ? QJsonValue() : QJsonValue(m.error)}};
        ms.append(mo);
    }
    o.insert("measurements"_L1, ms);
    o.insert("winners"_L1, entriesJson(winners, true));
    o.insert("default"_L1, entriesJson(defaults, true));
    o.insert("roofline"_L1, entriesJson(roofline, false));
    QJsonArray pb;
    for (const auto &b : perBatch)
        pb.append(QJsonObject{{"m"_L1, b.m},
                              {"best_us"_L1, orNull(b.bestUs)},
                              {"default_us"_L1, orNull(b.defaultUs)},
                              {"speedup"_L1, orNull(b.speedup)},
                              {"roofline_us"_L1, orNull(b.rooflineUs)},
                              {"roofline_fraction"_L1, orNull(b.rooflineFraction)},
                              {"decision"_L1, b.decision.isEmpty() ? QJsonValue() : QJsonValue(b.decision)},
                              {"chosen_default"_L1, b.chosenDefault}});
    o.insert("per_batch"_L1, pb);
    o.insert("timings"_L1, QJsonObject{{"wall_s"_L1, orNull(wallSeconds)},
                                       {"units_measured"_L1, unitsMeasured},
                                       {"units_failed"_L1, unitsFailed},
                                       {"units_from_journal"_L1, unitsFromJournal},
                                       {"worker_crashes"_L1, workerCrashes}});
    o.insert("budget_hit"_L1, budgetHit);
    QJsonArray fs;
    for (const auto &f : files) {
        QJsonObject entries;
        for (auto it = f.config.entries.cbegin(); it != f.config.entries.cend(); ++it)
            entries.insert(QString::number(it.key()), KernelConfigJson::toJson(it.value()));
        fs.append(QJsonObject{{"framework"_L1, f.framework},
                              {"kind"_L1, f.kind},
                              {"file_name"_L1, f.fileName},
                              {"path"_L1, f.path},
                              {"sha256"_L1, f.sha256},
                              {"entries"_L1, entries}});
    }
    o.insert("files"_L1, fs);
    return o;
}

const BatchSummary *SweepResult::batch(int m) const {
    for (const auto &b : perBatch)
        if (b.m == m)
            return &b;
    return nullptr;
}

const SweepEntry *SweepResult::winner(SweepOp op, int m) const {
    for (const auto &e : winners)
        if (e.op == op && e.m == m)
            return &e;
    return nullptr;
}

const SweepEntry *SweepResult::defaultEntry(SweepOp op, int m) const {
    for (const auto &e : defaults)
        if (e.op == op && e.m == m)
            return &e;
    return nullptr;
}

double SweepResult::rooflineUs(SweepOp op, int m) const {
    for (const auto &e : roofline)
        if (e.op == op && e.m == m)
            return e.medianUs;
    return kUnknown;
}

void SweepResult::recomputePerBatch() {
    QList<int> sizes = batchSizes;
    if (sizes.isEmpty()) {
        for (const auto &w : std::as_const(winners))
            if (!sizes.contains(w.m))
                sizes.append(w.m);
        std::sort(sizes.begin(), sizes.end());
    }
    perBatch.clear();
    for (int m : std::as_const(sizes)) {
        BatchSummary b;
        b.m = m;
        double best = 0, dflt = 0, roof = 0;
        for (auto op : std::as_const(ops)) {
            const SweepEntry *w = winner(op, m);
            const SweepEntry *d = defaultEntry(op, m);
            best += w ? w->medianUs : kUnknown;
            dflt += d ? d->medianUs : kUnknown;
            roof += rooflineUs(op, m);
        }
        b.bestUs = ops.isEmpty() ? kUnknown : best;
        b.defaultUs = ops.isEmpty() ? kUnknown : dflt;
        b.rooflineUs = ops.isEmpty() ? kUnknown : roof;
        if (known(b.bestUs) && known(b.defaultUs) && b.bestUs > 0)
            b.speedup = b.defaultUs / b.bestUs;
        if (known(b.bestUs) && known(b.rooflineUs) && b.bestUs > 0)
            b.rooflineFraction = b.rooflineUs / b.bestUs;
        perBatch.append(b);
    }
}

QList<LandscapePoint> SweepResult::landscape(SweepOp op, int m) const {
    struct Acc {
        int round = std::numeric_limits<int>::min();
        QList<const SweepMeasurement *> latest; // the units of the highest round
        int timings = 0;
    };
    QHash<quint64, Acc> byConfig;
    QList<quint64> order;
    for (const auto &meas : measurements) {
        if (meas.op != op || meas.m != m || !meas.ok() || meas.configDown)
            continue;
        const quint64 key = KernelConfigJson::packed(meas.config);
        auto it = byConfig.find(key);
        if (it == byConfig.end()) {
            it = byConfig.insert(key, Acc());
            order.append(key);
        }
        ++it->timings;
        // Rounds of -1 (default timings) rank below strategy rounds, as in the agent.
        if (meas.round > it->round) {
            it->round = meas.round;
            it->latest.clear();
        }
        if (meas.round == it->round)
            it->latest.append(&meas);
    }
    const SweepEntry *w = winner(op, m);
    const SweepEntry *d = defaultEntry(op, m);
    const quint64 winKey = w ? KernelConfigJson::packed(w->config) : 0;
    const quint64 defKey = d ? KernelConfigJson::packed(d->config) : 0;
    QList<LandscapePoint> out;
    out.reserve(order.size());
    for (quint64 key : std::as_const(order)) {
        const Acc &acc = byConfig[key];
        QList<double> medians;
        for (const auto *meas : acc.latest)
            medians.append(meas->medianUs);
        std::sort(medians.begin(), medians.end());
        const qsizetype count = medians.size();
        LandscapePoint p;
        p.config = acc.latest.first()->config;
        p.medianUs =
            count % 2 ? medians.at(count / 2) : 0.5 * (medians.at(count / 2 - 1) + medians.at(count / 2));
        p.spread = acc.latest.first()->spread;
        p.timings = acc.timings;
        p.winner = w && key == winKey;
        p.isDefault = d && key == defKey;
        out.append(p);
    }
    return out;
}

double SweepResult::latencyOf(SweepOp op, int m, const KernelConfig &config) const {
    int round = std::numeric_limits<int>::min();
    QList<double> medians;
    for (const auto &meas : measurements) {
        if (meas.op != op || meas.m != m || !meas.ok() || meas.configDown || !(meas.config == config))
            continue;
        if (meas.round > round) {
            round = meas.round;
            medians.clear();
        }
        if (meas.round == round)
            medians.append(meas.medianUs);
    }
    if (medians.isEmpty())
        return kUnknown;
    std::sort(medians.begin(), medians.end());
    const qsizetype count = medians.size();
    return count % 2 ? medians.at(count / 2) : 0.5 * (medians.at(count / 2 - 1) + medians.at(count / 2));
}

int SweepResult::measuredCount() const {
    return static_cast<int>(std::count_if(measurements.cbegin(), measurements.cend(),
                                          [](const SweepMeasurement &m) { return m.ok(); }));
}

int SweepResult::failedCount() const {
    return static_cast<int>(measurements.size()) - measuredCount();
}

QString SweepResult::dtypeText() const {
    return dtype.isEmpty() ? u"bf16"_s : dtype;
}

QString SweepResult::shapeText() const {
    QString s = u"E=%1 N=%2 K=%3 top-k %4 %5"_s.arg(experts).arg(n).arg(k).arg(topk).arg(dtypeText());
    if (blockShape)
        s += u" block [%1, %2]"_s.arg((*blockShape)[0]).arg((*blockShape)[1]);
    if (perChannelQuant)
        s += u" per-channel"_s;
    return s;
}

} // namespace moetune
