// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/hostcalls.h"

#include "remote/agent/agentclient.h"
#include "remote/transport/transport.h"

#include <QSet>

using namespace Qt::StringLiterals;

namespace moetune {

QString HostCalls::Shell::failure() const {
    if (!error.isEmpty())
        return error;
    if (exitStatus == 0)
        return {};
    const QStringList tail = err.mid(qMax(0, int(err.size()) - 5));
    return u"`%1` failed with exit status %2%3"_s.arg(command)
        .arg(exitStatus)
        .arg(tail.isEmpty() ? QString() : u": "_s + tail.join(u' ').trimmed());
}

QList<QJsonObject> HostCalls::Agent::of(const QString &type) const {
    QList<QJsonObject> out;
    for (const AgentEvent &e : events) {
        if (e.type == type)
            out.append(e.object);
    }
    return out;
}

HostCalls::HostCalls(Transport *transport, AgentClient *agent, QObject *parent)
    : QObject(parent)
    , m_transport(transport)
    , m_agent(agent) {
    connect(transport, &Transport::stdoutLines, this, [this](JobId id, const QStringList &lines) {
        auto it = m_shell.find(id);
        if (it == m_shell.end())
            return;
        it->shell.out += lines;
        if (!it->quiet) {
            for (const QString &l : lines)
                emit commandOutput(l);
        }
    });
    connect(transport, &Transport::stderrLines, this, [this](JobId id, const QStringList &lines) {
        auto it = m_shell.find(id);
        if (it == m_shell.end())
            return;
        it->shell.err += lines;
        if (!it->quiet) {
            for (const QString &l : lines)
                emit commandOutput(l);
        }
    });
    connect(transport, &Transport::finished, this, [this](JobId id, const JobResult &r) {
        auto it = m_shell.find(id);
        if (it == m_shell.end())
            return;
        Pending p = it.value();
        m_shell.erase(it);
        p.shell.exitStatus = r.exitStatus;
        p.shell.error = r.cancelled && r.error.isEmpty() ? u"Cancelled."_s : r.error;
        p.shell.connectionLost = r.connectionLost;
        if (!p.quiet || !p.shell.ok())
            emit commandEnded(p.shell.command, p.shell.exitStatus, p.shell.error);
        p.done(p.shell);
    });
    connect(agent, &AgentClient::agentEvent, this, [this](JobId id, const AgentEvent &e) {
        auto it = m_agentJobs.find(id);
        if (it == m_agentJobs.end())
            return;
        // A run's stream (measurements, progress, ...) goes to `each` only: a job keeps what its caller
        // reads afterwards (probe, run, result, error, ...), at most kMaxKeptEvents of them.
        static const QSet<QString> streamed{u"measurement"_s,   u"candidate_error"_s, u"progress"_s,
                                            u"best"_s,          u"phase"_s,           u"log"_s,
                                            u"result_written"_s};
        if (!streamed.contains(e.type) || e.isError()) {
            if (it->agent.events.size() < kMaxKeptEvents)
                it->agent.events.append(e);
            else
                ++it->agent.eventsDropped;
        }
        if (it->each)
            it->each(e);
    });
    connect(agent, &AgentClient::commandFinished, this,
            [this](JobId id, bool ok, const QString &error, const QString &status) {
                auto it = m_agentJobs.find(id);
                if (it == m_agentJobs.end())
                    return;
                PendingAgent p = it.value();
                m_agentJobs.erase(it);
                p.agent.ok = ok && p.agent.eventsDropped == 0;
                p.agent.error = error;
                if (p.agent.eventsDropped > 0 && error.isEmpty())
                    p.agent.error = u"The agent sent more than %1 answer lines for one command (%2 more were "
                                    u"not kept); moetune keeps at most that many."_s.arg(kMaxKeptEvents)
                                        .arg(p.agent.eventsDropped);
                p.agent.status = status;
                p.done(p.agent);
            });
}

void HostCalls::start(const QString &command, const QString &localFile, int timeoutMs, ShellDone done,
                      bool quiet) {
    ExecRequest req(command);
    req.timeoutMs = timeoutMs;
    req.stdoutFile = localFile;
    Pending p;
    p.shell.command = command;
    p.done = std::move(done);
    p.quiet = quiet;
    if (!quiet)
        emit commandStarted(command);
    const JobId id = m_transport->exec(req);
    m_shell.insert(id, p);
}

void HostCalls::shell(const QString &command, int timeoutMs, ShellDone done, bool quiet) {
    start(command, QString(), timeoutMs, std::move(done), quiet);
}

void HostCalls::shellToFile(const QString &command, const QString &localFile, int timeoutMs, ShellDone done) {
    start(command, localFile, timeoutMs, std::move(done), false);
}

void HostCalls::agentJob(JobId id, AgentDone done, EventFn each) {
    m_agentJobs.insert(id, {Agent{}, std::move(done), std::move(each)});
}

void HostCalls::cancelAll() {
    if (m_transport) {
        for (auto it = m_shell.begin(); it != m_shell.end(); ++it)
            m_transport->cancel(it.key());
    }
    if (m_agent) {
        for (auto it = m_agentJobs.begin(); it != m_agentJobs.end(); ++it)
            m_agent->cancel(it.key());
    }
}

} // namespace moetune
