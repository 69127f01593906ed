// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/fleet/fleetsessions.h"

#include "remote/hosts/hoststore.h"

#include <QSettings>

using namespace Qt::StringLiterals;

namespace moetune {

HostConfig fleetHostConfig(const FleetHost &host, const QString &sshConfigPath) {
    QSettings settings;
    const HostStore store(&settings, sshConfigPath);
    return fleetHostConfig(host, sshConfigPath, store);
}

HostConfig fleetHostConfig(const FleetHost &host, const QString &sshConfigPath, const HostStore &appHosts) {
    HostConfig config;
    if (const auto saved = appHosts.host(host.name)) {
        config = *saved; // the connection as the app knows it, with its moetune settings
    } else {
        QString sshName = host.name;
        if (!host.address.isEmpty() && host.address != host.name) {
            const QStringList aliases = HostStore::sshConfigAliases(sshConfigPath);
            if (!aliases.contains(host.name) && aliases.contains(host.address))
                sshName = host.address;
        }
        config = HostStore::resolveSshConfig(sshName, sshConfigPath);
        if (const auto byAddress = sshName != host.name ? appHosts.host(sshName) : std::nullopt) {
            config.python = byAddress->python;
            config.logSource = byAddress->logSource;
            config.stopCommand = byAddress->stopCommand;
            config.startCommand = byAddress->startCommand;
            config.serverProfile = byAddress->serverProfile;
        }
    }
    // The inventory's connection variables win, as ansible_host / ansible_port / ansible_user do for Ansible.
    if (!host.address.isEmpty() && host.address != host.name)
        config.hostName = host.address;
    if (host.port > 0)
        config.port = host.port;
    if (!host.user.isEmpty())
        config.user = host.user;
    config.alias = host.name;
    return config;
}

QString fleetUnknownHostKeyReason(const QString &hostName) {
    return u"host key not known: trust it first (moetune-cli trust-host %1, or connect once on the Hosts "
           u"page)"_s.arg(hostName);
}

QString fleetPasswordReason() {
    return u"needs a password: fleet hosts must log in with a key or an agent"_s;
}

QString fleetPassphraseReason() {
    return u"its key needs a passphrase: load the key into ssh-agent; fleet hosts must log in with a key "
           u"or an agent"_s;
}

} // namespace moetune
