#include "app/hosts/hostconnection.h"

#include "remote/agentclient.h"
#ifdef MOETUNE_HAVE_KEYCHAIN
#include "remote/credentialstore.h"
#endif
#include "remote/localtransport.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QTimer>

using namespace Qt::StringLiterals;

namespace moetune {

HostConnection::HostConnection(const HostConfig &host, bool local, const SshOptions &sshTemplate,
                               const QString &localHome, const QString &agentPath, QObject *parent)
    : QObject(parent)
    , m_host(host)
    , m_local(local) {
    if (local) {
        m_transport = new LocalTransport(localHome, this);
    } else {
        SshOptions options = sshTemplate;
        options.host = host;
        auto *ssh = new SshTransport(options, this);
        connect(ssh, &SshTransport::hostKeyUnknown, this, &HostConnection::hostKeyUnknown);
        connect(ssh, &SshTransport::secretRequested, this, &HostConnection::onSecretRequested);
        m_transport = ssh;
#ifdef MOETUNE_HAVE_KEYCHAIN
        m_keyring = new CredentialStore(this);
        connect(m_keyring, &CredentialStore::readFinished, this, &HostConnection::onKeyringRead);
        connect(
            m_keyring, &CredentialStore::writeFinished, this, [this](const QString &, const QString &error) {
                if (!error.isEmpty())
                    emit keyringProblem(tr("Could not use the desktop keyring: %1; the password was used for "
                                           "this session only.")
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
    connect(m_transport, &Transport::stateChanged, this, &HostConnection::stateChanged);
    m_agentPath = agentPath;
    createAgent();
}

void HostConnection::createAgent() {
    if (m_agent) {
        m_agent->disconnect(this);
        m_agent->deleteLater();
    }
    m_agentDirty = false;
    m_agent = new AgentClient(m_transport, m_host, m_agentPath, this);
    connect(m_agent, &AgentClient::probed, this, [this](JobId id, const HostProbe &p) {
        if (id == m_probeJob)
            m_probe = p;
    });
    connect(m_agent, &AgentClient::progress, this, [this](JobId id, qint64 done, qint64 total) {
        if (id == m_fetchJob)
            emit fetchProgress(done, total);
    });
    connect(m_agent, &AgentClient::logLines, this, [this](JobId id, const QStringList &lines) {
        if (id == m_followJob)
            emit followLines(lines);
    });
    connect(m_agent, &AgentClient::commandFinished, this,
            [this](JobId id, bool ok, const QString &error, const QString &) {
                onCommandFinished(id, ok, error);
            });
}

void HostConnection::refreshAgent() {
    if (m_agentDirty && !m_probeJob && !m_fetchJob && !m_followJob)
        createAgent();
}

HostConnection::~HostConnection() = default;

void HostConnection::setHost(const HostConfig &host) {
    if (host == m_host)
        return;
    m_host = host;
    // The agent client keeps the host's python and log source; a new one picks the new settings up
    // once nothing runs on the old one.
    m_agentDirty = true;
    refreshAgent();
}

Transport::State HostConnection::state() const {
    return m_transport ? m_transport->state() : Transport::State::Disconnected;
}

QString HostConnection::stateMessage() const {
    return m_transport ? m_transport->stateMessage() : QString();
}

void HostConnection::connectToHost() {
    m_transport->connectToHost();
}

void HostConnection::disconnectFromHost() {
    stopFollow();
    cancelFetch();
    m_transport->disconnectFromHost();
}

void HostConnection::answerHostKey(bool accept) {
    if (auto *ssh = qobject_cast<SshTransport *>(m_transport))
        ssh->answerHostKey(accept);
}

void HostConnection::provideSecret(const QStringList &answers, bool remember) {
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

void HostConnection::onSecretRequested(SshTransport::SecretKind kind, const QStringList &prompts,
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

void HostConnection::onKeyringRead(const QString &key, bool found, const QString &secret,
                                   const QString &error) {
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

void HostConnection::onTransportState(Transport::State s) {
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

void HostConnection::cancelSecret() {
    if (auto *ssh = qobject_cast<SshTransport *>(m_transport))
        ssh->cancelSecret();
}

void HostConnection::probe() {
    if (m_probeJob)
        return;
    if (state() == Transport::State::Disconnected || state() == Transport::State::Failed)
        connectToHost();
    refreshAgent();
    m_probeJob = m_agent->probe();
    emit probeStarted();
}

bool HostConnection::fetchLog(qint64 maxBytes, const QString &localFile, QString *error) {
    if (isFetching()) {
        *error = tr("A log is already being fetched from %1.").arg(m_host.alias);
        return false;
    }
    if (m_host.logSource.kind == LogSource::Kind::None) {
        *error = tr("%1 has no log source. Edit the host and give the server's log file (e.g. "
                    "/var/log/sglang.log) or a command that prints it (e.g. journalctl -u sglang -n 20000).")
                     .arg(m_host.alias);
        return false;
    }
    if (state() == Transport::State::Disconnected || state() == Transport::State::Failed)
        connectToHost();
    m_fetchFile = localFile;
    m_fetchError.clear();
    m_fetchPending = false;
    refreshAgent();
    m_fetchJob = m_agent->fetchLog(maxBytes, localFile);
    m_fetchWantsProbe = !m_probe;
    if (m_fetchWantsProbe)
        probe();
    return true;
}

void HostConnection::cancelFetch() {
    if (m_fetchJob)
        m_agent->cancel(m_fetchJob);
    m_fetchPending = false;
    m_fetchWantsProbe = false;
}

bool HostConnection::startFollow(QString *error) {
    if (m_followJob)
        return true;
    if (m_host.logSource.kind == LogSource::Kind::None) {
        *error = tr("%1 has no log source to follow. Edit the host and give the server's log file or a "
                    "command that prints it.")
                     .arg(m_host.alias);
        return false;
    }
    if (state() == Transport::State::Disconnected || state() == Transport::State::Failed)
        connectToHost();
    refreshAgent();
    m_followJob = m_agent->followLog();
    return true;
}

void HostConnection::stopFollow() {
    if (m_followJob)
        m_agent->cancel(m_followJob);
}

void HostConnection::onCommandFinished(JobId id, bool ok, const QString &error) {
    if (id == 0)
        return;
    if (id == m_probeJob) {
        m_probeJob = 0;
        if (ok && m_probe)
            emit probed(*m_probe);
        else
            emit probeFailed(error.isEmpty() ? tr("The probe of %1 returned no facts.").arg(m_host.alias)
                                             : error);
        maybeFinishFetch();
    } else if (id == m_fetchJob) {
        m_fetchJob = 0;
        if (!ok) {
            m_fetchPending = false;
            m_fetchWantsProbe = false;
            emit fetchFailed(error == u"Cancelled."_s ? tr("Fetching the log was cancelled.") : error);
            return;
        }
        m_fetchPending = true;
        maybeFinishFetch();
    } else if (id == m_followJob) {
        m_followJob = 0;
        emit followStopped(ok || error == u"Cancelled."_s ? QString() : error);
    }
}

void HostConnection::maybeFinishFetch() {
    if (!m_fetchPending || m_probeJob)
        return;
    m_fetchPending = false;
    m_fetchWantsProbe = false;
    // Without a probe the log is still worth diagnosing; the facts merged are then empty.
    HostProbe facts;
    if (m_probe)
        facts = *m_probe;
    else
        facts.hostName = m_host.alias;
    emit logFetched(m_fetchFile, facts);
}

} // namespace moetune
