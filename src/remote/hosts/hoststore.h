// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/hosts/hostconfig.h"
#include "remote/hosts/sshoptions.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

class QSettings;

namespace moetune {

// The host list: the concrete Host aliases of ~/.ssh/config (resolved as OpenSSH does, SshConfig in
// sshconfig.h, so HostName/User/Port/IdentityFile/ProxyJump mean what they mean to ssh) merged with hosts
// added in the app (QSettings group "hosts"). moetune-only settings of ssh-config hosts (python, log
// source, stop/start) are kept in QSettings too; ~/.ssh/config is never written.
//
// It is also the one place that knows how a host is named: the built-in "Local machine" (alias
// `local`, its settings under "hostsLocal/config"), the HOST strings the CLI takes (resolve()) and the
// user's ssh files (userSshOptions()).
class HostStore {
public:
    static QString defaultSshConfigPath(); // ~/.ssh/config
    static QString localAlias();           // "local": the Local machine, in the app's list and on the CLI
    // The ssh files of $HOME/.ssh, as ssh reads them (libssh alone would look up the passwd home):
    // config (or "none" when there is none) and the folder of the default identities; the known_hosts
    // files are the config's (UserKnownHostsFile, else ~/.ssh/known_hosts and known_hosts2).
    static SshOptions userSshOptions(const QString &sshConfigPath = defaultSshConfigPath());
    // The files ssh reads for a user's config: it, then the system's /etc/ssh/ssh_config.
    static QStringList sshConfigFiles(const QString &userConfig);

    // Aliases of `Host` lines without wildcards or negations, in file order, following Include.
    static QStringList sshConfigAliases(const QString &configPath, QStringList *errors = nullptr);
    // What ssh would use for alias (configPath, then /etc/ssh/ssh_config; SshConfig::resolve).
    static HostConfig resolveSshConfig(const QString &alias, const QString &configPath);

    explicit HostStore(QSettings *settings, QString sshConfigPath = defaultSshConfigPath());

    QList<HostConfig> hosts() const; // ssh config hosts first, then app-added hosts
    std::optional<HostConfig> host(const QString &alias) const;
    // Adds or updates (app-added hosts: everything; ssh-config hosts: the moetune settings only).
    void save(const HostConfig &host);
    bool remove(const QString &alias); // app-added hosts only; false for ssh-config hosts
    // The Local machine with its saved settings (python, log source, ...); save() of it keeps them.
    HostConfig localHost() const;
    // HOST as the user types it: `local`, a host of the list (ssh config alias or app-added), or
    // user@host[:port] / [v6-address]:port, which gets the config's matching Host patterns like ssh.
    std::optional<HostConfig> resolve(const QString &spec, QString *error) const;
    QStringList errors() const { return m_errors; }

private:
    QSettings *m_settings;
    QString m_sshConfigPath;
    mutable QStringList m_errors;
};

} // namespace moetune
