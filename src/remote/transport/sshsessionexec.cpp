// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// SshSession: exec channels (start, read with backpressure, line batches, cancel) and helper commands.
#include "remote/transport/sshsessionjobs.h"

#include <QSocketNotifier>

using namespace Qt::StringLiterals;
using namespace moetune::sshdetail;

namespace moetune {

namespace {

// The line the host's shell runs for `command`. It first announces its process group (sshd makes the
// shell a session leader, so $$ is the group), for cancel: sshd refuses "signal" requests for root logins.
// With a lifeline (a command that takes no input), the channel's stdin stays open and a watcher in the
// group waits for its end: when moetune goes away - a CLI killed with -9, a closed laptop, a dropped
// link - sshd closes the channel, the watcher sees EOF and ends the whole group with TERM, as the
// Local machine's ProcessGroupWatch does. A command that ends by itself first stops its watcher, so what
// it started in the background (a server) stays. The command runs in a subshell on lines of its own
// (its `exec`, `exit` or trailing comment cannot skip the watcher's stop); its stdin is /dev/null.
QByteArray remoteCommandLine(const QString &command, bool lifeline) {
    if (!lifeline)
        return (QString::fromLatin1(kPgidPrefix) + command).toUtf8();
    return (QString::fromLatin1(kPgidPrefix) +
            u"exec 3<&0 </dev/null; { cat <&3 >/dev/null 2>&1; kill -TERM -- -$$; } >/dev/null 2>&1 & "
            "moetune_lifeline=$!; exec 3<&-; (\n"_s +
            command + u"\n); moetune_rc=$?; kill \"$moetune_lifeline\" 2>/dev/null; exit \"$moetune_rc\""_s)
        .toUtf8();
}

} // namespace

bool SshSession::startExec(const SshJob &job) {
    auto e = std::make_shared<ExecState>();
    e->job = job;
    auto fail = [&](const QString &why) {
        e->channel.reset();
        if (!ssh_is_connected(m_session)) {
            m_queue.prepend(job); // never started: it runs after the reconnect, once
            connectionLost(why);
            return false;
        }
        JobResult r;
        r.error = u"Cannot run the command on %1: %2"_s.arg(hostLabel(), why);
        emit finished(job.id, r);
        return false;
    };
    if (!job.exec.stdoutFile.isEmpty()) {
        e->file = std::make_unique<QFile>(job.exec.stdoutFile);
        if (!e->file->open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            JobResult r;
            r.error = u"Cannot write %1: %2"_s.arg(job.exec.stdoutFile, e->file->errorString());
            emit finished(job.id, r);
            return false;
        }
    }
    // The command announces its process group on stderr (cancel: `kill -TERM -- -PGID` on any host); one
    // that takes no input is ended with its group when this side goes away (remoteCommandLine).
    const bool lifeline = job.exec.stdinData.isEmpty();
    e->channel = SshChannel::exec(m_session, remoteCommandLine(job.exec.command, lifeline));
    if (!e->channel)
        return fail(sshError());
    if (!job.exec.stdinData.isEmpty()) {
        const QByteArray &in = job.exec.stdinData;
        qsizetype off = 0;
        while (off < in.size()) {
            const int n = ssh_channel_write(e->channel.get(), in.constData() + off,
                                            uint32_t(qMin<qsizetype>(in.size() - off, 1 << 20)));
            if (n <= 0)
                break;
            off += n;
        }
    }
    if (!lifeline)
        ssh_channel_send_eof(e->channel.get()); // the input ends here; a lifeline's stdin stays open
    e->started.start();
    e->lastProgress.start();
    m_execs.append(e);
    if (m_notifier)
        m_notifier->setEnabled(true);
    if (!m_safetyTimer.isActive())
        m_safetyTimer.start();
    return true;
}

void SshSession::terminateRemote(ExecState &e) {
    ssh_channel_request_send_signal(e.channel.get(), "TERM"); // honoured by sshd with privilege separation
    if (e.pgid > 1) {
        QByteArray out;
        QString error;
        runHelper(u"kill -TERM -- -%1 2>/dev/null; true"_s.arg(e.pgid), &out, &error);
    }
}

bool SshSession::receiverBehind() const {
    return m_undelivered->loadRelaxed() >= kMaxUndeliveredBatches;
}

QStringList SshSession::takeLines(QByteArray &buf, bool final) {
    QStringList lines;
    qsizetype start = 0;
    while (lines.size() < kMaxBatchLines) {
        const qsizetype nl = buf.indexOf('\n', start);
        if (nl < 0) {
            // A line without end is cut once it is long (at a UTF-8 boundary): memory stays bounded
            // whatever the host prints.
            // The cut stays inside the buffer (strictly more than kMaxLineBytes wait), so buf[cut] is a byte.
            qsizetype cut = buf.size() - start > kMaxLineBytes ? start + kMaxLineBytes : -1;
            while (cut > start && (uchar(buf[cut]) & 0xC0) == 0x80)
                --cut;
            if (cut > start) {
                lines.append(QString::fromUtf8(buf.constData() + start, cut - start));
                start = cut;
                continue;
            }
            break;
        }
        qsizetype end = nl;
        if (end > start && buf[end - 1] == '\r')
            --end;
        lines.append(QString::fromUtf8(buf.constData() + start, end - start));
        start = nl + 1;
    }
    buf.remove(0, start);
    if (final && !buf.isEmpty() && lines.size() < kMaxBatchLines) {
        lines.append(QString::fromUtf8(buf));
        buf.clear();
    }
    return lines;
}

void SshSession::flushLines(ExecState &e, bool final) {
    // Coalesce: at most one batch per channel every kFlushMs (or per kFlushBytes), so a fast stream costs
    // the receiving thread a few events a second, not one per SSH packet.
    if (!final && e.lastFlush.isValid() && e.lastFlush.elapsed() < kFlushMs &&
        e.out.size() + e.err.size() + e.raw.size() < kFlushBytes)
        return;
    e.lastFlush.start();
    // Every emitted batch is counted (the receiver counts it back once delivered); nothing empty is sent.
    // While the receiver is behind, batches wait here (bounded: reading has stopped too), except at the end.
    if (!e.job.exec.rawStdout && !e.file) {
        while (final || !receiverBehind()) {
            const QStringList out = takeLines(e.out, final);
            if (out.isEmpty())
                break;
            m_undelivered->ref();
            emit stdoutLines(e.job.id, out);
        }
    }
    if (!e.raw.isEmpty() && (final || !receiverBehind())) {
        m_undelivered->ref();
        emit stdoutData(e.job.id, e.raw);
        e.raw.clear();
    }
    while (final || !receiverBehind()) {
        const QStringList err = takeLines(e.err, final);
        if (err.isEmpty())
            break;
        m_undelivered->ref();
        emit stderrLines(e.job.id, err);
    }
}

bool SshSession::serviceExec(ExecState &e) {
    static thread_local char buf[64 * 1024];
    bool error = false;
    // Backpressure: while the receiving (GUI) thread has not taken the earlier batches, read nothing more;
    // the data waits in the SSH window / TCP instead of piling up in the receiver's event queue.
    const bool throttled = receiverBehind();
    for (int isStderr : {0, 1}) {
        for (int rounds = 0; !throttled && rounds < 8; ++rounds) { // bounded: no channel starves the others
            const int n = ssh_channel_read_nonblocking(e.channel.get(), buf, sizeof buf, isStderr);
            if (n == SSH_ERROR) {
                error = true;
                break;
            }
            if (n <= 0)
                break;
            if (!e.file && !e.job.exec.rawStdout)
                e.lineBytes += n; // ExecRequest::maxLineOutputBytes
            if (isStderr) {
                e.err.append(buf, n);
                if (!e.pgidKnown) {
                    const qsizetype nl = e.err.indexOf('\n');
                    if (nl >= 0) {
                        e.pgidKnown = true;
                        if (e.err.startsWith(kPgidMarker)) {
                            e.pgid = e.err
                                         .mid(qsizetype(qstrlen(kPgidMarker)),
                                              nl - qsizetype(qstrlen(kPgidMarker)))
                                         .trimmed()
                                         .toLongLong();
                            e.err.remove(0, nl + 1);
                        }
                    }
                }
            } else {
                e.bytes += n;
                if (e.file)
                    e.file->write(buf, n);
                else if (e.job.exec.rawStdout)
                    e.raw.append(buf, n);
                else
                    e.out.append(buf, n);
            }
        }
    }
    if (e.job.exec.maxLineOutputBytes >= 0 && e.lineBytes > e.job.exec.maxLineOutputBytes) {
        // Printed more than a caller may keep: stopped, and what was not delivered yet is dropped.
        terminateRemote(e);
        e.out.clear();
        e.err.clear();
        JobResult r;
        r.bytes = e.bytes;
        r.error = execOutputTruncated(hostLabel(), e.job.exec.maxLineOutputBytes);
        finishExec(e, r);
        return false;
    }
    flushLines(e, false);
    if (e.file && e.lastProgress.elapsed() >= kProgressMs) {
        e.lastProgress.restart();
        emit progress(e.job.id, e.bytes, e.job.exec.expectedBytes);
    }
    if (error || !ssh_is_connected(m_session)) {
        connectionLost(sshError());
        return false;
    }
    if (ssh_channel_is_eof(e.channel.get())) {
        JobResult r;
        r.exitStatus = ssh_channel_get_exit_status(e.channel.get()); // only after EOF (libssh rule)
        r.bytes = e.bytes;
        if (r.exitStatus < 0)
            r.error =
                u"The command on %1 ended without an exit status (killed by a signal?)."_s.arg(hostLabel());
        finishExec(e, r);
        return false;
    }
    if (e.job.exec.timeoutMs > 0 && e.started.elapsed() > e.job.exec.timeoutMs) {
        terminateRemote(e);
        JobResult r;
        r.bytes = e.bytes;
        r.error = u"The command on %1 timed out after %2 s and was stopped."_s.arg(hostLabel())
                      .arg(e.job.exec.timeoutMs / 1000.0);
        finishExec(e, r);
        return false;
    }
    return true;
}

void SshSession::finishExec(ExecState &e, const JobResult &r) {
    flushLines(e, true);
    if (e.file) {
        e.file->close();
        emit progress(e.job.id, e.bytes, e.job.exec.expectedBytes);
    }
    e.channel.close(ssh_is_connected(m_session));
    emit finished(e.job.id, r);
}

bool SshSession::runHelper(const QString &command, QByteArray *out, QString *error) {
    SshChannel ch = SshChannel::exec(m_session, command.toUtf8());
    if (!ch) {
        *error = sshError();
        return false;
    }
    ssh_channel_send_eof(ch.get());
    QByteArray err;
    bool readFailed = false;
    const int status = ch.drain(out, &err, m_options.deadAfterMs * 6, &readFailed);
    if (readFailed) {
        *error = sshError();
        return false;
    }
    ch.close(true);
    if (status != 0) {
        *error = QString::fromUtf8(err.trimmed());
        if (error->isEmpty())
            *error = u"exit status %1"_s.arg(status);
        return false;
    }
    return true;
}

} // namespace moetune
