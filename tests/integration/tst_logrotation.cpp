// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Logs that change while they are read (issue 10 item 5): truncated by logrotate's copytruncate, cut,
// grown, renamed and replaced. Real files changed by other processes (truncate, mv, sh) in the middle of
// a read; the reader runs in a forked child so that a SIGBUS is reported as a failure, not a lost test
// run. Also moetune-cli diagnose on a file truncated while it runs, and a followed log that rotates.
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/logreader.h"
#include "core/diagnosis/ruleset.h"
#include "fakesglanghost.h"
#include "remote/flows/hostsession.h"
#include "remote/hosts/hoststore.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <cstring>
#include <functional>

#include <sys/wait.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

constexpr qint64 kBlock = 1 << 20;
const QByteArray kWarning =
    "[2026-12-01 10:00:00 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config "
    "file "
    "not found at /sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_6_0/"
    "E=128,N=768,device_name=NVIDIA_H200.json, you can create them with https://github.com/sgl-project/"
    "sglang/tree/main/benchmark/kernels/fused_moe_triton\n"_ba;

// One MB of ordinary server lines with one MoE warning in it; dense: every line is the warning, so the
// diagnoser works on each line (a read that takes long enough on a fast machine to be changed midway).
QByteArray block(bool dense = false) {
    QByteArray b = kWarning;
    const QByteArray line = dense ? kWarning
                                  : "[2026-12-01 10:00:01 TP0] Decode batch. #running-req: 12, #token: 4096, "
                                    "token usage: 0.10, gen throughput (token/s): 812.00, #queue-req: 0\n"_ba;
    while (b.size() + line.size() <= kBlock)
        b += line;
    b += QByteArray(kBlock - b.size() - 1, 'x') + '\n';
    return b;
}

bool writeLog(const QString &path, int blocks, bool dense = false) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    const QByteArray b = block(dense);
    for (int i = 0; i < blocks; ++i) {
        if (f.write(b) != b.size())
            return false;
    }
    return true;
}

// Another process changes the file: sh -c SCRIPT sh PATH. Plain fork/exec, usable in the forked child.
int runShell(const char *script, const QByteArray &path) {
    const pid_t pid = fork();
    if (pid == 0) {
        execlp("sh", "sh", "-c", script, "sh", path.constData(), static_cast<char *>(nullptr));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Bytes the process has read through read()/pread() so far (/proc/PID/io's rchar), -1 when unreadable.
qint64 bytesReadBy(qint64 pid) {
    QFile io(u"/proc/%1/io"_s.arg(pid));
    if (!io.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : io.readAll().split('\n')) {
        if (line.startsWith("rchar:"))
            return line.mid(6).trimmed().toLongLong();
    }
    return -1;
}

struct Outcome {
    int signal = 0; // the child died of this signal
    bool ok = false;
    bool changed = false; // the change ran while the read was going on
    qint64 lines = 0;
    qint64 hits = 0;
    QString error;
};

// Runs read(change) in a forked child; change() makes the other process alter the file once.
Outcome inChild(const std::function<void(Outcome &, const std::function<void()> &)> &read, const char *script,
                const QByteArray &path) {
    int fds[2];
    if (pipe(fds) != 0)
        return {};
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        Outcome o;
        bool done = false;
        read(o, [&] {
            if (!done) {
                done = true;
                o.changed = runShell(script, path) == 0;
            }
        });
        const QByteArray out = QByteArray::number(o.ok ? 1 : 0) + '\n' +
                               QByteArray::number(o.changed ? 1 : 0) + '\n' + QByteArray::number(o.lines) +
                               '\n' + QByteArray::number(o.hits) + '\n' + o.error.toUtf8();
        qsizetype off = 0;
        while (off < out.size()) {
            const ssize_t n = write(fds[1], out.constData() + off, static_cast<size_t>(out.size() - off));
            if (n <= 0)
                break;
            off += n;
        }
        _exit(0);
    }
    close(fds[1]);
    QByteArray got;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got.append(buf, n);
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    Outcome o;
    if (WIFSIGNALED(status)) {
        o.signal = WTERMSIG(status);
        return o;
    }
    const QList<QByteArray> parts = got.split('\n');
    if (parts.size() >= 5) {
        o.ok = parts[0] == "1";
        o.changed = parts[1] == "1";
        o.lines = parts[2].toLongLong();
        o.hits = parts[3].toLongLong();
        o.error = QString::fromUtf8(
            got.sliced(parts[0].size() + parts[1].size() + parts[2].size() + parts[3].size() + 4));
    } else {
        o.error = u"the reading child wrote no outcome"_s;
    }
    return o;
}

QString describe(const Outcome &o) {
    if (o.signal)
        return u"the reader was killed by signal %1 (%2)"_s.arg(o.signal).arg(
            QString::fromUtf8(strsignal(o.signal)));
    return u"ok=%1 changed=%2 lines=%3 hits=%4 error='%5'"_s.arg(o.ok)
        .arg(o.changed)
        .arg(o.lines)
        .arg(o.hits)
        .arg(o.error);
}

} // namespace

class TestLogRotation : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;

private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    // LogReader::readFile: the other process acts after the first window has been read.
    void readerWhileChanged_data() {
        QTest::addColumn<QByteArray>("script");
        QTest::addColumn<bool>("shrinks");
        // copytruncate: copy, then cut the live file to nothing.
        QTest::newRow("copytruncate") << "cp -- \"$1\" \"$1.1\" && truncate -s 0 -- \"$1\""_ba << true;
        QTest::newRow("cut to 9 MB") << "truncate -s 9M -- \"$1\""_ba << true;
        QTest::newRow("cut and written again")
            << "truncate -s 0 -- \"$1\" && echo restarted >> \"$1\""_ba << true;
        QTest::newRow("grows by 8 MB") << "yes appended | head -c 8388608 >> \"$1\""_ba << false;
        // logrotate's default: rename, and the server opens a new file under the old name.
        QTest::newRow("renamed, new file") << "mv -- \"$1\" \"$1.1\" && echo new > \"$1\""_ba << false;
        QTest::newRow("renamed, then removed") << "mv -- \"$1\" \"$1.1\" && rm -- \"$1.1\""_ba << false;
    }
    void readerWhileChanged() {
        QFETCH(QByteArray, script);
        QFETCH(bool, shrinks);
        const int blocks = 24;
        const QString path = m_tmp.filePath(u"reader.log"_s);
        QFile::remove(path + u".1"_s);
        QVERIFY(writeLog(path, blocks));
        const Outcome o = inChild(
            [&](Outcome &out, const std::function<void()> &change) {
                LogReader reader({"sub-optimal"_ba});
                out.ok = reader.readFile(
                    path, [&](const LogReader::Hit &) { ++out.hits; },
                    [&](qint64, qint64) {
                        change();
                        return true;
                    },
                    &out.error);
                out.lines = reader.linesRead();
            },
            script.constData(), QFile::encodeName(path));
        QVERIFY2(!o.signal, qPrintable(describe(o)));
        QVERIFY2(o.changed, qPrintable(describe(o)));
        if (shrinks) {
            QVERIFY2(!o.ok, qPrintable(describe(o)));
            QVERIFY2(o.error.contains(
                         u"reader.log shrank while it was read: it had %1 bytes"_s.arg(blocks * kBlock)),
                     qPrintable(describe(o)));
            QVERIFY2(o.error.contains(u"copytruncate"_s), qPrintable(describe(o)));
        } else {
            // What the file held when reading began, all of it and nothing else.
            QVERIFY2(o.ok, qPrintable(describe(o)));
            QCOMPARE(o.lines, qint64(blocks) * (block().count('\n')));
            QCOMPARE(o.hits, qint64(blocks));
        }
    }

    // Diagnoser::diagnoseFile in parts on several threads; the change comes from the caller's progress
    // callback while the parts are being read.
    void diagnoserWhileChanged_data() {
        QTest::addColumn<QByteArray>("script");
        QTest::addColumn<bool>("shrinks");
        QTest::newRow("truncated") << "truncate -s 0 -- \"$1\""_ba << true;
        QTest::newRow("renamed, new file") << "mv -- \"$1\" \"$1.1\" && echo new > \"$1\""_ba << false;
    }
    void diagnoserWhileChanged() {
        QFETCH(QByteArray, script);
        QFETCH(bool, shrinks);
        const QString path = m_tmp.filePath(u"parts.log"_s);
        QFile::remove(path + u".1"_s);
        // The parts must still be reading when the caller's thread first reports progress (after 50 ms):
        // the log doubles until an undisturbed read of it takes 0.5 s on this machine (a fast CI machine
        // read 192 MB of sparse warnings before the first report).
        int blocks = 16;
        qint64 occurrences = 0; // of the whole file, read undisturbed
        for (;;) {
            QVERIFY(writeLog(path, blocks, true));
            Diagnoser undisturbed;
            undisturbed.setMaxThreads(3);
            undisturbed.setParallelThreshold(1 << 20);
            QElapsedTimer t;
            t.start();
            const Diagnosis whole = undisturbed.diagnoseFile(path);
            const qint64 ms = t.elapsed();
            occurrences = 0;
            for (const Finding &f : whole.findings)
                occurrences += f.occurrences;
            QVERIFY(occurrences >= blocks);
            if (ms >= 500 || blocks >= 1024) {
                qInfo("%d MB of warnings, read undisturbed in %lld ms", blocks, ms);
                break;
            }
            blocks *= 2;
        }
        const Outcome o = inChild(
            [&](Outcome &out, const std::function<void()> &change) {
                Diagnoser diagnoser;
                diagnoser.setMaxThreads(3);
                diagnoser.setParallelThreshold(1 << 20);
                const Diagnosis d = diagnoser.diagnoseFile(
                    path,
                    [&](qint64 done, qint64 total) {
                        if (done < total) // not the last report, which comes when all parts are done
                            change();
                        return true;
                    },
                    &out.error);
                out.ok = out.error.isEmpty();
                out.lines = d.linesRead;
                for (const Finding &f : d.findings)
                    out.hits += f.occurrences;
            },
            script.constData(), QFile::encodeName(path));
        QVERIFY2(!o.signal, qPrintable(describe(o)));
        QVERIFY2(o.changed,
                 qPrintable(u"the parts were read before the file could be changed: "_s + describe(o)));
        // The parts read on while the caller's thread runs the change: a part that was still reading says
        // the file shrank; when all had read their bytes already, the result is the whole file's.
        qInfo("%s", qPrintable(describe(o)));
        if (shrinks && !o.ok) {
            QVERIFY2(o.error.contains(u"parts.log shrank while it was read"_s), qPrintable(describe(o)));
        } else {
            QVERIFY2(o.ok, qPrintable(describe(o)));
            QCOMPARE(o.lines, qint64(blocks) * (block(true).count('\n')));
            QCOMPARE(o.hits, occurrences);
        }
    }

    // The repro: moetune-cli diagnose of a big log that logrotate truncates while it is read.
    void cliDiagnoseTruncated_data() {
        QTest::addColumn<QByteArray>("script");
        QTest::newRow("truncate -s 0") << "truncate -s 0 -- \"$1\""_ba;
        QTest::newRow("copytruncate")
            << "cp --sparse=always -- \"$1\" \"$1.1\" && truncate -s 0 -- \"$1\""_ba;
        QTest::newRow("cut to 4 KB") << "truncate -s 4096 -- \"$1\""_ba;
    }
    void cliDiagnoseTruncated() {
        QFETCH(QByteArray, script);
        const QString cli = QCoreApplication::applicationDirPath() + u"/../../src/cli/moetune-cli"_s;
        QVERIFY2(QFile::exists(cli), qPrintable(cli));
        const QString path = m_tmp.filePath(u"big.log"_s);
        QFile::remove(path + u".1"_s);
        // A log head the CLI accepts as text, then a sparse 4 GB tail (no disk space, seconds to read).
        QVERIFY(writeLog(path, 2));
        QVERIFY(QFile::resize(path, 4LL << 30));
        QProcess p;
        p.start(cli, {u"diagnose"_s, path, u"--format"_s, u"json"_s});
        QVERIFY(p.waitForStarted());
        // Truncate once the CLI is inside the 4 GB read (64 MB read), not after a fixed wait: under ASan on
        // a loaded CI machine its start-up outlasted 300 ms, the file was empty when it was opened and the
        // CLI rightly diagnosed an empty log (exit 0).
        QElapsedTimer waited;
        waited.start();
        qint64 read = 0;
        while (p.state() == QProcess::Running && (read = bytesReadBy(p.processId())) < (64LL << 20) &&
               waited.elapsed() < 60000)
            QTest::qWait(2);
        QVERIFY2(read >= (64LL << 20),
                 qPrintable(u"moetune-cli read %1 bytes in %2 ms"_s.arg(read).arg(waited.elapsed())));
        QVERIFY2(p.state() == QProcess::Running, "moetune-cli finished before the log could be truncated");
        QCOMPARE(runShell(script.constData(), QFile::encodeName(path)), 0);
        QVERIFY(p.waitForFinished(120000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit,
                 qPrintable(u"moetune-cli crashed (signal; before the fix: SIGBUS): "_s + err));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY2(err.contains(u"big.log shrank while it was read: it had 4294967296 bytes"_s),
                 qPrintable(err));
        QVERIFY(p.readAllStandardOutput().isEmpty()); // no half diagnosis printed as if it were whole
    }

    // A followed log (tail -F through the Local machine's transport) that rotates: the lines written
    // after the rotation arrive, whichever way the log was rotated.
    void followAcrossRotation_data() {
        QTest::addColumn<QByteArray>("script");
        QTest::newRow("renamed, new file") << "mv -- \"$1\" \"$1.1\" && : > \"$1\""_ba;
        QTest::newRow("copytruncate") << "cp -- \"$1\" \"$1.1\" && truncate -s 0 -- \"$1\""_ba;
    }
    void followAcrossRotation() {
        QFETCH(QByteArray, script);
        test::FakeSglangHost host;
        QString error;
        QVERIFY2(host.create(&error), qPrintable(error));
        const QString log = m_tmp.filePath(u"follow.log"_s);
        QFile::remove(log + u".1"_s);
        QVERIFY(writeLog(log, 1));
        HostConfig h;
        h.alias = HostStore::localAlias();
        h.local = true;
        h.logSource = LogSource::fromString(log);
        HostSession::Environment env;
        env.localHome = host.homePath();
        env.agentPath = QStringLiteral(MOETUNE_AGENT_PYZ);
        HostSession s(h, env);
        QSignalSpy lines(&s, &HostSession::followLines);
        QSignalSpy stopped(&s, &HostSession::followStopped);
        const JobId id = s.startFollow(&error);
        QVERIFY2(id, qPrintable(error));
        auto got = [&] {
            QStringList all;
            for (const auto &args : std::as_const(lines))
                all += args.at(1).toStringList();
            return all;
        };
        auto append = [&](const QByteArray &text) {
            QFile f(log);
            QVERIFY(f.open(QIODevice::Append));
            f.write(text);
        };
        QTest::qWait(1000); // tail -F has opened the file
        append("[TP0] before the rotation\n");
        QTRY_VERIFY_WITH_TIMEOUT(got().contains(u"[TP0] before the rotation"_s), 20000);
        QCOMPARE(runShell(script.constData(), QFile::encodeName(log)), 0);
        QTest::qWait(1500); // tail -F polls the name once a second
        append("[TP0] after the rotation\n");
        QTRY_VERIFY_WITH_TIMEOUT(got().contains(u"[TP0] after the rotation"_s), 20000);
        QVERIFY2(stopped.isEmpty(),
                 qPrintable(stopped.isEmpty() ? QString() : stopped.first().at(1).toString()));
        QCOMPARE(got().count(u"[TP0] after the rotation"_s), 1);
        s.stopFollow();
        QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 1, 20000);
    }
};

QTEST_GUILESS_MAIN(TestLogRotation)
#include "tst_logrotation.moc"
