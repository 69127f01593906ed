// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/transport/sshtransport.h"

#include "remote/transport/sshsession.h"

#ifdef MOETUNE_HAVE_LIBCRYPTO
#include <openssl/crypto.h>
#endif

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune {

SshTransport::SshTransport(const SshOptions &options, QObject *parent)
    : Transport(parent)
    , m_options(options) {
    qRegisterMetaType<moetune::JobResult>();
    qRegisterMetaType<moetune::SshJob>();
    qRegisterMetaType<moetune::SshTransport::SecretKind>(); // crosses the worker thread as the enum
    m_thread.setObjectName(u"ssh:"_s + options.host.alias);
    m_session = new SshSession(options, m_undelivered);
    m_session->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_session, &QObject::deleteLater);
#ifdef MOETUNE_HAVE_LIBCRYPTO
    // libssh's crypto (OpenSSL) keeps per-thread state that a thread destructor frees after the thread's
    // function returned, which is after QThread::wait() returns: a program that then exits ran
    // OPENSSL_cleanup() beside that destructor, and ASan caught the double free (moetune-cli trust-host,
    // once in a CI run). Freed here, on the thread, before wait() returns.
    connect(
        &m_thread, &QThread::finished, &m_thread, [] { OPENSSL_thread_stop(); }, Qt::DirectConnection);
#endif

    connect(m_session, &SshSession::stateChanged, this, &SshTransport::onWorkerState);
    connect(m_session, &SshSession::hostKeyUnknown, this, &SshTransport::hostKeyUnknown);
    connect(m_session, &SshSession::secretRequested, this, &SshTransport::secretRequested);
    // Each output batch is counted out by the worker and back in here once every receiver has seen it.
    connect(m_session, &SshSession::stdoutLines, this, [this](JobId id, const QStringList &lines) {
        emit stdoutLines(id, lines);
        m_undelivered->deref();
    });
    connect(m_session, &SshSession::stderrLines, this, [this](JobId id, const QStringList &lines) {
        emit stderrLines(id, lines);
        m_undelivered->deref();
    });
    connect(m_session, &SshSession::stdoutData, this, [this](JobId id, const QByteArray &data) {
        emit stdoutData(id, data);
        m_undelivered->deref();
    });
    connect(m_session, &SshSession::progress, this, &Transport::progress);
    connect(m_session, &SshSession::finished, this, &Transport::finished);
    // SSH work is background work: the worker runs at nice +5 so that, on a busy machine, the GUI thread
    // wins the CPU (Linux applies nice per thread).
    if (options.backgroundPriority) {
        connect(&m_thread, &QThread::started, m_session,
                [] { ::setpriority(PRIO_PROCESS, pid_t(::syscall(SYS_gettid)), 5); });
    }
    m_thread.start();
}

SshTransport::~SshTransport() {
    // The session is torn down on its own thread (libssh's one-thread rule), then the thread ends.
    QMetaObject::invokeMethod(m_session, &SshSession::stop, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

QString SshTransport::hostLabel() const {
    return m_options.host.alias.isEmpty() ? m_options.host.hostName : m_options.host.alias;
}

void SshTransport::onWorkerState(State state, const QString &message) {
    m_state = state;
    m_stateMessage = message;
    emit stateChanged(state, message);
}

JobId SshTransport::nextId() {
    return m_nextId.fetchAndAddRelaxed(1);
}

// The worker reports its state through queued signals, so state() lags a request by one event-loop turn.
// A request therefore sets the state it has asked for at once: two callers that each ensure a connection
// in the same turn start one (not a second handshake over the first), and a job submitted right after a
// disconnect request sees Disconnected and connects again (the worker runs stop, then start, then the job,
// in the order they were queued) instead of waiting on a session that is going away.
void SshTransport::connectToHost() {
    if (m_state == State::Disconnected || m_state == State::Failed)
        m_state = State::Connecting;
    QMetaObject::invokeMethod(m_session, &SshSession::start, Qt::QueuedConnection);
}

void SshTransport::disconnectFromHost() {
    m_state = State::Disconnected;
    QMetaObject::invokeMethod(m_session, &SshSession::stop, Qt::QueuedConnection);
}

JobId SshTransport::submit(SshJob job) {
    job.id = nextId();
    QMetaObject::invokeMethod(
        m_session, [s = m_session, job] { s->submit(job); }, Qt::QueuedConnection);
    return job.id;
}

JobId SshTransport::exec(const ExecRequest &request) {
    SshJob job;
    job.kind = SshJob::Kind::Exec;
    job.exec = request;
    return submit(job);
}

JobId SshTransport::upload(const QString &localPath, const QString &remotePath) {
    SshJob job;
    job.kind = SshJob::Kind::Upload;
    job.localPath = localPath;
    job.remotePath = remotePath;
    return submit(job);
}

JobId SshTransport::download(const QString &remotePath, const QString &localPath) {
    SshJob job;
    job.kind = SshJob::Kind::Download;
    job.localPath = localPath;
    job.remotePath = remotePath;
    return submit(job);
}

JobId SshTransport::replaceFile(const QString &localPath, const QString &remotePath) {
    // An upload already goes through "<file>.part", a checksum and `mv -f`: it is the atomic replace.
    return upload(localPath, remotePath);
}

void SshTransport::cancel(JobId id) {
    QMetaObject::invokeMethod(
        m_session, [s = m_session, id] { s->cancelJob(id); }, Qt::QueuedConnection);
}

void SshTransport::answerHostKey(bool accept) {
    QMetaObject::invokeMethod(
        m_session, [s = m_session, accept] { s->hostKeyAnswer(accept); }, Qt::QueuedConnection);
}

void SshTransport::provideSecret(const QStringList &answers, bool remember) {
    Q_UNUSED(remember) // stored by the caller through CredentialStore when it can; never written here
    QMetaObject::invokeMethod(
        m_session, [s = m_session, answers] { s->secretAnswer(answers, false); }, Qt::QueuedConnection);
}

void SshTransport::cancelSecret() {
    QMetaObject::invokeMethod(
        m_session, [s = m_session] { s->secretAnswer({}, true); }, Qt::QueuedConnection);
}

} // namespace moetune
