// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Private to SshSession's implementation files (sshsession*.cpp): limits, small helpers and the state
// of a running exec or transfer.
#include "remote/transport/sha256.h"
#include "remote/transport/sshchannel.h"
#include "remote/transport/sshsession.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSaveFile>

#include <libssh/sftp.h>

#include <memory>

namespace moetune::sshdetail {

inline constexpr int kMaxExecChannels = 8; // OpenSSH's MaxSessions is 10; keep room for transfer helpers
inline constexpr qint64 kUploadChunk = qint64{256} * 1024; // bytes written to the upload channel per step
inline constexpr uint32_t kReadChunk = 64 * 1024;
inline constexpr int kReadAhead = 32; // outstanding SFTP read requests
inline constexpr int kSliceMs = 20;   // longest stretch of transfer work before the worker looks at its queue
inline constexpr int kProgressMs = 100;
inline constexpr int kFlushMs = 15;
inline constexpr qsizetype kFlushBytes = 1 << 20;
inline constexpr int kMaxUndeliveredBatches =
    8; // output batches the receiver may have queued before reading pauses
inline constexpr qsizetype kMaxBatchLines =
    16384; // lines per batch: ~1 MB as QStrings, whatever their length
inline constexpr qsizetype kMaxLineBytes = 1 << 20; // a longer line is delivered in pieces of this size
inline constexpr char kPgidMarker[] = "moetune-pgid ";
inline constexpr char kPgidPrefix[] = "printf 'moetune-pgid %s\\n' \"$$\" >&2; ";

inline JobResult failure(const QString &error) {
    JobResult r;
    r.error = error;
    return r;
}

inline QString expandHome(const QString &path) {
    if (path == u"~")
        return QDir::homePath();
    if (path.startsWith(u"~/"))
        return QDir::homePath() + path.mid(1);
    return path;
}

} // namespace moetune::sshdetail

namespace moetune {

struct SshSession::ExecState {
    qint64 pgid = 0; // the remote command's process group, announced by the wrapper's first line
    bool pgidKnown = false;
    SshJob job;
    SshChannel channel;
    QByteArray out;
    QByteArray err;
    QByteArray raw;
    std::unique_ptr<QFile> file;
    qint64 bytes = 0;
    qint64 lineBytes = 0; // stdout and stderr of a line-mode command so far (ExecRequest::maxLineOutputBytes)
    QElapsedTimer started;
    QElapsedTimer lastProgress;
    QElapsedTimer lastFlush;
};

struct SshSession::TransferState {
    SshJob job;
    sftp_file remote = nullptr;
    SshChannel upChannel; // upload: `tee <file>.part | sha256sum` on the host
    QFile local;
    std::unique_ptr<QSaveFile> save;
    Sha256 hash;
    SshChannel sumChannel; // download: the host's sha256sum of the file, run alongside
    qint64 total = 0;
    qint64 done = 0;
    qint64 requested = 0;
    QList<uint32_t> inFlight;
    QElapsedTimer lastProgress;
    bool cancelled = false;
    QString partPath; // upload: remote "<target>.part"
};

} // namespace moetune
