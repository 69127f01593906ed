// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/fleetcommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/fleetdiagnose.h"
#include "cli/fleettune.h"
#include "core/fleet/inventory.h"
#include "remote/hosts/hoststore.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(FleetCommand)

namespace {

QJsonValue fleetJsonList(const QStringList &items) {
    return QJsonArray::fromStringList(items);
}

QString fleetTable(const QList<FleetHost> &hosts) {
    const QStringList header{u"HOST"_s, u"ADDRESS"_s, u"PORT"_s, u"USER"_s, u"GROUPS"_s};
    QList<QStringList> rows{header};
    for (const FleetHost &h : hosts)
        rows.append({h.name, h.address, h.port > 0 ? QString::number(h.port) : u"-"_s,
                     h.user.isEmpty() ? u"-"_s : h.user,
                     h.groups.isEmpty() ? u"-"_s : h.groups.join(u","_s)});
    QList<qsizetype> widths(header.size(), 0);
    for (const QStringList &row : rows)
        for (qsizetype c = 0; c < row.size(); ++c)
            widths[c] = std::max(widths[c], row.at(c).size());
    QString text;
    for (const QStringList &row : rows) {
        QString line;
        for (qsizetype c = 0; c < row.size(); ++c)
            line += c + 1 == row.size() ? row.at(c) : row.at(c).leftJustified(widths.at(c) + 2);
        text += line.trimmed() + u'\n';
    }
    return text;
}

} // namespace

FleetInventory fleetFromSshConfig(const QString &path, QStringList *errors) {
    QList<FleetHost> hosts;
    for (const QString &alias : HostStore::sshConfigAliases(path, errors)) {
        const HostConfig config = HostStore::resolveSshConfig(alias, path);
        FleetHost host;
        host.name = alias;
        host.address = config.hostName.isEmpty() ? alias : config.hostName;
        host.port = config.port;
        host.user = config.user;
        hosts.append(host);
    }
    return FleetInventory::fromHosts(hosts);
}

QString FleetCommand::name() const {
    return u"fleet"_s;
}

QString FleetCommand::summary() const {
    return u"Many hosts at once: 'fleet hosts' lists the set an inventory selects"_s;
}

int FleetCommand::run(const QStringList &args) {
    const QString usage = u"moetune-cli fleet hosts [--inventory FILE | --ssh-config FILE] "
                          u"[--group G | --tag T | HOST...] [--format text|json]"_s;
    if (args.size() < 2 || args.at(1) == u"--help"_s || args.at(1) == u"-h"_s) {
        Console::out(
            u"Usage: %1\n\nFleet commands work on a set of hosts. 'hosts' lists the set that an "
            u"Ansible inventory (INI or YAML) or an ssh config selects, with each host's address, port, "
            u"user and groups; it connects to nothing. 'diagnose' diagnoses every host of such a set at "
            u"once and forms the tuning groups (moetune-cli fleet diagnose --help).\n\n"
            u"Exit status: 0 listed, 2 bad arguments or a malformed inventory.\n"_s.arg(usage));
        return args.size() < 2 ? ExitUsage : ExitClean;
    }
    if (args.at(1) == u"diagnose"_s) // fleetdiagnose.cpp (issue 46 point 2)
        return fleetDiagnose(args.mid(1));
    if (args.at(1) == u"tune"_s) // fleettune.cpp, fleetpush.cpp (issue 46 points 3 and 4)
        return fleetTune(args.mid(1));
    if (args.at(1) == u"push"_s)
        return fleetPush(args.mid(1));
    if (args.at(1) == u"undo"_s)
        return fleetUndo(args.mid(1));
    if (args.at(1) != u"hosts"_s)
        return Console::fail(
            u"fleet"_s,
            u"unknown fleet command '%1'. Usage: %2 (see moetune-cli fleet --help)"_s.arg(args.at(1), usage));
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"List the hosts a fleet command would work on: all hosts of the inventory, a group (with its "
        u"children groups), a tag (the hosts' moetune_tags variable) or the HOSTs named. Reads a static "
        u"Ansible inventory (INI or YAML: groups, children, vars, ranges such as web[01:03]; "
        u"ansible_host, ansible_port and ansible_user), or without --inventory the concrete Host aliases "
        u"of an ssh config (default ~/.ssh/config). A port or user shown as '-' is not set there, so ssh's "
        u"default or ~/.ssh/config applies.\n\n"
        u"Exit status: 0 listed, 2 bad arguments, an unknown group, tag or host, or a malformed inventory."_s);
    parser.addHelpOption();
    parser.addPositionalArgument(u"HOST"_s, u"Hosts of the inventory to list (instead of --group/--tag)."_s,
                                 u"[HOST...]"_s);
    const QCommandLineOption inventoryOption(u"inventory"_s,
                                             u"A static Ansible inventory file, INI or YAML."_s, u"FILE"_s);
    const QCommandLineOption sshConfigOption(
        u"ssh-config"_s, u"Read the hosts of this ssh config (default ~/.ssh/config)."_s, u"FILE"_s);
    const QCommandLineOption groupOption(u"group"_s, u"Only the hosts of this group."_s, u"G"_s);
    const QCommandLineOption tagOption(u"tag"_s, u"Only the hosts with this moetune_tags tag."_s, u"T"_s);
    const QCommandLineOption formatOption(u"format"_s, u"text (default) or json."_s, u"FORMAT"_s, u"text"_s);
    parser.addOptions({inventoryOption, sshConfigOption, groupOption, tagOption, formatOption});
    QStringList parserArgs = args.mid(1);
    parserArgs[0] = u"moetune-cli fleet hosts"_s;
    if (!parser.parse(parserArgs))
        return Console::fail(u"fleet"_s, parser.errorText() + u". Run 'moetune-cli fleet hosts --help'."_s);
    if (parser.isSet(u"help"_s)) {
        Console::out(u"Usage: %1\n\n%2\n"_s.arg(usage, parser.applicationDescription()));
        return ExitClean;
    }
    const QString format = parser.value(formatOption);
    if (format != u"text"_s && format != u"json"_s)
        return Console::fail(u"fleet"_s, u"--format is text or json, not '%1'."_s.arg(format));
    if (parser.isSet(inventoryOption) && parser.isSet(sshConfigOption))
        return Console::fail(u"fleet"_s, u"give --inventory or --ssh-config, not both."_s);

    std::optional<FleetInventory> inventory;
    QString source;
    if (parser.isSet(inventoryOption)) {
        source = parser.value(inventoryOption);
        QString error;
        inventory = FleetInventory::load(source, &error);
        if (!inventory)
            return Console::fail(u"fleet"_s, u"cannot read the inventory: %1"_s.arg(error));
    } else {
        source =
            parser.isSet(sshConfigOption) ? parser.value(sshConfigOption) : HostStore::defaultSshConfigPath();
        if (!QFileInfo::exists(source))
            return Console::fail(
                u"fleet"_s, u"%1 does not exist; give --inventory FILE or --ssh-config FILE."_s.arg(source));
        QStringList errors;
        inventory = fleetFromSshConfig(source, &errors);
        if (!errors.isEmpty())
            return Console::fail(u"fleet"_s, u"cannot read the ssh config: %1"_s.arg(errors.join(u"; "_s)));
    }

    FleetSelection selection;
    selection.group = parser.value(groupOption);
    selection.tag = parser.value(tagOption);
    selection.names = parser.positionalArguments();
    selection.all = selection.group.isEmpty() && selection.tag.isEmpty() && selection.names.isEmpty();
    QString error;
    const auto hosts = inventory->select(selection, &error);
    if (!hosts)
        return Console::fail(u"fleet"_s, u"%1: %2"_s.arg(source, error));

    if (format == u"json"_s) {
        QJsonArray list;
        for (const FleetHost &h : *hosts) {
            QJsonObject o{{u"name"_s, h.name},
                          {u"address"_s, h.address},
                          {u"groups"_s, fleetJsonList(h.groups)},
                          {u"tags"_s, fleetJsonList(h.tags)}};
            o.insert(u"port"_s, h.port > 0 ? QJsonValue(h.port) : QJsonValue());
            o.insert(u"user"_s, h.user.isEmpty() ? QJsonValue() : QJsonValue(h.user));
            list.append(o);
        }
        const QJsonObject root{
            {u"source"_s, source}, {u"groups"_s, fleetJsonList(inventory->groups())}, {u"hosts"_s, list}};
        Console::outBytes(QJsonDocument(root).toJson(QJsonDocument::Indented));
        return ExitClean;
    }
    Console::out(
        u"%1 host%2 from %3\n"_s.arg(hosts->size()).arg(hosts->size() == 1 ? u""_s : u"s"_s).arg(source) +
        fleetTable(*hosts));
    return ExitClean;
}

} // namespace moetune::cli
