// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/hosts/knownhostsentry.h"

#include <QList>
#include <QMessageAuthenticationCode>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Splits off the next whitespace-separated field; empty at the end.
QByteArrayView nextField(QByteArrayView &rest) {
    qsizetype i = 0;
    while (i < rest.size() && isSpace(rest[i]))
        ++i;
    qsizetype j = i;
    while (j < rest.size() && !isSpace(rest[j]))
        ++j;
    const QByteArrayView field = rest.sliced(i, j - i);
    rest = rest.sliced(j);
    return field;
}

void setError(QString *error, const QString &why) {
    if (error)
        *error = why;
}

} // namespace

std::optional<KnownHostsEntry> KnownHostsEntry::parse(QByteArrayView text, QString *error) {
    setError(error, {});
    QByteArrayView rest = text;
    QByteArrayView field = nextField(rest);
    if (field.isEmpty() || field.startsWith('#'))
        return std::nullopt;
    KnownHostsEntry e;
    if (field.startsWith('@')) {
        if (field == "@revoked")
            e.marker = Marker::Revoked;
        else if (field == "@cert-authority")
            e.marker = Marker::CertAuthority;
        else {
            setError(error, u"unknown marker %1"_s.arg(QString::fromUtf8(field)));
            return std::nullopt;
        }
        field = nextField(rest);
    }
    e.hosts = field.toByteArray();
    e.keyType = nextField(rest).toByteArray();
    const QByteArrayView b64 = nextField(rest);
    if (e.hosts.isEmpty() || e.keyType.isEmpty() || b64.isEmpty()) {
        setError(error, u"expected: [@marker] hosts keytype key"_s);
        return std::nullopt;
    }
    const auto decoded =
        QByteArray::fromBase64Encoding(b64.toByteArray(), QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.isEmpty()) {
        setError(error, u"the key is not valid base64"_s);
        return std::nullopt;
    }
    e.key = decoded.decoded;
    if (blobKeyType(e.key) != e.keyType) {
        setError(error, u"the key is not a %1 key"_s.arg(QString::fromUtf8(e.keyType)));
        return std::nullopt;
    }
    return e;
}

QByteArray KnownHostsEntry::lookupName(const QString &host, int port) {
    const QByteArray h = host.toLower().toUtf8();
    return port == 22 || port <= 0 ? h : "[" + h + "]:" + QByteArray::number(port);
}

bool KnownHostsEntry::globMatch(QByteArrayView text, QByteArrayView pattern) {
    // Iterative with one backtrack point: linear in practice, never exponential on "*a*a*a*b".
    qsizetype t = 0, p = 0, star = -1, mark = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') { // before the literal test: '*' is never literal
            star = p++;
            mark = t;
        } else if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++t;
            ++p;
        } else if (star >= 0) {
            p = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

bool KnownHostsEntry::matches(const QByteArray &lookupName) const {
    if (hosts.startsWith("|1|")) {
        const QList<QByteArray> parts = hosts.mid(3).split('|');
        if (parts.size() != 2)
            return false;
        const auto salt = QByteArray::fromBase64Encoding(parts[0], QByteArray::AbortOnBase64DecodingErrors);
        const auto hash = QByteArray::fromBase64Encoding(parts[1], QByteArray::AbortOnBase64DecodingErrors);
        if (!salt || !hash || hash.decoded.size() != 20)
            return false;
        return QMessageAuthenticationCode::hash(lookupName, salt.decoded, QCryptographicHash::Sha1) ==
               hash.decoded;
    }
    const QByteArray name = lookupName.toLower();
    bool positive = false;
    for (const QByteArray &raw : hosts.split(',')) {
        const bool negated = raw.startsWith('!');
        const QByteArray pattern = (negated ? raw.mid(1) : raw).toLower();
        if (pattern.isEmpty() || !globMatch(name, pattern))
            continue;
        if (negated)
            return false; // OpenSSH: a matching negation excludes the host from the whole line
        positive = true;
    }
    return positive;
}

QByteArray KnownHostsEntry::blobKeyType(const QByteArray &blob) {
    if (blob.size() < 4)
        return {};
    const auto *p = reinterpret_cast<const unsigned char *>(blob.constData());
    const quint32 n = (quint32(p[0]) << 24) | (quint32(p[1]) << 16) | (quint32(p[2]) << 8) | quint32(p[3]);
    if (n == 0 || n > quint32(blob.size() - 4))
        return {};
    return blob.mid(4, qsizetype(n));
}

} // namespace moetune
