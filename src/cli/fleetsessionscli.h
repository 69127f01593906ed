// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/fleet/fleetsessions.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>

namespace moetune {
class HostSession;
}

namespace moetune::cli {

// The sessions of a fleet command of moetune-cli: one HostSession per host, made on first use from the
// host's HostConfig (fleetHostConfig: the ssh config's settings for its name with the inventory's address,
// port and user on top, the app's saved host's server profile and interpreter), kept for the command. An
// unknown host key is never trusted (the host's flows then fail with the session's sentence) and a password
// prompt is cancelled: fleet hosts log in with a key or an agent.
class FleetCliSessions : public QObject {
public:
    explicit FleetCliSessions(QString sshConfigPath, QObject *parent = nullptr);
    ~FleetCliSessions() override;
    FleetSessionProvider provider();

private:
    HostSession *session(const FleetHost &host, QString *error);
    QString m_sshConfig;
    QHash<QString, QPointer<HostSession>> m_sessions;
};

} // namespace moetune::cli
