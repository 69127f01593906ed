// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/fleettune.h"

#include "cli/command.h"
#include "cli/console.h"
#include "cli/fleetsessionscli.h"
#include "core/run/workspace.h"
#include "remote/fleet/fleettuneflow.h"
#include "remote/flows/waiter.h"
#include "remote/hosts/hoststore.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune::cli {

namespace fleetcli {

QList<QCommandLineOption> recordOptions() {
    return {
        {u"record"_s, u"The fleet record to work on (default: the newest, written by 'fleet diagnose')."_s,
         u"ID"_s},
        {u"group"_s,
         u"Only this tuning group, numbered from 1 as 'fleet diagnose' shows them (default: all)."_s, u"N"_s},
        {u"workspace"_s, u"The workspace holding the fleet records (default: the app's)."_s, u"DIR"_s},
        {u"ssh-config"_s, u"The ssh config the hosts are reached through (default ~/.ssh/config)."_s,
         u"FILE"_s},
        {u"format"_s, u"text (default) or json (the record, on stdout)."_s, u"FORMAT"_s, u"text"_s},
    };
}

std::optional<Target> target(const QString &command, const QCommandLineParser &p, int *exitCode) {
    *exitCode = ExitUsage;
    const auto failed = [&](const QString &message) -> std::optional<Target> {
        Console::err(u"moetune-cli fleet %1: %2\n"_s.arg(command, message));
        return std::nullopt;
    };
    Target t;
    const QString format = p.value(u"format"_s);
    if (format != "text"_L1 && format != "json"_L1)
        return failed(u"--format is text or json, not '%1'."_s.arg(format));
    t.json = format == "json"_L1;
    t.workspace = p.isSet(u"workspace"_s) ? p.value(u"workspace"_s) : Workspace::defaultLocation();
    t.sshConfig = p.isSet(u"ssh-config"_s) ? p.value(u"ssh-config"_s) : HostStore::defaultSshConfigPath();
    QString error;
    if (p.isSet(u"record"_s)) {
        const QString id = p.value(u"record"_s);
        if (id.isEmpty() || id.contains(u'/') || id.startsWith(u'.'))
            return failed(u"--record takes a record id such as fleet-20261208-011530, not '%1'."_s.arg(id));
        const QString file = QDir(t.workspace).filePath(u"fleet/%1.json"_s.arg(id));
        auto r = FleetRecord::load(file, &error);
        if (!r)
            return failed(u"cannot read fleet record %1: %2"_s.arg(id, error));
        t.record = *r;
    } else {
        QStringList warnings;
        const QList<FleetRecord> all = FleetRecord::loadAll(t.workspace, &warnings);
        for (const QString &w : std::as_const(warnings))
            Console::err(u"moetune-cli fleet %1: %2\n"_s.arg(command, w));
        if (all.isEmpty())
            return failed(
                u"no fleet record in %1: run 'moetune-cli fleet diagnose' first."_s.arg(t.workspace));
        t.record = all.first();
    }
    if (p.isSet(u"group"_s)) {
        bool ok = false;
        const int n = p.value(u"group"_s).toInt(&ok);
        if (!ok || n < 1 || n > t.record.groups.size())
            return failed(u"--group takes a group number from 1 to %1 (record %2), not '%3'."_s
                              .arg(t.record.groups.size())
                              .arg(t.record.id, p.value(u"group"_s)));
        t.groups = {n - 1};
    } else {
        for (int i = 0; i < t.record.groups.size(); ++i)
            t.groups.append(i);
    }
    if (t.groups.isEmpty())
        return failed(
            u"fleet record %1 has no tuning group (nothing missing, or no host could be grouped)."_s.arg(
                t.record.id));
    *exitCode = ExitClean;
    return t;
}

void hostLine(const FleetRecord &record, int index) {
    if (index < 0 || index >= record.hosts.size())
        return;
    const FleetHostRecord &h = record.hosts.at(index);
    Console::err(u"[%1] %2%3\n"_s.arg(h.host.name, fleetStageText(h.stage),
                                      h.reason.isEmpty() ? QString() : u": "_s + h.reason));
}

void printRecord(const Target &t) {
    if (t.json) {
        Console::outBytes(QJsonDocument(t.record.toJson()).toJson(QJsonDocument::Indented));
        return;
    }
    QString text;
    for (const int g : t.groups) {
        const FleetGroupRecord &gr = t.record.groups.at(g);
        text += u"group %1 (%2): %3%4\n"_s.arg(g + 1).arg(
            gr.group.key.missingConfig, gr.state, gr.reason.isEmpty() ? QString() : u" - "_s + gr.reason);
        for (const QString &name : gr.group.hosts) {
            const FleetHostRecord *h = t.record.host(name);
            if (h)
                text += u"  %1  %2%3\n"_s.arg(name, fleetStageText(h->stage),
                                              h->reason.isEmpty() ? QString() : u": "_s + h->reason);
        }
    }
    QStringList totals;
    for (const FleetHostStage s :
         {FleetHostStage::Tuned, FleetHostStage::Proved, FleetHostStage::Undone, FleetHostStage::ProofFailed,
          FleetHostStage::Failed, FleetHostStage::UndoFailed, FleetHostStage::Skipped,
          FleetHostStage::Unreachable})
        if (const int n = t.record.count(s))
            totals << u"%1 %2"_s.arg(n).arg(fleetStageText(s).toLower());
    text +=
        u"record %1: %2\n"_s.arg(t.record.id, totals.isEmpty() ? u"no host changed"_s : totals.join(u", "_s));
    Console::out(text);
}

} // namespace fleetcli

int fleetTune(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        u"Tune once per group: each group's job runs on one host of the group (--host, else one whose GPUs "
        u"are free, else the first that answers), groups in parallel on their own hosts. The job is built "
        u"from the tune host's log and probe as 'Tune This...' builds it, followed to its end, and its "
        u"result.json is kept in the workspace for 'fleet push'."_s);
    p.addHelpOption();
    p.addOptions(fleetcli::recordOptions());
    p.addOptions({
        {u"host"_s, u"Tune on this host of the group (needs --group)."_s, u"HOST"_s},
        {u"take-out-of-service"_s,
         u"When the tune host's server holds its GPUs, stop it through its server profile before the run and "
         u"start it again after."_s},
        {u"backend"_s, u"auto (default), triton, server or synthetic (SIMULATED numbers, for trials)."_s,
         u"B"_s},
        {u"batch-sizes"_s, u"Comma-separated batch sizes (default: the 18 of the reference tuners)."_s,
         u"LIST"_s},
        {u"strategy"_s, u"The search strategy (default fast)."_s, u"S"_s},
    });
    QStringList parserArgs = args;
    parserArgs[0] = u"moetune-cli fleet tune"_s;
    if (!p.parse(parserArgs))
        return Console::fail(u"fleet tune"_s, p.errorText());
    if (p.isSet(u"help"_s)) {
        Console::out(p.helpText());
        return ExitClean;
    }
    if (!p.positionalArguments().isEmpty())
        return Console::fail(u"fleet tune"_s, u"takes no HOST arguments (the hosts are the record's)."_s);
    if (p.isSet(u"host"_s) && !p.isSet(u"group"_s))
        return Console::fail(u"fleet tune"_s, u"--host needs --group N (a host tunes one group's job)."_s);
    FleetTuneFlow::Options options;
    options.takeOutOfService = p.isSet(u"take-out-of-service"_s);
    options.backend = p.value(u"backend"_s);
    options.strategy = p.value(u"strategy"_s);
    if (!options.backend.isEmpty() &&
        !QStringList{u"auto"_s, u"triton"_s, u"server"_s, u"synthetic"_s}.contains(options.backend))
        return Console::fail(u"fleet tune"_s, u"--backend is auto, triton, server or synthetic."_s);
    if (p.isSet(u"batch-sizes"_s)) {
        for (const QString &part : p.value(u"batch-sizes"_s).split(u',')) {
            bool ok = false;
            const int m = part.trimmed().toInt(&ok);
            if (!ok || m <= 0)
                return Console::fail(
                    u"fleet tune"_s,
                    u"--batch-sizes wants positive integers separated by commas, such as 1,16,256."_s);
            options.batchSizes.append(m);
        }
    }
    int rc = ExitClean;
    auto t = fleetcli::target(u"tune"_s, p, &rc);
    if (!t)
        return rc;

    FleetCliSessions sessions(t->sshConfig);
    FleetTuneFlow flow(&t->record, sessions.provider(), t->workspace);
    flow.setOptions(options);
    Waiter waiter;
    int left = int(t->groups.size());
    bool allOk = true;
    QObject::connect(&flow, &FleetTuneFlow::hostChanged, &flow,
                     [&](int index) { fleetcli::hostLine(t->record, index); });
    QObject::connect(&flow, &FleetTuneFlow::status, &flow,
                     [](int, const QString &line) { Console::err(line + u'\n'); });
    QObject::connect(&flow, &FleetTuneFlow::finished, &flow, [&](int, bool ok, const QString &message) {
        Console::err(message + u'\n');
        allOk = allOk && ok;
        if (--left == 0)
            waiter.done();
    });
    for (const int g : std::as_const(t->groups))
        flow.tuneGroup(g, p.value(u"host"_s));
    if (left > 0)
        waiter.wait(0);
    fleetcli::printRecord(*t);
    return allOk ? ExitClean : ExitFindings;
}

} // namespace moetune::cli
