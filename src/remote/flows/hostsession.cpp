// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/hostsession.h"

#include "core/host/hostprobemerge.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/servercontrol.h"
#include "remote/hosts/hoststore.h"
#ifdef MOETUNE_HAVE_KEYCHAIN
#include "remote/hosts/credentialstore.h"
#endif
#include "remote/transport/localtransport.h"

#include <QThread>
#include <QTimer>

using namespace Qt::StringLiterals;

namespace moetune {

HostSession::Environment HostSession::userEnvironment() {
    Environment env;
    env.ssh = HostStore::userSshOptions();
    env.agentPath = AgentClient::defaultLocalAgentPath();
    return env;
}

HostSession::HostSession(const HostConfig &host, Environment environment, QObject *parent)
    : QObject(parent)
    , m_host(host)
    , m_env(std::move(environment)) {
    if (m_host.isPractice()) {
        auto *local = new LocalTransport(m_host.practiceRoot + u"/home"_s, this); // its own HOME
        local->setHostLabel(m_host.label());
        m_transport = local;
    } else if (m_host.local) {
        m_transport = new LocalTransport(m_env.localHome, this);
    } else {
        SshOptions options = m_env.ssh;
        options.host = m_host;
        auto *ssh = new SshTransport(options, this);
        connect(ssh, &SshTransport::hostKeyUnknown, this, &HostSession::hostKeyUnknown);
        connect(ssh, &SshTransport::secretRequested, this, &HostSession::onSecretRequested);
        m_transport = ssh;
#ifdef MOETUNE_HAVE_KEYCHAIN
        m_keyring = new CredentialStore(this);
        connect(m_keyring, &CredentialStore::readFinished, this, &HostSession::onKeyringRead);
        connect(m_keyring, &CredentialStore::writeFinished, this,
                [this](const QString &, const QString &error) {
                    if (!error.isEmpty())
                        emit keyringProblem(tr("Could not use the desktop keyring: %1; the password was "
                                               "used for this session only.")
                                                .arg(error));
                });
        connect(
            m_keyring, &CredentialStore::removeFinished, this, [this](const QString &, const QString &error) {
                if (!error.isEmpty())
                    emit keyringProblem(
                        tr("Could not remove the refused password from the desktop keyring: %1").arg(error));
            });
#endif
    }
    connect(m_transport, &Transport::stateChanged, this,
            [this](Transport::State s, const QString &) { onTransportState(s); });
    connect(m_transport, &Transport::stateChanged, this, &HostSession::stateChanged);
    createAgent();
}

HostSession::~HostSession() {
    delete m_flows.data(); // before the transport and the agent they work over
    // A diagnosis still running holds only its own copies; wait for it rather than leave a thread behind.
    for (const QPointer<QObject> &t : std::as_const(m_diagnosisThreads)) {
        if (auto *thread = qobject_cast<QThread *>(t.data()))
            thread->wait();
    }
}

void HostSession::createAgent() {
    if (m_agent) {
        m_agent->disconnect(this);
        m_agent->deleteLater();
    }
    m_agentDirty = false;
    m_agent = new AgentClient(m_transport, m_host, m_env.agentPath, this);
    connect(m_agent, &AgentClient::probed, this, [this](JobId id, const HostProbe &p) {
        if (id != m_probeAgentJob)
            return;
        m_fullProbe = p;
        // One name for the host everywhere: the probe of this machine says "Local machine" too.
        if (m_host.local || m_host.isPractice() || m_fullProbe->hostName.isEmpty())
            m_fullProbe->hostName = m_host.label();
        m_probe = m_fullProbe->focused(serverChoice());
    });
    connect(m_agent, &AgentClient::progress, this, [this](JobId id, qint64 done, qint64 total) {
        if (id == m_fetch.agentJob)
            emit jobProgress(m_fetch.id, done, total);
    });
    connect(m_agent, &AgentClient::logLines, this, [this](JobId id, const QStringList &lines) {
        if (id == m_followAgentJob)
            emit followLines(m_followJob, lines);
    });
    connect(
        m_agent, &AgentClient::commandFinished, this,
        [this](JobId id, bool ok, const QString &error, const QString &) { onAgentFinished(id, ok, error); });
}

void HostSession::refreshAgent() {
    // Not under a busy flow either (a followed run would lose its agent mid-stream).
    if (m_agentDirty && !m_probeAgentJob && !m_fetch.agentJob && !m_followAgentJob &&
        !(m_flows && m_flows->isBusy()))
        createAgent();
}

AgentClient *HostSession::agent() {
    refreshAgent();
    return m_agent;
}

HostFlows *HostSession::flows() {
    refreshAgent();
    if (m_flows && !m_flows->isCurrent() && !m_flows->isBusy()) {
        m_flows->deleteLater(); // shells holding it see it go (their QPointers turn null)
        m_flows = nullptr;
    }
    if (!m_flows)
        m_flows = new HostFlows(this, m_host.serverProfile, label(), this);
    else if (m_flows->isCurrent()) // a busy stale bundle keeps the profile it runs with
        m_flows->server()->setProfile(m_host.serverProfile);
    return m_flows;
}

void HostSession::setHost(const HostConfig &host) {
    if (host == m_host)
        return;
    m_host = host;
    // The agent client keeps the host's python and log source; a new one picks the new settings up
    // once nothing runs on the old one.
    m_agentDirty = true;
    refreshAgent();
    if (m_fullProbe) // the server chosen may have changed: the flows act on the new one from now on
        m_probe = m_fullProbe->focused(serverChoice());
}

ServerChoice HostSession::serverChoice() const {
    return ServerChoice::of(m_host.serverProfile, m_host.logSource.kind == LogSource::Kind::File
                                                      ? m_host.logSource.value
                                                      : QString());
}

Transport::State HostSession::state() const {
    return m_transport ? m_transport->state() : Transport::State::Disconnected;
}

QString HostSession::stateMessage() const {
    return m_transport ? m_transport->stateMessage() : QString();
}

void HostSession::connectToHost() {
    m_transport->connectToHost();
}

void HostSession::ensureConnecting() {
    if (state() == Transport::State::Disconnected || state() == Transport::State::Failed)
        connectToHost();
}

void HostSession::disconnectFromHost() {
    stopFollow();
    cancelFetch();
    m_transport->disconnectFromHost();
}

void HostSession::answerHostKey(bool accept) {
    if (auto *ssh = qobject_cast<SshTransport *>(m_transport))
        ssh->answerHostKey(accept);
}

void HostSession::provideSecret(const QStringList &answers, bool remember) {
    m_pendingKey.clear();
    m_pendingSecret.clear();
    // Kept in memory only until the server accepts it; a refused secret is never remembered.
    if (remember && m_keyring && !m_askedKey.isEmpty()) {
        m_pendingKey = m_askedKey;
        m_pendingSecret = answers.value(0);
    }
    if (auto *ssh = qobject_cast<SshTransport *>(m_transport))
        ssh->provideSecret(answers, false);
}

void HostSession::cancelSecret() {
    if (auto *ssh = qobject_cast<SshTransport *>(m_transport))
        ssh->cancelSecret();
}

void HostSession::onSecretRequested(SshTransport::SecretKind kind, const QStringList &prompts,
                                    const QString &instruction) {
    m_askedKind = kind;
    m_askedPrompts = prompts;
    m_askedInstruction = instruction;
    m_askedKey.clear();
#ifdef MOETUNE_HAVE_KEYCHAIN
    // Keyboard-interactive prompts change per round and are never remembered.
    if (kind == SshTransport::SecretKind::Password)
        m_askedKey = CredentialStore::keyFor(m_host);
    else if (kind == SshTransport::SecretKind::Passphrase)
        m_askedKey = CredentialStore::keyFor(m_host, u"passphrase"_s);
    if (m_keyring && !m_askedKey.isEmpty() && !m_skipKeyring) {
        m_keyring->read(m_askedKey);
        return;
    }
#endif
    m_skipKeyring = false;
    emit secretRequested(kind, prompts, instruction);
}

void HostSession::onKeyringRead(const QString &key, bool found, const QString &secret, const QString &error) {
    if (key != m_askedKey || state() != Transport::State::AwaitingUser)
        return; // answered or disconnected meanwhile
    auto *ssh = qobject_cast<SshTransport *>(m_transport);
    if (found && ssh) {
        m_keyringKey = key;
        ssh->provideSecret({secret}, false);
        return;
    }
    // No secret service is the normal case on many machines: only worth a word when one was remembered.
    if (!error.isEmpty() && m_host.rememberPassword)
        emit keyringProblem(
            tr("Could not use the desktop keyring: %1; asking for the password instead.").arg(error));
    emit secretRequested(m_askedKind, m_askedPrompts, m_askedInstruction);
}

void HostSession::onTransportState(Transport::State s) {
#ifdef MOETUNE_HAVE_KEYCHAIN
    if (s == Transport::State::Connected) {
        if (!m_pendingKey.isEmpty()) {
            m_keyring->write(m_pendingKey, m_pendingSecret);
            m_host.rememberPassword = true;
        }
        m_keyringKey.clear();
    } else if (s == Transport::State::Failed && !m_keyringKey.isEmpty()) {
        // The remembered secret was refused: forget it and ask the user on a fresh attempt.
        m_keyring->remove(m_keyringKey);
        m_keyringKey.clear();
        m_skipKeyring = true;
        QTimer::singleShot(0, this, [this] {
            emit keyringProblem(tr("The password remembered in the desktop keyring was refused; it was "
                                   "removed. Type it again."));
            if (state() == Transport::State::Failed)
                connectToHost();
        });
    }
#endif
    if (s == Transport::State::Connected || s == Transport::State::Failed ||
        s == Transport::State::Disconnected) {
        m_pendingKey.clear();
        m_pendingSecret.clear();
    }
}

void HostSession::failJob(JobId id, Flow flow, const QString &error) {
    emit jobFailed(id, flow, error);
    emit jobFinished(id, flow, false);
}

void HostSession::finishJob(JobId id, Flow flow) {
    emit jobFinished(id, flow, true);
}

JobId HostSession::probe() {
    if (m_probeJob)
        return m_probeJob;
    ensureConnecting();
    refreshAgent();
    m_probeJob = nextJobId();
    m_lastProbeError.clear();
    m_probeAgentJob = m_agent->probe();
    emit jobStarted(m_probeJob, Flow::Probe);
    return m_probeJob;
}

JobId HostSession::fetchLog(qint64 maxBytes, const QString &localFile, QString *error) {
    if (isFetching()) {
        *error = tr("A log is already being fetched from %1.").arg(label());
        return 0;
    }
    if (m_host.logSource.kind == LogSource::Kind::None) {
        *error =
            tr("%1 has no log source. Give the server's log file (e.g. /var/log/sglang.log) or a command "
               "that prints it (e.g. journalctl -u sglang -n 20000) in the host's settings.")
                .arg(label());
        return 0;
    }
    ensureConnecting();
    refreshAgent();
    m_fetch = Fetch{};
    m_fetch.id = nextJobId();
    m_fetch.file = localFile;
    m_fetch.agentJob = m_agent->fetchLog(maxBytes, localFile);
    m_fetch.waitProbe = !m_probe;
    emit jobStarted(m_fetch.id, Flow::FetchLog);
    if (m_fetch.waitProbe)
        probe();
    return m_fetch.id;
}

JobId HostSession::diagnoseHost(qint64 maxBytes, const QString &localFile, const Diagnoser &diagnoser,
                                QString *error) {
    // The probe belongs to this diagnosis: a fresh one, so the facts are the host's as of now.
    if (!m_probeJob) {
        m_probe.reset();
        m_fullProbe.reset();
    }
    const JobId id = fetchLog(maxBytes, localFile, error);
    if (!id)
        return 0;
    m_fetch.diagnose = true;
    m_fetch.diagnoser = diagnoser;
    return id;
}

void HostSession::cancelFetch() {
    if (m_fetch.agentJob)
        m_agent->cancel(m_fetch.agentJob);
    else if (m_fetch.id) {
        const Fetch f = std::exchange(m_fetch, Fetch{});
        failJob(f.id, f.diagnose ? Flow::DiagnoseHost : Flow::FetchLog,
                tr("Fetching the log was cancelled."));
    }
}

JobId HostSession::startFollow(QString *error) {
    if (m_followJob)
        return m_followJob;
    if (m_host.logSource.kind == LogSource::Kind::None) {
        *error = tr("%1 has no log source to follow. Give the server's log file or a command that prints it "
                    "in the host's settings.")
                     .arg(label());
        return 0;
    }
    ensureConnecting();
    refreshAgent();
    m_followJob = nextJobId();
    m_followAgentJob = m_agent->followLog();
    emit jobStarted(m_followJob, Flow::FollowLog);
    return m_followJob;
}

void HostSession::stopFollow() {
    if (m_followAgentJob)
        m_agent->cancel(m_followAgentJob);
}

void HostSession::cancel(JobId id) {
    if (id == 0)
        return;
    if (id == m_fetch.id)
        cancelFetch();
    else if (id == m_followJob)
        stopFollow();
    else if (id == m_probeJob)
        m_agent->cancel(m_probeAgentJob);
}

void HostSession::onAgentFinished(JobId agentJob, bool ok, const QString &error) {
    if (agentJob == 0)
        return;
    if (agentJob == m_probeAgentJob) {
        const JobId id = std::exchange(m_probeJob, 0);
        m_probeAgentJob = 0;
        if (ok && m_probe) {
            emit probed(id, *m_probe);
            finishJob(id, Flow::Probe);
        } else {
            m_lastProbeError = error.isEmpty()
                                   ? tr("The agent on %1 finished without describing the host.").arg(label())
                                   : error;
            failJob(id, Flow::Probe, m_lastProbeError);
        }
        maybeFinishFetch();
    } else if (agentJob == m_fetch.agentJob) {
        m_fetch.agentJob = 0;
        if (!ok) {
            const Fetch f = std::exchange(m_fetch, Fetch{});
            failJob(f.id, f.diagnose ? Flow::DiagnoseHost : Flow::FetchLog,
                    error == u"Cancelled."_s ? tr("Fetching the log was cancelled.")
                                             : tr("Cannot fetch the log of %1: %2").arg(label(), error));
            return;
        }
        m_fetch.logHere = true;
        maybeFinishFetch();
    } else if (agentJob == m_followAgentJob) {
        const JobId id = std::exchange(m_followJob, 0);
        m_followAgentJob = 0;
        const QString why = ok || error == u"Cancelled."_s ? QString() : error;
        emit followStopped(id, why);
        if (why.isEmpty())
            finishJob(id, Flow::FollowLog);
        else
            failJob(id, Flow::FollowLog, why);
    }
    refreshAgent();
}

void HostSession::maybeFinishFetch() {
    if (!m_fetch.logHere || m_probeJob)
        return;
    const Fetch f = std::exchange(m_fetch, Fetch{});
    // Without a probe the log is still worth diagnosing; the facts merged are then empty.
    HostProbe facts;
    if (m_probe)
        facts = *m_probe;
    else
        facts.hostName = label();
    if (f.diagnose) {
        if (!m_probe)
            m_probeErrors.insert(f.id, m_lastProbeError);
        // Host facts of which server? The chosen one, or the one writing this log; never a guess.
        else if (const QString ask = m_probe->serverQuestion(m_chooseHow); !ask.isEmpty())
            return failJob(f.id, Flow::DiagnoseHost, ask);
        runDiagnosis(f.id, f.file, m_probe, *f.diagnoser);
        return;
    }
    emit logFetched(f.id, f.file, facts);
    finishJob(f.id, Flow::FetchLog);
}

void HostSession::runDiagnosis(JobId id, const QString &file, const std::optional<HostProbe> &probe,
                               const Diagnoser &diagnoser) {
    // Diagnosis of a big log takes seconds: off this thread, back by a queued call (dropped if we are
    // gone; the destructor waits for the thread, so `this` outlives it).
    QThread *thread = QThread::create([this, id, file, probe, diagnoser, label = label()] {
        QString error;
        Diagnosis d = diagnoser.diagnoseFile(file, {}, &error);
        if (error.isEmpty() && probe)
            d = mergeHostProbe(std::move(d), *probe, label);
        QMetaObject::invokeMethod(
            this,
            [this, id, d = std::move(d), error] {
                if (!error.isEmpty())
                    failJob(id, Flow::DiagnoseHost, tr("Cannot diagnose the fetched log: %1").arg(error));
                else {
                    emit hostDiagnosed(id, d);
                    finishJob(id, Flow::DiagnoseHost);
                }
            },
            Qt::QueuedConnection);
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    m_diagnosisThreads.append(thread);
    thread->start();
}

} // namespace moetune
