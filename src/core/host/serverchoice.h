// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

#include <optional>

namespace moetune {

struct ServerProfile;

// Which of a host's servers a flow acts on (issue 41): the one the user chose (the Hosts page's choice,
// kept in the server profile, or the CLI's --server PID|PORT), else the one that writes the log the
// findings came from, else the only one. With several candidates and none of these, nothing is picked:
// HostProbe::focused() leaves them all and the flow asks (HostProbe::serverQuestion()).
struct ServerChoice {
    qint64 pid = 0;       // "pid 4242"
    int port = 0;         // "port 30000" (survives a restart, a pid does not)
    qint64 pidOrPort = 0; // "4242": a pid when one server has it, else a port
    QString unit;         // the systemd unit the profile names (adopts its process whoever owns it)
    QString logFile;      // the log the findings came from: the server writing it

    bool isExplicit() const { return pid > 0 || port > 0 || pidOrPort > 0; }
    // "pid 4242", "port 30000", "4242", "" (no explicit choice)
    QString text() const;
    // "", "pid N", "port N" or "N"; nullopt with *error for anything else.
    static std::optional<ServerChoice> parse(const QString &text, QString *error = nullptr);
    // The choice a host's settings make: the profile's server, its systemd unit, its log file or the
    // host's log file (logFile: the host's log source when it is a file).
    static ServerChoice of(const ServerProfile &profile, const QString &logFile = {});
    bool operator==(const ServerChoice &) const = default;
};

} // namespace moetune
