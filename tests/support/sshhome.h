// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>

namespace moetune::test {

// A user's ~/.ssh as people have it: a config with comments, Host * defaults and Include, a
// known_hosts with plain, hashed and @marker lines, and a default key. Files live under root/.ssh.
class SshHome {
public:
    explicit SshHome(QString root);

    QString home() const { return m_root; }
    QString sshDir() const { return m_root + QStringLiteral("/.ssh"); }
    QString configPath() const { return sshDir() + QStringLiteral("/config"); }
    QString knownHostsPath() const { return sshDir() + QStringLiteral("/known_hosts"); }

    bool writeConfig(const QByteArray &text) const;
    bool writeInclude(const QString &name, const QByteArray &text) const; // ~/.ssh/config.d/<name>
    bool writeKnownHosts(const QByteArray &text) const;
    QByteArray knownHosts() const;
    // Copies privateKey (and its .pub) to ~/.ssh/<name>, mode 0600.
    bool installKey(const QString &privateKey, const QString &name = QStringLiteral("id_ed25519")) const;
    // `ssh-keygen -H`: every name in known_hosts replaced by its |1|salt|hash form, as HashKnownHosts does.
    bool hashKnownHosts(QString *error) const;

    // "keytype base64" of a .pub file (its comment dropped): the key part of a known_hosts line.
    static QByteArray publicKey(const QString &pubFile);

private:
    QString m_root;
};

} // namespace moetune::test
