// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/hosts/knownhosts.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune {

KnownHosts::KnownHosts(QStringList files, QStringList globalFiles)
    : m_files(std::move(files))
    , m_globalFiles(std::move(globalFiles)) {}

QStringList KnownHosts::defaultUserFiles() {
    const QString ssh = QDir::homePath() + u"/.ssh/"_s;
    return {ssh + u"known_hosts"_s, ssh + u"known_hosts2"_s};
}

QStringList KnownHosts::defaultGlobalFiles() {
    return {u"/etc/ssh/ssh_known_hosts"_s, u"/etc/ssh/ssh_known_hosts2"_s};
}

namespace {

// A big-endian SSH wire reader (RFC 4251 uint32/uint64/string), for KRL files.
struct Wire {
    QByteArrayView data;
    qsizetype pos = 0;
    bool ok = true;
    quint64 number(int bytes) {
        if (pos + bytes > data.size()) {
            ok = false;
            return 0;
        }
        quint64 v = 0;
        for (int i = 0; i < bytes; ++i)
            v = (v << 8) | quint8(data[pos + i]);
        pos += bytes;
        return v;
    }
    QByteArrayView string() {
        const quint64 n = number(4);
        if (!ok || n > quint64(data.size() - pos)) {
            ok = false;
            return {};
        }
        const QByteArrayView s = data.sliced(pos, qsizetype(n));
        pos += qsizetype(n);
        return s;
    }
    bool atEnd() const { return pos >= data.size(); }
};

// OpenSSH's KRL format (PROTOCOL.krl): sections of explicit keys and SHA1 / SHA256 key fingerprints are
// looked at; certificate sections cannot name a plain host key.
std::optional<bool> revokedByKrl(const QByteArray &krl, const QByteArray &blob) {
    Wire w{krl};
    w.pos = 8;   // "SSHKRL\n\0"
    w.number(4); // format version
    w.number(8); // krl version
    w.number(8); // generated date
    w.number(8); // flags
    w.string();  // reserved
    w.string();  // comment
    const QByteArray sha1 = QCryptographicHash::hash(blob, QCryptographicHash::Sha1);
    const QByteArray sha256 = QCryptographicHash::hash(blob, QCryptographicHash::Sha256);
    while (w.ok && !w.atEnd()) {
        const quint64 type = w.number(1);
        Wire section{w.string()};
        if (!w.ok)
            break;
        if (type == 4) // signature: the rest is its data
            break;
        if (type != 2 && type != 3 && type != 5)
            continue;
        while (section.ok && !section.atEnd()) {
            const QByteArrayView item = section.string();
            if (!section.ok)
                return std::nullopt;
            if ((type == 2 && item == blob) || (type == 3 && item == sha1) || (type == 5 && item == sha256))
                return true;
        }
    }
    if (!w.ok)
        return std::nullopt;
    return false;
}

} // namespace

std::optional<bool> KnownHosts::revokedByFile(const QString &file, const QByteArray &keyBlob,
                                              QString *error) {
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = u"cannot read the RevokedHostKeys file %1: %2"_s.arg(file, f.errorString());
        return std::nullopt;
    }
    const QByteArray data = f.read(64 << 20);
    if (data.startsWith(QByteArrayView("SSHKRL\n\0", 8))) {
        const auto r = revokedByKrl(data, keyBlob);
        if (!r)
            *error = u"the RevokedHostKeys file %1 is not a valid KRL"_s.arg(file);
        return r;
    }
    for (const QByteArray &raw : data.split('\n')) {
        const QList<QByteArray> fields = raw.simplified().split(' ');
        if (fields.size() < 2 || fields[0].startsWith('#'))
            continue;
        if (QByteArray::fromBase64(fields[1]) == keyBlob)
            return true;
    }
    return false;
}

QStringList KnownHosts::defaultFiles(const QString &userFile) {
    const QString ssh = QDir::homePath() + u"/.ssh/"_s;
    QStringList files = userFile.isEmpty() ? QStringList{ssh + u"known_hosts"_s, ssh + u"known_hosts2"_s}
                                           : QStringList{userFile};
    files << u"/etc/ssh/ssh_known_hosts"_s << u"/etc/ssh/ssh_known_hosts2"_s;
    return files;
}

HostKeyVerdict KnownHosts::check(const QString &host, int port, const QByteArray &keyBlob) const {
    HostKeyVerdict v;
    const QByteArray name = KnownHostsEntry::lookupName(host, port);
    const QByteArray type = KnownHostsEntry::blobKeyType(keyBlob);
    QList<HostKeyVerdict::Where> sameType, otherType, revoked;
    bool known = false;
    for (const QString &path : files()) {
        QFile f(path);
        if (!f.exists())
            continue;
        if (!f.open(QIODevice::ReadOnly)) {
            v.status = HostKeyVerdict::Status::Error;
            v.error = u"cannot read %1: %2"_s.arg(path, f.errorString());
            return v;
        }
        int lineNo = 0;
        while (!f.atEnd()) {
            const QByteArray text = f.readLine(1 << 20);
            ++lineNo;
            const auto e = KnownHostsEntry::parse(text);
            if (!e || !e->matches(name))
                continue; // malformed lines are skipped, as ssh does
            const HostKeyVerdict::Where at{path, lineNo};
            switch (e->marker) {
            case KnownHostsEntry::Marker::Revoked:
                if (e->key == keyBlob)
                    revoked.append(at);
                break;
            case KnownHostsEntry::Marker::CertAuthority:
                v.certAuthorities.append(at);
                v.caKeys.append(e->key);
                break;
            case KnownHostsEntry::Marker::None:
                if (e->key == keyBlob)
                    known = true;
                else if (e->keyType == type)
                    sameType.append(at);
                else
                    otherType.append(at);
                break;
            }
        }
    }
    // Revocation wins over any plain line for the same key (ssh refuses it too).
    if (!revoked.isEmpty()) {
        v.status = HostKeyVerdict::Status::Revoked;
        v.lines = revoked;
    } else if (known) {
        v.status = HostKeyVerdict::Status::Known;
    } else if (!sameType.isEmpty()) {
        v.status = HostKeyVerdict::Status::Changed;
        v.lines = sameType;
    } else if (!otherType.isEmpty()) {
        v.status = HostKeyVerdict::Status::OtherType;
        v.lines = otherType;
    }
    return v;
}

bool KnownHosts::revoked(const QString &host, int port, const QByteArray &keyBlob) const {
    const QByteArray name = KnownHostsEntry::lookupName(host, port);
    for (const QString &path : files()) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        while (!f.atEnd()) {
            const auto e = KnownHostsEntry::parse(f.readLine(1 << 20));
            if (e && e->marker == KnownHostsEntry::Marker::Revoked && e->key == keyBlob && e->matches(name))
                return true;
        }
    }
    return false;
}

bool KnownHosts::add(const QString &host, int port, const QByteArray &keyBlob, QString *error) const {
    if (m_files.isEmpty()) {
        *error = u"no known_hosts file to write (UserKnownHostsFile is none)"_s;
        return false;
    }
    const QString path = m_files.first();
    const QString dir = QFileInfo(path).absolutePath();
    if (!QFileInfo::exists(dir) && ::mkdir(QFile::encodeName(dir).constData(), 0700) != 0) {
        *error = u"cannot create %1: %2"_s.arg(dir, QString::fromLocal8Bit(strerror(errno)));
        return false;
    }
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        *error = u"cannot write %1: %2"_s.arg(path, QString::fromLocal8Bit(strerror(errno)));
        return false;
    }
    QByteArray line;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
        char last = '\n'; // O_RDWR: pread needs read access
        if (::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
            line += '\n'; // a last line without its newline must not swallow ours
    }
    line += KnownHostsEntry::lookupName(host, port) + ' ' + KnownHostsEntry::blobKeyType(keyBlob) + ' ' +
            keyBlob.toBase64() + '\n';
    const bool ok = ::write(fd, line.constData(), size_t(line.size())) == line.size();
    if (!ok)
        *error = u"cannot write %1: %2"_s.arg(path, QString::fromLocal8Bit(strerror(errno)));
    ::close(fd);
    return ok;
}

} // namespace moetune
