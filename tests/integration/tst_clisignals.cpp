// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// moetune-cli killed while a job on the Local machine runs (issue 10: "a CLI killed by SIGPIPE leaves the
// fetched server log in /tmp"; LocalTransport children outliving their CLI). Real processes only: the
// real CLI, its real /bin/sh children, real signals (kill -9 as the OOM killer sends it, TERM, INT, HUP,
// and SIGPIPE from a reader that went away as `| head -1` does). The fetched log is a file without a name
// (held open as /proc/self/fd/N), so not even kill -9 leaves it in TMPDIR. Leftover processes are counted by
// a token in the environment that every descendant of the CLI inherits.
#include "processscan.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>

#include <csignal>
#include <cstring>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using moetune::test::describeProcesses;
using moetune::test::processesWith;
using moetune::test::ProcessField;

namespace {

QStringList hostLogs(const QString &dir) {
    return QDir(dir).entryList({u"moetune-host-log-*"_s}, QDir::Files | QDir::Hidden);
}

// The fetched logs process pid holds open under dir: named files, or nameless ones (unlinked at once,
// "(deleted)" in /proc/PID/fd), which nothing can leave behind.
QStringList openHostLogs(qint64 pid, const QString &dir) {
    QStringList out;
    const QDir fds(u"/proc/%1/fd"_s.arg(pid));
    for (const QString &fd :
         fds.entryList(QDir::AllEntries | QDir::System | QDir::Hidden | QDir::NoDotAndDotDot)) {
        char buf[4096];
        const ssize_t n = ::readlink(QFile::encodeName(fds.filePath(fd)).constData(), buf, sizeof buf);
        const QString target = n > 0 ? QFile::decodeName(QByteArray(buf, n)) : QString();
        if (target.startsWith(dir + u"/moetune-host-log-"_s))
            out.append(target);
    }
    return out;
}

} // namespace

class TestCliSignals : public QObject {
    Q_OBJECT
private:
    QString m_cli;
    QTemporaryDir m_dir;

    QString logPath() const { return m_dir.filePath(u"server.log"_s); }

    // A process environment with a fresh token (for counting) and a private TMPDIR (for the fetched log).
    QProcessEnvironment environment(const QByteArray &token, const QString &tmp) const {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        const qsizetype eq = token.indexOf('=');
        env.insert(QString::fromUtf8(token.left(eq)), QString::fromUtf8(token.mid(eq + 1)));
        env.insert(u"TMPDIR"_s, tmp);
        env.insert(u"HOME"_s, m_dir.filePath(u"home"_s));
        return env;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QVERIFY(QDir().mkpath(m_dir.filePath(u"home"_s)));
        m_cli = QCoreApplication::applicationDirPath() + u"/../../src/cli/moetune-cli"_s;
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
        QFile f(logPath());
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (int i = 0; i < 2000; ++i)
            f.write(
                "[2026-12-01 10:00:00 TP0] Decode batch. #running-req: 1, #token: 64, token usage: 0.01\n");
        f.write(
            "[2026-12-01 10:00:01 TP0] Using default MoE kernel config. Performance might be sub-optimal! "
            "Config file not found at /sgl/configs/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200.json\n");
    }

    // The CLI dies while its log-source command still runs on the Local machine: nothing it started may
    // stay behind, and (except for SIGKILL, which no process can catch) the fetched log is removed.
    void killedWhileFetching_data() {
        QTest::addColumn<int>("sig");
        QTest::addColumn<QString>("source");
        const QString slowCommand = u"cat -- '%1'; sleep 300"_s.arg(logPath());
        // A pipeline and a background child: the command's own process tree, not only /bin/sh.
        const QString treeCommand = u"sleep 301 & sh -c 'sleep 302; :' & cat -- '%1'; wait"_s.arg(logPath());
        for (const auto &[name, sig] : {std::pair{"SIGKILL", SIGKILL}, std::pair{"SIGTERM", SIGTERM},
                                        std::pair{"SIGINT", SIGINT}, std::pair{"SIGHUP", SIGHUP}}) {
            QTest::addRow("%s, slow command", name) << sig << slowCommand;
            QTest::addRow("%s, command with children", name) << sig << treeCommand;
        }
        // A FIFO nobody writes: the CLI's `tail` blocks on it forever.
        QTest::newRow("SIGKILL, log is a FIFO") << int(SIGKILL) << u"FIFO"_s;
    }
    void killedWhileFetching() {
        QFETCH(int, sig);
        QFETCH(QString, source);
        const QByteArray token =
            "MOETUNE_TEST_TOKEN=" + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        if (source == u"FIFO"_s) {
            source = tmp.filePath(u"server.fifo"_s);
            QVERIFY(::mkfifo(QFile::encodeName(source).constData(), 0600) == 0);
        }
        QProcess cli;
        cli.setProcessEnvironment(environment(token, tmp.path()));
        cli.setStandardInputFile(QProcess::nullDevice());
        cli.start(m_cli,
                  {u"diagnose"_s, u"--host"_s, u"local"_s, u"--log"_s, source, u"--format"_s, u"json"_s});
        QVERIFY(cli.waitForStarted());
        // The fetch is under way: the log file exists and the command's processes run.
        // The CLI holds its fetched log open: a file without a name, so even kill -9 leaves nothing.
        QStringList open;
        QVERIFY2(QTest::qWaitFor(
                     [&] {
                         open = openHostLogs(cli.processId(), tmp.path());
                         return !open.isEmpty() &&
                                processesWith(token, ProcessField::Environment).size() >= 2;
                     },
                     30000),
                 qPrintable(u"no fetch under way: %1; stderr: %2"_s.arg(
                     describeProcesses(processesWith(token, ProcessField::Environment)),
                     QString::fromUtf8(cli.readAllStandardError()))));
        QVERIFY2(open.first().endsWith(u" (deleted)"_s), qPrintable(open.first()));
        QVERIFY2(hostLogs(tmp.path()).isEmpty(), qPrintable(hostLogs(tmp.path()).join(u", "_s)));
        const QList<qint64> during = processesWith(token, ProcessField::Environment);
        ::kill(pid_t(cli.processId()), sig);
        QVERIFY(cli.waitForFinished(20000));
        QCOMPARE(cli.exitStatus(), QProcess::CrashExit); // died of the signal, as a killed program does
        // The watchers give SIGTERM, then SIGKILL after 2 s: all is gone well within 10 s.
        const bool gone =
            QTest::qWaitFor([&] { return processesWith(token, ProcessField::Environment).isEmpty(); }, 10000);
        const QList<qint64> left = processesWith(token, ProcessField::Environment);
        const QString leftText = describeProcesses(left);
        for (qint64 pid : left)
            ::kill(pid_t(pid), SIGKILL); // leave the machine clean even when the test fails
        QVERIFY2(gone, qPrintable(u"%1 of the CLI's %2 processes outlived it: %3"_s.arg(left.size())
                                      .arg(during.size())
                                      .arg(leftText)));
        // Nothing in TMPDIR, whatever the signal (SIGKILL included: the file never had a name to leave).
        QVERIFY2(hostLogs(tmp.path()).isEmpty(), qPrintable(hostLogs(tmp.path()).join(u", "_s)));
    }

    // `moetune-cli ... | head -1`: the reader goes away, the CLI gets SIGPIPE on its next write. The
    // fetched log is gone and the CLI's children with it, whether the write is the report (stdout) or a
    // warning written while the log is still on disk (stderr).
    void sigpipe_data() {
        QTest::addColumn<QString>("shell");
        QTest::addColumn<bool>("whileFetched");
        // stdout: the report, written after the fetch. No probe (--python nonexistent): the servers that
        // happen to run on this machine (several make diagnose --host ask which, issue 41) change nothing.
        QTest::newRow("report into | head -c 0 (the reader is gone)")
            << u"\"$CLI\" diagnose --host local --python /nonexistent/python --log \"cat -- '$LOG'\" "
               u"--format markdown | head -c 0; echo \"$?\""_s
            << false;
        // stderr: the probe's failure warning, written while the fetched log is still on disk.
        QTest::newRow("warning into a closed stderr")
            << u"exec 3>&1; { \"$CLI\" diagnose --host local --python /nonexistent/python --log "
               u"\"cat -- '$LOG'\" --format json 2>&1 >/dev/null; echo \"cli=$?\" >&3; } | true"_s
            << true;
    }
    void sigpipe() {
        QFETCH(QString, shell);
        QFETCH(bool, whileFetched);
        const QByteArray token =
            "MOETUNE_TEST_TOKEN=" + QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        QProcess sh;
        QProcessEnvironment env = environment(token, tmp.path());
        env.insert(u"CLI"_s, m_cli);
        env.insert(u"LOG"_s, logPath());
        sh.setProcessEnvironment(env);
        sh.start(u"/bin/bash"_s, {u"-c"_s, u"set -o pipefail; "_s + shell});
        QVERIFY(sh.waitForFinished(120000));
        const QString out = QString::fromUtf8(sh.readAllStandardOutput()).trimmed();
        const QString err = QString::fromUtf8(sh.readAllStandardError());
        // 141 = 128 + SIGPIPE: the CLI died of it (bash reports a signal death so).
        QVERIFY2(out.endsWith(u"141"_s), qPrintable(u"exit statuses '%1', stderr: %2"_s.arg(out, err)));
        Q_UNUSED(whileFetched)
        QVERIFY2(hostLogs(tmp.path()).isEmpty(),
                 qPrintable(u"left in TMPDIR: "_s + hostLogs(tmp.path()).join(u", "_s)));
        QVERIFY2(
            QTest::qWaitFor([&] { return processesWith(token, ProcessField::Environment).isEmpty(); }, 10000),
            qPrintable(describeProcesses(processesWith(token, ProcessField::Environment))));
    }
};

QTEST_GUILESS_MAIN(TestCliSignals)
#include "tst_clisignals.moc"
