// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/command.h"
#include "cli/console.h"
#include "cli/fleetsessionscli.h"
#include "cli/fleettune.h"
#include "remote/fleet/fleetrolloutflow.h"
#include "remote/flows/waiter.h"

using namespace Qt::StringLiterals;

namespace moetune::cli {

namespace {

// Runs groups one after another (a group's hosts are rolled out or undone by the flow; two groups never
// restart at the same time, so --max-parallel bounds the whole command), waiting for each.
int runGroups(fleetcli::Target &t, const std::function<void(FleetRolloutFlow &, int)> &start) {
    FleetCliSessions sessions(t.sshConfig);
    FleetRolloutFlow flow(&t.record, sessions.provider(), t.workspace);
    bool allOk = true;
    QObject::connect(&flow, &FleetRolloutFlow::hostChanged, &flow,
                     [&](int index) { fleetcli::hostLine(t.record, index); });
    QObject::connect(&flow, &FleetRolloutFlow::status, &flow,
                     [](int, const QString &line) { Console::err(line + u'\n'); });
    for (const int g : std::as_const(t.groups)) {
        Waiter waiter;
        const QMetaObject::Connection c = QObject::connect(&flow, &FleetRolloutFlow::finished, &flow,
                                                           [&](int, bool ok, const QString &message) {
                                                               Console::err(message + u'\n');
                                                               allOk = allOk && ok;
                                                               waiter.done();
                                                           });
        start(flow, g);
        waiter.wait(0);
        QObject::disconnect(c);
    }
    fleetcli::printRecord(t);
    return allOk ? ExitClean : ExitFindings;
}

} // namespace

int fleetPush(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        u"Roll each group's tuned result out with a canary: the canary host first with the full single-host "
        u"path (the result imported as a run of that host, preview with its own row merge, install with a "
        u"backup, restart through the server profile, the log proof, the serving comparison with --serving), "
        u"then the group's other hosts in batches of at most --max-parallel, each batch proved before the "
        u"next "
        u"starts. The first failure stops the group's rollout and undoes that host; hosts not reached are "
        u"left untouched. Undo a whole group with 'fleet undo'."_s);
    p.addHelpOption();
    p.addOptions(fleetcli::recordOptions());
    p.addOptions({
        {u"canary"_s, u"The group's first host (default: its tune host, else its first host)."_s, u"HOST"_s},
        {u"max-parallel"_s, u"Hosts pushed and restarted at once after the canary (default 1)."_s, u"K"_s,
         u"1"_s},
        {u"serving"_s, u"Also the serving comparison on every host (the server's own benchmark, before and "
                       u"after; a slower verdict stops the rollout)."_s},
        {u"serving-preset"_s, u"The serving workload: decode (default), prefill or standard."_s, u"PRESET"_s,
         u"decode"_s},
    });
    QStringList parserArgs = args;
    parserArgs[0] = u"moetune-cli fleet push"_s;
    if (!p.parse(parserArgs))
        return Console::fail(u"fleet push"_s, p.errorText());
    if (p.isSet(u"help"_s)) {
        Console::out(p.helpText());
        return ExitClean;
    }
    if (!p.positionalArguments().isEmpty())
        return Console::fail(u"fleet push"_s, u"takes no HOST arguments (the hosts are the record's)."_s);
    FleetRolloutFlow::Options options;
    bool ok = false;
    options.maxParallel = p.value(u"max-parallel"_s).toInt(&ok);
    if (!ok || options.maxParallel < 1)
        return Console::fail(u"fleet push"_s, u"--max-parallel takes a whole number of 1 or more."_s);
    options.canary = p.value(u"canary"_s);
    options.serving = p.isSet(u"serving"_s);
    options.servingPreset = p.value(u"serving-preset"_s);
    int rc = ExitClean;
    auto t = fleetcli::target(u"push"_s, p, &rc);
    if (!t)
        return rc;
    if (!options.canary.isEmpty() && t->groups.size() > 1)
        return Console::fail(u"fleet push"_s, u"--canary names a host of one group: give --group N too."_s);
    return runGroups(*t, [&](FleetRolloutFlow &flow, int g) { flow.rollOut(g, options); });
}

int fleetUndo(const QStringList &args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        u"Undo a group's rollout host by host from the fleet record: on every host whose push is recorded "
        u"and "
        u"not undone, the files are put back (backups restored, files that did not exist removed) after "
        u"checking each is still what was pushed, and read back. The servers are not restarted."_s);
    p.addHelpOption();
    p.addOptions(fleetcli::recordOptions());
    QStringList parserArgs = args;
    parserArgs[0] = u"moetune-cli fleet undo"_s;
    if (!p.parse(parserArgs))
        return Console::fail(u"fleet undo"_s, p.errorText());
    if (p.isSet(u"help"_s)) {
        Console::out(p.helpText());
        return ExitClean;
    }
    if (!p.positionalArguments().isEmpty())
        return Console::fail(u"fleet undo"_s, u"takes no HOST arguments (the hosts are the record's)."_s);
    int rc = ExitClean;
    auto t = fleetcli::target(u"undo"_s, p, &rc);
    if (!t)
        return rc;
    return runGroups(*t, [](FleetRolloutFlow &flow, int g) { flow.undoGroup(g); });
}

} // namespace moetune::cli
