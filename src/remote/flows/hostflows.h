// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/server/serverprofile.h"

#include <QObject>
#include <QPointer>
#include <QString>

namespace moetune {

class HostCalls;
class HostSession;
class PushFlow;
class RunKeeper;
class ServerControl;
class TuneFlow;

// The tuning flows of one host session, built once for both shells: HostCalls over the session's
// transport and agent, and over it TuneFlow, ServerControl (the host's server profile), PushFlow and the
// RunKeeper that keeps a followed run in the local workspace. The app's Tune page and the CLI's FlowHost
// take one of these instead of building the four by hand; ServingFlow and HeadroomFlow are made over its
// calls() / push() / server() by the boxes that run them.
//
// The session remakes its agent when the host's settings change: isCurrent() then turns false and the
// shell makes a new bundle (a followed run may keep the old one until it ends).
class HostFlows : public QObject {
    Q_OBJECT
public:
    // hostLabel: the host's name in the flows' sentences ("" = the session's label()).
    HostFlows(HostSession *session, const ServerProfile &profile, const QString &hostLabel = {},
              QObject *parent = nullptr);
    ~HostFlows() override;

    HostSession *session() const { return m_session; }
    HostCalls *calls() const { return m_calls; }
    TuneFlow *tune() const { return m_tune; }
    ServerControl *server() const { return m_server; }
    PushFlow *push() const { return m_push; }
    RunKeeper *runKeeper() const { return m_keeper; }
    // Still over the session's transport and agent.
    bool isCurrent() const;

private:
    QPointer<HostSession> m_session;
    HostCalls *m_calls = nullptr;
    TuneFlow *m_tune = nullptr;
    ServerControl *m_server = nullptr;
    PushFlow *m_push = nullptr;
    RunKeeper *m_keeper = nullptr;
};

} // namespace moetune
