// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/undopushcommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/flowhost.h"

#include <QJsonArray>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(UndoPushCommand)

QString UndoPushCommand::name() const {
    return u"undo-push"_s;
}

QString UndoPushCommand::summary() const {
    return u"Put back the files the last push of a run replaced (from the backups it kept)"_s;
}

int UndoPushCommand::run(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(summary());
    p.addHelpOption();
    p.addPositionalArgument(u"HOST"_s, u"the host"_s);
    p.addPositionalArgument(u"RUN"_s, u"the run whose push to undo"_s);
    p.addOptions(FlowHost::commonOptions());
    p.addOption({u"restart"_s, u"Then restart the server through its profile and wait until it is ready."_s});
    if (!p.parse(args) || p.positionalArguments().size() != 2) {
        Console::err(u"moetune-cli undo-push: "_s +
                     (p.errorText().isEmpty() ? u"give HOST and RUN."_s : p.errorText()) + u'\n');
        return FlowExitUsage;
    }
    FlowHost host;
    if (const int rc = host.connect(name(), p))
        return rc;
    PushFlow::Undo undo;
    host.push()->undoRun(p.positionalArguments().value(1), [&](const PushFlow::Undo &u) {
        undo = u;
        host.finish();
    });
    host.wait();
    const PushRecord &record = undo.record;
    const QString error = undo.ok ? QString() : undo.error;
    QJsonObject out{{"record"_L1, record.toJson()},
                    {"message"_L1, undo.message},
                    {"read_back"_L1, QJsonArray::fromStringList(undo.lines)},
                    {"error"_L1, error.isEmpty() ? QJsonValue() : QJsonValue(error)}};
    if (!error.isEmpty()) {
        if (host.json())
            Console::out(QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Indented)));
        host.fail(error);
        return error.contains(u"refused"_s) || error.contains(u"nothing to undo"_s, Qt::CaseInsensitive) ||
                       error.contains(u"already undone"_s) || error.contains(u"Nothing was touched"_s)
                   ? FlowExitRefused
                   : FlowExitHost;
    }
    // The sentence comes from the read-back of every path the undo touched.
    if (!host.json()) {
        for (const QString &line : undo.lines)
            Console::out(u"  "_s + line + u'\n');
        Console::out(undo.message + u'\n');
    }
    int rc = FlowExitOk;
    if (p.isSet(u"restart"_s)) {
        ServerControl::StopResult stop;
        host.server()->stop([&](const ServerControl::StopResult &r) {
            stop = r;
            host.finish();
        });
        host.wait();
        ServerControl::StartResult start;
        if (stop.ok) {
            host.server()->start([&](const ServerControl::StartResult &r) {
                start = r;
                host.finish();
            });
            host.wait();
        }
        out.insert("restart"_L1, QJsonObject{{"stopped"_L1, stop.ok},
                                             {"ready"_L1, start.ok},
                                             {"message"_L1, stop.ok ? start.message : stop.message}});
        if (!host.json())
            Console::out((stop.ok ? start.message : stop.message) + u'\n');
        rc = stop.ok && start.ok ? FlowExitOk : FlowExitHost;
    }
    if (host.json())
        Console::out(QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Indented)));
    return rc;
}

} // namespace moetune::cli
