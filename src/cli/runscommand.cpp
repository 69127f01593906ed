// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/runscommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/flowhost.h"
#include "core/host/hosttext.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(RunsCommand)

QString RunsCommand::name() const {
    return u"runs"_s;
}

QString RunsCommand::summary() const {
    return u"List the tuning runs on a host (started from the app or the CLI)"_s;
}

int RunsCommand::run(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(summary());
    p.addHelpOption();
    p.addPositionalArgument(u"HOST"_s, u"the host"_s);
    p.addOptions(FlowHost::commonOptions());
    if (!p.parse(args) || p.positionalArguments().size() != 1) {
        Console::err(u"moetune-cli runs: "_s +
                     (p.errorText().isEmpty() ? u"give one HOST."_s : p.errorText()) + u'\n');
        return FlowExitUsage;
    }
    FlowHost host;
    if (const int rc = host.connect(name(), p))
        return rc;
    QList<QJsonObject> runs;
    QString error;
    host.tune()->listRuns([&](const QList<QJsonObject> &r, const QString &e) {
        runs = r;
        error = e;
        host.finish();
    });
    host.wait();
    if (!error.isEmpty()) {
        host.fail(error);
        return FlowExitHost;
    }
    if (host.json()) {
        QJsonArray a;
        for (const QJsonObject &r : runs)
            a.append(r);
        Console::out(
            QString::fromUtf8(QJsonDocument(QJsonObject{{"host"_L1, host.host().alias}, {"runs"_L1, a}})
                                  .toJson(QJsonDocument::Indented)));
        return FlowExitOk;
    }
    if (runs.isEmpty()) {
        Console::out(u"No tuning runs on %1.\n"_s.arg(host.host().alias));
        return FlowExitOk;
    }
    Console::out(u"%1 %2 %3 %4  %5\n"_s.arg(u"RUN"_s, -24)
                     .arg(u"STATE"_s, -10)
                     .arg(u"MEASURED"_s, 8)
                     .arg(u"CREATED (UTC)"_s, -19)
                     .arg(u"SHAPE"_s));
    for (const QJsonObject &r : runs) {
        const QJsonObject spec = r.value("spec"_L1).toObject();
        const QString shape =
            u"%1 E=%2 N=%3 K=%4 top-k %5%6"_s.arg(hostText(spec.value("framework"_L1).toString(), 32))
                .arg(spec.value("E"_L1).toInt())
                .arg(spec.value("N"_L1).toInt())
                .arg(spec.value("K"_L1).toInt())
                .arg(spec.value("topk"_L1).toInt())
                .arg(spec.value("dtype"_L1).isString()
                         ? u" "_s + hostText(spec.value("dtype"_L1).toString(), 32)
                         : QString());
        const QString created =
            QDateTime::fromMSecsSinceEpoch(qint64(r.value("created_at"_L1).toDouble() * 1000), Qt::UTC)
                .toString(u"yyyy-MM-dd HH:mm:ss"_s);
        Console::out(u"%1 %2 %3 %4  %5%6\n"_s.arg(hostText(r.value("run_id"_L1).toString(), 64), -24)
                         .arg(hostText(r.value("state"_L1).toString(), 32), -10)
                         .arg(r.value("measured"_L1).toInt(), 8)
                         .arg(created, -19)
                         .arg(shape, r.value("simulated"_L1).toBool() ? u"  [SIMULATED]"_s : QString()));
    }
    return FlowExitOk;
}

} // namespace moetune::cli
