// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/hostcli.h"
#include "core/run/runprogress.h"
#include "core/server/serverprofile.h"
#include "remote/flows/headroomflow.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/pushflow.h"
#include "remote/flows/servercontrol.h"
#include "remote/flows/servingflow.h"
#include "remote/flows/tuneflow.h"
#include "remote/flows/waiter.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QString>

#include <memory>
#include <optional>

namespace moetune::cli {

// Exit statuses of the tuning commands (tune, runs, attach, cancel, push, undo-push), docs/cli.md.
enum FlowExit : int {
    FlowExitOk = 0,      // done as asked: run finished ok, pushed, warning gone
    FlowExitOutcome = 1, // it ran, the outcome needs attention: run failed/cancelled, a warning remains
    FlowExitUsage = 2,   // bad arguments or unreadable local input
    FlowExitHost = 3,    // the host could not be reached, or the agent or a host command failed
    FlowExitRefused = 4, // refused before changing anything (GPUs busy, simulated push, changed files)
};

// One host for a tuning command: the connection (HostSession) and the bundle of flows it owns
// (HostSession::flows(): TuneFlow, ServerControl, PushFlow, RunKeeper, ServingFlow, HeadroomFlow), driven
// synchronously through nested event loops, every host command and its output echoed on stderr
// ("$ cmd" / "  | line") so a script's log shows what ran. The --profile / --server given become the
// session's host's server profile, so the flows act through them.
class FlowHost {
public:
    static QList<QCommandLineOption> commonOptions(); // --python, --accept-new-host-key, --profile, --format
    // Connects; on failure prints why and returns the exit status (0 = connected).
    int connect(const QString &command, const QCommandLineParser &parser);
    bool json() const { return m_json; }

    HostFlows *flows() const { return m_flows; }
    HostCalls *calls() const { return m_flows->calls(); }
    TuneFlow *tune() const { return m_flows->tune(); }
    ServerControl *server() const { return m_flows->server(); }
    PushFlow *push() const { return m_flows->push(); }
    ServingFlow *serving() const { return m_flows->serving(); }
    HeadroomFlow *headroom() const { return m_flows->headroom(); }
    const HostConfig &host() const { return m_session->host(); }
    const ServerProfile &profile() const { return m_profile; }

    // Runs a nested loop until finish() is called from a flow's callback (or the timeout: false).
    bool wait(int timeoutMs = 24 * 3600 * 1000) { return m_waiter.wait(timeoutMs); }
    void finish() { m_waiter.done(); }

    // Follows a run to its end with a progress line, then prints its summary (text or JSON, with extra
    // merged into the JSON object). The run is kept in the local workspace as the app keeps it
    // (Workspace::defaultLocation(), with extra's "spec" and the host's facts). Exit status: 0 finished
    // ok, 1 failed/cancelled, 3 lost.
    int followRun(const QString &runId, RunProgress *progress, const QJsonObject &extra = {},
                  const std::optional<HostProbe> &facts = std::nullopt);
    void fail(const QString &message) const; // "moetune-cli <command>: message" on stderr

private:
    QString m_command;
    bool m_json = false;
    ServerProfile m_profile;
    std::unique_ptr<HostSessionSync> m_session;
    HostFlows *m_flows = nullptr; // the session's (one command: nothing remakes it meanwhile)
    Waiter m_waiter;              // finish() may come before wait() (a flow that fails at once)
};

} // namespace moetune::cli
