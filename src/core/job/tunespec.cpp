// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/job/tunespec.h"

#include "core/job/jobcheck.h"
#include "core/job/tuningtarget.h"
#include "core/moe/configname.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

std::optional<std::array<int, 2>> blockFromJson(const QJsonValue &v, bool *ok) {
    *ok = true;
    if (v.isNull() || v.isUndefined())
        return std::nullopt;
    const QJsonArray a = v.toArray();
    // [n, k] block scales, or [0, group] for group-quantised weights (int4_w4a16, int8_w8a16)
    if (!v.isArray() || a.size() != 2 || !a[0].isDouble() || !a[1].isDouble() || a[0].toInt() < 0 ||
        a[1].toInt() <= 0) {
        *ok = false;
        return std::nullopt;
    }
    return std::array<int, 2>{a[0].toInt(), a[1].toInt()};
}

// A JSON string literal, quotes and escapes included.
QString jsonString(const QString &s) {
    const QByteArray array = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(array.sliced(1, array.size() - 2));
}

} // namespace

QList<int> TuneSpec::defaultBatchSizes() {
    return {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096};
}

TuneSpec TuneSpec::fromTarget(const TuningTarget &target) {
    TuneSpec s;
    s.framework = target.framework;
    s.experts = target.name.experts;
    // The spec names the layer's logical N; SGLang's int4_w4a16 file names half of it (packed weights).
    s.n = target.name.logicalN(target.framework);
    s.dtype = target.name.dtype;
    s.blockShape = target.name.blockShape;
    s.perChannelQuant = target.name.perChannelQuant;
    s.deviceName = target.name.deviceName;
    s.upAndDown = target.tunesDown();
    return s;
}

QString TuneSpec::validate() const {
    return JobCheck::check(*this).firstProblem(); // the one validator, shared with the Tune page
}

QString TuneSpec::shapeText() const {
    QString s = u"E="_s + QString::number(experts) + u", N="_s + QString::number(n);
    if (hiddenSize > 0)
        s += u", K="_s + QString::number(hiddenSize);
    if (topk > 0)
        s += u", top-k "_s + QString::number(topk);
    s += u", "_s + (dtype.isEmpty() ? u"bf16"_s : dtype);
    if (blockShape)
        s += u", block ["_s + QString::number((*blockShape)[0]) + u", "_s +
             QString::number((*blockShape)[1]) + u']';
    if (perChannelQuant)
        s += u", per-channel"_s;
    return s;
}

QString TuneSpec::summaryText() const {
    return frameworkName(framework) + u": "_s + shapeText() + (upAndDown ? u", up and down"_s : u", up"_s);
}

QString TuneSpec::shapeJson() const {
    // Hand-ordered (QJsonObject sorts its keys): the fields read in the order a person checks them.
    QString s = u"{\"framework\": \""_s + frameworkId(framework) + u"\", \"E\": "_s +
                QString::number(experts) + u", \"N\": "_s + QString::number(n);
    if (hiddenSize > 0)
        s += u", \"K\": "_s + QString::number(hiddenSize);
    if (topk > 0)
        s += u", \"topk\": "_s + QString::number(topk);
    if (!dtype.isEmpty())
        s += u", \"dtype\": "_s + jsonString(dtype);
    if (blockShape)
        s += u", \"block_shape\": ["_s + QString::number((*blockShape)[0]) + u", "_s +
             QString::number((*blockShape)[1]) + u']';
    if (perChannelQuant)
        s += u", \"per_channel_quant\": true"_s;
    s += upAndDown ? u", \"ops\": \"up+down\""_s : u", \"ops\": \"up\""_s;
    if (!deviceName.isEmpty())
        s += u", \"device_name\": "_s + jsonString(deviceName);
    return s + u'}';
}

QJsonObject TuneSpec::toJson() const {
    QJsonObject o;
    o.insert("framework"_L1, frameworkId(framework));
    o.insert("E"_L1, experts);
    o.insert("N"_L1, n);
    o.insert("K"_L1, hiddenSize);
    o.insert("topk"_L1, topk);
    o.insert("dtype"_L1, dtype.isEmpty() ? QJsonValue() : QJsonValue(dtype));
    if (blockShape)
        o.insert("block_shape"_L1, QJsonArray{(*blockShape)[0], (*blockShape)[1]});
    else
        o.insert("block_shape"_L1, QJsonValue());
    o.insert("per_channel_quant"_L1, perChannelQuant);
    o.insert("ops"_L1, upAndDown ? u"up+down"_s : u"up"_s);
    QJsonArray sizes;
    for (int m : batchSizes)
        sizes.append(m);
    o.insert("batch_sizes"_L1, sizes);
    o.insert("space"_L1, space);
    o.insert("strategy"_L1, strategy);
    if (gpus.isEmpty()) {
        o.insert("gpus"_L1, u"all"_s);
    } else {
        QJsonArray g;
        for (int i : gpus)
            g.append(i);
        o.insert("gpus"_L1, g);
    }
    o.insert("time_budget_s"_L1, timeBudgetSeconds > 0 ? QJsonValue(timeBudgetSeconds) : QJsonValue());
    o.insert("backend"_L1, backend.isEmpty() ? u"auto"_s : backend);
    o.insert("python"_L1, python.isEmpty() ? QJsonValue() : QJsonValue(python));
    o.insert("routing_file"_L1, routingFile.isEmpty() ? QJsonValue() : QJsonValue(routingFile));
    o.insert("device_name"_L1, deviceName.isEmpty() ? QJsonValue() : QJsonValue(deviceName));
    return o;
}

std::optional<TuneSpec> TuneSpec::fromJson(const QJsonObject &o, QString *error) {
    auto fail = [error](const QString &msg) -> std::optional<TuneSpec> {
        if (error)
            *error = msg;
        return std::nullopt;
    };
    static const QSet<QString> known{u"framework"_s,
                                     u"E"_s,
                                     u"N"_s,
                                     u"K"_s,
                                     u"topk"_s,
                                     u"dtype"_s,
                                     u"block_shape"_s,
                                     u"per_channel_quant"_s,
                                     u"ops"_s,
                                     u"batch_sizes"_s,
                                     u"space"_s,
                                     u"strategy"_s,
                                     u"gpus"_s,
                                     u"time_budget_s"_s,
                                     u"backend"_s,
                                     u"python"_s,
                                     u"routing_file"_s,
                                     u"device_name"_s};
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key()))
            return fail(u"Unknown tune spec key \"%1\"."_s.arg(it.key()));
    }
    TuneSpec s;
    s.framework = frameworkFromString(o.value("framework"_L1).toString());
    auto intKey = [&o](const char *key, int *out) {
        const QJsonValue v = o.value(QLatin1StringView(key));
        if (v.isUndefined() || v.isNull())
            return true;
        if (!v.isDouble() || v.toDouble() != double(v.toInt()))
            return false;
        *out = v.toInt();
        return true;
    };
    for (auto [key, out] : {std::pair{"E", &s.experts}, std::pair{"N", &s.n}, std::pair{"K", &s.hiddenSize},
                            std::pair{"topk", &s.topk}}) {
        if (!intKey(key, out))
            return fail(u"Tune spec key \"%1\" must be an integer."_s.arg(QLatin1StringView(key)));
    }
    const QString dtype = o.value("dtype"_L1).toString();
    s.dtype = (dtype == "bf16"_L1 || dtype == "fp16"_L1) ? QString() : dtype;
    bool ok = true;
    s.blockShape = blockFromJson(o.value("block_shape"_L1), &ok);
    if (!ok)
        return fail(
            u"Tune spec key \"block_shape\" must be [n, k] with positive integers, [0, group], or null."_s);
    s.perChannelQuant = o.value("per_channel_quant"_L1).toBool();
    s.upAndDown = o.value("ops"_L1).toString() == "up+down"_L1;
    if (o.contains("batch_sizes"_L1)) {
        s.batchSizes.clear();
        for (const QJsonValue v : o.value("batch_sizes"_L1).toArray())
            s.batchSizes.append(v.toInt());
    }
    s.space = o.value("space"_L1).toObject();
    if (o.contains("strategy"_L1))
        s.strategy = o.value("strategy"_L1).toString();
    const QJsonValue gpus = o.value("gpus"_L1);
    if (gpus.isArray()) {
        for (const QJsonValue v : gpus.toArray())
            s.gpus.append(v.toInt());
    }
    s.timeBudgetSeconds = o.value("time_budget_s"_L1).toDouble();
    if (o.contains("backend"_L1))
        s.backend = o.value("backend"_L1).toString();
    s.python = o.value("python"_L1).toString();
    s.routingFile = o.value("routing_file"_L1).toString();
    s.deviceName = o.value("device_name"_L1).toString();
    return s;
}

} // namespace moetune
