// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/hostflows.h"

#include "remote/flows/headroomflow.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/pushflow.h"
#include "remote/flows/runkeeper.h"
#include "remote/flows/servercontrol.h"
#include "remote/flows/servingflow.h"
#include "remote/flows/tuneflow.h"

namespace moetune {

HostFlows::HostFlows(HostSession *session, const ServerProfile &profile, const QString &hostLabel,
                     QObject *parent)
    : QObject(parent)
    , m_session(session)
    , m_calls(new HostCalls(session->transport(), session->agent(), this))
    , m_tune(new TuneFlow(m_calls, this))
    , m_server(new ServerControl(m_calls, profile, this))
    , m_push(new PushFlow(m_calls, m_server, hostLabel.isEmpty() ? session->label() : hostLabel, this))
    , m_keeper(new RunKeeper(m_tune, this))
    , m_serving(new ServingFlow(m_calls, m_push, m_server, this))
    , m_headroom(new HeadroomFlow(m_calls, this)) {
    // The probes of these flows are focused on the server the profile (or the CLI's --server) names, or
    // the one writing the host's log file; with several and no choice they ask (HostProbe::serverQuestion).
    const HostConfig &h = session->host();
    m_tune->setServerChoice(
        ServerChoice::of(profile, h.logSource.kind == LogSource::Kind::File ? h.logSource.value : QString()));
}

HostFlows::~HostFlows() = default;

bool HostFlows::isCurrent() const {
    return m_session && m_calls->agent() == m_session->agent() &&
           m_calls->transport() == m_session->transport();
}

bool HostFlows::isBusy() const {
    return m_tune->isFollowing() || m_serving->running() || m_headroom->running();
}

} // namespace moetune
