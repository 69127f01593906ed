// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/specoptions.h"

#include "cli/console.h"
#include "core/diagnosis/diagnoser.h"
#include "core/job/jobcheck.h"

#include <QFile>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune::cli {

QList<QCommandLineOption> specOptions(const QString &verb) {
    return {
        {u"from-log"_s,
         verb + u" the shape a server log's warning names (its wanted path decides the file)."_s, u"FILE"_s},
        {u"target"_s, u"With --from-log: which shape when the log names several (1-based)."_s, u"N"_s},
        {u"spec"_s, u"A tune spec JSON file (remote_agent/PROTOCOL.md section 6)."_s, u"FILE"_s},
        {u"framework"_s, u"sglang or vllm."_s, u"F"_s},
        {u"E"_s, u"Local experts."_s, u"E"_s},
        {u"N"_s, u"Per-rank intermediate size (moe_intermediate_size / TP)."_s, u"N"_s},
        {u"K"_s, u"Hidden size."_s, u"K"_s},
        {u"topk"_s, u"Experts per token."_s, u"T"_s},
        {u"dtype"_s, u"bf16 (default), fp8_w8a8, int8_w8a8, int8_w8a16, int4_w4a16, float32."_s, u"D"_s},
        {u"block-shape"_s, u"Block-quant shape, e.g. 128,128."_s, u"N,K"_s},
        {u"per-channel"_s, u"Per-channel quantisation."_s},
        {u"up-down"_s, u"Tune separate up and _down files (SGLang)."_s},
        {u"up-only"_s, u"Tune one file for both GEMMs."_s},
        {u"batch-sizes"_s, u"Comma-separated batch sizes (default: the 18 of the reference tuners)."_s,
         u"LIST"_s},
        {u"gpus"_s, u"Device indices, e.g. 0,1, or all (default)."_s, u"LIST"_s},
        {u"strategy"_s, u"Search strategy (the agent's strategy:* capabilities; default fast)."_s, u"NAME"_s},
        {u"time-budget"_s, u"Stop starting new phases after this many seconds."_s, u"S"_s},
        {u"backend"_s, u"auto (default), server, triton, or synthetic (SIMULATED numbers, for CI)."_s,
         u"B"_s},
        {u"device-name"_s, u"Override the device name in file names."_s, u"NAME"_s},
    };
}

namespace {

bool parseIntList(const QString &text, QList<int> *out) {
    out->clear();
    for (const QString &part : text.split(u',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const int v = part.trimmed().toInt(&ok);
        if (!ok)
            return false;
        out->append(v);
    }
    return !out->isEmpty();
}

} // namespace

// Options that override any source (spec file, log, shape options).
QString applySpecOverrides(const QCommandLineParser &p, TuneSpec *s) {
    auto intOpt = [&p](const char *name, int *target) -> QString {
        const QString key = QString::fromLatin1(name);
        if (!p.isSet(key))
            return {};
        bool ok = false;
        const int v = p.value(key).toInt(&ok);
        if (!ok || v <= 0)
            return u"--%1 wants a positive integer (got '%2')."_s.arg(key, p.value(key));
        *target = v;
        return {};
    };
    if (p.isSet(u"framework"_s)) {
        s->framework = frameworkFromString(p.value(u"framework"_s));
        if (s->framework == Framework::Unknown)
            return u"--framework is sglang or vllm (got '%1')."_s.arg(p.value(u"framework"_s));
    }
    for (const auto &[name, field] : {std::pair{"E", &s->experts}, std::pair{"N", &s->n},
                                      std::pair{"K", &s->hiddenSize}, std::pair{"topk", &s->topk}}) {
        QString e = intOpt(name, field);
        if (!e.isEmpty())
            return e;
    }
    if (p.isSet(u"dtype"_s))
        s->dtype = p.value(u"dtype"_s) == "bf16"_L1 ? QString() : p.value(u"dtype"_s);
    if (p.isSet(u"block-shape"_s)) {
        QList<int> b;
        if (!parseIntList(p.value(u"block-shape"_s), &b) || b.size() != 2)
            return u"--block-shape wants two integers such as 128,128."_s;
        s->blockShape = std::array<int, 2>{b[0], b[1]};
    }
    if (p.isSet(u"per-channel"_s))
        s->perChannelQuant = true;
    if (p.isSet(u"up-down"_s))
        s->upAndDown = true;
    if (p.isSet(u"up-only"_s))
        s->upAndDown = false;
    if (p.isSet(u"batch-sizes"_s) && !parseIntList(p.value(u"batch-sizes"_s), &s->batchSizes))
        return u"--batch-sizes wants integers separated by commas, such as 1,16,256."_s;
    if (p.isSet(u"gpus"_s) && p.value(u"gpus"_s) != "all"_L1 && !parseIntList(p.value(u"gpus"_s), &s->gpus))
        return u"--gpus wants device indices such as 0,1 or 'all'."_s;
    if (p.isSet(u"gpus"_s) && p.value(u"gpus"_s) == "all"_L1)
        s->gpus.clear();
    if (p.isSet(u"strategy"_s))
        s->strategy = p.value(u"strategy"_s);
    if (p.isSet(u"time-budget"_s)) {
        bool ok = false;
        s->timeBudgetSeconds = p.value(u"time-budget"_s).toDouble(&ok);
        if (!ok || s->timeBudgetSeconds <= 0)
            return u"--time-budget wants seconds > 0."_s;
    }
    if (p.isSet(u"backend"_s))
        s->backend = p.value(u"backend"_s);
    if (p.isSet(u"device-name"_s))
        s->deviceName = p.value(u"device-name"_s);
    return {};
}

QString checkSpec(const QString &command, const TuneSpec &spec, const std::optional<TuningTarget> &target) {
    const JobCheck check = JobCheck::check(spec, target);
    if (const QString warning = check.namesWarning(); !warning.isEmpty())
        Console::err(u"moetune-cli %1: warning: %2\n"_s.arg(command, warning));
    return check.firstProblem();
}

SpecSource readSpecSource(const QCommandLineParser &p) {
    SpecSource src;
    const int given = int(p.isSet(u"from-log"_s)) + int(p.isSet(u"spec"_s));
    if (given > 1) {
        src.error = u"give one of --from-log and --spec (or the shape options)."_s;
        return src;
    }
    if (p.isSet(u"spec"_s)) {
        QFile f(p.value(u"spec"_s));
        if (!f.open(QIODevice::ReadOnly)) {
            src.error = u"cannot read %1: %2"_s.arg(f.fileName(), f.errorString());
            return src;
        }
        QJsonParseError pe{};
        const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
        QString err;
        src.spec = doc.isObject() ? TuneSpec::fromJson(doc.object(), &err) : std::nullopt;
        if (!src.spec)
            src.error =
                u"%1 is not a tune spec: %2"_s.arg(f.fileName(), doc.isObject() ? err : pe.errorString());
        return src;
    }
    if (p.isSet(u"from-log"_s)) {
        QString err;
        const Diagnosis d = Diagnoser().diagnoseFile(p.value(u"from-log"_s), {}, &err);
        if (!err.isEmpty()) {
            src.error = err;
            return src;
        }
        if (d.targets.isEmpty()) {
            src.error = u"%1 names no MoE config the server was missing: nothing to tune from it."_s.arg(
                p.value(u"from-log"_s));
            return src;
        }
        int index = 0;
        if (p.isSet(u"target"_s)) {
            bool ok = false;
            index = p.value(u"target"_s).toInt(&ok) - 1;
            if (!ok || index < 0 || index >= d.targets.size()) {
                src.error = u"--target is 1..%1 (the log names %1 shape(s))."_s.arg(d.targets.size());
                return src;
            }
        } else if (d.targets.size() > 1) {
            QStringList shapes;
            for (qsizetype i = 0; i < d.targets.size(); ++i)
                shapes.append(u"%1: %2"_s.arg(i + 1).arg(d.targets[i].shapeSummary()));
            src.error = u"the log names %1 shapes; choose one with --target N (%2)."_s.arg(d.targets.size())
                            .arg(shapes.join(u"; "_s));
            return src;
        }
        src.target = d.targets[index];
        src.spec = TuneSpec::fromTarget(*src.target);
        return src;
    }
    src.spec = TuneSpec{}; // shape options only
    return src;
}

} // namespace moetune::cli
