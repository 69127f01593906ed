// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/cancelcommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/flowhost.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(CancelCommand)

QString CancelCommand::name() const {
    return u"cancel"_s;
}

QString CancelCommand::summary() const {
    return u"Stop a tuning run on a host (what it measured stays in its journal)"_s;
}

int CancelCommand::run(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(summary());
    p.addHelpOption();
    p.addPositionalArgument(u"HOST"_s, u"the host"_s);
    p.addPositionalArgument(u"RUN"_s, u"the run id"_s);
    p.addOptions(FlowHost::commonOptions());
    if (!p.parse(args) || p.positionalArguments().size() != 2) {
        Console::err(u"moetune-cli cancel: "_s +
                     (p.errorText().isEmpty() ? u"give HOST and RUN."_s : p.errorText()) + u'\n');
        return FlowExitUsage;
    }
    FlowHost host;
    if (const int rc = host.connect(name(), p))
        return rc;
    bool ok = false;
    QString message;
    host.tune()->cancel(p.positionalArguments().value(1), [&](bool o, const QString &m) {
        ok = o;
        message = m;
        host.finish();
    });
    host.wait();
    if (host.json())
        Console::out(
            QString::fromUtf8(QJsonDocument(QJsonObject{{"run_id"_L1, p.positionalArguments().value(1)},
                                                        {"ok"_L1, ok},
                                                        {"message"_L1, message}})
                                  .toJson(QJsonDocument::Indented)));
    if (!ok) {
        host.fail(message);
        return FlowExitHost;
    }
    if (!host.json())
        Console::out(message + u'\n');
    return FlowExitOk;
}

} // namespace moetune::cli
