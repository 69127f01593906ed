// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/transport/localtransport.h"

#include "remote/transport/processgroupwatch.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSaveFile>
#include <QTimer>

#include <csignal>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {
constexpr qsizetype kLineCutBytes = 1 << 20; // a longer line is delivered in pieces of this size
} // namespace

LocalTransport::LocalTransport(QString homeDir, QObject *parent)
    : Transport(parent)
    , m_home(homeDir.isEmpty() ? QDir::homePath() : std::move(homeDir)) {
    qRegisterMetaType<moetune::JobResult>();
}

LocalTransport::~LocalTransport() {
    for (const QPointer<QProcess> &p : std::as_const(m_processes)) {
        if (p) {
            p->disconnect(this);
            p->kill();
            p->waitForFinished(2000);
        }
    }
}

void LocalTransport::connectToHost() {
    m_state = State::Connected;
    QTimer::singleShot(0, this, [this] { emit stateChanged(m_state, u"Connected to this machine."_s); });
}

void LocalTransport::disconnectFromHost() {
    m_state = State::Disconnected;
    QTimer::singleShot(0, this, [this] { emit stateChanged(m_state, QString()); });
}

QString LocalTransport::resolve(const QString &path) const {
    if (path == u"~")
        return m_home;
    if (path.startsWith(u"~/"))
        return m_home + path.mid(1);
    return path;
}

void LocalTransport::finish(JobId id, const JobResult &r) {
    // Results are always delivered from the event loop, as over SSH, never inside the call.
    QTimer::singleShot(0, this, [this, id, r] { emit finished(id, r); });
}

JobId LocalTransport::exec(const ExecRequest &request) {
    const JobId id = m_nextId++;
    auto *p = new QProcess(this);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"HOME"_s, m_home);
    p->setProcessEnvironment(env);
    p->setWorkingDirectory(m_home);
    auto outBuf = std::make_shared<QByteArray>();
    auto errBuf = std::make_shared<QByteArray>();
    auto bytes = std::make_shared<qint64>(0);
    std::shared_ptr<QFile> file;
    if (!request.stdoutFile.isEmpty()) {
        file = std::make_shared<QFile>(request.stdoutFile);
        if (!file->open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            JobResult r;
            r.error = u"Cannot write %1: %2"_s.arg(request.stdoutFile, file->errorString());
            finish(id, r);
            p->deleteLater();
            return id;
        }
    }
    auto split = [](QByteArray &buf, bool final) {
        QStringList lines;
        qsizetype start = 0;
        for (qsizetype nl; (nl = buf.indexOf('\n', start)) >= 0; start = nl + 1) {
            qsizetype end = nl;
            if (end > start && buf[end - 1] == '\r')
                --end;
            lines.append(QString::fromUtf8(buf.constData() + start, end - start));
        }
        // A line without end is delivered in pieces of kLineCutBytes (at a UTF-8 boundary), as SshSession
        // does: memory and the search for '\n' stay bounded whatever the command prints.
        while (buf.size() - start > kLineCutBytes) {
            qsizetype cut = start + kLineCutBytes;
            while (cut > start && (uchar(buf[cut]) & 0xC0) == 0x80)
                --cut;
            if (cut == start)
                cut = start + kLineCutBytes;
            lines.append(QString::fromUtf8(buf.constData() + start, cut - start));
            start = cut;
        }
        buf.remove(0, start);
        if (final && !buf.isEmpty()) {
            lines.append(QString::fromUtf8(buf));
            buf.clear();
        }
        return lines;
    };
    auto lineBytes = std::make_shared<qint64>(0);
    const bool bounded = !file && !request.rawStdout && request.maxLineOutputBytes >= 0;
    auto drain = [=, this](bool final) {
        if (p->property("moetune_truncated").toBool()) { // stopped for its output: read and drop the rest
            p->readAllStandardOutput();
            p->readAllStandardError();
            return;
        }
        const QByteArray out = p->readAllStandardOutput();
        *bytes += out.size();
        if (bounded) {
            *lineBytes += out.size();
            const QByteArray peekErr = p->readAllStandardError();
            *lineBytes += peekErr.size();
            errBuf->append(peekErr);
            if (*lineBytes > request.maxLineOutputBytes) {
                p->setProperty("moetune_truncated", true);
                outBuf->clear();
                errBuf->clear();
                if (p->processId() > 0)
                    ::kill(-pid_t(p->processId()), SIGTERM);
                return;
            }
        }
        if (file) {
            file->write(out);
            emit progress(id, *bytes, request.expectedBytes);
        } else if (request.rawStdout) {
            if (!out.isEmpty())
                emit stdoutData(id, out);
        } else {
            outBuf->append(out);
            const QStringList l = split(*outBuf, final);
            if (!l.isEmpty())
                emit stdoutLines(id, l);
        }
        errBuf->append(p->readAllStandardError());
        const QStringList e = split(*errBuf, final);
        if (!e.isEmpty())
            emit stderrLines(id, e);
    };
    connect(p, &QProcess::readyReadStandardOutput, this, [drain] { drain(false); });
    connect(p, &QProcess::readyReadStandardError, this, [drain] { drain(false); });
    connect(p, &QProcess::finished, this, [=, this](int code, QProcess::ExitStatus status) {
        drain(true);
        if (file)
            file->close();
        JobResult r;
        r.bytes = *bytes;
        if (status == QProcess::CrashExit)
            r.error = u"The command ended without an exit status (killed by a signal?)."_s;
        else
            r.exitStatus = code;
        if (p->property("moetune_cancelled").toBool()) {
            r.cancelled = true;
            r.error = u"Cancelled."_s;
        } else if (p->property("moetune_truncated").toBool()) {
            r.error = execOutputTruncated(u"this machine"_s, request.maxLineOutputBytes);
        } else if (p->property("moetune_timedout").toBool()) {
            r.error = u"The command timed out after %1 s and was stopped."_s.arg(request.timeoutMs / 1000.0);
        }
        m_processes.remove(id);
        p->deleteLater();
        emit finished(id, r);
    });
    connect(p, &QProcess::errorOccurred, this, [=, this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart)
            return;
        JobResult r;
        r.error = u"Cannot start /bin/sh: %1"_s.arg(p->errorString());
        m_processes.remove(id);
        p->deleteLater();
        emit finished(id, r);
    });
    if (request.timeoutMs > 0) {
        QTimer::singleShot(request.timeoutMs, p, [p] {
            p->setProperty("moetune_timedout", true);
            if (p->processId() > 0)
                ::kill(-pid_t(p->processId()), SIGTERM);
        });
    }
    m_processes.insert(id, p);
    // its own process group, so that cancel ends the whole command, not only /bin/sh; and the group
    // ends with this program however it dies (ProcessGroupWatch)
    const int lifeline = ProcessGroupWatch::lifeline();
    p->setChildProcessModifier([lifeline] { ProcessGroupWatch::armInChild(lifeline); });
    p->start(u"/bin/sh"_s, {u"-c"_s, request.command});
    if (!request.stdinData.isEmpty())
        p->write(request.stdinData);
    p->closeWriteChannel();
    return id;
}

JobId LocalTransport::copyJob(const QString &from, const QString &to, bool atomic) {
    Q_UNUSED(atomic) // QSaveFile: always written beside the target and renamed over it
    const JobId id = m_nextId++;
    JobResult r;
    QFile in(from);
    if (!in.open(QIODevice::ReadOnly)) {
        r.error = u"Cannot read %1: %2"_s.arg(from, in.errorString());
        finish(id, r);
        return id;
    }
    QSaveFile out(to);
    if (!out.open(QIODevice::WriteOnly)) {
        r.error = u"Cannot write %1: %2"_s.arg(to, out.errorString());
        finish(id, r);
        return id;
    }
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QByteArray buf(1 << 20, Qt::Uninitialized);
    const qint64 total = in.size();
    qint64 done = 0;
    for (;;) {
        const qint64 n = in.read(buf.data(), buf.size());
        if (n < 0) {
            r.error = u"Cannot read %1: %2"_s.arg(from, in.errorString());
            break;
        }
        if (n == 0)
            break;
        if (out.write(buf.constData(), n) != n) {
            r.error = u"Cannot write %1: %2"_s.arg(to, out.errorString());
            break;
        }
        hash.addData(QByteArrayView(buf.constData(), n));
        done += n;
    }
    if (r.error.isEmpty() && !out.commit())
        r.error = u"Cannot write %1: %2"_s.arg(to, out.errorString());
    if (r.error.isEmpty()) {
        r.exitStatus = 0;
        r.sha256 = hash.result().toHex();
        r.bytes = done;
    }
    QTimer::singleShot(0, this, [this, id, done, total] { emit progress(id, done, total); });
    finish(id, r);
    return id;
}

JobId LocalTransport::upload(const QString &localPath, const QString &remotePath) {
    return copyJob(localPath, resolve(remotePath), true);
}

JobId LocalTransport::download(const QString &remotePath, const QString &localPath) {
    return copyJob(resolve(remotePath), localPath, true);
}

JobId LocalTransport::replaceFile(const QString &localPath, const QString &remotePath) {
    return copyJob(localPath, resolve(remotePath), true);
}

void LocalTransport::cancel(JobId id) {
    QProcess *p = m_processes.value(id);
    if (!p)
        return;
    p->setProperty("moetune_cancelled", true);
    if (p->processId() > 0)
        ::kill(-pid_t(p->processId()), SIGTERM);
}

} // namespace moetune
