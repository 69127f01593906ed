// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/hosts/hostconfig.h"

#include <QString>

namespace moetune {

// How one SSH connection is made. Defaults are what `ssh HOST` does for the current user; tests point
// the files at a temporary folder.
struct SshOptions {
    HostConfig host;
    QString sshConfigFile; // "" = ~/.ssh/config (then /etc/ssh/ssh_config); "none" = read no config file
    // "" = the config's UserKnownHostsFile, else ~/.ssh/known_hosts and known_hosts2; set (tests, the
    // fixtures), it wins over the config like `ssh -o UserKnownHostsFile=...`.
    QString knownHostsFile;
    QString sshDir;       // "" = ~/.ssh (default keys id_ed25519, id_rsa, ...)
    bool useAgent = true; // SSH_AUTH_SOCK
    int connectTimeoutMs = 15000;
    int keepaliveIntervalMs = 3000; // idle time before a keepalive is sent
    int deadAfterMs = 10000;        // no packet from the server for this long: connection lost
    int maxReconnectAttempts = 5;   // then Failed
    int initialBackoffMs = 1000;    // doubled per attempt, capped at 30 s
    bool backgroundPriority = true; // worker thread at nice +5 so that a busy machine favours the GUI thread
};

} // namespace moetune
