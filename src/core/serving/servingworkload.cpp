// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/serving/servingworkload.h"

#include <QJsonArray>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

QList<int> ServingWorkload::defaultConcurrencies() {
    return {1, 16, 64};
}

QStringList ServingWorkload::presetIds() {
    return {u"decode"_s, u"prefill"_s, u"standard"_s};
}

std::optional<ServingWorkload> ServingWorkload::fromPreset(const QString &id) {
    ServingWorkload w;
    w.preset = id;
    if (id == "decode"_L1) { // short prompts, long answers: the MoE GEMMs run at small M (TPOT)
        w.inputLen = 256;
        w.outputLen = 512;
    } else if (id == "prefill"_L1) { // long prompts, short answers: large M per step (TTFT)
        w.inputLen = 4096;
        w.outputLen = 16;
    } else if (id == "standard"_L1) { // the command line of docs/servers.md section 10
        w.inputLen = 1024;
        w.outputLen = 128;
        w.concurrencies = {16};
    } else {
        return std::nullopt;
    }
    return w;
}

QString ServingWorkload::presetDescription(const QString &id) {
    if (id == "decode"_L1)
        return u"decode-heavy: 256 prompt tokens, 512 generated, concurrency 1, 16, 64"_s;
    if (id == "prefill"_L1)
        return u"prefill-heavy: 4096 prompt tokens, 16 generated, concurrency 1, 16, 64"_s;
    if (id == "standard"_L1)
        return u"the servers' usual line: 1024 in, 128 out, concurrency 16"_s;
    return u"edited by hand"_s;
}

QString ServingWorkload::validate() const {
    if (inputLen < 1 || inputLen > 1000000)
        return u"The input length must be between 1 and 1000000 tokens (got %1)."_s.arg(inputLen);
    if (outputLen < 1 || outputLen > 1000000)
        return u"The output length must be between 1 and 1000000 tokens (got %1)."_s.arg(outputLen);
    if (numPrompts < 1 || numPrompts > 1000000)
        return u"The number of prompts must be between 1 and 1000000 (got %1)."_s.arg(numPrompts);
    if (concurrencies.isEmpty())
        return u"Give at least one concurrency (for example 1,16,64)."_s;
    for (int c : concurrencies) {
        if (c < 1 || c > 100000)
            return u"Each concurrency must be between 1 and 100000 (got %1)."_s.arg(c);
    }
    if (seed < 0)
        return u"The seed must be 0 or more (got %1)."_s.arg(seed);
    return {};
}

QString ServingWorkload::summary() const {
    QStringList cs;
    for (int c : concurrencies)
        cs.append(QString::number(c));
    return u"%1: %2 in / %3 out tokens, %4 prompts, concurrency %5, seed %6"_s.arg(preset)
        .arg(inputLen)
        .arg(outputLen)
        .arg(numPrompts)
        .arg(cs.join(u", "_s))
        .arg(seed);
}

std::optional<QList<int>> ServingWorkload::parseConcurrencies(const QString &text, QString *error) {
    QList<int> out;
    static const QRegularExpression sep(u"[,\\s]+"_s);
    for (const QString &part : text.split(sep, Qt::SkipEmptyParts)) {
        bool ok = false;
        const int v = part.toInt(&ok);
        if (!ok || v < 1) {
            if (error)
                *error =
                    u"Concurrencies are whole numbers of 1 or more, such as 1,16,64 (\"%1\" is not)."_s.arg(
                        part);
            return std::nullopt;
        }
        if (!out.contains(v))
            out.append(v);
    }
    if (out.isEmpty()) {
        if (error)
            *error = u"Give at least one concurrency (for example 1,16,64)."_s;
        return std::nullopt;
    }
    return out;
}

QJsonObject ServingWorkload::toJson() const {
    QJsonArray cs;
    for (int c : concurrencies)
        cs.append(c);
    return QJsonObject{{"preset"_L1, preset},        {"input_len"_L1, inputLen},
                       {"output_len"_L1, outputLen}, {"num_prompts"_L1, numPrompts},
                       {"concurrencies"_L1, cs},     {"seed"_L1, seed}};
}

ServingWorkload ServingWorkload::fromJson(const QJsonObject &o) {
    ServingWorkload w;
    w.preset = o.value("preset"_L1).toString(w.preset);
    w.inputLen = o.value("input_len"_L1).toInt(w.inputLen);
    w.outputLen = o.value("output_len"_L1).toInt(w.outputLen);
    w.numPrompts = o.value("num_prompts"_L1).toInt(w.numPrompts);
    if (o.contains("concurrencies"_L1)) {
        w.concurrencies.clear();
        for (const QJsonValue v : o.value("concurrencies"_L1).toArray())
            w.concurrencies.append(v.toInt());
    }
    w.seed = o.value("seed"_L1).toInt(w.seed);
    return w;
}

} // namespace moetune
