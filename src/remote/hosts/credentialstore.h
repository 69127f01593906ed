// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>
#include <QString>

namespace moetune {

struct HostConfig;

// Secrets in the desktop keyring through QtKeychain (service "moetune", no plain-text fallback), built only
// with MOETUNE_HAVE_KEYCHAIN. Every call is asynchronous and answers with one signal carrying its key.
class CredentialStore : public QObject {
    Q_OBJECT
public:
    explicit CredentialStore(QObject *parent = nullptr);

    // "ssh:<user>@<host>:<port>"; purpose != "" gives a separate entry (e.g. a key's passphrase).
    static QString keyFor(const HostConfig &host, const QString &purpose = QString());

    void read(const QString &key);
    void write(const QString &key, const QString &secret);
    void remove(const QString &key);

signals:
    // found is false for no entry (error empty) and for a keyring that could not be used (error set).
    void readFinished(const QString &key, bool found, const QString &secret, const QString &error);
    void writeFinished(const QString &key, const QString &error);
    void removeFinished(const QString &key, const QString &error);
};

} // namespace moetune
