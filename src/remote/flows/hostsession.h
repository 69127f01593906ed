// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// HostSession: one host's connection and the jobs that watch it, for the app and the CLI alike.
//
// App (asynchronous, GUI thread):
//     HostSession::Environment env = HostSession::userEnvironment(); // ~/.ssh files, agent zipapp
//     auto *s = new HostSession(store.resolve(u"gpu-7"_s, &err).value(), env, this);
//     connect(s, &HostSession::hostKeyUnknown, ...);   // ask, then s->answerHostKey(yes)
//     connect(s, &HostSession::secretRequested, ...);  // ask, then s->provideSecret({pw}, remember)
//     connect(s, &HostSession::probed, ...);           // (JobId, HostProbe)
//     connect(s, &HostSession::jobFailed, ...);        // (JobId, Flow, sentence) for every job
//     s->probe();                                      // connects first when needed
//     s->fetchLog(64 << 20, file, &err);               // jobProgress..., logFetched(id, file, probe)
// CLI (synchronous): HostSessionSync (hostsessionsync.h) wraps one and waits through Waiter (waiter.h).
//
// Two kinds of work, one style each:
// - The session's own jobs (probe, fetch / follow the log, diagnose host) are job ids + signals: their
//   results are the host's state, watched by several views at once (the host list, the overview, the
//   Diagnose page), so they are broadcast. These four are all; they belong to the connection.
// - Every flow that runs steps on the host (tune, attach, cancel, push, undo, restart, serving,
//   headroom) is a class over HostCalls with continuation callbacks: each call takes a `done` that gets
//   the value and an error sentence, exactly once, on the caller's thread, never after the object is
//   gone. They chain (preflight -> start -> follow; push -> restart -> prove) and each result has one
//   caller, so a callback per call needs no job bookkeeping in the shells. The session owns the one
//   bundle of them, flows() (HostFlows, hostflows.h): the Tune page, the CLI and the fleet take it and
//   build none; it is made again over the new agent when the host's settings changed, once it is idle.
//
// Adding a flow: a class over HostCalls (shell / agent calls with a continuation; every host command is
// announced through it, so every shell shows what ran), one method per step taking a std::function done
// (value, error sentence), progress as signals, and a member of HostFlows (with an accessor, and in
// HostFlows::isBusy() when it runs long). The CLI waits for a callback with FlowHost::finish() / wait(),
// tests with Waiter; the app's lambdas are guarded by the page. See TuneFlow::start() for the pattern.

#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "remote/hosts/hostconfig.h"
#include "remote/hosts/sshoptions.h"
#include "remote/transport/remotejob.h"
#include "remote/transport/sshtransport.h"
#include "remote/transport/transport.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QStringList>

#include <optional>

namespace moetune {

class AgentClient;
class CredentialStore;
class HostFlows;

class HostSession : public QObject {
    Q_OBJECT
public:
    enum class Flow { Probe, FetchLog, FollowLog, DiagnoseHost };
    Q_ENUM(Flow)

    // What is the same for every host of one user: how SSH finds its files, the Local machine's "~"
    // ("" = the real home; tests give it their own) and the agent zipapp deployed to hosts.
    struct Environment {
        SshOptions ssh;    // everything but .host (HostStore::userSshOptions() for the real user)
        QString localHome; // "~" of the Local machine
        QString agentPath; // the moetune-agent.pyz to deploy
    };
    static Environment userEnvironment();

    HostSession(const HostConfig &host, Environment environment, QObject *parent = nullptr);
    ~HostSession() override;

    const HostConfig &host() const { return m_host; }
    const Environment &environment() const { return m_env; }
    QString label() const { return m_host.label(); }
    // Settings edited while connected take effect at the next flow (the connection stays).
    void setHost(const HostConfig &host);
    bool isLocal() const { return m_host.local || m_host.isPractice(); }
    Transport *transport() const { return m_transport; }
    // The agent of the current host settings (new flows start their agent commands here).
    AgentClient *agent();
    // The session's flows over its current transport and agent, the host's server profile and label:
    // made on first use, made again when the agent was remade (host settings changed) and the old bundle
    // is idle; a busy one (a followed run, ...) is kept until its flow ends. The profile follows setHost().
    // Shells keep no pointer across calls without checking it is still flows() (QPointer).
    HostFlows *flows();
    Transport::State state() const;
    QString stateMessage() const;

    void connectToHost(); // also done by every flow when not connected
    void disconnectFromHost();
    void answerHostKey(bool accept);
    void provideSecret(const QStringList &answers, bool remember);
    void cancelSecret();

    // -> probed(id, probe) | jobFailed(id, Flow::Probe, error). A probe already running is joined.
    JobId probe();
    bool isProbing() const { return m_probeJob != 0; }
    // The last probe focused on the server the flows act on (HostProbe::focused with serverChoice()):
    // its `servers` holds the chosen one, or every candidate when there is no way to choose.
    const std::optional<HostProbe> &lastProbe() const { return m_probe; }
    // Which server: the host's profile's choice, else the one writing the log source (a file), else the
    // only one (core/host/serverchoice.h). Set through setHost() (the profile's `server`).
    ServerChoice serverChoice() const;
    // How a user chooses, in the question a flow asks with several servers and no choice.
    void setChooseHow(const QString &how) { m_chooseHow = how; }
    QString chooseHow() const { return m_chooseHow; }

    // The last maxBytes of the log source into localFile; probes too when no probe is known yet, so
    // logFetched() always comes with the host's facts (empty ones when the probe failed).
    JobId fetchLog(qint64 maxBytes, const QString &localFile, QString *error);
    bool isFetching() const { return m_fetch.id != 0; }
    void cancelFetch();

    // New lines of the log source as they come: followLines(id, ...) until followStopped(id, error).
    JobId startFollow(QString *error);
    void stopFollow();
    bool isFollowing() const { return m_followJob != 0; }

    // Fetch + probe + diagnosis of the fetched file (off this thread) with the probe merged in:
    // -> hostDiagnosed(id, diagnosis) | jobFailed(id, Flow::DiagnoseHost, error). A failed probe is not
    // fatal: the diagnosis then has no host facts and probeError(id) says why.
    JobId diagnoseHost(qint64 maxBytes, const QString &localFile, const Diagnoser &diagnoser, QString *error);
    QString probeError(JobId diagnoseJob) const { return m_probeErrors.value(diagnoseJob); }

    void cancel(JobId id);

signals:
    void stateChanged(moetune::Transport::State state, const QString &message);
    void hostKeyUnknown(const QString &keyType, const QString &fingerprint);
    void secretRequested(moetune::SshTransport::SecretKind kind, const QStringList &prompts,
                         const QString &instruction);
    // The desktop keyring could not be used or refused a remembered secret; the connection goes on.
    void keyringProblem(const QString &message);

    void jobStarted(moetune::JobId id, moetune::HostSession::Flow flow);
    void jobProgress(moetune::JobId id, qint64 done, qint64 total);
    void jobFailed(moetune::JobId id, moetune::HostSession::Flow flow, const QString &error);
    // Last signal of every job, after its result signal or jobFailed().
    void jobFinished(moetune::JobId id, moetune::HostSession::Flow flow, bool ok);

    void probed(moetune::JobId id, const moetune::HostProbe &probe);
    void logFetched(moetune::JobId id, const QString &localFile, const moetune::HostProbe &probe);
    void followLines(moetune::JobId id, const QStringList &lines);
    void followStopped(moetune::JobId id, const QString &error); // error "" = stopped by the user
    void hostDiagnosed(moetune::JobId id, const moetune::Diagnosis &diagnosis);

protected:
    JobId nextJobId() { return m_nextJob++; }
    void failJob(JobId id, Flow flow, const QString &error); // jobFailed + jobFinished(false)
    void finishJob(JobId id, Flow flow);                     // jobFinished(true), after the result signal

private:
    void createAgent();
    void refreshAgent();
    void ensureConnecting();
    void onAgentFinished(JobId agentJob, bool ok, const QString &error);
    void maybeFinishFetch();
    void onSecretRequested(SshTransport::SecretKind kind, const QStringList &prompts,
                           const QString &instruction);
    void onKeyringRead(const QString &key, bool found, const QString &secret, const QString &error);
    void onTransportState(Transport::State state);
    void runDiagnosis(JobId id, const QString &file, const std::optional<HostProbe> &probe,
                      const Diagnoser &diagnoser);

    HostConfig m_host;
    Environment m_env;
    QPointer<Transport> m_transport;
    AgentClient *m_agent = nullptr;
    bool m_agentDirty = false;
    QPointer<HostFlows> m_flows;
    JobId m_nextJob = 1;

    std::optional<HostProbe> m_probe;
    std::optional<HostProbe> m_fullProbe; // as the agent said it, before focusing on a server
    QString m_chooseHow = tr("on the Hosts page (Server)");
    JobId m_probeJob = 0;      // our id
    JobId m_probeAgentJob = 0; // the agent's
    QString m_lastProbeError;

    struct Fetch {
        JobId id = 0;
        JobId agentJob = 0;
        QString file;
        bool logHere = false; // the log arrived, the probe may not have yet
        bool waitProbe = false;
        bool diagnose = false; // a diagnoseHost() job, with its diagnoser
        std::optional<Diagnoser> diagnoser;
    } m_fetch;
    QHash<JobId, QString> m_probeErrors;
    QList<QPointer<QObject>> m_diagnosisThreads;

    JobId m_followJob = 0;
    JobId m_followAgentJob = 0;

    // Keyring (qtkeychain builds): the secret asked now, the one given from the keyring (deleted when
    // refused) and the one to remember once authenticated.
    CredentialStore *m_keyring = nullptr;
    SshTransport::SecretKind m_askedKind = SshTransport::SecretKind::Password;
    QString m_askedKey;
    QStringList m_askedPrompts;
    QString m_askedInstruction;
    QString m_keyringKey;
    QString m_pendingKey;
    QString m_pendingSecret;
    bool m_skipKeyring = false;
};

} // namespace moetune
