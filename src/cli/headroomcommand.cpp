// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/headroomcommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/flowhost.h"
#include "cli/specoptions.h"
#include "remote/flows/headroomflow.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(HeadroomCommand)

QString HeadroomCommand::name() const {
    return u"headroom"_s;
}

QString HeadroomCommand::summary() const {
    return u"How much a tune would gain, measured in seconds on the host's GPU (from a log, a spec or shape options)"_s;
}

int HeadroomCommand::run(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(summary());
    p.addHelpOption();
    p.addPositionalArgument(u"HOST"_s, u"ssh alias, user@host[:port], a host added in the app, or 'local'"_s);
    p.addOptions(FlowHost::commonOptions());
    p.addOptions(specOptions(u"Check"_s));
    if (!p.parse(args)) {
        Console::err(u"moetune-cli headroom: "_s + p.errorText() + u'\n');
        return FlowExitUsage;
    }
    if (p.isSet(u"help"_s)) {
        Console::out(p.helpText());
        return FlowExitOk;
    }
    if (p.positionalArguments().size() != 1) {
        Console::err(u"moetune-cli headroom: give exactly one HOST.\n"_s);
        return FlowExitUsage;
    }
    SpecSource src = readSpecSource(p);
    if (!src.error.isEmpty()) {
        Console::err(u"moetune-cli headroom: "_s + src.error + u'\n');
        return FlowExitUsage;
    }
    TuneSpec spec = *src.spec;
    QString bad = applySpecOverrides(p, &spec);
    if (!bad.isEmpty()) {
        Console::err(u"moetune-cli headroom: "_s + bad + u'\n');
        return FlowExitUsage;
    }
    FlowHost host;
    if (const int rc = host.connect(name(), p))
        return rc;
    if (src.target) { // the probe fills what a log cannot say (K, top-k)
        HostProbe probe;
        QString error;
        host.tune()->preflight(spec, [&](const Preflight &, const HostProbe &pr, const QString &e) {
            probe = pr;
            error = e;
            host.finish();
        });
        host.wait();
        if (!error.isEmpty()) {
            host.fail(u"probe failed: "_s + error);
            return FlowExitHost;
        }
        spec = tuneSpecFor(*src.target, &probe);
        bad = applySpecOverrides(p, &spec);
        if (!bad.isEmpty()) {
            host.fail(bad);
            return FlowExitUsage;
        }
    }
    bad = checkSpec(name(), spec, src.target);
    if (!bad.isEmpty()) {
        host.fail(bad);
        return FlowExitUsage;
    }
    HeadroomFlow *flow = host.headroom();
    int lastShown = -1;
    QObject::connect(flow, &HeadroomFlow::progress, [&lastShown](int done, int total, bool simulated) {
        if (done == lastShown)
            return;
        lastShown = done;
        Console::err(u"headroom: %1/%2 units%3\n"_s.arg(done).arg(total).arg(simulated ? u" [SIMULATED]"_s
                                                                                       : QString()));
    });
    HeadroomResult result;
    QString error;
    flow->check(spec, [&](const HeadroomResult &r, const QString &e) {
        result = r;
        error = e;
        host.finish();
    });
    host.wait();
    if (result.sizes.isEmpty()) {
        host.fail(u"the headroom check failed: "_s + error);
        return FlowExitHost;
    }
    if (host.json()) {
        QJsonObject o{{"spec"_L1, spec.toJson()},
                      {"headroom"_L1, result.toJson()},
                      {"verdict"_L1, result.headline()},
                      {"kind"_L1, HeadroomResult::kindId(result.kind)},
                      {"simulated"_L1, result.simulated}};
        if (!error.isEmpty())
            o.insert("error"_L1, error);
        Console::out(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented)));
    } else {
        Console::out(result.tableText());
        if (const QString pw = result.prewarmNote(); !pw.isEmpty())
            Console::out(pw + u'\n');
        if (!error.isEmpty())
            Console::err(u"moetune-cli headroom: "_s + error + u'\n');
    }
    return error.isEmpty() ? FlowExitOk : FlowExitOutcome;
}

} // namespace moetune::cli
