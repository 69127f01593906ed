// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// `moetune-cli fleet tune | push | undo` (issue 46 points 3 and 4): the bodies, dispatched from
// fleetcommand.cpp. Each works on a fleet record of the workspace (`fleet diagnose` writes one; --record ID,
// default the newest), on one group (--group N, from 1) or every group, prints a line per host as its stage
// changes (stderr), and the record as JSON with --format json (stdout). Exit status: 0 every host of the
// groups done as asked, 1 a host or a group failed (the record says which and why), 2 bad arguments or no
// record.

#include "core/fleet/fleetrecord.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune::cli {

int fleetTune(const QStringList &args); // args[0] = "tune"
int fleetPush(const QStringList &args); // args[0] = "push"
int fleetUndo(const QStringList &args); // args[0] = "undo"

// What the three share (fleettune.cpp).
namespace fleetcli {
QList<QCommandLineOption> recordOptions(); // --record, --group, --workspace, --ssh-config, --format
struct Target {
    QString workspace;
    QString sshConfig;
    bool json = false;
    FleetRecord record;
    QList<int> groups; // indices into record.groups
};
// Reads the options and loads the record; on failure prints why and returns nullopt (*exitCode set).
std::optional<Target> target(const QString &command, const QCommandLineParser &parser, int *exitCode);
// "[host] stage: reason" on stderr.
void hostLine(const FleetRecord &record, int index);
// The record as JSON on stdout (--format json), or the totals line on stdout (text).
void printRecord(const Target &t);
} // namespace fleetcli

} // namespace moetune::cli
