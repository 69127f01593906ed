// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/fleetsessionscli.h"

#include "remote/flows/hostsession.h"

using namespace Qt::StringLiterals;

namespace moetune::cli {

FleetCliSessions::FleetCliSessions(QString sshConfigPath, QObject *parent)
    : QObject(parent)
    , m_sshConfig(std::move(sshConfigPath)) {}

FleetCliSessions::~FleetCliSessions() {
    for (const QPointer<HostSession> &s : std::as_const(m_sessions))
        delete s.data();
}

FleetSessionProvider FleetCliSessions::provider() {
    QPointer<FleetCliSessions> self(this);
    return [self](const FleetHost &host, QString *error) -> HostSession * {
        if (!self) {
            if (error)
                *error = u"the command's sessions are gone"_s;
            return nullptr;
        }
        return self->session(host, error);
    };
}

HostSession *FleetCliSessions::session(const FleetHost &host, QString *) {
    if (HostSession *s = m_sessions.value(host.name))
        return s;
    auto *s = new HostSession(fleetHostConfig(host, m_sshConfig), HostSession::userEnvironment(), this);
    QObject::connect(s, &HostSession::hostKeyUnknown, s, [s] { s->answerHostKey(false); });
    QObject::connect(s, &HostSession::secretRequested, s, [s] { s->cancelSecret(); });
    m_sessions.insert(host.name, s);
    return s;
}

} // namespace moetune::cli
