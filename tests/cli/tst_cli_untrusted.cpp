// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Issue 23 on the real moetune-cli binary and the Local machine's transport: inputs the CLI must not
// trust. A relative --log path is read as a file, never run; a run stream that lies (another run's events,
// negative latencies, a result file outside the run, a seq that jumps) is a protocol error naming the line,
// not a report with exit status 0; agent text cannot drive the terminal; a stderr line without end is cut.
// TEST DOUBLE: fake-agent.py stands in for moetune-agent.pyz (it prints the lines a test gives it), because
// a real agent never sends these lies; everything else (CLI, transport, deploy, shell) is real.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

namespace {

struct CliResult {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

// TEST DOUBLE of the agent: prints $MOETUNE_FAKE_AGENT_LINES (a file) on stdout and
// $MOETUNE_FAKE_AGENT_STDERR bytes without a newline on stderr, then exits with $MOETUNE_FAKE_AGENT_RC.
constexpr char kFakeAgent[] = "# TEST DOUBLE of moetune-agent.pyz (tests/cli/tst_cli_untrusted.cpp)\n"
                              "import os, sys\n"
                              "n = int(os.environ.get('MOETUNE_FAKE_AGENT_STDERR', '0'))\n"
                              "chunk = b'x' * 65536\n"
                              "while n > 0:\n"
                              "    sys.stderr.buffer.write(chunk[:n]); n -= len(chunk)\n"
                              "sys.stderr.flush()\n"
                              "lines = os.environ.get('MOETUNE_FAKE_AGENT_LINES')\n"
                              "if lines:\n"
                              "    sys.stdout.buffer.write(open(lines, 'rb').read()); sys.stdout.flush()\n"
                              "sys.exit(int(os.environ.get('MOETUNE_FAKE_AGENT_RC', '0')))\n";

const QByteArray kHello = "{\"type\":\"hello\",\"protocol\":1,\"agent_version\":\"fake\"}";

} // namespace

class TestCliUntrusted : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir; // HOME and the current folder of every run
    QString m_agent;

    CliResult run(const QStringList &args, const QByteArray &agentLines = {}, const QStringList &env = {}) {
        const QString lines = m_dir.filePath(u"agent-lines.jsonl"_s);
        QFile f(lines);
        if (!f.open(QIODevice::WriteOnly) || f.write(agentLines) != agentLines.size())
            return {};
        f.close();
        QProcess p;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(u"HOME"_s, m_dir.path());
        e.insert(u"XDG_CONFIG_HOME"_s, m_dir.filePath(u"config"_s));
        e.insert(u"MOETUNE_AGENT_PYZ"_s, m_agent);
        e.insert(u"MOETUNE_FAKE_AGENT_LINES"_s, lines);
        for (const QString &kv : env)
            e.insert(kv.section(u'=', 0, 0), kv.section(u'=', 1));
        p.setProcessEnvironment(e);
        p.setWorkingDirectory(m_dir.path());
        p.setStandardInputFile(QProcess::nullDevice());
        p.start(QStringLiteral(MOETUNE_CLI_PATH), args);
        CliResult r;
        if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit) {
            p.kill();
            p.waitForFinished();
            return r;
        }
        r.exitCode = p.exitCode();
        r.out = p.readAllStandardOutput();
        r.err = p.readAllStandardError();
        return r;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_agent = m_dir.filePath(u"fake-agent.py"_s);
        QFile f(m_agent);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kFakeAgent);
    }

    // A relative --log on the Local machine is a file of the current folder, read, never executed; a
    // remote host refuses it with a sentence before connecting; a command whose first word is a relative
    // path (it would run that file) is refused everywhere.
    void relativeLogIsReadNotRun() {
        QVERIFY(QDir(m_dir.path()).mkpath(u"logs"_s));
        const QString log = m_dir.filePath(u"logs/server.log"_s);
        const QString marker = m_dir.filePath(u"EXECUTED"_s);
        QFile f(log);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "#!/bin/sh\ntouch \"$HOME/EXECUTED\"\n"
            "[2026-03-14 09:12:50 TP0] Using default MoE kernel config. Performance might be sub-optimal! "
            "Config file not found at /sgl/python/sglang/srt/layers/moe/fused_moe_triton/configs/"
            "triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200.json\n");
        f.close();
        QVERIFY(QFile::setPermissions(log, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        const CliResult r = run({u"diagnose"_s, u"--host"_s, u"local"_s, u"--log"_s, u"logs/server.log"_s,
                                 u"--format"_s, u"json"_s});
        QVERIFY2(!QFileInfo::exists(marker), "the log file was executed");
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QVERIFY2(o.value("targets"_L1).toArray().size() == 1, r.out.constData());

        const CliResult remote =
            run({u"diagnose"_s, u"--host"_s, u"me@127.0.0.1:1"_s, u"--log"_s, u"logs/server.log"_s});
        QCOMPARE(remote.exitCode, 2);
        QVERIFY2(remote.err.contains("is a relative path"), remote.err.constData());

        const CliResult asCommand =
            run({u"diagnose"_s, u"--host"_s, u"local"_s, u"--log"_s, u"logs/server.log --follow"_s});
        QVERIFY(!QFileInfo::exists(marker));
        QCOMPARE(asCommand.exitCode, 2);
        QVERIFY2(asCommand.err.contains("would run the file logs/server.log"), asCommand.err.constData());
    }

    void attachRefusesALyingStream_data() {
        QTest::addColumn<QByteArray>("lie"); // line 4 of the stream ("" = none: the control row)
        QTest::addColumn<QString>("why");
        const QByteArray m =
            "\"op\":\"up\",\"m\":1,\"config\":{},\"round\":0,\"replays\":10,\"gpu\":0,\"index\":1";
        QTest::newRow("honest stream") << QByteArray() << QString();
        QTest::newRow("another run's event")
            << ("{\"type\":\"measurement\",\"run_id\":\"other\",\"seq\":2,\"median_us\":12.0," + m + "}")
            << u"an event of run other while following run r1"_s;
        QTest::newRow("negative latency")
            << QByteArray("{\"type\":\"best\",\"run_id\":\"r1\",\"seq\":2,\"op\":\"up\",\"m\":1,\"config\":{}"
                          ",\"median_us\":-10.0,\"default_us\":20.0,\"final\":true}")
            << u"median_us is not a finite number > 0"_s;
        QTest::newRow("result outside the run")
            << QByteArray("{\"type\":\"result_written\",\"run_id\":\"r1\",\"seq\":2,\"kind\":\"sglang\","
                          "\"path\":\"/etc/passwd\",\"file_name\":\"passwd\"}")
            << u"outside the run's folder: /etc/passwd"_s;
        QTest::newRow("seq jump")
            << ("{\"type\":\"measurement\",\"run_id\":\"r1\",\"seq\":10000000,\"median_us\":12.0," + m + "}")
            << u"seq 10000000 jumps ahead"_s;
    }
    void attachRefusesALyingStream() {
        QFETCH(QByteArray, lie);
        QFETCH(QString, why);
        const QString runDir = m_dir.filePath(u".cache/moetune/runs/r1"_s);
        QByteArray lines = kHello + '\n';
        lines += "{\"type\":\"run_started\",\"run_id\":\"r1\",\"run_dir\":\"" + runDir.toUtf8() +
                 "\",\"pid\":1,\"backend\":\"triton\",\"strategy\":\"fast\",\"device_name\":\"NVIDIA_H200\","
                 "\"seq\":0}" +
                 '\n';
        lines += "{\"type\":\"measurement\",\"run_id\":\"r1\",\"seq\":1,\"op\":\"up\",\"m\":1,\"config\":{},"
                 "\"round\":0,\"replays\":10,\"median_us\":14.0,\"gpu\":0,\"index\":0}"
                 "\n";
        qint64 seq = 2;
        if (!lie.isEmpty()) {
            lines += lie + '\n';
            seq = 3; // whatever follows the lie is not believed either
        }
        lines += "{\"type\":\"done\",\"status\":\"ok\",\"run_id\":\"r1\",\"seq\":" + QByteArray::number(seq) +
                 ",\"wall_s\":1.0}" + '\n';
        lines += "{\"type\":\"done\",\"status\":\"ok\"}" + QByteArray("\n");
        const CliResult r = run({u"attach"_s, u"local"_s, u"r1"_s}, lines);
        if (why.isEmpty()) {
            QVERIFY2(r.exitCode == 0, r.err.constData());
            QVERIFY2(r.out.contains("Run r1: finished"), r.out.constData());
            return;
        }
        QVERIFY2(r.exitCode == 3, r.err.constData()); // the host (its agent) failed: not a report
        QVERIFY2(r.err.contains("Protocol error: agent output line 4 is "), r.err.constData());
        QVERIFY2(r.err.contains(why.toUtf8()), r.err.constData());
        QVERIFY2(!r.out.contains("-10.00"), r.out.constData());
        QVERIFY2(!r.out.contains("/etc/passwd"), r.out.constData());
    }

    // ESC sequences (clear screen, OSC window title) and U+202E from the agent reach stdout and stderr
    // only as visible escapes.
    void runsShowsNoTerminalControl() {
        const QByteArray lines =
            kHello + '\n' +
            "{\"type\":\"run\",\"run_id\":\"r1\\u001b]0;pwned\\u0007\\u202e\",\"state\":\"\\u001b["
            "2Jrunning\",\"measured\":3,\"created_at\":1795994928.0,\"spec\":{\"framework\":\"sglang\",\"E\":"
            "8,\"N\":64,\"K\":128,\"topk\":2,\"dtype\":\"\\u001b[31mfp8\"}}"
            "\n"
            "{\"type\":\"done\",\"status\":\"ok\"}"
            "\n";
        const CliResult r = run({u"runs"_s, u"local"_s}, lines);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.out.contains("r1"), r.out.constData());
        for (const QByteArray &stream : {r.out, r.err}) {
            QVERIFY2(!stream.contains('\x1b'), stream.constData());
            QVERIFY2(!stream.contains('\x07'), stream.constData());
            QVERIFY2(!stream.contains("\xe2\x80\xae"), stream.constData()); // U+202E in UTF-8
        }
    }

    // diagnose's text shows a bidi override of the log as a replacement character, not the override.
    void diagnoseShowsNoBidiOverride() {
        const QString log = m_dir.filePath(u"bidi.log"_s);
        QFile f(log);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "[2026-03-14 09:12:50 TP0] Using default MoE kernel config. Performance might be sub-optimal! "
            "Config file not found at /sgl/python/sglang/srt/layers/moe/fused_moe_triton/configs/"
            "triton_3_6_0/E=128,N=768,device_name=NVIDIA_\xe2\x80\xaeH200.json\n");
        f.close();
        const CliResult r = run({u"diagnose"_s, log, u"--no-color"_s});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.out.contains("NVIDIA_"), r.out.constData());
        QVERIFY2(!r.out.contains("\xe2\x80\xae"), r.out.constData());
    }

    // Issue 42 item 2: the agent's folder on the host is created 0700; one others can write into (or a
    // link, or another user's) is refused with a sentence before the agent is placed or run there.
    void agentHomeOthersCanWriteIsRefused() {
        const QString home = m_dir.filePath(u".cache/moetune"_s);
        QDir(home).removeRecursively();
        const CliResult fresh =
            run({u"runs"_s, u"local"_s}, kHello + "\n{\"type\":\"done\",\"status\":\"ok\"}\n");
        QVERIFY2(fresh.exitCode == 0, fresh.err.constData());
        QCOMPARE(QFileInfo(home).permissions() & (QFile::ReadGroup | QFile::WriteGroup | QFile::ExeGroup |
                                                  QFile::ReadOther | QFile::WriteOther | QFile::ExeOther),
                 QFileDevice::Permissions());
        QVERIFY(QFile::setPermissions(home, QFileDevice::Permissions(0x7777)));
        const CliResult shared =
            run({u"runs"_s, u"local"_s}, kHello + "\n{\"type\":\"done\",\"status\":\"ok\"}\n");
        QVERIFY(QFile::setPermissions(home, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        QVERIFY(shared.exitCode != 0);
        QVERIFY2(shared.err.contains("others can write into it: moetune runs nothing from it"),
                 shared.err.constData());
    }

    // 8 MB of agent stderr without a newline: the error shows a cut line with a sentence, bounded.
    void stderrWithoutNewlineIsCut() {
        const CliResult r = run({u"runs"_s, u"local"_s}, {},
                                {u"MOETUNE_FAKE_AGENT_STDERR=8388608"_s, u"MOETUNE_FAKE_AGENT_RC=1"_s});
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.contains("stderr line cut at 4096 characters"), r.err.left(300).constData());
        QVERIFY2(r.err.size() < 256 * 1024, qPrintable(QString::number(r.err.size())));
    }
};

QTEST_GUILESS_MAIN(TestCliUntrusted)
#include "tst_cli_untrusted.moc"
