#pragma once

#include "remote/hostconfig.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

class QSettings;

namespace moetune {

// The host list: the concrete Host aliases of ~/.ssh/config (resolved through libssh's own config
// parser, so HostName/User/Port/IdentityFile/ProxyJump mean what they mean to ssh) merged with hosts
// added in the app (QSettings group "hosts"). moetune-only settings of ssh-config hosts (python, log
// source, stop/start) are kept in QSettings too; ~/.ssh/config is never written.
class HostStore {
public:
    static QString defaultSshConfigPath(); // ~/.ssh/config

    // Aliases of `Host` lines without wildcards or negations, in file order, following Include.
    static QStringList sshConfigAliases(const QString &configPath, QStringList *errors = nullptr);
    // What ssh would use for alias (libssh: SSH_OPTIONS_HOST then ssh_options_parse_config).
    static HostConfig resolveSshConfig(const QString &alias, const QString &configPath);

    explicit HostStore(QSettings *settings, QString sshConfigPath = defaultSshConfigPath());

    QList<HostConfig> hosts() const; // ssh config hosts first, then app-added hosts
    std::optional<HostConfig> host(const QString &alias) const;
    // Adds or updates (app-added hosts: everything; ssh-config hosts: the moetune settings only).
    void save(const HostConfig &host);
    bool remove(const QString &alias); // app-added hosts only; false for ssh-config hosts
    QStringList errors() const { return m_errors; }

private:
    QSettings *m_settings;
    QString m_sshConfigPath;
    mutable QStringList m_errors;
};

} // namespace moetune
