// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/hosts/sshoptions.h"
#include "remote/transport/sshtransport.h"

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace moetune::test {

// A real OpenSSH sshd on 127.0.0.1 and a free port, run as a child process (never a system service),
// with host keys, a user key and authorized_keys generated into a temporary folder. Every process it
// starts is ended by stop() / the destructor.
class SshdFixture {
public:
    SshdFixture();
    ~SshdFixture();

    bool start(QString *error);                 // generates keys on first use
    bool restart(QString *error);               // same host key
    bool restartWithNewHostKey(QString *error); // simulates a reinstalled host
    void stop();
    void killSessions(); // kills the per-connection sshd processes; the listener stays (a dropped link)
    void killAll();      // kills the listener and every session (sshd crash)
    QList<qint64> sessionPids() const;
    void stopSessions(bool stop); // SIGSTOP/SIGCONT the session processes (a link that goes silent)

    qint64 pid() const { return m_sshd ? m_sshd->processId() : 0; } // the listener
    bool isRunning() const { return m_sshd && m_sshd->state() == QProcess::Running; }
    int port() const { return m_port; }
    QString dir() const { return m_dir->path(); }
    QString remoteHome() const { return dir() + QStringLiteral("/home"); } // $HOME of the test logins
    QString userKey() const;                         // authorised private key (ed25519, no passphrase)
    QString encryptedUserKey() const;                // authorised, passphrase "correct horse"
    QString wrongKey() const;                        // a key the server does not know
    QString knownHostsFile() const;                  // the client's known_hosts (starts empty)
    QString clientSshDir(bool withDefaultKey) const; // an ~/.ssh with or without id_ed25519
    QString userName() const;
    QString hostKeyFingerprint() const; // SHA256:... of the current host key
    QString hostPublicKeyFile() const;  // the current host key's .pub
    QString knownHostsName() const;     // "[127.0.0.1]:port", as known_hosts names this sshd

    // Options for the test sshd: no ssh config, the fixture's known_hosts, no agent unless asked.
    SshOptions options(bool withDefaultKey = true) const;
    // Records the current host key in knownHostsFile() (as if accepted earlier).
    bool trustHostKey(QString *error);
    // A transport over options, the host key trusted first, connected (nullptr with a warning when not).
    std::unique_ptr<SshTransport> connectedTransport(const SshOptions &options, int timeoutMs = 30000);

    // Lines appended to sshd_config from the next start()/restart() on (e.g. "HostCertificate ...").
    void setExtraConfig(const QString &lines) { m_extraConfig = lines; }
    QString hostKeyFile() const { return dir() + QStringLiteral("/keys/host_ed25519"); } // private host key

    static bool run(const QString &program, const QStringList &args, QString *error,
                    QByteArray *out = nullptr, const QByteArray &stdinData = {});

private:
    bool generateKeys(QString *error);
    bool writeConfig(QString *error);
    bool launch(QString *error);
    // Runs sshd on m_port and waits until it accepts; *started false when sshd could not be run at all.
    bool spawn(QString *error, bool *started);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QProcess> m_sshd;
    int m_port = 0;
    int m_hostKeyGeneration = 0;
    QString m_log;
    QString m_extraConfig;
};

} // namespace moetune::test
