// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/hosts/knownhostsentry.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// The verdict on a host key, decided by moetune itself from the known_hosts files (never by libssh's
// check, which StrictHostKeyChecking in ~/.ssh/config can turn into "OK" for a changed key).
struct HostKeyVerdict {
    enum class Status {
        Known,     // a plain line for this host holds exactly this key
        Unknown,   // no line for this host: ask the user
        Changed,   // lines for this host hold another key of the same type: refuse
        OtherType, // lines for this host hold keys of other types only: refuse (as before)
        Revoked,   // an @revoked line for this host holds this key: refuse, whatever else is listed
        Error,     // a known_hosts file exists but cannot be read
    };
    struct Where {
        QString file;
        int line = 0;
    };
    Status status = Status::Unknown;
    QList<Where> lines;           // the lines behind the verdict (Changed, OtherType, Revoked)
    QList<Where> certAuthorities; // @cert-authority lines for this host
    QList<QByteArray> caKeys;     // their keys
    QString error;                // Error: which file and why
};

// OpenSSH's known_hosts files, read the way ssh reads them: plain and hashed (|1|salt|hash) names,
// "[host]:port", comma lists, * and ? patterns, !negations, @revoked and @cert-authority markers.
class KnownHosts {
public:
    // files: the user's file(s) (UserKnownHostsFile; the first one is written by add()); globalFiles:
    // GlobalKnownHostsFile, read only.
    explicit KnownHosts(QStringList files, QStringList globalFiles = {});

    HostKeyVerdict check(const QString &host, int port, const QByteArray &keyBlob) const;
    // Whether key (a plain key, or a CA key) has an @revoked line for this host.
    bool revoked(const QString &host, int port, const QByteArray &keyBlob) const;
    // Appends "name keytype base64" to the first file (creating it and its folder, mode 0600 / 0700).
    bool add(const QString &host, int port, const QByteArray &keyBlob, QString *error) const;

    QStringList files() const { return m_files + m_globalFiles; }
    QString writeFile() const { return m_files.value(0); } // "" when UserKnownHostsFile is none
    // The files ssh reads by default: ~/.ssh/known_hosts{,2} (or userFile), /etc/ssh/ssh_known_hosts{,2}.
    static QStringList defaultFiles(const QString &userFile = {});
    static QStringList defaultUserFiles();   // ~/.ssh/known_hosts, ~/.ssh/known_hosts2
    static QStringList defaultGlobalFiles(); // /etc/ssh/ssh_known_hosts, /etc/ssh/ssh_known_hosts2

    // RevokedHostKeys: whether file (a list of public keys, or a binary KRL of ssh-keygen -k) revokes
    // the key; nullopt with *error when the file cannot be read or understood (ssh refuses then too).
    static std::optional<bool> revokedByFile(const QString &file, const QByteArray &keyBlob, QString *error);

private:
    QStringList m_files;
    QStringList m_globalFiles;
};

} // namespace moetune
