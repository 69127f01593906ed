// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/hosts/hostconfig.h"
#include "remote/hosts/sshoptions.h"

#include <QHash>
#include <QObject>
#include <QStringList>

#include <memory>
#include <optional>

class QSettings;

namespace moetune {

class HostSession;
class HostStore;

// The hosts the app knows (~/.ssh/config, the app's own, the built-in Local machine) and the one
// connection (HostSession) per host. No widget: it lives below the pages. MainWindow owns it and hands it
// to every page that works on a host, so a page never asks another page for a host or a connection.
class HostRegistry : public QObject {
    Q_OBJECT
public:
    explicit HostRegistry(QObject *parent = nullptr);
    ~HostRegistry() override;

    static QString localAlias(); // the alias of the Local machine entry

    // Where hosts come from and how connections are made (tests point these at temporary files).
    // settings: the app's settings (nullptr = QSettings()); sshConfig: ~/.ssh/config by default.
    void setSources(QSettings *settings, const QString &sshConfigPath);
    void setSshTemplate(const SshOptions &options); // known_hosts, ssh dir, agent use
    SshOptions sshTemplate() const { return m_sshTemplate; }
    void setLocalHome(const QString &home); // "~" of the Local machine entry ("" = real home)
    void setAgentPath(const QString &path); // the moetune-agent.pyz to deploy
    QString agentPath() const { return m_agentPath; }

    QList<HostConfig> hosts() const { return m_hosts; } // ssh config hosts, then the app's own
    HostConfig localHost() const;
    std::optional<HostConfig> host(const QString &alias) const;
    bool isLocal(const QString &alias) const { return alias == localAlias(); }
    // The one name a host goes by everywhere in the app ("Local machine", else its alias).
    QString displayName(const QString &alias) const;
    QStringList errors() const { return m_errors; } // unreadable ssh config or saved hosts

    // Adds or updates a host (previousAlias: its name before an edit that renamed it).
    void save(const HostConfig &host, const QString &previousAlias = {});
    bool remove(const QString &alias); // app-added hosts only
    void reload();

    HostSession *connection(const QString &alias) const { return m_connections.value(alias); }
    // The host's connection, made on first use (nullptr for an unknown alias).
    HostSession *ensureConnection(const QString &alias);

signals:
    void hostsChanged();
    void connectionCreated(const QString &alias, moetune::HostSession *connection);
    // The connection is going away (host removed, renamed, or reached differently now).
    void connectionDropped(const QString &alias);

private:
    void dropConnection(const QString &alias);

    QSettings *m_settings = nullptr;
    std::unique_ptr<QSettings> m_ownSettings;
    std::unique_ptr<HostStore> m_store;
    QString m_sshConfigPath;
    SshOptions m_sshTemplate;
    QString m_localHome;
    QString m_agentPath;
    QList<HostConfig> m_hosts;
    QStringList m_errors;
    QHash<QString, HostSession *> m_connections;
};

} // namespace moetune
