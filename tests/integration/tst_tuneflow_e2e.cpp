// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The tuning workflow end to end over a real sshd on 127.0.0.1, against a fake SGLang host (TEST
// DOUBLES: resources/practice/fake_sglang_server.py as the server, a scripted nvidia-smi; see
// fakeserverhost.h): the server's log -> tune (synthetic backend: every number SIMULATED) -> push -> restart
// through the server profile -> the log since the restart shows the warning gone on every rank; backups and
// the push record present; undo restores; a connection dropped mid-run and reattached loses and repeats
// nothing. Through moetune-cli (as scripts use it) and through the flows in src/remote (as the app uses
// them).
#include "clirun.h"
#include "core/diagnosis/diagnoser.h"
#include "core/push/pushproof.h"
#include "core/run/workspace.h"
#include "fakeserverhost.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/jobwaiter.h"
#include "remote/flows/pushflow.h"
#include "remote/flows/servercontrol.h"
#include "remote/flows/tuneflow.h"
#include "remote/transport/sshtransport.h"
#include "sshdfixture.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

using moetune::test::CliResult;

QStringList readLines(const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll()).split(u'\n', Qt::SkipEmptyParts);
}

} // namespace

class TestTuneFlowE2E : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    moetune::test::SshdFixture m_sshd;
    moetune::test::FakeServerHost m_host;
    QString m_cli;
    QString m_hostSpec;
    QString m_profileFile;

    CliResult cli(const QStringList &args, int timeoutMs = 240000) {
        return moetune::test::runCli(m_cli, args, timeoutMs);
    }
    QStringList hostArgs() const {
        return {m_hostSpec, u"--python"_s, m_host.python(), u"--profile"_s, m_profileFile};
    }
    Diagnosis diagnoseLogSince(qint64 offset) {
        QFile f(m_host.log());
        if (!f.open(QIODevice::ReadOnly))
            return {};
        f.seek(offset);
        return Diagnoser().diagnoseText(f.readAll());
    }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        QString error;
        QVERIFY2(m_sshd.start(&error), qPrintable(error));
        QVERIFY2(m_host.create(&error), qPrintable(error));
        const QString ssh = m_home.path() + u"/.ssh"_s;
        QDir().mkpath(ssh);
        QVERIFY(QFile::copy(m_sshd.userKey(), ssh + u"/id_ed25519"_s));
        QFile::setPermissions(ssh + u"/id_ed25519"_s, QFile::ReadOwner | QFile::WriteOwner);
        m_hostSpec = u"%1@127.0.0.1:%2"_s.arg(m_sshd.userName()).arg(m_sshd.port());
        m_cli = QCoreApplication::applicationDirPath() + u"/../../src/cli/moetune-cli"_s;
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
        m_profileFile = m_home.path() + u"/profile.json"_s;
        QFile pf(m_profileFile);
        QVERIFY(pf.open(QIODevice::WriteOnly));
        pf.write(QJsonDocument(m_host.profile().toJson()).toJson());
        pf.close();
        // Trust the host key once, as a user would (then known_hosts holds it).
        const CliResult t =
            cli({u"trust-host"_s, m_hostSpec, u"--fingerprint"_s, m_sshd.hostKeyFingerprint()});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        QVERIFY2(m_host.startServer(&error), qPrintable(error));
    }

    void cleanupTestCase() {
        m_host.stopServer();
        m_sshd.stop();
    }

    // Issue 18: `tune --follow` keeps the run in the local workspace, the folder the app's Tune page
    // keeps its runs in (Workspace::defaultLocation()), so the Results page and `report` open it. First:
    // the log still names the missing config (the push below fixes it).
    void cliTuneFollowKeepsTheRun() {
        const QString data = m_home.path() + u"/xdg-data"_s;
        qputenv("XDG_DATA_HOME", data.toUtf8());
        const QString workspace = data + u"/moetune/moetune/workspace"_s;
        const CliResult r =
            cli(QStringList{u"tune"_s} + hostArgs() +
                QStringList{u"--from-log"_s, m_host.log(), u"--backend"_s, u"synthetic"_s, u"--batch-sizes"_s,
                            u"1,16"_s, u"--follow"_s, u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        const QString runId = r.json().value("run_id"_L1).toString();
        QVERIFY(!runId.isEmpty());
        const QString folder = workspace + u'/' + runId;
        QVERIFY2(r.err.contains(u"Kept in "_s + folder), qPrintable(r.err));
        QString error;
        const auto ws = Workspace::open(workspace, &error);
        QVERIFY2(ws, qPrintable(error));
        const WorkspaceRun *kept = ws->run(runId);
        QVERIFY2(kept, qPrintable(folder));
        QCOMPARE(kept->spec.value("K"_L1).toInt(), 2048);
        QVERIFY(kept->hostFacts.has_value());
        QCOMPARE(kept->result.perBatch.size(), 2);
        QVERIFY(kept->result.simulated);
        // The folder is a run `report` reads.
        const CliResult report = cli({u"report"_s, folder});
        QVERIFY2(report.exitCode == 0, qPrintable(report.err));
    }

    void cliTunePushRestartUndo() {
        // Before: the server falls back on both ranks (the fake server followed SGLang's lookup).
        const Diagnosis before = Diagnoser().diagnoseFile(m_host.log());
        QCOMPARE(before.targets.size(), 1);
        QCOMPARE(before.targets.first().name.n, 384);
        QVERIFY(!QFile::exists(m_host.wantedFolder()));

        // tune --from-log: the log gives E, N and the device, the probe K and top-k.
        CliResult r =
            cli(QStringList{u"tune"_s} + hostArgs() +
                QStringList{u"--from-log"_s, m_host.log(), u"--backend"_s, u"synthetic"_s, u"--batch-sizes"_s,
                            u"1,16,256"_s, u"--up-down"_s, u"--follow"_s, u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        const QJsonObject run = r.json();
        const QString runId = run.value("run_id"_L1).toString();
        QVERIFY(!runId.isEmpty());
        QCOMPARE(run.value("state"_L1).toString(), u"finished"_s);
        QVERIFY(run.value("simulated"_L1).toBool());
        QCOMPARE(run.value("spec"_L1).toObject().value("K"_L1).toInt(), 2048);
        QCOMPARE(run.value("spec"_L1).toObject().value("topk"_L1).toInt(), 8);
        QCOMPARE(run.value("spec"_L1).toObject().value("ops"_L1).toString(), u"up+down"_s);
        QCOMPARE(run.value("per_batch"_L1).toArray().size(), 3);
        QVERIFY(run.value("preflight"_L1).toObject().value("server_holds_gpus"_L1).toBool());
        QVERIFY(r.err.contains(u"[SIMULATED]"_s));

        // runs lists it, marked simulated.
        r = cli(QStringList{u"runs"_s} + hostArgs() + QStringList{u"--format"_s, u"json"_s});
        QCOMPARE(r.exitCode, 0);
        bool listed = false;
        for (const QJsonValue &v : r.json().value("runs"_L1).toArray())
            listed = listed || (v.toObject().value("run_id"_L1).toString() == runId &&
                                v.toObject().value("simulated"_L1).toBool());
        QVERIFY2(listed, r.out.constData());

        // push --dry-run: the folder the server's own warning wanted, nothing written.
        r = cli(QStringList{u"push"_s} + hostArgs() +
                QStringList{runId, u"--dry-run"_s, u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject preview = r.json().value("preview"_L1).toObject();
        QCOMPARE(preview.value("folder"_L1).toString(), m_host.wantedFolder());
        QVERIFY(preview.value("source"_L1).toString().contains(u"logged"_s));
        QVERIFY(preview.value("simulated"_L1).toBool());
        QCOMPARE(preview.value("files"_L1).toArray().size(), 2);
        QVERIFY(!QFile::exists(m_host.wantedFolder()));

        // push --restart: install, restart through the profile, prove on every rank.
        const qint64 logBefore = QFileInfo(m_host.log()).size();
        r = cli(QStringList{u"push"_s} + hostArgs() +
                QStringList{runId, u"--restart"_s, u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        const QJsonObject pushed = r.json();
        const QJsonObject proof = pushed.value("proof"_L1).toObject();
        QVERIFY2(proof.value("warning_gone"_L1).toBool(), r.out.constData());
        QCOMPARE(proof.value("ranks_before"_L1).toArray(), (QJsonArray{u"TP0"_s, u"TP1"_s}));
        QCOMPARE(proof.value("ranks_using"_L1).toArray(), (QJsonArray{u"TP0"_s, u"TP1"_s}));
        QVERIFY(pushed.value("record"_L1).toObject().value("simulated"_L1).toBool());
        QVERIFY(r.err.contains(u"$ kill -TERM"_s)); // every host command is shown
        QVERIFY(QFile::exists(m_host.wantedFolder() + u'/' + m_host.upName()));
        QVERIFY(QFile::exists(m_host.wantedFolder() + u'/' + m_host.downName()));
        // Independently of moetune's own proof: the log since the restart, diagnosed here.
        const Diagnosis after = diagnoseLogSince(logBefore);
        QVERIFY(after.linesRead > 0);
        QCOMPARE(after.targets.size(), 0);
        QVERIFY(readLines(m_host.log())
                    .filter(u"Using MoE kernel config from "_s + m_host.wantedFolder())
                    .size() >= 4);
        // The push record beside the run.
        const QString runDir = preview.value("run_dir"_L1).toString();
        QVERIFY2(QFile::exists(runDir + u"/push.json"_s), qPrintable(runDir));

        // Push again: the files exist now, so each replaced one gets a backup.
        r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{runId, u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        for (const QJsonValue &f : r.json().value("record"_L1).toObject().value("files"_L1).toArray())
            QVERIFY(f.toObject()
                        .value("unchanged"_L1)
                        .toBool()); // same bytes: nothing rewritten, nothing to back up

        // Replace one file by hand (as if another tool wrote it): the run never measured that file's rows,
        // so the push keeps every one of them (issue 20: never worse than the file there, row by row), and
        // the dry run lists each row with its decision.
        const QString up = m_host.wantedFolder() + u'/' + m_host.upName();
        const QByteArray pushedUp = [&] {
            QFile f(up);
            f.open(QIODevice::ReadOnly);
            return f.readAll();
        }();
        QFile::remove(up);
        {
            QFile f(up);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"1\": {\"BLOCK_SIZE_M\": 64, \"BLOCK_SIZE_N\": 64, \"BLOCK_SIZE_K\": 32, "
                    "\"GROUP_SIZE_M\": 8, "
                    "\"num_warps\": 4, \"num_stages\": 3}}\n");
        }
        const QByteArray handMade = [&] {
            QFile f(up);
            f.open(QIODevice::ReadOnly);
            return f.readAll();
        }();
        // A file for a sibling device name beside it (an H200 NVL's): the preview says the server never reads
        // it.
        const QString sibling = m_host.wantedFolder() + u"/E=128,N=384,device_name=NVIDIA_H200_NVL.json"_s;
        QVERIFY(QFile::copy(up, sibling));
        // And moetune's push record of another model's run (K 4096) into this very file: the file name has no
        // K, so the preview says that another model reads it.
        const QString otherRun = QFileInfo(runDir).path() + u"/20260101-000000-abcdef"_s;
        QVERIFY(QDir().mkpath(otherRun));
        {
            QFile spec(otherRun + u"/spec.json"_s);
            QVERIFY(spec.open(QIODevice::WriteOnly));
            spec.write(R"({"framework": "sglang", "E": 128, "N": 384, "K": 4096, "topk": 8})");
            QFile rec(otherRun + u"/push.json"_s);
            QVERIFY(rec.open(QIODevice::WriteOnly));
            rec.write(QJsonDocument(
                          QJsonObject{{"format"_L1, u"moetune-push"_s},
                                      {"version"_L1, 1},
                                      {"files"_L1, QJsonArray{QJsonObject{{"file_name"_L1, m_host.upName()},
                                                                          {"target"_L1, up},
                                                                          {"sha256"_L1, u"00"_s},
                                                                          {"unchanged"_L1, false}}}}})
                          .toJson());
        }
        r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{runId, u"--dry-run"_s});
        QVERIFY(QFile::remove(sibling));
        QVERIFY(QDir(otherRun).removeRecursively());
        QVERIFY2(QString::fromUtf8(r.out).contains(u"another model reads this file too: K=4096"_s),
                 r.out.constData());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString rows = QString::fromUtf8(r.out);
        QVERIFY2(
            rows.contains(u"also holds E=128,N=384,device_name=NVIDIA_H200_NVL.json, for the device name "
                          u"NVIDIA_H200_NVL: the server on NVIDIA_H200 does not read it"_s),
            qPrintable(rows));
        QVERIFY2(rows.contains(m_host.upName() +
                               u": merged row by row into the file there (the run's default "
                               u"was the server's built-in heuristic"_s),
                 qPrintable(rows));
        QVERIFY2(rows.contains(u"M=1     kept, unmeasured"_s), qPrintable(rows));
        QVERIFY2(rows.contains(u"M=256   not added"_s), qPrintable(rows));
        QVERIFY2(!rows.contains(u"replaced"_s), qPrintable(rows));
        r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{runId, u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        bool keptWhole = false;
        for (const QJsonValue &f : r.json().value("record"_L1).toObject().value("files"_L1).toArray()) {
            if (f.toObject().value("target"_L1).toString() == up)
                keptWhole = f.toObject().value("unchanged"_L1).toBool() &&
                            f.toObject().value("backup"_L1).toString().isEmpty();
        }
        QVERIFY2(keptWhole, r.out.constData());

        // Undo after the file was changed by hand (issue 40 item 5): refused, nothing touched.
        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{runId, u"--restart"_s});
        QCOMPARE(r.exitCode, 4);
        QVERIFY2(r.err.contains(u"Undo refused, nothing was touched"_s) && r.err.contains(up),
                 qPrintable(r.err));
        QFile kept(up);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), handMade);
        QVERIFY(QFile::exists(m_host.wantedFolder() + u'/' + m_host.downName()));
        // The pushed bytes back by hand: the undo puts back what was there before the first push (nothing).
        {
            QFile f(up);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(pushedUp);
        }
        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{runId, u"--restart"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QVERIFY(!QFile::exists(up));
        QVERIFY(!QFile::exists(m_host.wantedFolder() + u'/' + m_host.downName()));
        QVERIFY2(QString::fromUtf8(r.out).contains(u"absent, as it was before the first push"_s),
                 r.out.constData());
        // A second undo is refused: that push is undone.
        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{runId});
        QCOMPARE(r.exitCode, 4);
        QVERIFY(r.err.contains(u"already undone"_s));
    }

    void cliUsageAndRefusals_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("tune without host") << QStringList{u"tune"_s} << 2 << u"exactly one HOST"_s;
        QTest::newRow("tune both sources")
            << QStringList{u"tune"_s, u"local"_s, u"--spec"_s, u"a"_s, u"--from-log"_s, u"b"_s} << 2
            << u"give one of --from-log and --spec"_s;
        QTest::newRow("tune bad batch") << QStringList{u"tune"_s, u"local"_s, u"--batch-sizes"_s, u"1,x"_s}
                                        << 2 << u"--batch-sizes wants integers"_s;
        QTest::newRow("tune log without finding")
            << QStringList{u"tune"_s, u"local"_s, u"--from-log"_s, QStringLiteral(MOETUNE_FAKESERVER_PY)} << 2
            << u"names no MoE config"_s;
        QTest::newRow("push bad framework")
            << QStringList{u"push"_s, u"local"_s, u"r"_s, u"--framework"_s, u"trt"_s} << 2
            << u"--framework is sglang or vllm"_s;
        QTest::newRow("attach bad from")
            << QStringList{u"attach"_s, u"local"_s, u"r"_s, u"--from"_s, u"-3"_s} << 2 << u"--from wants"_s;
    }
    void cliUsageAndRefusals() {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const CliResult r = cli(args, 60000);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    void cliRefusesSmallGpuMemory() {
        // A real backend needs GPU memory the fake server holds: refused, the holder named, nothing started.
        const CliResult r =
            cli(QStringList{u"tune"_s} + hostArgs() +
                QStringList{u"--framework"_s, u"sglang"_s, u"--E"_s, u"128"_s, u"--N"_s, u"384"_s, u"--K"_s,
                            u"2048"_s, u"--topk"_s, u"8"_s, u"--backend"_s, u"triton"_s});
        QVERIFY2(r.exitCode == 4, qPrintable(r.err));
        QVERIFY2(r.err.contains(u"held by pid"_s) && r.err.contains(u"stop the server first"_s),
                 qPrintable(r.err));
        QVERIFY2(r.err.contains(u"--stop-server"_s), qPrintable(r.err));
    }

    // The flows the app drives (src/remote), over one SshTransport: a run followed while the connection
    // drops reattaches from the last event and ends with exactly the run's own events.
    void flowsReattachAfterDrop() {
        SshOptions o = m_sshd.options();
        o.knownHostsFile = m_home.path() + u"/.ssh/known_hosts"_s;
        o.host.python = m_host.slowPython();
        SshTransport transport(o);
        transport.connectToHost();
        QString error;
        QVERIFY2(waitForConnected(&transport, 30000, &error), qPrintable(error));
        AgentClient agent(&transport, o.host, AgentClient::defaultLocalAgentPath());
        HostCalls calls(&transport, &agent);
        TuneFlow flow(&calls);
        flow.setReconnectWaitMs(60000);

        TuneSpec spec;
        spec.framework = Framework::SGLang;
        spec.experts = 128;
        spec.n = 384;
        spec.hiddenSize = 2048;
        spec.topk = 8;
        spec.batchSizes = {1, 16};
        spec.backend = u"synthetic"_s;
        spec.deviceName = u"NVIDIA_H200"_s;
        spec.strategy = u"fast"_s;
        QString runId;
        bool started = false;
        flow.start(spec, [&](const QString &id, const QJsonObject &, const QString &e) {
            runId = id;
            error = e;
            started = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(started, 60000);
        QVERIFY2(error.isEmpty(), qPrintable(error));

        RunProgress progress;
        bool followed = false;
        bool ok = false;
        int dropped = 0;
        connect(&flow, &TuneFlow::runEvent, this, [&](const QJsonObject &) {
            if (dropped == 0 && progress.measurements >= 20) {
                dropped = 1;
                m_sshd.killSessions(); // the link drops mid-run
            }
        });
        QSignalSpy reattaching(&flow, &TuneFlow::reattaching);
        flow.follow(runId, &progress, [&](bool o2, const QString &e) {
            ok = o2;
            error = e;
            followed = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(followed, 300000);
        QVERIFY2(ok, qPrintable(error));
        QCOMPARE(dropped, 1);
        QVERIFY(reattaching.count() >= 1);
        QVERIFY(flow.reattachCount() >= 1);
        QCOMPARE(progress.doneStatus, u"ok"_s);
        QVERIFY(progress.simulated);
        // Exactly the run's own events: as many as events.jsonl holds, each measurement once.
        const QStringList events = readLines(progress.runDir + u"/events.jsonl"_s);
        QCOMPARE(progress.lastSeq + 1, qint64(events.size()));
        QCOMPARE(progress.measurements, int(events.filter(u"\"type\": \"measurement\""_s).size() +
                                            events.filter(u"\"type\":\"measurement\""_s).size()));
        QCOMPARE(progress.duplicatesDropped, 0);
    }
};

QTEST_GUILESS_MAIN(TestTuneFlowE2E)
#include "tst_tuneflow_e2e.moc"
