// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/fleetdiagnose.h"

#include "cli/fleetcommand.h"

#include "cli/command.h"
#include "cli/console.h"
#include "core/fleet/fleetrecord.h"
#include "core/fleet/inventory.h"
#include "core/run/workspace.h"
#include "remote/fleet/fleetdiagnoseflow.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/waiter.h"
#include "remote/hosts/hoststore.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QSettings>

using namespace Qt::StringLiterals;

namespace moetune::cli {

namespace {

const QString kDiagnoseCmd = u"fleet diagnose"_s;

// The hosts added in the app (not the ssh config's, not the Local machine or the practice server).
FleetInventory fleetDiagnoseAppHosts(const QString &sshConfig) {
    QSettings settings;
    const HostStore store(&settings, sshConfig);
    QList<FleetHost> hosts;
    for (const HostConfig &c : store.hosts()) {
        if (c.fromSshConfig || c.local || c.isPractice())
            continue;
        FleetHost host;
        host.name = c.alias;
        host.address = c.hostName.isEmpty() ? c.alias : c.hostName;
        host.port = c.port;
        host.user = c.user;
        hosts.append(host);
    }
    return FleetInventory::fromHosts(hosts);
}

QString fleetDiagnoseTable(const QList<QStringList> &rows) {
    QList<qsizetype> widths;
    for (const QStringList &row : rows) {
        for (qsizetype c = 0; c < row.size(); ++c) {
            if (widths.size() <= c)
                widths.append(0);
            if (c + 1 < row.size())
                widths[c] = std::max(widths[c], row.at(c).size());
        }
    }
    QString text;
    for (const QStringList &row : rows) {
        QString line;
        for (qsizetype c = 0; c < row.size(); ++c)
            line += c + 1 == row.size() ? row.at(c) : row.at(c).leftJustified(widths.at(c) + 2);
        text += line.trimmed() + u'\n';
    }
    return text;
}

QString dashIfEmpty(const QString &s) {
    return s.isEmpty() ? u"-"_s : s;
}

QString fleetGroupLine(const FleetRecord &r, int g) {
    const FleetGroupRecord &group = r.groups.at(g);
    const FleetHostFacts &k = group.group.key;
    return u"Group %1: %2 (%3 %4, %5, kernel source %6), %7 host%8: %9\n"_s.arg(g + 1)
        .arg(k.missingConfig, k.framework, group.group.frameworkVersions.join(u'/'), k.tritonFolder,
             k.kernelSourceHash.left(12))
        .arg(group.group.hosts.size())
        .arg(group.group.hosts.size() == 1 ? QString() : u"s"_s, group.group.hosts.join(u", "_s));
}

} // namespace

int fleetDiagnose(const QStringList &args) {
    const QString usage =
        u"moetune-cli fleet diagnose [--inventory FILE] [--ssh-config FILE] [--app-hosts] "
        u"[--group G | --tag T | HOST...] [--max-sessions N] [--bytes N[K|M]] [--workspace DIR] "
        u"[--format text|json]"_s;
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Diagnose every host of a set at once: connect (at most --max-sessions at a time, the ssh rules "
        u"of a single host unchanged: known_hosts, agent, ProxyJump; an unknown or changed host key and a "
        u"password prompt make that host unreachable, never asked), probe, fetch the end of the server log "
        u"and diagnose it, as 'moetune-cli diagnose --host' does for one host. Then the tuning groups: hosts "
        u"whose server wants the same config file (framework, Triton folder, device name, E, N, dtype, block "
        u"shape) and runs the same fused-MoE kernel source (its sha256) form one group, one tuning job; "
        u"groups are shown apart with what differs.\n\n"
        u"The set: --inventory FILE (a static Ansible inventory, INI or YAML), else the Host aliases of the "
        u"ssh config (--ssh-config FILE, default ~/.ssh/config), or with --app-hosts the hosts added in the "
        u"app; all of them, --group G, --tag T (moetune_tags) or the HOSTs named. Each host's log source and "
        u"server profile are its saved settings in the app (Hosts page) when it has them; else the log file "
        u"its one running server writes.\n\n"
        u"The fleet record is saved in the workspace (fleet/<id>.json) and its id printed: 'fleet tune', "
        u"'fleet push' and 'fleet undo' take it (--record ID; default the newest).\n\n"
        u"Exit status: 0 every host diagnosed, 1 a host unreachable or failed (listed with the reason), 2 "
        u"bad arguments, a malformed inventory or an unknown group, tag or host."_s);
    parser.addHelpOption();
    parser.addPositionalArgument(u"HOST"_s, u"Hosts of the set to diagnose (instead of --group/--tag)."_s,
                                 u"[HOST...]"_s);
    const QCommandLineOption inventoryOption(u"inventory"_s,
                                             u"A static Ansible inventory file, INI or YAML."_s, u"FILE"_s);
    const QCommandLineOption sshConfigOption(
        u"ssh-config"_s,
        u"The ssh config the hosts' connection settings come from (default ~/.ssh/config); without "
        u"--inventory its Host aliases are the set."_s,
        u"FILE"_s);
    const QCommandLineOption appHostsOption(u"app-hosts"_s, u"The set is the hosts added in the app."_s);
    const QCommandLineOption groupOption(u"group"_s, u"Only the hosts of this inventory group."_s, u"G"_s);
    const QCommandLineOption tagOption(u"tag"_s, u"Only the hosts with this moetune_tags tag."_s, u"T"_s);
    const QCommandLineOption maxSessionsOption(
        u"max-sessions"_s,
        u"Hosts connected and diagnosed at once (default %1, at most %2)."_s
            .arg(FleetDiagnoseFlow::kDefaultMaxSessions)
            .arg(FleetDiagnoseFlow::kMaxSessionsCap),
        u"N"_s, QString::number(FleetDiagnoseFlow::kDefaultMaxSessions));
    const QCommandLineOption bytesOption(
        u"bytes"_s, u"How much of the end of each server log to fetch (default 8M)."_s, u"N[K|M]"_s, u"8M"_s);
    const QCommandLineOption timeoutOption(
        u"host-timeout"_s,
        u"Seconds one host may take to connect and be diagnosed (default %1)."_s.arg(
            FleetDiagnoseFlow::kDefaultHostTimeoutS),
        u"S"_s, QString::number(FleetDiagnoseFlow::kDefaultHostTimeoutS));
    const QCommandLineOption workspaceOption(
        u"workspace"_s, u"The workspace the fleet record is saved in (default: the app's)."_s, u"DIR"_s);
    const QCommandLineOption formatOption(u"format"_s, u"text (default) or json (the fleet record)."_s,
                                          u"FORMAT"_s, u"text"_s);
    parser.addOptions({inventoryOption, sshConfigOption, appHostsOption, groupOption, tagOption,
                       maxSessionsOption, bytesOption, timeoutOption, workspaceOption, formatOption});
    QStringList parserArgs = args;
    parserArgs[0] = u"moetune-cli fleet diagnose"_s;
    if (!parser.parse(parserArgs))
        return Console::fail(kDiagnoseCmd,
                             parser.errorText() + u". Run 'moetune-cli fleet diagnose --help'."_s);
    if (parser.isSet(u"help"_s)) {
        Console::out(u"Usage: %1\n\n%2\n"_s.arg(usage, parser.applicationDescription()));
        return ExitClean;
    }
    const QString format = parser.value(formatOption);
    if (format != u"text"_s && format != u"json"_s)
        return Console::fail(kDiagnoseCmd, u"--format is text or json, not '%1'."_s.arg(format));
    bool ok = false;
    const int maxSessions = parser.value(maxSessionsOption).toInt(&ok);
    if (!ok || maxSessions < 1 || maxSessions > FleetDiagnoseFlow::kMaxSessionsCap)
        return Console::fail(kDiagnoseCmd, u"--max-sessions is a number from 1 to %1, not '%2'."_s
                                               .arg(FleetDiagnoseFlow::kMaxSessionsCap)
                                               .arg(parser.value(maxSessionsOption)));
    const int hostTimeout = parser.value(timeoutOption).toInt(&ok);
    if (!ok || hostTimeout < 1)
        return Console::fail(kDiagnoseCmd, u"--host-timeout is a number of seconds, not '%1'."_s.arg(
                                               parser.value(timeoutOption)));
    const QString bytesText = parser.value(bytesOption).trimmed().toUpper();
    const int shift = bytesText.endsWith(u'K') ? 10 : bytesText.endsWith(u'M') ? 20 : 0;
    const qint64 logBytes = (shift ? bytesText.chopped(1) : bytesText).toLongLong(&ok) << shift;
    if (!ok || logBytes < 4096 || logBytes > (qint64(1) << 30))
        return Console::fail(kDiagnoseCmd, u"--bytes wants a size from 4K to 1024M, such as 512K or 8M (got "
                                           u"'%1')."_s.arg(parser.value(bytesOption)));
    if (parser.isSet(inventoryOption) && parser.isSet(appHostsOption))
        return Console::fail(kDiagnoseCmd, u"give --inventory or --app-hosts, not both."_s);

    const QString sshConfig =
        parser.isSet(sshConfigOption) ? parser.value(sshConfigOption) : HostStore::defaultSshConfigPath();
    std::optional<FleetInventory> inventory;
    QString source;
    if (parser.isSet(inventoryOption)) {
        source = parser.value(inventoryOption);
        QString error;
        inventory = FleetInventory::load(source, &error);
        if (!inventory)
            return Console::fail(kDiagnoseCmd, u"cannot read the inventory: %1"_s.arg(error));
    } else if (parser.isSet(appHostsOption)) {
        source = u"the hosts added in the app"_s;
        inventory = fleetDiagnoseAppHosts(sshConfig);
    } else {
        source = sshConfig;
        if (!QFileInfo::exists(source))
            return Console::fail(kDiagnoseCmd, u"%1 does not exist; give --inventory FILE, --ssh-config FILE "
                                               u"or --app-hosts."_s.arg(source));
        QStringList errors;
        inventory = fleetFromSshConfig(source, &errors);
        if (!errors.isEmpty())
            return Console::fail(kDiagnoseCmd, u"cannot read the ssh config: %1"_s.arg(errors.join(u"; "_s)));
    }
    FleetSelection selection;
    selection.group = parser.value(groupOption);
    selection.tag = parser.value(tagOption);
    selection.names = parser.positionalArguments();
    selection.all = selection.group.isEmpty() && selection.tag.isEmpty() && selection.names.isEmpty();
    QString error;
    const auto hosts = inventory->select(selection, &error);
    if (!hosts)
        return Console::fail(kDiagnoseCmd, u"%1: %2"_s.arg(source, error));

    FleetRecord record;
    record.id = FleetRecord::newId();
    record.createdAt = double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
    record.inventory = parser.isSet(inventoryOption) ? QFileInfo(source).absoluteFilePath() : QString();
    record.selection = !selection.group.isEmpty()   ? u"group "_s + selection.group
                       : !selection.tag.isEmpty()   ? u"tag "_s + selection.tag
                       : !selection.names.isEmpty() ? selection.names.join(u' ')
                                                    : u"all"_s;
    for (const FleetHost &h : *hosts) {
        FleetHostRecord r;
        r.host = h;
        record.hosts.append(r);
    }
    const QString workspace =
        parser.isSet(workspaceOption) ? parser.value(workspaceOption) : Workspace::defaultLocation();

    // One session per host while it is diagnosed, freed once it is done: at most --max-sessions live.
    HostSession::Environment env = HostSession::userEnvironment();
    env.ssh = HostStore::userSshOptions(sshConfig);
    QSettings settings;
    const HostStore appHosts(&settings, sshConfig);
    QObject owner;
    FleetDiagnoseFlow flow(
        &record,
        [&](const FleetHost &host, QString *) -> HostSession * {
            auto *s = new HostSession(fleetHostConfig(host, sshConfig, appHosts), env, &owner);
            s->setChooseHow(u"in the host's server profile (Hosts page)"_s);
            return s;
        },
        workspace);
    flow.setMaxSessions(maxSessions);
    flow.setLogBytes(logBytes);
    flow.setHostTimeoutS(hostTimeout);
    flow.setSessionDone([](const FleetHost &, HostSession *s) { s->deleteLater(); });
    QSet<int> told;
    QObject::connect(&flow, &FleetDiagnoseFlow::hostChanged, &flow, [&](int i) {
        const FleetHostRecord &h = record.hosts.at(i);
        const bool ended = h.stage == FleetHostStage::Diagnosed || fleetStageIsTerminalFailure(h.stage);
        if (ended && !told.contains(i)) {
            told.insert(i);
            Console::err(u"[%1/%2] %3: %4\n"_s.arg(told.size())
                             .arg(record.hosts.size())
                             .arg(h.host.name, h.reason.isEmpty() ? fleetStageText(h.stage) : h.reason));
        }
    });
    Waiter waiter;
    QObject::connect(&flow, &FleetDiagnoseFlow::finished, &flow, [&waiter] { waiter.done(); });
    if (format == u"text"_s)
        Console::err(u"Diagnosing %1 host%2 from %3, at most %4 at once\n"_s.arg(record.hosts.size())
                         .arg(record.hosts.size() == 1 ? QString() : u"s"_s, source)
                         .arg(maxSessions));
    flow.start();
    if (!flow.sessionsNote().isEmpty())
        Console::err(u"moetune-cli fleet diagnose: note: %1\n"_s.arg(flow.sessionsNote()));
    waiter.wait(0);
    const QString recordFile = QDir(workspace).filePath(u"fleet/%1.json"_s.arg(record.id));
    if (!flow.saveError().isEmpty())
        Console::err(u"moetune-cli fleet diagnose: warning: the fleet record was not saved: %1\n"_s.arg(
            flow.saveError()));

    const int diagnosed = record.count(FleetHostStage::Diagnosed);
    const int unreachable = record.count(FleetHostStage::Unreachable);
    const int failed = record.count(FleetHostStage::Failed);
    const int exitCode = diagnosed == record.hosts.size() ? ExitClean : ExitFindings;

    if (format == u"json"_s) {
        QJsonObject o = record.toJson();
        o.insert(u"record_file"_s, flow.saveError().isEmpty() ? QJsonValue(recordFile) : QJsonValue());
        o.insert(u"totals"_s, QJsonObject{{u"hosts"_s, int(record.hosts.size())},
                                          {u"diagnosed"_s, diagnosed},
                                          {u"unreachable"_s, unreachable},
                                          {u"failed"_s, failed},
                                          {u"groups"_s, int(record.groups.size())}});
        Console::outBytes(QJsonDocument(o).toJson(QJsonDocument::Indented));
        return exitCode;
    }

    QList<QStringList> rows{
        {u"HOST"_s, u"GPU"_s, u"FRAMEWORK"_s, u"TRITON"_s, u"MODEL"_s, u"MOE KERNEL"_s, u"FINDINGS"_s}};
    for (const FleetHostRecord &h : std::as_const(record.hosts)) {
        if (h.stage != FleetHostStage::Diagnosed) {
            rows.append({h.host.name, u"%1: %2"_s.arg(fleetStageText(h.stage).toLower(), h.reason)});
            continue;
        }
        const QString findings = h.findings.isEmpty() ? u"none"_s
                                 : h.findings.size() == 1
                                     ? h.findings.first()
                                     : u"%1 (+%2 more)"_s.arg(h.findings.first()).arg(h.findings.size() - 1);
        rows.append({h.host.name, dashIfEmpty(h.gpu),
                     dashIfEmpty(QString(h.framework + u' ' + h.frameworkVersion).trimmed()),
                     dashIfEmpty(h.triton), dashIfEmpty(QFileInfo(h.model).fileName()),
                     dashIfEmpty(h.moeKernel), findings});
    }
    QString text = fleetDiagnoseTable(rows);
    text +=
        u"\n%1 group%2 (one tuning job each)%3\n"_s.arg(record.groups.size())
            .arg(record.groups.size() == 1 ? QString() : u"s"_s, record.groups.isEmpty() ? u"."_s : u":"_s);
    for (int g = 0; g < record.groups.size(); ++g)
        text += u"  "_s + fleetGroupLine(record, g);
    for (const FleetGroupDifference &d : std::as_const(record.differences))
        text += u"  Group %1 and group %2 apart: %3\n"_s.arg(d.first + 1)
                    .arg(d.second + 1)
                    .arg(d.reasons.join(u"; "_s));
    if (!record.nothingMissing.isEmpty())
        text += u"  Nothing missing (no tuning needed): %1\n"_s.arg(record.nothingMissing.join(u", "_s));
    for (const FleetHostRecord &h : std::as_const(record.hosts)) {
        if (h.stage == FleetHostStage::Diagnosed && h.group < 0 &&
            !record.nothingMissing.contains(h.host.name))
            text += u"  %1 is in no group: %2\n"_s.arg(h.host.name, h.reason);
    }
    text += u"\n%1 of %2 hosts diagnosed, %3 unreachable, %4 failed.\n"_s.arg(diagnosed)
                .arg(record.hosts.size())
                .arg(unreachable)
                .arg(failed);
    if (flow.saveError().isEmpty())
        text += u"Fleet record %1 saved to %2; next: moetune-cli fleet tune --record %1\n"_s.arg(
            record.id, QDir::toNativeSeparators(recordFile));
    Console::out(text);
    return exitCode;
}

} // namespace moetune::cli
