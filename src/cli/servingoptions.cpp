// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/servingoptions.h"

#include "cli/console.h"
#include "cli/flowhost.h"

#include <QJsonDocument>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace moetune::cli {

QList<QCommandLineOption> ServingOptions::options() {
    return {
        {u"bench"_s,
         u"Serving benchmark with the server's own tool: decode, prefill or standard "
         u"(docs/servers.md section 10); push "
         u"--restart runs it before the push and after the restart and gives the verdict."_s,
         u"PRESET"_s},
        {u"bench-concurrency"_s, u"Concurrencies, one benchmark run each (default: the preset's)."_s,
         u"LIST"_s},
        {u"bench-prompts"_s, u"Prompts per run (default 200)."_s, u"N"_s},
        {u"bench-input-len"_s, u"Prompt tokens (default: the preset's)."_s, u"N"_s},
        {u"bench-output-len"_s, u"Generated tokens (default: the preset's)."_s, u"N"_s},
        {u"bench-seed"_s, u"The workload's seed (default 0)."_s, u"N"_s},
        {u"bench-pairs"_s,
         u"Rigorous mode: N order-balanced pairs of boots (A B B A ..., a restart per leg, the old files put "
         u"back for A); the verdict from the primary metric's 95% interval. 4 is usual."_s,
         u"N"_s},
        {u"bench-adaptive"_s,
         u"Rigorous mode, adaptive: pairs are added (from 2) until the primary metric's 95% interval is "
         u"narrower than the margin, at most --bench-pairs (default 8) or the time limit."_s},
        {u"bench-margin"_s,
         u"The margin in percent (default 5): \"no change\" means the 95% interval lies within it; the "
         u"adaptive mode stops when the interval is narrower than it."_s,
         u"PCT"_s},
        {u"bench-time-limit"_s, u"The whole comparison's time limit in hours (default 6)."_s, u"HOURS"_s},
        {u"bench-tool"_s,
         u"The tool's command instead of the framework's (e.g. a venv's vllm bench serve)."_s, u"CMD"_s},
        {u"bench-url"_s,
         u"The server's address as its host sees it (default from the probe: http://127.0.0.1:PORT)."_s,
         u"URL"_s},
        {u"bench-model"_s, u"--model for the tool (default: the served model)."_s, u"NAME"_s},
    };
}

std::optional<ServingFlow::Plan> ServingOptions::plan(const QCommandLineParser &p, Framework framework,
                                                      const HostProbe *probe, const ServerProfile &profile,
                                                      const QString &defaultPreset, QString *error) {
    const QString presetId = p.isSet(u"bench"_s) ? p.value(u"bench"_s) : defaultPreset;
    auto w = ServingWorkload::fromPreset(presetId);
    if (!w) {
        *error =
            u"--bench is one of %1 (got \"%2\")."_s.arg(ServingWorkload::presetIds().join(u", "_s), presetId);
        return std::nullopt;
    }
    const auto intOpt = [&](const QString &name, int &into) {
        if (!p.isSet(name))
            return true;
        bool ok = false;
        into = p.value(name).toInt(&ok);
        if (!ok)
            *error = u"--%1 wants a whole number (got \"%2\")."_s.arg(name, p.value(name));
        else
            w->preset = u"custom"_s;
        return ok;
    };
    if (!intOpt(u"bench-prompts"_s, w->numPrompts) || !intOpt(u"bench-input-len"_s, w->inputLen) ||
        !intOpt(u"bench-output-len"_s, w->outputLen) || !intOpt(u"bench-seed"_s, w->seed))
        return std::nullopt;
    if (p.isSet(u"bench-concurrency"_s)) {
        const auto cs = ServingWorkload::parseConcurrencies(p.value(u"bench-concurrency"_s), error);
        if (!cs)
            return std::nullopt;
        w->concurrencies = *cs;
        w->preset = u"custom"_s;
    }
    ServingFlow::Plan plan;
    plan.workload = *w;
    plan.bench = ServingBenchCommand::suggest(framework, probe, profile);
    if (p.isSet(u"bench-url"_s)) {
        const QUrl url(p.value(u"bench-url"_s));
        if (!url.isValid() || url.scheme() != "http"_L1 || url.host().isEmpty() || url.port() <= 0) {
            *error = u"--bench-url wants http://HOST:PORT (got \"%1\")."_s.arg(p.value(u"bench-url"_s));
            return std::nullopt;
        }
        plan.bench.host = url.host();
        plan.bench.port = url.port();
        plan.bench.addressFrom = ServingBenchCommand::AddressFrom::User;
    }
    if (p.isSet(u"bench-model"_s))
        plan.bench.model = p.value(u"bench-model"_s);
    if (p.isSet(u"bench-tool"_s))
        plan.bench.tool = p.value(u"bench-tool"_s);
    if (p.isSet(u"bench-pairs"_s)) {
        bool ok = false;
        plan.pairs = p.value(u"bench-pairs"_s).toInt(&ok);
        plan.rigorous = true;
        if (!ok) {
            *error = u"--bench-pairs wants a whole number (got \"%1\")."_s.arg(p.value(u"bench-pairs"_s));
            return std::nullopt;
        }
    }
    if (p.isSet(u"bench-adaptive"_s)) {
        plan.rigorous = true;
        plan.adaptive = true;
        if (!p.isSet(u"bench-pairs"_s))
            plan.pairs = 8;
    }
    const auto doubleOpt = [&](const QString &name, double &into) {
        if (!p.isSet(name))
            return true;
        bool ok = false;
        into = p.value(name).toDouble(&ok);
        if (!ok)
            *error = u"--%1 wants a number (got \"%2\")."_s.arg(name, p.value(name));
        return ok;
    };
    double hours = plan.timeLimitS / 3600.0;
    if (!doubleOpt(u"bench-margin"_s, plan.marginPct) || !doubleOpt(u"bench-time-limit"_s, hours))
        return std::nullopt;
    plan.timeLimitS = int(std::lround(hours * 3600));
    if (const QString invalid = plan.validate(); !invalid.isEmpty()) {
        *error = invalid;
        return std::nullopt;
    }
    return plan;
}

int ServingOptions::exitFor(const ServingComparison &c) {
    switch (c.verdict()) {
    case ServingComparison::Verdict::Slower:
        return FlowExitOutcome;
    case ServingComparison::Verdict::Failed:
        return FlowExitHost;
    case ServingComparison::Verdict::Faster:
    case ServingComparison::Verdict::NoChange:
    case ServingComparison::Verdict::Inconclusive:
    case ServingComparison::Verdict::Unpaired:
        break;
    }
    return FlowExitOk;
}

int ServingOptions::runPush(FlowHost &host, const QCommandLineParser &p, const PushFlow::Preview &preview,
                            const Diagnosis &before, const QString &afterLog, const HostProbe *probe,
                            QJsonObject &out) {
    QString error;
    const auto plan = ServingOptions::plan(p, preview.framework, probe, host.profile(), u"decode"_s, &error);
    const auto emitJson = [&] {
        if (host.json())
            Console::out(QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Indented)));
    };
    if (!plan) {
        emitJson();
        host.fail(error + u" Nothing was pushed."_s);
        return FlowExitUsage;
    }
    ServingFlow flow(host.calls(), host.push(), host.server());
    QObject::connect(&flow, &ServingFlow::status, [](const QString &l) { Console::err(l + u'\n'); });
    QObject::connect(&flow, &ServingFlow::legFinished, [](int i, const ServingComparison &c) {
        const ServingComparison::Leg &l = c.legs.last();
        QString line = u"leg %1 (%2): "_s.arg(i + 1).arg(l.arm);
        for (const ServingResult &r : l.results)
            line += u"c=%1 TTFT %2 ms TPOT %3 ms %4 tok/s; "_s.arg(r.concurrency)
                        .arg(r.medianTtftMs, 0, 'f', 2)
                        .arg(r.medianTpotMs, 0, 'f', 2)
                        .arg(r.outputThroughput, 0, 'f', 1);
        if (c.servingSimulated)
            line += u"(SIMULATED figures, no server measured) "_s;
        Console::err(line + (l.ok() ? QString() : l.error) + u'\n');
    });
    ServingFlow::Outcome outcome;
    flow.compare(*plan, preview, before, afterLog, [&](const ServingFlow::Outcome &o) {
        outcome = o;
        host.finish();
    });
    host.wait();
    const ServingComparison &cmp = outcome.comparison;
    out.insert("record"_L1, outcome.record.toJson());
    if (outcome.proof.ok || !outcome.proof.message.isEmpty()) {
        QJsonObject pj = outcome.proof.proof.toJson();
        pj.insert("ok"_L1, outcome.proof.ok);
        pj.insert("message"_L1, outcome.proof.message);
        pj.insert("ready_after_s"_L1, outcome.proof.start.readyAfterS);
        out.insert("proof"_L1, pj);
    }
    out.insert("serving"_L1, cmp.toJson());
    out.insert("pushed"_L1, outcome.pushed);
    emitJson();
    if (!host.json()) {
        if (outcome.proof.ok)
            Console::out(outcome.proof.message + u'\n');
        Console::out(cmp.text());
    }
    if (cmp.verdict() == ServingComparison::Verdict::Failed) {
        host.fail(cmp.error.isEmpty() ? cmp.verdictSentence() : cmp.error);
        return FlowExitHost;
    }
    if (cmp.verdict() == ServingComparison::Verdict::Slower)
        Console::err(u"Slower after the push. Undo with: moetune-cli undo-push %1 %2 --restart\n"_s.arg(
            host.host().alias, preview.runId));
    return exitFor(cmp);
}

} // namespace moetune::cli
