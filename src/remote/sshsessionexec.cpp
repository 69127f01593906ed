// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// SshSession: exec channels (start, read with backpressure, line batches, cancel) and helper commands.
#include "remote/sshsessionjobs.h"

#include <QSocketNotifier>

using namespace Qt::StringLiterals;
using namespace moetune::sshdetail;

namespace moetune {

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
    // sshd refuses "signal" requests for root logins (no privilege separation), so the command first
    // announces its process group on stderr: cancel can then `kill -TERM -- -PGID` on any host.
    const QByteArray cmd = (QString::fromLatin1(kPgidPrefix) + job.exec.command).toUtf8();
    e->channel = SshChannel::exec(m_session, cmd);
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
    ssh_channel_send_eof(e->channel.get());
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

void SshSession::finishExec(ExecState &e, JobResult r) {
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
