// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/transport/sshsession.h"

#include "core/util/shellquote.h"
#include "remote/hosts/hoststore.h"
#include "remote/transport/sshsessionjobs.h"

#include <QDir>
#include <QFileInfo>
#include <QSocketNotifier>

#include <libssh/server.h>
// ssh_send_keepalive (a plain global request; the client may send it too)

using namespace Qt::StringLiterals;
using namespace moetune::sshdetail;

namespace moetune {

SshSession::SshSession(const SshOptions &options, std::shared_ptr<QAtomicInt> undelivered)
    : m_options(options)
    , m_undelivered(std::move(undelivered)) {
    // parented so that moveToThread() takes the timers along to the worker thread
    m_safetyTimer.setParent(this);
    m_keepaliveTimer.setParent(this);
    m_reconnectTimer.setParent(this);
    m_safetyTimer.setInterval(10);
    connect(&m_safetyTimer, &QTimer::timeout, this, &SshSession::pump);
    m_keepaliveTimer.setInterval(1000);
    connect(&m_keepaliveTimer, &QTimer::timeout, this, &SshSession::keepalive);
    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, &SshSession::connectNow);
}

SshSession::~SshSession() {
    teardown();
}

QString SshSession::hostLabel() const {
    return m_options.host.alias.isEmpty() ? m_options.host.hostName : m_options.host.alias;
}

QString SshSession::sshError() const {
    return m_session ? QString::fromUtf8(ssh_get_error(m_session)) : QString();
}

QString SshSession::sftpPath(const QString &path) const {
    // "~" is the shell's $HOME (what exec commands see); sftp-server's own start folder is only the fallback
    if (path == u"~")
        return m_remoteHome.isEmpty() ? u"."_s : m_remoteHome;
    if (path.startsWith(u"~/"))
        return m_remoteHome.isEmpty() ? path.mid(2) : m_remoteHome + path.mid(1);
    return path;
}

void SshSession::setState(Transport::State s, const QString &message) {
    m_state = s;
    emit stateChanged(s, message);
    if (s == Transport::State::Failed) {
        // Nothing will run them: jobs still queued fail with the reason instead of waiting forever
        // (after the state, so that a receiver sees Failed when their results arrive).
        const QList<SshJob> queued = std::exchange(m_queue, {});
        for (const SshJob &j : queued) {
            JobResult r;
            r.error = u"The job never ran: %1"_s.arg(message);
            r.connectionLost = m_everConnected;
            emit finished(j.id, r);
        }
    }
}

void SshSession::start() {
    m_stopped = false;
    m_reconnectAttempt = 0;
    m_everConnected = false;
    connectNow();
}

void SshSession::stop() {
    m_stopped = true;
    m_reconnectTimer.stop();
    for (const auto &e : m_execs) {
        JobResult r;
        r.error = u"Disconnected from %1 by request."_s.arg(hostLabel());
        r.cancelled = true;
        finishExec(*e, r);
    }
    if (m_transfer) {
        JobResult r;
        r.error = u"Disconnected from %1 by request."_s.arg(hostLabel());
        r.cancelled = true;
        finishTransfer(r);
    }
    const QList<SshJob> queued = std::exchange(m_queue, {});
    for (const SshJob &j : queued) {
        JobResult r;
        r.error = u"Disconnected from %1 before the job ran."_s.arg(hostLabel());
        r.cancelled = true;
        emit finished(j.id, r);
    }
    teardown();
    setState(Transport::State::Disconnected, u"Disconnected from %1."_s.arg(hostLabel()));
}

void SshSession::teardown() {
    m_keepaliveTimer.stop();
    m_safetyTimer.stop();
    delete m_notifier;
    m_notifier = nullptr;
    for (const auto &e : m_execs) {
        e->channel.reset(); // before ssh_free(), which frees the session's channels itself
    }
    m_execs.clear();
    if (m_transfer) {
        if (m_transfer->remote)
            sftp_close(m_transfer->remote);
        m_transfer->remote = nullptr;
        m_transfer->upChannel.reset();
        m_transfer->sumChannel.reset();
    }
    if (m_sftp) {
        sftp_free(m_sftp);
        m_sftp = nullptr;
    }
    if (m_session) {
        ssh_disconnect(m_session);
        ssh_free(m_session);
        m_session = nullptr;
    }
    m_authStep = AuthStep::None;
    m_waitingSecret = false;
}

void SshSession::connectNow() {
    if (m_stopped)
        return;
    teardown();
    const HostConfig &h = m_options.host;
    setState(m_everConnected ? Transport::State::Reconnecting : Transport::State::Connecting,
             u"Connecting to %1…"_s.arg(h.displayName()));
    m_session = ssh_new();
    // The ssh config is read here as OpenSSH reads it (SshConfig), never by libssh: libssh 0.10 applies a
    // Host block that excludes this host with a !pattern, and knows neither Match originalhost nor
    // several UserKnownHostsFile entries. libssh gets the resolved values only.
    m_config = {};
    if (m_options.sshConfigFile != u"none") {
        const QString userConfig = m_options.sshConfigFile.isEmpty() ? HostStore::defaultSshConfigPath()
                                                                     : expandHome(m_options.sshConfigFile);
        QString why;
        m_config =
            SshConfig::resolve(h.sshName(), HostStore::sshConfigFiles(userConfig), &why, h.port, h.user);
        if (!why.isEmpty()) {
            teardown();
            setState(Transport::State::Failed,
                     u"Cannot read the ssh config for %1: %2"_s.arg(hostLabel(), why));
            return;
        }
    }
    const int no = 0;
    ssh_options_set(m_session, SSH_OPTIONS_PROCESS_CONFIG, &no);
    // What the app knows explicitly wins over the config file (as on ssh's command line).
    const QString target = !h.hostName.isEmpty()          ? h.hostName
                           : !m_config.hostName.isEmpty() ? m_config.hostName
                                                          : h.sshName();
    const QByteArray hostBytes = target.toUtf8();
    ssh_options_set(m_session, SSH_OPTIONS_HOST, hostBytes.constData());
    if (!m_options.sshDir.isEmpty()) {
        const QByteArray dir = QFile::encodeName(m_options.sshDir);
        ssh_options_set(m_session, SSH_OPTIONS_SSH_DIR, dir.constData());
    }
    {
        // libssh orders the host key algorithms by what these files hold; the verdict is checkHostKey()'s
        const KnownHosts kh = knownHosts();
        const QByteArray user = QFile::encodeName(kh.writeFile().isEmpty() ? u"/dev/null"_s : kh.writeFile());
        ssh_options_set(m_session, SSH_OPTIONS_KNOWNHOSTS, user.constData());
        ssh_options_set(m_session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
    }
    const QString user = !h.user.isEmpty() ? h.user : m_config.user;
    if (!user.isEmpty()) {
        const QByteArray u = user.toUtf8();
        ssh_options_set(m_session, SSH_OPTIONS_USER, u.constData());
    }
    const int portNumber = h.port > 0 ? h.port : m_config.port;
    if (portNumber > 0) {
        const unsigned int port = unsigned(portNumber);
        ssh_options_set(m_session, SSH_OPTIONS_PORT, &port);
    }
    const QString jump = !h.proxyJump.isEmpty() ? h.proxyJump : m_config.proxyJump;
    if (!jump.isEmpty() && jump != u"none") {
        const QByteArray pc = (u"ssh -J "_s + shellQuote(jump) + u" -W [%h]:%p"_s).toUtf8();
        ssh_options_set(m_session, SSH_OPTIONS_PROXYCOMMAND, pc.constData());
    } else if (jump.isEmpty() && !m_config.proxyCommand.isEmpty() && m_config.proxyCommand != u"none") {
        const QByteArray pc = m_config.proxyCommand.toUtf8();
        ssh_options_set(m_session, SSH_OPTIONS_PROXYCOMMAND, pc.constData());
    }
    // Algorithm lists of the config, as libssh understands them (a list it rejects leaves its default).
    for (const auto &[value, option] :
         {std::pair{m_config.hostKeyAlgorithms, SSH_OPTIONS_HOSTKEYS},
          std::pair{m_config.kexAlgorithms, SSH_OPTIONS_KEY_EXCHANGE},
          std::pair{m_config.pubkeyAcceptedAlgorithms, SSH_OPTIONS_PUBLICKEY_ACCEPTED_TYPES}}) {
        if (!value.isEmpty()) {
            const QByteArray v = value.toUtf8();
            ssh_options_set(m_session, option, v.constData());
        }
    }
    const long timeoutUsec =
        long(m_config.connectTimeoutS > 0 ? m_config.connectTimeoutS * 1000 : m_options.connectTimeoutMs) *
        1000;
    ssh_options_set(m_session, SSH_OPTIONS_TIMEOUT_USEC, &timeoutUsec);
    // SFTP is request/response: without TCP_NODELAY each small request waits out Nagle + delayed ACK (~40 ms)
    const int nodelay = 1;
    ssh_options_set(m_session, SSH_OPTIONS_NODELAY, &nodelay);
    // AES-GCM first: OpenSSL runs it on AES-NI, several times faster than libssh's own chacha20-poly1305
    // (the set stays within OpenSSH's defaults; a Ciphers line of the ssh config is not applied).
    static const char kCiphers[] =
        "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,"
        "aes128-ctr,aes192-ctr,aes256-ctr";
    ssh_options_set(m_session, SSH_OPTIONS_CIPHERS_C_S, kCiphers);
    ssh_options_set(m_session, SSH_OPTIONS_CIPHERS_S_C, kCiphers);
    m_rx = {};
    m_tx = {};
    ssh_set_counters(m_session, &m_tx, &m_rx);

    if (ssh_connect(m_session) != SSH_OK) {
        const QString why = sshError();
        teardown();
        if (m_everConnected) {
            scheduleReconnect();
            return;
        }
        setState(Transport::State::Failed, u"Cannot connect to %1: %2"_s.arg(h.displayName(), why));
        return;
    }
    if (checkHostKey())
        continueAuth();
}

void SshSession::authenticated() {
    m_authStep = AuthStep::Done;
    QByteArray home;
    QString homeError;
    if (runHelper(u"printf '%s' \"$HOME\""_s, &home, &homeError))
        m_remoteHome = QString::fromUtf8(home);
    m_everConnected = true;
    m_reconnectAttempt = 0;
    m_lastRx.start();
    m_lastRxPackets = m_rx.in_packets;
    m_notifier = new QSocketNotifier(qintptr(ssh_get_fd(m_session)), QSocketNotifier::Read, this);
    m_notifier->setEnabled(false);
    connect(m_notifier, &QSocketNotifier::activated, this, &SshSession::pump);
    m_keepaliveTimer.start();
    setState(Transport::State::Connected, u"Connected to %1."_s.arg(m_options.host.displayName()));
    startQueued();
    schedulePump();
}

void SshSession::connectionLost(const QString &why) {
    const QString message =
        u"Connection to %1 lost: %2"_s.arg(hostLabel(), why.isEmpty() ? u"closed"_s : why);
    for (const auto &e : std::as_const(m_execs)) {
        JobResult r;
        r.error = message + u" The command may or may not have finished on the host; it is not re-run."_s;
        r.connectionLost = true;
        r.bytes = e->bytes;
        finishExec(*e, r);
    }
    if (m_transfer) {
        JobResult r;
        r.error = message + u" The transfer was abandoned; nothing was written at the target."_s;
        r.connectionLost = true;
        finishTransfer(r);
    }
    teardown();
    if (!m_everConnected || m_stopped) {
        setState(Transport::State::Failed, message);
        return;
    }
    setState(Transport::State::Reconnecting, message);
    scheduleReconnect();
}

void SshSession::scheduleReconnect() {
    if (m_stopped)
        return;
    if (m_reconnectAttempt >= m_options.maxReconnectAttempts) {
        const QList<SshJob> queued = std::exchange(m_queue, {});
        for (const SshJob &j : queued) {
            JobResult r;
            r.error = u"%1 stayed unreachable; the job never ran."_s.arg(hostLabel());
            r.connectionLost = true;
            emit finished(j.id, r);
        }
        setState(Transport::State::Failed,
                 u"Gave up reconnecting to %1 after %2 attempts. Check the host and connect again."_s
                     .arg(hostLabel())
                     .arg(m_reconnectAttempt));
        return;
    }
    const int delay = qMin(30000, m_options.initialBackoffMs << qMin(m_reconnectAttempt, 10));
    ++m_reconnectAttempt;
    setState(Transport::State::Reconnecting,
             u"Lost the connection to %1; retrying in %2 s (attempt %3 of %4). %5 queued job(s) wait."_s
                 .arg(hostLabel())
                 .arg(delay / 1000.0)
                 .arg(m_reconnectAttempt)
                 .arg(m_options.maxReconnectAttempts)
                 .arg(m_queue.size()));
    m_reconnectTimer.start(delay);
}

void SshSession::keepalive() {
    if (m_state != Transport::State::Connected || !m_session)
        return;
    if (m_rx.in_packets != m_lastRxPackets) {
        m_lastRxPackets = m_rx.in_packets;
        m_lastRx.restart();
    }
    if (!ssh_is_connected(m_session) || (ssh_get_status(m_session) & (SSH_CLOSED | SSH_CLOSED_ERROR)))
        return connectionLost(sshError());
    if (m_lastRx.elapsed() > m_options.deadAfterMs)
        return connectionLost(u"no answer for %1 s"_s.arg(m_lastRx.elapsed() / 1000));
    if (m_lastRx.elapsed() >= m_options.keepaliveIntervalMs) {
        // Non-blocking: sends the request (or collects the previous reply); never waits.
        ssh_set_blocking(m_session, 0);
        ssh_send_keepalive(m_session);
        ssh_set_blocking(m_session, 1);
        if (!ssh_is_connected(m_session))
            return connectionLost(sshError());
    }
}

void SshSession::submit(const SshJob &job) {
    m_queue.append(job);
    if (m_state == Transport::State::Connected) {
        startQueued();
        schedulePump();
    }
}

void SshSession::cancelJob(JobId id) {
    for (qsizetype i = 0; i < m_queue.size(); ++i) {
        if (m_queue[i].id == id) {
            m_queue.removeAt(i);
            JobResult r;
            r.cancelled = true;
            r.error = u"Cancelled before it started."_s;
            emit finished(id, r);
            return;
        }
    }
    for (const auto &e : std::as_const(m_execs)) {
        if (e->job.id == id) {
            // TERM the remote command (OpenSSH honours the "signal" request), then close the channel
            terminateRemote(*e);
            JobResult r;
            r.cancelled = true;
            r.error = u"Cancelled."_s;
            r.bytes = e->bytes;
            finishExec(*e, r);
            m_execs.removeOne(e);
            return;
        }
    }
    if (m_transfer && m_transfer->job.id == id) {
        m_transfer->cancelled = true;
        schedulePump();
    }
}

void SshSession::schedulePump() {
    if (m_pumpScheduled)
        return;
    m_pumpScheduled = true;
    QMetaObject::invokeMethod(this, &SshSession::pump, Qt::QueuedConnection);
}

void SshSession::startQueued() {
    if (m_state != Transport::State::Connected)
        return;
    for (qsizetype i = 0; i < m_queue.size();) {
        const SshJob job = m_queue[i];
        if (job.kind == SshJob::Kind::Exec) {
            if (m_execs.size() >= kMaxExecChannels) {
                ++i;
                continue;
            }
            m_queue.removeAt(i);
            if (!startExec(job)) {
                if (m_state != Transport::State::Connected)
                    return;
            }
            continue;
        }
        if (m_transfer) {
            ++i;
            continue;
        }
        m_queue.removeAt(i);
        startTransfer(job);
        if (m_state != Transport::State::Connected)
            return;
    }
}

void SshSession::pump() {
    m_pumpScheduled = false;
    if (m_state != Transport::State::Connected || !m_session)
        return;
    QElapsedTimer slice;
    slice.start();
    do {
        const auto execs = m_execs;
        for (const auto &e : execs) {
            if (!m_execs.contains(e))
                continue;
            if (!serviceExec(*e)) {
                m_execs.removeOne(e);
            }
            if (m_state != Transport::State::Connected)
                return;
        }
        if (m_transfer && !serviceTransfer()) {
            if (m_state != Transport::State::Connected)
                return;
        }
    } while (m_transfer && slice.elapsed() < kSliceMs);
    startQueued();
    if (m_state != Transport::State::Connected)
        return;
    if (m_execs.isEmpty())
        m_safetyTimer.stop();
    // throttled: unread data keeps the socket readable, so only the timer may wake the pump
    if (m_notifier)
        m_notifier->setEnabled(!m_execs.isEmpty() && !receiverBehind());
    if (m_transfer)
        schedulePump();
}

} // namespace moetune
