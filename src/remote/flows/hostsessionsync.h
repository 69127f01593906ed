// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "remote/flows/hostsession.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

namespace moetune {

// A HostSession driven synchronously, for the CLI (and tests): every call waits (Waiter, waiter.h) until
// its job finishes or the timeout (never use it on a GUI thread). Non-interactive by default: an unknown
// host key is refused unless acceptNewHostKey (or it has the fingerprint expectFingerprint); a secret is
// asked through askSecret, or the login fails with a sentence saying what to do instead.
class HostSessionSync {
public:
    // The answers to prompts, or nullopt with *why (e.g. "there is no terminal to ask it on").
    using SecretPrompt = std::function<std::optional<QStringList>(
        SshTransport::SecretKind kind, const QStringList &prompts, const QString &instruction, QString *why)>;
    struct Options {
        bool acceptNewHostKey = false;
        QString expectFingerprint; // accept an unknown key only when it has this SHA256 fingerprint
        int timeoutMs = 120000;
        SecretPrompt askSecret;
        // What the user runs to trust an unknown key, named in the refusal ("%1" = the host spec).
        QString trustCommand = QStringLiteral("moetune-cli trust-host %1");
    };

    HostSessionSync(const HostConfig &host, Options options,
                    HostSession::Environment environment = HostSession::userEnvironment());
    ~HostSessionSync();

    HostSession *session() const { return m_session.get(); }
    const HostConfig &host() const { return m_session->host(); }

    // Connected, or an error sentence. *hostKeyUnknown is set when the refusal was an unknown key
    // (the message then holds the fingerprint and the command that trusts it).
    bool connect(QString *error, bool *hostKeyUnknown = nullptr);
    QString acceptedFingerprint() const { return m_acceptedFingerprint; }
    QString seenKeyType() const { return m_keyType; }
    QString seenFingerprint() const { return m_fingerprint; }

    std::optional<HostProbe> probe(QString *error);
    bool fetchLog(qint64 maxBytes, const QString &localFile, QString *error);
    // *probeError says why the diagnosis has no host facts when the probe failed (not fatal).
    std::optional<Diagnosis> diagnoseHost(qint64 maxBytes, const QString &localFile,
                                          const Diagnoser &diagnoser, QString *error,
                                          QString *probeError = nullptr);
    void disconnect();

    // Waits for jobFinished(id) of one of the session's jobs; false with *error (jobFailed's sentence, or
    // the timeout, which cancels the job). The flows over HostCalls are waited on through their callback
    // (cli/flowhost.h), not here.
    bool wait(JobId id, QString *error);

private:
    Options m_options;
    std::unique_ptr<HostSession> m_session;
    QString m_keyType;
    QString m_fingerprint;
    QString m_acceptedFingerprint;
    bool m_refusedKey = false;
    QString m_secretError;
};

} // namespace moetune
