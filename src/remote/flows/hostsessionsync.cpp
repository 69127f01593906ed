// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/hostsessionsync.h"

#include "remote/flows/waiter.h"

using namespace Qt::StringLiterals;

namespace moetune {

HostSessionSync::HostSessionSync(const HostConfig &host, Options options,
                                 HostSession::Environment environment)
    : m_options(std::move(options))
    , m_session(std::make_unique<HostSession>(host, std::move(environment))) {
    HostSession *s = m_session.get();
    QObject::connect(s, &HostSession::hostKeyUnknown, s, [this, s](const QString &type, const QString &fp) {
        m_keyType = type;
        m_fingerprint = fp;
        const bool accept = m_options.acceptNewHostKey ||
                            (!m_options.expectFingerprint.isEmpty() && m_options.expectFingerprint == fp);
        if (accept)
            m_acceptedFingerprint = fp;
        else
            m_refusedKey = true;
        s->answerHostKey(accept);
    });
    QObject::connect(
        s, &HostSession::secretRequested, s,
        [this, s](SshTransport::SecretKind kind, const QStringList &prompts, const QString &instruction) {
            QString why;
            const auto answers = m_options.askSecret ? m_options.askSecret(kind, prompts, instruction, &why)
                                                     : std::optional<QStringList>();
            if (!answers) {
                m_secretError = why.isEmpty() ? u"no answer was given."_s : why;
                s->cancelSecret();
                return;
            }
            s->provideSecret(*answers, false);
        });
}

HostSessionSync::~HostSessionSync() = default;

bool HostSessionSync::connect(QString *error, bool *hostKeyUnknown) {
    if (hostKeyUnknown)
        *hostKeyUnknown = false;
    const QString label = m_session->label();
    HostSession *s = m_session.get();
    s->connectToHost();
    const bool finished = waitUntil(
        [s] {
            const auto st = s->state();
            return st == Transport::State::Connected || st == Transport::State::Failed;
        },
        m_options.timeoutMs);
    if (s->state() == Transport::State::Connected) {
        if (s->environment().agentPath.isEmpty()) {
            *error =
                u"the agent file moetune-agent.pyz was not found beside moetune-cli or in the build tree. "
                u"Build the moetune_agent_pyz target, or set MOETUNE_AGENT_PYZ to its path."_s;
            return false;
        }
        return true;
    }
    if (m_refusedKey) {
        if (hostKeyUnknown)
            *hostKeyUnknown = true;
        QString keyFile = m_keyType;
        keyFile.remove(u"ssh-"_s);
        *error = u"the host key of %1 is not known yet: %2 key %3.\n"
                 u"Check it against the host's own (on %1: ssh-keygen -lf /etc/ssh/ssh_host_%4_key.pub), "
                 u"then trust it with:\n  %5 --fingerprint %3\n"
                 u"(or repeat the command with --accept-new-host-key)."_s.arg(
                     label, m_keyType, m_fingerprint, keyFile.isEmpty() ? u"ed25519"_s : keyFile.toLower(),
                     m_options.trustCommand.arg(s->host().alias));
        return false;
    }
    if (!m_secretError.isEmpty()) {
        *error = u"cannot log in to %1: %2"_s.arg(label, m_secretError);
        return false;
    }
    const QString why = s->stateMessage();
    if (!finished)
        *error = u"timed out after %1 s connecting to %2%3"_s.arg(m_options.timeoutMs / 1000)
                     .arg(label, why.isEmpty() ? QString() : u": "_s + why);
    else
        *error = why.isEmpty() ? u"could not connect to %1."_s.arg(label) : why;
    return false;
}

bool HostSessionSync::wait(JobId id, QString *error) {
    Waiter waiter;
    bool ok = false;
    QString failure;
    HostSession *s = m_session.get();
    const auto failed =
        QObject::connect(s, &HostSession::jobFailed, s, [&](JobId j, HostSession::Flow, const QString &e) {
            if (j == id)
                failure = e;
        });
    const auto finished =
        QObject::connect(s, &HostSession::jobFinished, s, [&](JobId j, HostSession::Flow, bool jobOk) {
            if (j != id)
                return;
            ok = jobOk;
            waiter.done();
        });
    const bool inTime = waiter.wait(m_options.timeoutMs);
    QObject::disconnect(failed);
    QObject::disconnect(finished);
    if (!inTime) {
        s->cancel(id);
        *error = u"timed out after %1 s waiting for %2."_s.arg(m_options.timeoutMs / 1000).arg(s->label());
        return false;
    }
    if (!ok)
        *error = failure;
    return ok;
}

std::optional<HostProbe> HostSessionSync::probe(QString *error) {
    std::optional<HostProbe> result;
    HostSession *s = m_session.get();
    const JobId id = s->probe();
    const auto c = QObject::connect(s, &HostSession::probed, s, [&result, id](JobId j, const HostProbe &p) {
        if (j == id)
            result = p;
    });
    const bool ok = wait(id, error);
    QObject::disconnect(c);
    if (!ok)
        return std::nullopt;
    return result;
}

bool HostSessionSync::fetchLog(qint64 maxBytes, const QString &localFile, QString *error) {
    const JobId id = m_session->fetchLog(maxBytes, localFile, error);
    return id && wait(id, error);
}

std::optional<Diagnosis> HostSessionSync::diagnoseHost(qint64 maxBytes, const QString &localFile,
                                                       const Diagnoser &diagnoser, QString *error,
                                                       QString *probeError) {
    HostSession *s = m_session.get();
    const JobId id = s->diagnoseHost(maxBytes, localFile, diagnoser, error);
    if (!id)
        return std::nullopt;
    std::optional<Diagnosis> result;
    const auto c =
        QObject::connect(s, &HostSession::hostDiagnosed, s, [&result, id](JobId j, const Diagnosis &d) {
            if (j == id)
                result = d;
        });
    const bool ok = wait(id, error);
    QObject::disconnect(c);
    if (probeError)
        *probeError = s->probeError(id);
    if (!ok)
        return std::nullopt;
    return result;
}

void HostSessionSync::disconnect() {
    m_session->disconnectFromHost();
}

} // namespace moetune
