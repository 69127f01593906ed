// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/tunecommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/flowhost.h"
#include "cli/runreport.h"
#include "cli/specoptions.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(TuneCommand)

QString TuneCommand::name() const {
    return u"tune"_s;
}

QString TuneCommand::summary() const {
    return u"Start a tuning run on a host (from a log's finding, a spec or shape options); --follow waits"_s;
}

int TuneCommand::run(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(summary());
    p.addHelpOption();
    p.addPositionalArgument(u"HOST"_s, u"ssh alias, user@host[:port], a host added in the app, or 'local'"_s);
    p.addOptions(FlowHost::commonOptions());
    p.addOptions(specOptions(u"Tune"_s));
    p.addOptions({
        {u"follow"_s, u"Follow the run until it ends (progress on stderr), then print its summary."_s},
        {u"stop-server"_s, u"If the server holds the GPUs, stop it through the server profile first."_s},
    });
    if (!p.parse(args)) {
        Console::err(u"moetune-cli tune: "_s + p.errorText() + u'\n');
        return FlowExitUsage;
    }
    if (p.isSet(u"help"_s)) {
        Console::out(p.helpText());
        return FlowExitOk;
    }
    if (p.positionalArguments().size() != 1) {
        Console::err(u"moetune-cli tune: give exactly one HOST.\n"_s);
        return FlowExitUsage;
    }
    SpecSource src = readSpecSource(p);
    if (!src.error.isEmpty()) {
        Console::err(u"moetune-cli tune: "_s + src.error + u'\n');
        return FlowExitUsage;
    }
    TuneSpec spec = *src.spec;
    QString bad = applySpecOverrides(p, &spec);
    if (!bad.isEmpty()) {
        Console::err(u"moetune-cli tune: "_s + bad + u'\n');
        return FlowExitUsage;
    }
    FlowHost host;
    if (const int rc = host.connect(name(), p))
        return rc;

    // Preflight: the probe fills what a log cannot say (K, top-k) and lists the GPUs and their holders.
    Preflight pre;
    HostProbe probe;
    QString error;
    auto runPreflight = [&] {
        host.tune()->preflight(spec, [&](const Preflight &pf, const HostProbe &pr, const QString &e) {
            pre = pf;
            probe = pr;
            error = e;
            host.finish();
        });
        host.wait();
    };
    runPreflight();
    if (!error.isEmpty()) {
        host.fail(u"preflight failed: "_s + error);
        return FlowExitHost;
    }
    if (src.target) {
        TuneSpec filled = tuneSpecFor(*src.target, &probe);
        bad = applySpecOverrides(p, &filled);
        spec = filled;
    }
    bad = checkSpec(name(), spec, src.target);
    if (!bad.isEmpty()) {
        host.fail(bad);
        return FlowExitUsage;
    }
    pre = Preflight::evaluate(probe, spec.gpus, TuneFlow::neededMiB(spec));
    if (!pre.canStart() && pre.serverHoldsGpus && p.isSet(u"stop-server"_s)) {
        ServerControl::StopResult stopped;
        host.server()->stop([&](const ServerControl::StopResult &r) {
            stopped = r;
            host.finish();
        });
        host.wait();
        Console::err(stopped.message + u'\n');
        if (!stopped.ok)
            return FlowExitRefused;
        runPreflight();
        pre = Preflight::evaluate(probe, spec.gpus, TuneFlow::neededMiB(spec));
    }
    if (!host.json())
        Console::err(RunReport::preflightText(pre));
    if (!pre.canStart()) {
        QString msg = u"not starting: "_s + pre.problems.join(u' ');
        if (pre.serverHoldsGpus)
            msg += host.profile().canStopStart()
                       ? u" Re-run with --stop-server to stop it through its profile (%1)."_s.arg(
                             host.profile().stopCommand)
                       : u" Stop the server first (the host has no server profile to do it)."_s;
        host.fail(msg);
        if (host.json())
            Console::out(
                QString::fromUtf8(QJsonDocument(QJsonObject{{"preflight"_L1, RunReport::preflightJson(pre)}})
                                      .toJson(QJsonDocument::Indented)));
        return FlowExitRefused;
    }

    QString runId;
    QJsonObject started;
    host.tune()->start(spec, [&](const QString &id, const QJsonObject &ev, const QString &e) {
        runId = id;
        started = ev;
        error = e;
        host.finish();
    });
    host.wait();
    if (!error.isEmpty()) {
        host.fail(u"the run did not start: "_s + error);
        return FlowExitHost;
    }
    const bool simulated = started.value("simulated"_L1).toBool();
    const QJsonObject extra{{"spec"_L1, spec.toJson()}, {"preflight"_L1, RunReport::preflightJson(pre)}};
    if (!p.isSet(u"follow"_s)) {
        if (host.json()) {
            QJsonObject o = extra;
            o.insert("run_id"_L1, runId);
            o.insert("run_started"_L1, started);
            o.insert("simulated"_L1, simulated);
            Console::out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented)));
        } else {
            Console::out(u"Started run %1 on %2%3 (%4).\nFollow it with: moetune-cli attach %2 %1\n"_s.arg(
                runId, host.host().alias, simulated ? u" [SIMULATED: synthetic backend]"_s : QString(),
                started.value("run_dir"_L1).toString()));
        }
        return FlowExitOk;
    }
    Console::err(
        u"Started run %1%2; following it.\n"_s.arg(runId, simulated ? u" [SIMULATED]"_s : QString()));
    RunProgress progress;
    return host.followRun(runId, &progress, extra, probe);
}

} // namespace moetune::cli
