// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The sessions of a fleet (issue 46): one HostSession per host, with the single-host ssh rules unchanged
// (known_hosts, agent, ProxyJump, a changed key refused per host). The fleet flows take their sessions
// from a FleetSessionProvider: the app passes one over its HostRegistry (the registry's sessions, so a
// host already connected is reused), the CLI one over HostStore + the ssh config.

#include "core/fleet/inventory.h"
#include "remote/hosts/hostconfig.h"

#include <QString>

#include <functional>

namespace moetune {

class HostSession;
class HostStore;

// The session of one host of the set, or nullptr with *error (the host then ends Unreachable with it).
// The provider owns what it returns; the flows never delete a session.
using FleetSessionProvider = std::function<HostSession *(const FleetHost &host, QString *error)>;

// A HostConfig for an inventory host: the ssh config's settings for its name (or, when the name is no
// Host alias of the config and its address is, for its address), with the inventory's address, port and
// user on top; the moetune settings (interpreter, log source, server profile) from the app's saved host of
// that name when there is one. The two-argument form reads the app's hosts from the default QSettings.
HostConfig fleetHostConfig(const FleetHost &host, const QString &sshConfigPath);
HostConfig fleetHostConfig(const FleetHost &host, const QString &sshConfigPath, const HostStore &appHosts);

// The sentences a fleet host is Unreachable with when a session would have to ask the user: a fleet
// never trusts an unknown host key and never asks for a password.
QString fleetUnknownHostKeyReason(const QString &hostName);
QString fleetPasswordReason();
QString fleetPassphraseReason();

} // namespace moetune
