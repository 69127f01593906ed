// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// SshSession: uploads through an exec channel, downloads over SFTP, both checked by the host's sha256sum.
#include "core/util/shellquote.h"
#include "remote/transport/sshsessionjobs.h"

#include <fcntl.h>

using namespace Qt::StringLiterals;
using namespace moetune::sshdetail;

namespace moetune {

bool SshSession::ensureSftp(QString *error) {
    if (m_sftp)
        return true;
    m_sftp = sftp_new(m_session);
    if (!m_sftp || sftp_init(m_sftp) != SSH_OK) {
        *error = u"Cannot start SFTP on %1: %2 (is the sftp subsystem enabled in sshd_config?)"_s.arg(
            hostLabel(), sshError());
        if (m_sftp)
            sftp_free(m_sftp);
        m_sftp = nullptr;
        return false;
    }
    return true;
}

void SshSession::startTransfer(const SshJob &job) {
    m_transfer = std::make_unique<TransferState>();
    TransferState &t = *m_transfer;
    t.job = job;
    t.lastProgress.start();
    QString error;
    if (!ensureSftp(&error))
        return finishTransfer(failure(error));
    const QString remote = sftpPath(job.remotePath);
    if (job.kind == SshJob::Kind::Upload) {
        t.local.setFileName(job.localPath);
        if (!t.local.open(QIODevice::ReadOnly))
            return finishTransfer(failure(u"Cannot read %1: %2"_s.arg(job.localPath, t.local.errorString())));
        t.total = t.local.size();
        t.partPath = job.remotePath + u".part"_s;
        // Uploads stream through an exec channel: libssh 0.10 has no asynchronous SFTP write, and one
        // synchronous SSH_FXP_WRITE round trip per chunk capped uploads far below scp.
        // the host hashes what it received while it writes it: no second pass over the file
        const QByteArray cmd = (u"umask 022 && { tee -- "_s + shellQuotePath(t.partPath) +
                                u" || echo moetune-write-failed >&2; } | sha256sum"_s)
                                   .toUtf8();
        t.upChannel = SshChannel::exec(m_session, cmd);
        if (!t.upChannel) {
            if (!ssh_is_connected(m_session))
                return connectionLost(sshError());
            return finishTransfer(
                failure(u"Cannot write %1 on %2: %3"_s.arg(t.partPath, hostLabel(), sshError())));
        }
    } else {
        const QByteArray path = remote.toUtf8();
        sftp_attributes attr = sftp_stat(m_sftp, path.constData());
        if (!attr)
            return finishTransfer(
                failure(u"Cannot read %1 on %2: %3"_s.arg(job.remotePath, hostLabel(), sshError())));
        t.total = qint64(attr->size);
        sftp_attributes_free(attr);
        t.remote = sftp_open(m_sftp, path.constData(), O_RDONLY, 0);
        if (!t.remote)
            return finishTransfer(
                failure(u"Cannot open %1 on %2: %3"_s.arg(job.remotePath, hostLabel(), sshError())));
        // the host's checksum runs alongside the transfer, on the host's CPU
        // (when it cannot start, the checksum is taken after the transfer instead)
        t.sumChannel =
            SshChannel::exec(m_session, (u"sha256sum < "_s + shellQuotePath(job.remotePath)).toUtf8());
        t.save = std::make_unique<QSaveFile>(job.localPath);
        if (!t.save->open(QIODevice::WriteOnly))
            return finishTransfer(
                failure(u"Cannot write %1: %2"_s.arg(job.localPath, t.save->errorString())));
    }
    emit progress(job.id, 0, t.total);
    schedulePump();
}

bool SshSession::serviceTransfer() {
    TransferState &t = *m_transfer;
    if (t.cancelled) {
        JobResult r;
        r.cancelled = true;
        r.error = u"Cancelled."_s;
        finishTransfer(r);
        return false;
    }
    static thread_local QByteArray buf;
    QElapsedTimer slice;
    slice.start();
    if (t.job.kind == SshJob::Kind::Upload) {
        buf.resize(kUploadChunk);
        while (t.done < t.total && slice.elapsed() < kSliceMs) {
            const qint64 n = t.local.read(buf.data(), kUploadChunk);
            if (n <= 0) {
                finishTransfer(failure(u"Cannot read %1: %2"_s.arg(t.job.localPath, t.local.errorString())));
                return false;
            }
            for (qint64 off = 0; off < n;) {
                const int w = ssh_channel_write(t.upChannel.get(), buf.constData() + off, uint32_t(n - off));
                if (w == SSH_ERROR || ssh_channel_is_closed(t.upChannel.get())) {
                    if (!ssh_is_connected(m_session)) {
                        connectionLost(sshError());
                        return false;
                    }
                    QString why = sshError();
                    char err[4096];
                    const int e = ssh_channel_read_nonblocking(t.upChannel.get(), err, sizeof err, 1);
                    if (e > 0)
                        why = QString::fromUtf8(err, e).trimmed();
                    finishTransfer(failure(u"Cannot write %1 on %2: %3"_s.arg(t.partPath, hostLabel(), why)));
                    return false;
                }
                off += w;
            }
            t.hash.add(buf.constData(), n);
            t.done += n;
        }
    } else {
        buf.resize(kReadChunk);
        while (slice.elapsed() < kSliceMs) {
            while (t.inFlight.size() < kReadAhead && t.requested < t.total) {
                const int id = sftp_async_read_begin(t.remote, kReadChunk);
                if (id < 0) {
                    connectionLost(sshError());
                    return false;
                }
                t.inFlight.append(uint32_t(id));
                t.requested += kReadChunk;
            }
            if (t.inFlight.isEmpty())
                break;
            const int n = sftp_async_read(t.remote, buf.data(), kReadChunk, t.inFlight.takeFirst());
            if (n < 0) {
                if (!ssh_is_connected(m_session)) {
                    connectionLost(sshError());
                    return false;
                }
                finishTransfer(
                    failure(u"Reading %1 on %2 failed: %3"_s.arg(t.job.remotePath, hostLabel(), sshError())));
                return false;
            }
            if (n == 0) { // the file shrank under us: take what is there
                t.inFlight.clear();
                t.total = t.done;
                break;
            }
            t.save->write(buf.constData(), n);
            t.hash.add(buf.constData(), n);
            t.done += n;
        }
    }
    if (t.lastProgress.elapsed() >= kProgressMs) {
        t.lastProgress.restart();
        emit progress(t.job.id, t.done, t.total);
    }
    if (t.done < t.total || !t.inFlight.isEmpty())
        return true;

    // All bytes moved: verify against the host's own sha256sum, then put the file in place.
    emit progress(t.job.id, t.done, t.total);
    if (t.remote)
        sftp_close(t.remote);
    t.remote = nullptr;
    QByteArray remoteSum;
    if (t.upChannel) {
        ssh_channel_send_eof(t.upChannel.get());
        QByteArray err;
        const int status = t.upChannel.drain(&remoteSum, &err, m_options.deadAfterMs * 6);
        t.upChannel.close(ssh_is_connected(m_session));
        if (!ssh_is_connected(m_session)) {
            connectionLost(sshError());
            return false;
        }
        if (status != 0 || err.contains("moetune-write-failed")) {
            err.replace("moetune-write-failed", "");
            finishTransfer(failure(u"Cannot write %1 on %2: %3"_s.arg(t.partPath, hostLabel(),
                                                                      QString::fromUtf8(err.trimmed()))));
            return false;
        }
    }
    const QByteArray localHash = t.hash.hex();
    const QString checked =
        t.job.kind == SshJob::Kind::Upload ? (t.job.remotePath + u".part"_s) : t.job.remotePath;
    QByteArray out = remoteSum;
    QString error;
    if (t.sumChannel) {
        QByteArray err;
        const int status = t.sumChannel.drain(&out, &err, m_options.deadAfterMs * 6);
        t.sumChannel.close(ssh_is_connected(m_session));
        if (status != 0)
            out.clear();
    }
    if (out.size() < 64 && !runHelper(u"sha256sum < "_s + shellQuotePath(checked), &out, &error)) {
        if (!ssh_is_connected(m_session)) {
            connectionLost(error);
            return false;
        }
        finishTransfer(failure(u"Cannot checksum %1 on %2: %3"_s.arg(checked, hostLabel(), error)));
        return false;
    }
    const QByteArray remoteHash = out.left(64);
    if (remoteHash != localHash) {
        finishTransfer(
            failure(u"Checksum mismatch for %1 on %2 (local %3, remote %4); nothing was replaced."_s.arg(
                checked, hostLabel(), QString::fromLatin1(localHash), QString::fromLatin1(remoteHash))));
        return false;
    }
    if (t.job.kind == SshJob::Kind::Upload) {
        out.clear();
        if (!runHelper(u"mv -f -- "_s + shellQuotePath(checked) + u' ' + shellQuotePath(t.job.remotePath),
                       &out, &error)) {
            if (!ssh_is_connected(m_session)) {
                connectionLost(error);
                return false;
            }
            finishTransfer(
                failure(u"Cannot move %1 into place on %2: %3"_s.arg(checked, hostLabel(), error)));
            return false;
        }
    } else if (!t.save->commit()) {
        finishTransfer(failure(u"Cannot write %1: %2"_s.arg(t.job.localPath, t.save->errorString())));
        return false;
    }
    JobResult r;
    r.exitStatus = 0;
    r.sha256 = localHash;
    r.bytes = t.done;
    emit progress(t.job.id, t.done, t.total);
    finishTransfer(r);
    return false;
}

void SshSession::finishTransfer(JobResult r) {
    std::unique_ptr<TransferState> t = std::move(m_transfer);
    if (!t)
        return;
    if (t->remote) {
        sftp_close(t->remote);
        t->remote = nullptr;
    }
    if (t->save && !r.ok())
        t->save->cancelWriting(); // a failed download leaves nothing at the target
    t->upChannel.reset();
    t->sumChannel.reset();
    if (!r.ok() && !t->partPath.isEmpty() && m_session && ssh_is_connected(m_session)) {
        QByteArray out;
        QString error;
        runHelper(u"rm -f -- "_s + shellQuotePath(t->partPath), &out, &error); // no half file left behind
    }
    r.bytes = r.bytes ? r.bytes : t->done;
    emit finished(t->job.id, r);
}

} // namespace moetune
