// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/hosts/sshoptions.h"
#include "remote/transport/transport.h"

#include <QAtomicInteger>
#include <QMutex>
#include <QThread>

#include <memory>

namespace moetune {

class SshSession;
struct SshJob;

// A host over SSH. The libssh session and all its channels live in one worker thread (SshSession);
// this object lives on the caller's (GUI) thread and talks to it through queued calls only, so no
// libssh call ever blocks the window.
//
// Connecting: host key checked against known_hosts. Unknown -> hostKeyUnknown(); nothing proceeds
// until answerHostKey(). Changed -> Failed with the explanation. Authentication in ssh's order: agent
// and default keys, the configured IdentityFile (secretRequested(Passphrase) when encrypted),
// keyboard-interactive (secretRequested(KeyboardInteractive) per round), password
// (secretRequested(Password)). Answer with provideSecret()/cancelSecret().
class SshTransport : public Transport {
    Q_OBJECT
public:
    enum class SecretKind { Passphrase, KeyboardInteractive, Password };
    Q_ENUM(SecretKind)

    explicit SshTransport(const SshOptions &options, QObject *parent = nullptr);
    ~SshTransport() override;

    QString hostLabel() const override;
    State state() const override { return m_state; }
    QString stateMessage() const override { return m_stateMessage; }
    const SshOptions &options() const { return m_options; }

    void connectToHost() override;
    void disconnectFromHost() override;
    JobId exec(const ExecRequest &request) override;
    JobId upload(const QString &localPath, const QString &remotePath) override;
    JobId download(const QString &remotePath, const QString &localPath) override;
    JobId replaceFile(const QString &localPath, const QString &remotePath) override;
    void cancel(JobId id) override;

    // Replies to the prompts below.
    void answerHostKey(bool accept); // accept: recorded in known_hosts
    // One answer per prompt; remember: keep a password in the desktop keyring (qtkeychain builds only).
    void provideSecret(const QStringList &answers, bool remember = false);
    void cancelSecret();

signals:
    void hostKeyUnknown(const QString &keyType, const QString &sha256Fingerprint);
    // prompts: the server's prompts (keyboard-interactive) or one text ("Passphrase for /path/key").
    void secretRequested(moetune::SshTransport::SecretKind kind, const QStringList &prompts,
                         const QString &instruction);

private:
    void onWorkerState(moetune::Transport::State state, const QString &message);
    JobId nextId();
    // Numbers the job and hands it to the session's thread.
    JobId submit(SshJob job);

    SshOptions m_options;
    QThread m_thread;
    SshSession *m_session = nullptr; // lives in m_thread, deleted there
    State m_state = State::Disconnected;
    QString m_stateMessage;
    QAtomicInteger<quint64> m_nextId{1};
    std::shared_ptr<QAtomicInt> m_undelivered = std::make_shared<QAtomicInt>(0);
};

} // namespace moetune
