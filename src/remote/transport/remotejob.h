// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QMetaType>
#include <QString>

namespace moetune {

using JobId = quint64;

// A command for Transport::exec. command is a complete shell command line: build it with shellJoin().
struct ExecRequest {
    ExecRequest() = default;
    explicit ExecRequest(QString commandLine)
        : command(std::move(commandLine)) {}
    QString command;
    QByteArray stdinData;      // written then EOF'd; empty = stdin closed at once
    QString stdoutFile;        // when set, raw stdout goes to this local file (for logs), not to line signals
    qint64 expectedBytes = -1; // for progress when stdoutFile is set
    int timeoutMs = 0;         // 0 = none; on expiry the command is signalled and the job fails
    bool rawStdout = false;    // emit stdoutData chunks instead of lines (agent protocol parsing)
    // A command whose output comes as lines (stdoutLines and stderrLines; not rawStdout, not stdoutFile) is
    // stopped once it has printed more than this many bytes, and the job fails saying its output was cut
    // (kExecOutputTruncated): a host printing without end costs at most this much memory of a caller that
    // keeps what it reads. -1: no bound (a log followed for hours, whose reader keeps only its tail).
    qint64 maxLineOutputBytes = kDefaultMaxLineOutputBytes;
    static constexpr qint64 kDefaultMaxLineOutputBytes = qint64{16} << 20;
};

// The error of a job stopped by ExecRequest::maxLineOutputBytes; %1 is the host, %2 the bound in MiB.
inline QString execOutputTruncated(const QString &host, qint64 bound) {
    return QStringLiteral(
               "The command on %1 printed more than %2 MiB; moetune stopped it there and read no more "
               "(its output is truncated).")
        .arg(host)
        .arg(bound >> 20);
}

// How a job ended. error is empty on success; an exec with a non-zero exit status is still a success
// of the transport (look at exitStatus).
struct JobResult {
    int exitStatus = -1;
    QString error;
    bool cancelled = false;
    bool connectionLost = false; // the job was running when the connection dropped (it is not retried)
    QByteArray sha256;           // hex; transfers: of the bytes written at the target
    qint64 bytes = 0;            // transferred / stdout bytes
    bool ok() const { return error.isEmpty() && !cancelled; }
};

} // namespace moetune

Q_DECLARE_METATYPE(moetune::JobResult)
