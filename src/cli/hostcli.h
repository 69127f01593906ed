// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/flows/hostsessionsync.h"
#include "remote/hosts/hostconfig.h"

#include <QString>

#include <optional>

namespace moetune::cli {

// HOST as the remote commands take it (HostStore::resolve over the app's settings): `local`, a host added
// in the app, an alias of ~/.ssh/config, or user@host[:port]. The app's settings of that host come along.
std::optional<HostConfig> resolveHost(const QString &spec, QString *error);

// Secrets asked on the terminal (/dev/tty, echo off) when stdin is one; otherwise a refusal that says
// what to use instead (ssh-agent, a key).
HostSessionSync::SecretPrompt terminalSecretPrompt();

} // namespace moetune::cli
