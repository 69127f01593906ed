// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/server/serverprofile.h"

#include <QObject>
#include <QPointer>
#include <QString>

namespace moetune {

class HeadroomFlow;
class HostCalls;
class HostSession;
class PushFlow;
class RunKeeper;
class ServerControl;
class ServingFlow;
class TuneFlow;

// Every flow of one host session, built once for all shells: HostCalls over the session's transport and
// agent, and over it TuneFlow, ServerControl (the host's server profile), PushFlow, the RunKeeper that
// keeps a followed run in the local workspace, ServingFlow (the serving proof) and HeadroomFlow (the
// headroom check). The session owns the bundle (HostSession::flows()); the app's Tune page, the CLI's
// FlowHost and the fleet take it from there and build none of these by hand.
//
// The session remakes its agent when the host's settings change: isCurrent() then turns false and the
// session makes a new bundle at the next flows(), unless this one is busy (a followed run, a serving
// comparison or a headroom check going on), which keeps it until that ends.
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
    ServingFlow *serving() const { return m_serving; }
    HeadroomFlow *headroom() const { return m_headroom; }
    // Still over the session's transport and agent.
    bool isCurrent() const;
    // A flow of the bundle is under way (a followed run, a serving comparison, a headroom check).
    bool isBusy() const;

private:
    QPointer<HostSession> m_session;
    HostCalls *m_calls = nullptr;
    TuneFlow *m_tune = nullptr;
    ServerControl *m_server = nullptr;
    PushFlow *m_push = nullptr;
    RunKeeper *m_keeper = nullptr;
    ServingFlow *m_serving = nullptr;
    HeadroomFlow *m_headroom = nullptr;
};

} // namespace moetune
