// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The serving proof end to end over a real sshd on 127.0.0.1, against a fake SGLang host (TEST DOUBLES:
// resources/practice/fake_sglang_server.py as the server, now answering an OpenAI-compatible API whose
// latency follows the config file it loaded; tests/support/fakebenchserving.py as sglang.bench_serving; a
// scripted nvidia-smi; see fakeserverhost.h). The agent, install-config, the profile's shell commands,
// the HTTP traffic and every file are real. Through moetune-cli (bench; push --restart --bench with the
// tool missing, then slower, then undo-push) and through the flows the app drives (ServingFlow over
// PushFlow/ServerControl: rigorous A B B A, faster, then undo).
#include "clirun.h"
#include "core/diagnosis/diagnoser.h"
#include "core/host/serverchoice.h"
#include "fakeserverhost.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/jobwaiter.h"
#include "remote/flows/pushflow.h"
#include "remote/flows/servercontrol.h"
#include "remote/flows/servingflow.h"
#include "remote/flows/tuneflow.h"
#include "remote/transport/sshtransport.h"
#include "sshdfixture.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

using moetune::test::CliResult;

int freePort() {
    QTcpServer s;
    return s.listen(QHostAddress::LocalHost, 0) ? s.serverPort() : 0;
}

} // namespace

class TestServingE2E : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    moetune::test::SshdFixture m_sshd;
    moetune::test::FakeServerHost m_host;
    QString m_cli;
    QString m_hostSpec;
    QString m_profileFile;
    QString m_goodRun; // tuned at M = 1, 16, 256: a row for the benchmark's M = 16
    QString m_slowRun; // tuned at M = 1, 256 only: no row near 16

    CliResult cli(const QStringList &args, int timeoutMs = 240000) {
        return moetune::test::runCli(m_cli, args, timeoutMs);
    }
    QStringList hostArgs() const {
        return {m_hostSpec, u"--python"_s, m_host.python(), u"--profile"_s, m_profileFile};
    }
    // A small workload: 32 prompts, 16 in flight (M = 16 in the fake server), 8 tokens each.
    static QStringList workloadArgs() {
        // Short prompts, longer answers: the primary metric of this custom workload is median TPOT, the
        // figure the fake server's rule moves.
        return {u"--bench-prompts"_s,   u"32"_s, u"--bench-concurrency"_s, u"16"_s,
                u"--bench-input-len"_s, u"8"_s,  u"--bench-output-len"_s,  u"24"_s};
    }
    static ServingWorkload workload() {
        ServingWorkload w;
        w.preset = u"custom"_s;
        w.inputLen = 8;
        w.outputLen = 24;
        w.numPrompts = 32;
        w.concurrencies = {16};
        return w;
    }
    QString tune(const QString &batchSizes) {
        const CliResult r =
            cli(QStringList{u"tune"_s} + hostArgs() +
                QStringList{u"--from-log"_s, m_host.log(), u"--backend"_s, u"synthetic"_s, u"--batch-sizes"_s,
                            batchSizes, u"--up-down"_s, u"--follow"_s, u"--format"_s, u"json"_s});
        if (r.exitCode != 0)
            qWarning("%s", qPrintable(r.err));
        return r.json().value("run_id"_L1).toString();
    }

public slots:
    void trace(const QString &line) { qInfo("%s", qPrintable(line.left(100))); }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        QString error;
        QVERIFY2(m_sshd.start(&error), qPrintable(error));
        QVERIFY2(m_host.create(&error), qPrintable(error));
        const int port = freePort();
        QVERIFY(port > 0);
        // 20 ms a token at factor 1: the 25% the fake server's rule gives stands well above timer noise.
        QVERIFY2(m_host.enableServing(QStringLiteral(MOETUNE_FAKEBENCH_PY), port, 20, &error),
                 qPrintable(error));
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
        const CliResult t =
            cli({u"trust-host"_s, m_hostSpec, u"--fingerprint"_s, m_sshd.hostKeyFingerprint()});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        QVERIFY2(m_host.startServer(&error), qPrintable(error));
        m_goodRun = tune(u"1,16,256"_s);
        m_slowRun = tune(u"1,256"_s);
        QVERIFY(!m_goodRun.isEmpty() && !m_slowRun.isEmpty());
    }

    void cleanupTestCase() {
        m_host.stopServer();
        m_sshd.stop();
    }

    // moetune-cli bench: the server as it is, the tool found from the probe's server (its --port, its
    // interpreter and PYTHONPATH), the figures parsed from the tool's JSON line.
    void cliBenchAlone() {
        const CliResult r = cli(QStringList{u"bench"_s} + hostArgs() + workloadArgs() +
                                QStringList{u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        const QJsonObject s = r.json().value("serving"_L1).toObject();
        QCOMPARE(s.value("verdict"_L1).toString(), u"unpaired"_s);
        QCOMPARE(s.value("bench"_L1).toObject().value("port"_L1).toInt(), m_host.port());
        const QJsonArray legs = s.value("legs"_L1).toArray();
        QCOMPARE(legs.size(), 1);
        const QJsonObject res = legs.first().toObject().value("results"_L1).toArray().first().toObject();
        QCOMPARE(res.value("completed"_L1).toInt(), 32);
        // The fallback file has a row for M = 1 only: factor 1.25 at M = 16, 25 ms a token.
        const double tpot = res.value("median_tpot_ms"_L1).toDouble();
        QVERIFY2(tpot > 22 && tpot < 60, qPrintable(QString::number(tpot)));
        QVERIFY(r.err.contains(u"-m sglang.bench_serving"_s));   // the command is shown
        QVERIFY(r.err.contains(u"fake sglang.bench_serving"_s)); // and what the tool printed
    }

    // The tool missing: a sentence, the command to try by hand, nothing pushed, no number.
    void cliMissingTool() {
        const QString moved = m_host.benchTool() + u".away"_s;
        QVERIFY(QFile::rename(m_host.benchTool(), moved));
        const CliResult r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{m_goodRun, u"--restart"_s} +
                                QStringList{u"--bench"_s, u"standard"_s} + workloadArgs() +
                                QStringList{u"--format"_s, u"json"_s});
        QVERIFY(QFile::rename(moved, m_host.benchTool()));
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.contains(u"is not installed for the server's interpreter"_s), qPrintable(r.err));
        QVERIFY2(r.err.contains(u"Try it by hand on the host: env PYTHONPATH="_s), qPrintable(r.err));
        const QJsonObject s = r.json().value("serving"_L1).toObject();
        QCOMPARE(s.value("verdict"_L1).toString(), u"failed"_s);
        QVERIFY(s.value("legs"_L1).toArray().first().toObject().value("results"_L1).toArray().isEmpty());
        QVERIFY(!r.json().value("pushed"_L1).toBool());
        QVERIFY(!QFile::exists(m_host.wantedFolder() + u'/' + m_host.upName())); // nothing was pushed
    }

    // A leg whose benchmark lost requests is no result: the fake tool drops the first 2 of 32 requests
    // (its labelled switch); the comparison stops at that leg, says why, gives no verdict, pushes nothing.
    void cliFailedRequestsNoVerdict() {
        const QString flag = QFileInfo(m_host.benchTool()).path() + u"/FAKEBENCH_FAIL_REQUESTS"_s;
        {
            QFile f(flag);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("2");
        }
        const CliResult r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{m_goodRun, u"--restart"_s} +
                                QStringList{u"--bench"_s, u"standard"_s, u"--bench-pairs"_s, u"2"_s} +
                                workloadArgs() + QStringList{u"--format"_s, u"json"_s});
        QFile::remove(flag);
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.contains(u"Only 30 of the 32 requests asked for completed"_s), qPrintable(r.err));
        const QJsonObject s = r.json().value("serving"_L1).toObject();
        QCOMPARE(s.value("verdict"_L1).toString(), u"failed"_s);
        QVERIFY(s.value("verdict_text"_L1).toString().startsWith(u"Not measured: "_s));
        QVERIFY(s.value("changes"_L1).toArray().isEmpty());
        QVERIFY(!r.json().value("pushed"_L1).toBool());
        QVERIFY(!QFile::exists(m_host.wantedFolder() + u'/' + m_host.upName())); // nothing was pushed
    }

    // The flows the app drives: rigorous A B B A, a restart per leg, the old state put back for A; the
    // fake server runs the pushed file's M = 16 row, 20% less per token: faster, with its interval; the
    // server ends on the pushed files; undo restores the host.
    void flowRigorousFasterThenUndo() {
        SshOptions o = m_sshd.options();
        o.knownHostsFile = m_home.path() + u"/.ssh/known_hosts"_s;
        o.host.python = m_host.python();
        SshTransport transport(o);
        transport.connectToHost();
        QString error;
        QVERIFY2(waitForConnected(&transport, 30000, &error), qPrintable(error));
        AgentClient agent(&transport, o.host, AgentClient::defaultLocalAgentPath());
        HostCalls calls(&transport, &agent);
        TuneFlow tune(&calls);
        // As HostFlows does for the app and the CLI: the probe is focused on the server the profile
        // names (its log), so another server on this machine is never the one benchmarked (issue 41).
        tune.setServerChoice(ServerChoice::of(m_host.profile()));
        ServerControl server(&calls, m_host.profile());
        PushFlow push(&calls, &server, u"fake host"_s);
        ServingFlow flow(&calls, &push, &server);

        HostProbe probe;
        bool probed = false;
        tune.preflight(TuneSpec{}, [&](const Preflight &, const HostProbe &p, const QString &e) {
            probe = p;
            error = e;
            probed = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(probed, 60000);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const Diagnosis before = Diagnoser().diagnoseFile(m_host.log());
        PushFlow::Preview preview;
        bool previewed = false;
        push.preview(m_goodRun, Framework::SGLang, &before, &probe, false, [&](const PushFlow::Preview &p) {
            preview = p;
            previewed = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(previewed, 60000);
        QVERIFY2(preview.ok(), qPrintable(preview.error));

        ServingFlow::Plan plan;
        plan.workload = workload();
        plan.bench = ServingBenchCommand::suggest(Framework::SGLang, &probe, server.profile());
        QCOMPARE(plan.bench.port, m_host.port());
        QVERIFY2(plan.bench.environment.join(u' ').contains(m_host.site()),
                 qPrintable(plan.bench.environment.join(u' ')));
        plan.rigorous = true;
        // 4 pairs: at 2 the t interval (t(1) = 12.7) is too wide for a verdict at this machine's noise.
        plan.pairs = 4;
        QSignalSpy started(&flow, &ServingFlow::legStarted);
        QSignalSpy finished(&flow, &ServingFlow::legFinished);
        ServingFlow::Outcome outcome;
        bool done = false;
        QElapsedTimer t;
        t.start();
        if (qEnvironmentVariableIsSet("MOETUNE_SERVING_TRACE")) {
            for (QObject *emitter : std::initializer_list<QObject *>{&flow, &server, &push})
                connect(emitter, SIGNAL(status(QString)), this, SLOT(trace(QString)));
            connect(&calls, &HostCalls::commandStarted, this,
                    [](const QString &c) { qInfo("$ %s", qPrintable(c.left(80))); });
        }
        flow.compare(plan, preview, before, m_home.filePath(u"after.log"_s),
                     [&](const ServingFlow::Outcome &out) {
                         outcome = out;
                         done = true;
                     });
        QTRY_VERIFY_WITH_TIMEOUT(done, 400000);
        qInfo("rigorous A B B A A B B A with 8 restarts and a final push: %.1f s",
              double(t.elapsed()) / 1000.0);
        const ServingComparison &c = outcome.comparison;
        QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
        QCOMPARE(started.count(), 8);
        QCOMPARE(finished.count(), 8);
        QString arms;
        for (const ServingComparison::Leg &l : c.legs)
            arms += l.arm;
        QCOMPARE(arms, u"ABBAABBA"_s);
        QCOMPARE(c.primary(), ServingResult::Metric::TpotMedian);
        QVERIFY2(c.verdict() == ServingComparison::Verdict::Faster, qPrintable(c.text()));
        QVERIFY2(c.verdictSentence().startsWith(u"Faster: median TPOT -"_s) &&
                     c.verdictSentence().contains(u"95% interval"_s),
                 qPrintable(c.verdictSentence()));
        bool tpotRow = false;
        for (const ServingComparison::Row &r : c.rows()) {
            if (r.metric != ServingResult::Metric::TpotMedian)
                continue;
            tpotRow = true;
            QVERIFY(r.change.hasInterval());
            // The fake server's rule makes a token 20% shorter; the benchmark's own overhead dilutes it.
            QVERIFY2(r.outcome == ServingChange::Outcome::Better && r.change.highPct < -5 &&
                         r.change.lowPct > -30,
                     qPrintable(c.text()));
        }
        QVERIFY(tpotRow);
        // The server ends on the pushed files, and the first boot on them was the log proof.
        QVERIFY(outcome.pushed);
        QVERIFY(outcome.proof.ok);
        QVERIFY(outcome.proof.proof.warningGone());
        QVERIFY(QFile::exists(m_host.wantedFolder() + u'/' + m_host.upName()));
        QVERIFY(c.note.isEmpty());

        // Undo: the file did not exist before the push, so it is removed again.
        PushRecord undone;
        done = false;
        push.undo(m_goodRun, [&](const PushRecord &r, const QString &e) {
            undone = r;
            error = e;
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 60000);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(!QFile::exists(m_host.wantedFolder() + u'/' + m_host.upName()));
    }

    // moetune-cli push --restart --bench with rigorous pairs, against a server that serves slower with the
    // pushed rows (the fake's inverted rule: a regression at the serving level, since the row merge never
    // replaces a measured-faster row with a slower one): slower, exit 1, Undo offered; undo-push --restart
    // removes the file the push created.
    void cliSlowerThenUndo() {
        const QString up = m_host.wantedFolder() + u'/' + m_host.upName();
        QFile::remove(up);
        {
            QFile f(m_host.invertFile());
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        CliResult r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{m_goodRun, u"--restart"_s} +
                          QStringList{u"--bench"_s, u"standard"_s, u"--bench-pairs"_s, u"4"_s} +
                          workloadArgs() + QStringList{u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 1, qPrintable(r.err + QString::fromUtf8(r.out)));
        const QJsonObject s = r.json().value("serving"_L1).toObject();
        QCOMPARE(s.value("verdict"_L1).toString(), u"slower"_s);
        QVERIFY(s.value("verdict_text"_L1).toString().contains(u"Undo push"_s));
        QCOMPARE(s.value("legs"_L1).toArray().size(), 8);
        QCOMPARE(s.value("primary_metric"_L1).toString(), u"median_tpot_ms"_s);
        QVERIFY(r.json().value("pushed"_L1).toBool());
        QVERIFY2(r.err.contains(u"Undo with: moetune-cli undo-push"_s), qPrintable(r.err));
        QVERIFY(QFile::exists(up)); // the slower file is what the server runs now

        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{m_goodRun, u"--restart"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QVERIFY(!QFile::exists(up));
        QFile::remove(m_host.invertFile());
    }
};

QTEST_GUILESS_MAIN(TestServingE2E)
#include "tst_serving_e2e.moc"
