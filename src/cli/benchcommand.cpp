// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/benchcommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/flowhost.h"
#include "cli/servingoptions.h"
#include "core/moe/framework.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(BenchCommand)

QString BenchCommand::name() const {
    return u"bench"_s;
}

QString BenchCommand::summary() const {
    return u"Run the server's own serving benchmark against a host's server as it is (TTFT, TPOT, tok/s)"_s;
}

int BenchCommand::run(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(summary());
    p.addHelpOption();
    p.addPositionalArgument(u"HOST"_s, u"the host"_s);
    p.addOptions(FlowHost::commonOptions());
    p.addOptions(ServingOptions::options());
    p.addOption({u"framework"_s,
                 u"sglang or vllm: whose tool (default: the framework of the server the probe finds)."_s,
                 u"F"_s});
    if (!p.parse(args) || p.positionalArguments().size() != 1) {
        Console::err(u"moetune-cli bench: "_s +
                     (p.errorText().isEmpty() ? u"give one HOST."_s : p.errorText()) + u'\n');
        return FlowExitUsage;
    }
    Framework fw = Framework::Unknown;
    if (p.isSet(u"framework"_s)) {
        fw = frameworkFromString(p.value(u"framework"_s));
        if (fw == Framework::Unknown) {
            Console::err(u"moetune-cli bench: --framework is sglang or vllm.\n"_s);
            return FlowExitUsage;
        }
    }
    if (p.isSet(u"bench-pairs"_s)) {
        Console::err(u"moetune-cli bench: --bench-pairs compares boots before and after a push: use push "
                     u"--restart --bench.\n"_s);
        return FlowExitUsage;
    }
    FlowHost host;
    if (const int rc = host.connect(name(), p))
        return rc;
    HostProbe probe;
    QString error;
    host.tune()->preflight(TuneSpec{}, [&](const Preflight &, const HostProbe &pr, const QString &e) {
        probe = pr;
        error = e;
        host.finish();
    });
    host.wait();
    if (!error.isEmpty())
        Console::err(
            u"The probe failed (%1); the server's address and tool are the defaults.\n"_s.arg(error));
    // Several servers and no --server: ask which, never bench the first (issue 41).
    if (const QString ask = probe.serverQuestion(u"with --server PID|PORT"_s);
        error.isEmpty() && !ask.isEmpty()) {
        host.fail(ask);
        return FlowExitUsage;
    }
    if (fw == Framework::Unknown) {
        fw = Framework::SGLang;
        for (const ServerProcess &s : probe.servers) {
            if (s.framework == Framework::SGLang || s.framework == Framework::VLLM) {
                fw = s.framework;
                break;
            }
        }
    }
    const auto plan = ServingOptions::plan(p, fw, error.isEmpty() ? &probe : nullptr, host.profile(),
                                           u"standard"_s, &error);
    if (!plan) {
        host.fail(error);
        return FlowExitUsage;
    }
    ServingFlow *flow = host.serving();
    QObject::connect(flow, &ServingFlow::status, [](const QString &l) { Console::err(l + u'\n'); });
    ServingComparison cmp;
    flow->benchmark(*plan, [&](const ServingComparison &c) {
        cmp = c;
        host.finish();
    });
    host.wait();
    if (host.json())
        Console::out(QString::fromUtf8(QJsonDocument(QJsonObject{{"serving"_L1, cmp.toJson()}}).toJson()));
    else
        Console::out(cmp.text());
    if (cmp.verdict() == ServingComparison::Verdict::Failed) {
        host.fail(cmp.error.isEmpty() ? cmp.verdictSentence() : cmp.error);
        return FlowExitHost;
    }
    return FlowExitOk;
}

} // namespace moetune::cli
