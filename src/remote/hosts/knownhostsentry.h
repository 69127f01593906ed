// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <optional>

namespace moetune {

// One line of an OpenSSH known_hosts file: "[@marker] hosts keytype base64 [comment]". hosts is a comma
// list of patterns ("gpu-*", "!gpu-9", "[10.0.0.7]:2222") or one hashed name ("|1|salt|hmac").
struct KnownHostsEntry {
    enum class Marker { None, Revoked, CertAuthority };

    Marker marker = Marker::None;
    QByteArray hosts;   // the host field as written
    QByteArray keyType; // "ssh-ed25519", "ecdsa-sha2-nistp256", ...
    QByteArray key;     // the decoded key blob (its own type string first)
    int line = 0;       // 1-based, set by the reader

    // nullopt for a blank or comment line (error stays empty) and for a malformed one (error says why).
    static std::optional<KnownHostsEntry> parse(QByteArrayView text, QString *error = nullptr);

    // Whether the host field names lookupName (knownHostsName(): "host" or "[host]:port"): a hashed name
    // by HMAC-SHA1, patterns with * and ? case-insensitively; a matching !pattern excludes the host.
    bool matches(const QByteArray &lookupName) const;

    // "host" for port 22, "[host]:port" otherwise, lower case: the name OpenSSH looks up and writes.
    static QByteArray lookupName(const QString &host, int port);
    // The type string a key blob starts with (uint32 length, then the name), or empty when malformed.
    static QByteArray blobKeyType(const QByteArray &blob);
    // OpenSSH's glob: '*' any run of characters, '?' one character (the caller folds case).
    static bool globMatch(QByteArrayView text, QByteArrayView pattern);
};

} // namespace moetune
