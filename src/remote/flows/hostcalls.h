// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/agentevent.h"
#include "remote/agent/agentclient.h"
#include "remote/transport/remotejob.h"
#include "remote/transport/transport.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QStringList>

#include <functional>

namespace moetune {

// Continuation-style calls on one host for the flows (preflight, stop/start, push): a shell command or
// an agent command, with a callback when it ends. Every shell command and its output is announced
// (commandStarted / commandOutput / commandEnded) so the app and the CLI show exactly what ran on the
// host. Callbacks run on the caller's thread; none runs after this object is gone.
class HostCalls : public QObject {
    Q_OBJECT
public:
    struct Shell {
        QString command;
        int exitStatus = -1;
        QStringList out;
        QStringList err;
        QString error; // transport error (connection lost, timeout); "" when it ran
        bool connectionLost = false;
        bool ok() const { return error.isEmpty() && exitStatus == 0; }
        QString failure() const; // a sentence: the error, or the exit status and the last stderr lines
    };
    // Answer lines one agent job keeps (a run's streamed events are never kept, only passed to `each`).
    static constexpr qsizetype kMaxKeptEvents = 10000;
    struct Agent {
        QList<AgentEvent> events; // not the streamed run events; at most kMaxKeptEvents
        qint64 eventsDropped = 0; // over the limit: the job fails, saying so
        bool ok = false;
        QString error;
        QString status;
        QList<QJsonObject> of(const QString &type) const;
    };
    using ShellDone = std::function<void(const Shell &)>;
    using AgentDone = std::function<void(const Agent &)>;
    using EventFn = std::function<void(const AgentEvent &)>;

    HostCalls(Transport *transport, AgentClient *agent, QObject *parent = nullptr);

    Transport *transport() const { return m_transport; }
    AgentClient *agent() const { return m_agent; }
    // quiet: not announced (polling loops announce once themselves).
    void shell(const QString &command, int timeoutMs, ShellDone done, bool quiet = false);
    // Raw stdout into localFile (logs), with the same announcement.
    void shellToFile(const QString &command, const QString &localFile, int timeoutMs, ShellDone done);
    // Waits for an AgentClient job started by the caller; each sees every event as it arrives.
    void agentJob(JobId id, AgentDone done, EventFn each = {});
    void cancelAll();

signals:
    void commandStarted(const QString &command);
    void commandOutput(const QString &line);
    void commandEnded(const QString &command, int exitStatus, const QString &error);

private:
    struct Pending {
        Shell shell;
        ShellDone done;
        bool quiet = false;
    };
    struct PendingAgent {
        Agent agent;
        AgentDone done;
        EventFn each;
    };
    void start(const QString &command, const QString &localFile, int timeoutMs, ShellDone done, bool quiet);

    QPointer<Transport> m_transport;
    QPointer<AgentClient> m_agent;
    QHash<JobId, Pending> m_shell;
    QHash<JobId, PendingAgent> m_agentJobs;
};

} // namespace moetune
