// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/hostregistry.h"

#include "remote/agent/agentclient.h"
#include "remote/flows/hostsession.h"
#include "remote/hosts/hoststore.h"

#include <QSettings>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// The fields the transport was built from; the rest (python, log source, commands) an open connection
// picks up by itself.
bool sameTransport(const HostConfig &a, const HostConfig &b) {
    return a.hostName == b.hostName && a.user == b.user && a.port == b.port &&
           a.identityFiles == b.identityFiles && a.proxyJump == b.proxyJump &&
           a.fromSshConfig == b.fromSshConfig;
}

} // namespace

HostRegistry::HostRegistry(QObject *parent)
    : QObject(parent)
    , m_sshConfigPath(HostStore::defaultSshConfigPath())
    , m_agentPath(AgentClient::defaultLocalAgentPath()) {
    setObjectName(u"hostRegistry"_s);
    m_sshTemplate = HostStore::userSshOptions(m_sshConfigPath);
    setSources(nullptr, m_sshConfigPath);
}

HostRegistry::~HostRegistry() {
    // Connections end before the settings and the store they may still read.
    qDeleteAll(m_connections);
    m_connections.clear();
}

QString HostRegistry::localAlias() {
    return HostStore::localAlias();
}

void HostRegistry::setSources(QSettings *settings, const QString &sshConfigPath) {
    if (settings) {
        m_settings = settings;
        m_ownSettings.reset();
    } else {
        m_ownSettings = std::make_unique<QSettings>();
        m_settings = m_ownSettings.get();
    }
    m_sshConfigPath = sshConfigPath;
    m_store = std::make_unique<HostStore>(m_settings, m_sshConfigPath);
    reload();
}

void HostRegistry::setSshTemplate(const SshOptions &options) {
    m_sshTemplate = options;
}

void HostRegistry::setLocalHome(const QString &home) {
    m_localHome = home;
}

void HostRegistry::setAgentPath(const QString &path) {
    m_agentPath = path;
}

HostConfig HostRegistry::localHost() const {
    return m_store->localHost();
}

std::optional<HostConfig> HostRegistry::host(const QString &alias) const {
    if (alias == localAlias())
        return localHost();
    for (const HostConfig &h : m_hosts) {
        if (h.alias == alias)
            return h;
    }
    return std::nullopt;
}

QString HostRegistry::displayName(const QString &alias) const {
    const auto h = host(alias);
    return h ? h->label() : alias;
}

void HostRegistry::reload() {
    m_hosts.clear();
    for (const HostConfig &h : m_store->hosts()) {
        if (h.alias != localAlias())
            m_hosts.append(h);
    }
    m_errors = m_store->errors();
    // Connections follow their host's new settings; removed hosts lose theirs, and a host now reached
    // differently (HostName, user, port, key, jump host) gets a new transport at its next use.
    const QStringList aliases = m_connections.keys();
    for (const QString &alias : aliases) {
        HostSession *c = m_connections.value(alias);
        const auto h = host(alias);
        if (!h || !sameTransport(*h, c->host()))
            dropConnection(alias);
        else
            c->setHost(*h);
    }
    emit hostsChanged();
}

void HostRegistry::save(const HostConfig &host, const QString &previousAlias) {
    if (host.local || host.alias == localAlias()) {
        m_store->save(host); // the Local machine's settings, where the CLI reads them too
    } else {
        if (!previousAlias.isEmpty() && previousAlias != host.alias) {
            m_store->remove(previousAlias);
            dropConnection(previousAlias);
        }
        m_store->save(host);
    }
    reload();
}

bool HostRegistry::remove(const QString &alias) {
    dropConnection(alias);
    const bool ok = m_store->remove(alias);
    reload();
    return ok;
}

void HostRegistry::dropConnection(const QString &alias) {
    HostSession *c = m_connections.take(alias);
    if (!c)
        return;
    emit connectionDropped(alias);
    c->disconnect(); // no signals of a connection nobody shows any more
    c->disconnectFromHost();
    c->deleteLater();
}

HostSession *HostRegistry::ensureConnection(const QString &alias) {
    if (HostSession *c = m_connections.value(alias))
        return c;
    const auto h = host(alias);
    if (!h)
        return nullptr;
    auto *c = new HostSession(*h, HostSession::Environment{m_sshTemplate, m_localHome, m_agentPath}, this);
    m_connections.insert(alias, c);
    emit connectionCreated(alias, c);
    return c;
}

} // namespace moetune
