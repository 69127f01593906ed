// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/hosts/knownhosts.h"
#include "remote/hosts/sshconfig.h"
#include "remote/hosts/sshoptions.h"
#include "remote/transport/sshtransport.h"
#include "remote/transport/transport.h"

#include <QAtomicInt>
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QHash>
#include <QList>
#include <QObject>
#include <QSaveFile>
#include <QTimer>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <memory>

class QSocketNotifier;

namespace moetune {

// A job as the worker sees it.
struct SshJob {
    enum class Kind { Exec, Upload, Download };
    Kind kind = Kind::Exec;
    JobId id = 0;
    ExecRequest exec;
    QString localPath;
    QString remotePath;
};

// Private to SshTransport: owns one libssh session, its channels and its SFTP session, and lives in
// the transport's worker thread. Every slot is called through a queued connection.
class SshSession : public QObject {
    Q_OBJECT
public:
    // undelivered: output batches emitted but not yet handled by the receiver (shared with SshTransport)
    SshSession(const SshOptions &options, std::shared_ptr<QAtomicInt> undelivered);
    ~SshSession() override;

    // Slots, called queued from SshTransport.
    void start();
    void stop();
    void submit(const moetune::SshJob &job);
    void cancelJob(moetune::JobId id);
    void hostKeyAnswer(bool accept);
    void secretAnswer(const QStringList &answers, bool cancelled);

signals:
    void stateChanged(moetune::Transport::State state, const QString &message);
    void hostKeyUnknown(const QString &keyType, const QString &fingerprint);
    void secretRequested(moetune::SshTransport::SecretKind kind, const QStringList &prompts,
                         const QString &instruction);
    void stdoutLines(moetune::JobId id, const QStringList &lines);
    void stderrLines(moetune::JobId id, const QStringList &lines);
    void stdoutData(moetune::JobId id, const QByteArray &data);
    void progress(moetune::JobId id, qint64 done, qint64 total);
    void finished(moetune::JobId id, const moetune::JobResult &result);

private:
    struct ExecState;
    struct TransferState;
    enum class AuthStep { None, PublicKeyAuto, IdentityFiles, KbdInteractive, Password, Done };

    void setState(Transport::State s, const QString &message = {});
    void connectNow();
    bool checkHostKey();
    KnownHosts knownHosts() const;
    void continueAuth();
    QStringList identityCandidates() const;
    void authenticated();
    void connectionLost(const QString &why);
    void teardown();
    void scheduleReconnect();

    void schedulePump();
    void pump();
    void startQueued();
    bool startExec(const SshJob &job);
    bool serviceExec(ExecState &e); // false when finished
    void finishExec(ExecState &e, const JobResult &r);
    void startTransfer(const SshJob &job);
    bool serviceTransfer(); // one slice of the active transfer; false when it ended
    void finishTransfer(JobResult r);
    void flushLines(ExecState &e, bool final);
    bool receiverBehind() const;
    static QStringList takeLines(QByteArray &buf, bool final);
    void terminateRemote(ExecState &e);
    void keepalive();

    // Short helper commands of a transfer (sha256sum, mv): blocking on this worker thread.
    bool runHelper(const QString &command, QByteArray *out, QString *error);
    bool ensureSftp(QString *error);
    QString sshError() const;
    QString sftpPath(const QString &path) const;
    QString hostLabel() const;

    SshOptions m_options;
    SshConfigValues m_config; // the ssh config as OpenSSH reads it for this host (SshConfig::resolve)
    ssh_session m_session = nullptr;
    sftp_session m_sftp = nullptr;
    ssh_counter_struct m_rx{};
    ssh_counter_struct m_tx{};
    Transport::State m_state = Transport::State::Disconnected;
    bool m_stopped = false;

    AuthStep m_authStep = AuthStep::None;
    int m_identityIndex = 0;
    QStringList m_identities;              // IdentityFile keys, or ssh's default keys when there is none
    bool m_autoTried = false;              // libssh's publickey_auto offered the agent and default keys
    QHash<QString, QString> m_passphrases; // memory only, for reconnects of this session
    QString m_password;
    QString m_khHost; // the host key's known_hosts name and port, and the key, while it is asked
    int m_khPort = 22;
    QByteArray m_hostKeyBlob;
    QString m_remoteHome; // $HOME of the remote user, for "~/" in SFTP paths
    bool m_passwordKnown = false;
    bool m_waitingSecret = false;
    QStringList m_triedMethods;

    QList<SshJob> m_queue;
    QList<std::shared_ptr<ExecState>> m_execs;
    std::unique_ptr<TransferState> m_transfer;
    std::shared_ptr<QAtomicInt> m_undelivered;
    bool m_pumpScheduled = false;
    QTimer m_safetyTimer; // catches data libssh buffered without the socket becoming readable
    QTimer m_keepaliveTimer;
    QTimer m_reconnectTimer;
    QSocketNotifier *m_notifier = nullptr;
    QElapsedTimer m_lastRx;
    quint64 m_lastRxPackets = 0;
    int m_reconnectAttempt = 0;
    bool m_everConnected = false;
};

} // namespace moetune
