// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"
#include "core/job/tunespec.h"
#include "core/run/agentevent.h"
#include "remote/hosts/hostconfig.h"
#include "remote/transport/transport.h"

#include <QHash>
#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>

namespace moetune {

class AgentProtocolParser;

// Drives moetune-agent (remote_agent/PROTOCOL.md) on a host through any Transport. Every call returns a
// job id at once; agentEvent() streams the agent's parsed lines for that job, commandFinished() ends it.
// Deployment is implicit: the first command uploads the agent to ~/.cache/moetune/agent-<version>.pyz
// (skipped when the remote SHA-256 already matches) and waits for it; later commands reuse it.
class AgentClient : public QObject {
    Q_OBJECT
public:
    // localAgentPath: the moetune-agent.pyz built into ${CMAKE_BINARY_DIR}/remote_agent/.
    AgentClient(Transport *transport, HostConfig host, QString localAgentPath, QObject *parent = nullptr);
    ~AgentClient() override;

    static QString remoteAgentPath(const QString &version); // "~/.cache/moetune/agent-<version>.pyz"
    // The local moetune-agent.pyz to deploy: $MOETUNE_AGENT_PYZ, beside the executable, in the build tree,
    // or installed under share/moetune; empty when none is found.
    static QString defaultLocalAgentPath();
    QString agentVersion() const { return m_version; }
    void setAgentHome(const QString &remoteDir); // --home for tune (tests); "" = agent default
    Transport *transport() const { return m_transport; }

    JobId deploy(); // checksum, upload only if different; finishes like any command
    JobId probe();  // -> probed()
    // detached: -> runStarted(), done{status:"detached"}. A run still starting after the agent's wait
    // (done{detached, starting:true}) also gives runStarted() with that done event: it exists, attach to it.
    JobId startTune(const TuneSpec &spec);
    // The headroom check (synchronous): headroom_started, progress, headroom_size..., headroom, done.
    JobId headroom(const TuneSpec &spec);
    JobId attach(const QString &runId, qint64 fromSeq = 0); // events from seq, following until done
    JobId cancelRun(const QString &runId);
    JobId listRuns();
    JobId result(const QString &runId);
    // Installs a result (run id / run folder / config file on the host); dryRun gives `diff` events.
    // extraArgs: further install-config options (the preview's plan: --expect-old / --expect-new).
    JobId installConfig(const QString &source, Framework framework, bool replace, bool dryRun,
                        const QString &root = {}, const QStringList &extraArgs = {});
    // Any agent command (args after the command name are quoted here).
    JobId run(const QString &command, const QStringList &args);

    // The host's log source: the last maxBytes into localFile, with progress(); or follow (lines).
    JobId fetchLog(qint64 maxBytes, const QString &localFile);
    JobId followLog();
    void cancel(JobId id);

signals:
    void agentEvent(moetune::JobId id, const moetune::AgentEvent &event); // every parsed line (errors too)
    void probed(moetune::JobId id, const moetune::HostProbe &probe);
    void runStarted(moetune::JobId id, const QString &runId, const QJsonObject &runStartedEvent);
    void logLines(moetune::JobId id, const QStringList &lines);  // followLog
    void progress(moetune::JobId id, qint64 done, qint64 total); // deploy upload / fetchLog
    // ok: the command ran and said done{ok|detached}; else error is a sentence (agent error message,
    // protocol error with the offending line, transport error, exit status).
    void commandFinished(moetune::JobId id, bool ok, const QString &error, const QString &doneStatus);

private:
    struct Command;
    JobId startCommand(const QStringList &argv, const std::function<void(Command &)> &setup = {});
    JobId specCommand(const QString &command, const TuneSpec &spec); // `command SPEC.json` (tune, headroom)
    void launch(JobId id);
    void ensureDeployed(std::function<void(const QString &error)> then);
    // Internal steps (deploy): a transport job whose end calls done instead of ending an agent command.
    JobId internalJob(JobId transportJob, std::function<void(const JobResult &)> done);
    void internalExec(const QString &command,
                      std::function<void(const JobResult &, const QByteArray &stdoutData)> done);
    void onStdoutData(JobId tid, const QByteArray &data);
    void onStderrLines(JobId tid, const QStringList &lines);
    void onTransportFinished(JobId tid, const JobResult &r);
    void handleEvents(Command &c, const QList<AgentEvent> &events);
    void finishCommand(JobId id, bool ok, const QString &error, const QString &status);

    QPointer<Transport> m_transport;
    HostConfig m_host;
    QString m_localAgent;
    QString m_version;
    QString m_agentHome;
    enum class Deploy { No, Running, Done } m_deploy = Deploy::No;
    QString m_deployError;
    QList<std::function<void(const QString &)>> m_deployWaiters;
    JobId m_nextId = 1;
    QHash<JobId, std::shared_ptr<Command>> m_commands; // by our id
    QHash<JobId, JobId> m_byTransport;                 // transport job id -> our id
};

} // namespace moetune
