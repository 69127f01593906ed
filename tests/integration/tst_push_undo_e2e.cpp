// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Push and Undo that tell the truth (issue 40 items 5 and 6), end to end over a real sshd on 127.0.0.1
// with the agent zipapp, against the practice server's fake SGLang tree (TEST DOUBLES: the labelled fake
// server resources/practice/fake_sglang_server.py and its tree; see fakeserverhost.h; every number comes
// from the agent's synthetic backend and is SIMULATED). The folder the server reads is compared byte for
// byte (every file and folder under the config root) before and after: push, push again, undo; push A,
// push B (another run), undo B, undo A; undo after a hand edit; a file changed between preview and push;
// two pushes at once; and Restart and prove with the server down.
#include "clirun.h"
#include "core/diagnosis/diagnoser.h"
#include "fakeserverhost.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/jobwaiter.h"
#include "remote/flows/pushflow.h"
#include "remote/flows/servercontrol.h"
#include "remote/transport/sshtransport.h"
#include "sshdfixture.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QTest>

#include <memory>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

using moetune::test::CliResult;
using Snapshot = QMap<QString, QByteArray>;

// One connection of the app's flows (as one engineer's app has it).
struct Flows {
    std::unique_ptr<SshTransport> transport;
    std::unique_ptr<AgentClient> agent;
    std::unique_ptr<HostCalls> calls;
    std::unique_ptr<ServerControl> server;
    std::unique_ptr<PushFlow> push;
};

} // namespace

class TestPushUndoE2E : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    moetune::test::SshdFixture m_sshd;
    moetune::test::FakeServerHost m_host;
    QString m_cli;
    QString m_hostSpec;
    QString m_profileFile;
    QString m_runA;

    CliResult cli(const QStringList &args, int timeoutMs = 240000) {
        return moetune::test::runCli(m_cli, args, timeoutMs);
    }
    QStringList hostArgs() const {
        return {m_hostSpec, u"--python"_s, m_host.python(), u"--profile"_s, m_profileFile};
    }
    QString up() const { return m_host.wantedFolder() + u'/' + m_host.upName(); }

    // Every folder and file under the server's config root, with its bytes: "the folder byte for byte".
    Snapshot snapshot() const {
        Snapshot s;
        QDirIterator it(m_host.configRoot(),
                        QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            const QFileInfo fi(path);
            if (fi.isDir()) {
                s.insert(path + u'/', QByteArray("<folder>"));
                continue;
            }
            QFile f(path);
            s.insert(path, f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>"));
        }
        return s;
    }
    static QString diff(const Snapshot &a, const Snapshot &b) {
        QStringList out;
        for (auto it = a.cbegin(); it != a.cend(); ++it) {
            if (!b.contains(it.key()))
                out.append(u"only before: "_s + it.key());
            else if (b.value(it.key()) != it.value())
                out.append(u"differs: "_s + it.key());
        }
        for (auto it = b.cbegin(); it != b.cend(); ++it) {
            if (!a.contains(it.key()))
                out.append(u"only after: "_s + it.key());
        }
        return out.join(u'\n');
    }

    QString tune(const QString &batchSizes) {
        const CliResult r =
            cli(QStringList{u"tune"_s} + hostArgs() +
                QStringList{u"--from-log"_s, m_host.log(), u"--backend"_s, u"synthetic"_s, u"--batch-sizes"_s,
                            batchSizes, u"--follow"_s, u"--format"_s, u"json"_s});
        if (r.exitCode != 0)
            qWarning("tune failed: %s", qPrintable(r.err));
        return r.json().value("run_id"_L1).toString();
    }

    std::unique_ptr<Flows> connectFlows() {
        auto f = std::make_unique<Flows>();
        SshOptions o = m_sshd.options();
        o.knownHostsFile = m_home.path() + u"/.ssh/known_hosts"_s;
        o.host.python = m_host.python();
        f->transport = std::make_unique<SshTransport>(o);
        f->transport->connectToHost();
        QString error;
        if (!waitForConnected(f->transport.get(), 30000, &error)) {
            qWarning("connect: %s", qPrintable(error));
            return nullptr;
        }
        f->agent =
            std::make_unique<AgentClient>(f->transport.get(), o.host, AgentClient::defaultLocalAgentPath());
        f->calls = std::make_unique<HostCalls>(f->transport.get(), f->agent.get());
        f->server = std::make_unique<ServerControl>(f->calls.get(), m_host.profile());
        f->push = std::make_unique<PushFlow>(f->calls.get(), f->server.get(), u"test"_s);
        return f;
    }

    static PushFlow::Preview preview(Flows &f, const QString &runId, const Diagnosis &before) {
        PushFlow::Preview p;
        bool done = false;
        f.push->preview(runId, Framework::SGLang, &before, nullptr, false, [&](const PushFlow::Preview &pv) {
            p = pv;
            done = true;
        });
        QElapsedTimer t;
        t.start();
        while (!done && t.elapsed() < 120000)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        return p;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qputenv("XDG_DATA_HOME", (m_home.path() + u"/xdg-data"_s).toUtf8());
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
        const CliResult t =
            cli({u"trust-host"_s, m_hostSpec, u"--fingerprint"_s, m_sshd.hostKeyFingerprint()});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        // The server's startup log names the config file it wants (the push's target); then it idles.
        QVERIFY2(m_host.startServer(&error), qPrintable(error));
        m_runA = tune(u"1,16"_s);
        QVERIFY(!m_runA.isEmpty());
        QVERIFY(!QFile::exists(up()));
    }

    void cleanupTestCase() {
        m_host.stopServer();
        m_sshd.stop();
    }

    // Push, push the same run again (the same bytes: it changes nothing), undo: the folder is byte for
    // byte what it was before the first push, and the message says exactly that, from the read-back.
    void pushPushAgainUndo() {
        const Snapshot before = snapshot();
        CliResult r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{m_runA});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QVERIFY2(r.out.contains("Pushed SIMULATED configs. Undo with"), r.out.constData());
        QVERIFY(QFile::exists(up()));
        QVERIFY(snapshot() != before);

        r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{m_runA});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QVERIFY2(!r.out.contains("Pushed"), r.out.constData());
        QVERIFY2(r.out.contains("Nothing changed: the same bytes were already there"), r.out.constData());

        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{m_runA});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QCOMPARE(diff(before, snapshot()), QString());
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains(up() + u": absent, as it was before the first push of run "_s + m_runA),
                 qPrintable(out));
        QVERIFY2(out.contains(
                     u"Undone, read back from the host: every file the push(es) of run %1 changed is what "
                     u"it was before the first push"_s.arg(m_runA)),
                 qPrintable(out));
        QVERIFY2(out.contains(
                     u"changed nothing (the same bytes were already there), so it is undone to nothing"_s),
                 qPrintable(out));
        QVERIFY2(!out.contains(u"restored"_s), qPrintable(out)); // nothing existed to restore

        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{m_runA});
        QCOMPARE(r.exitCode, 4);
        QVERIFY2(r.err.contains(u"already undone"_s), qPrintable(r.err));
        QCOMPARE(diff(before, snapshot()), QString());
    }

    // Push A, push B (another run, measured against A's file: it adds a row), undo B, undo A. Undo A while
    // B's file is there is refused: A's file is not there any more.
    void pushAPushBUndoBUndoA() {
        const Snapshot before = snapshot();
        CliResult r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{m_runA});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        const Snapshot afterA = snapshot();

        // Run B's default is A's file (MOETUNE_SYNTHETIC_DEFAULT_FILE in the host's interpreter makes it the
        // synthetic server's existing file: TEST DOUBLE), at a size A's file has no key for.
        QFile py(m_host.python());
        QVERIFY(py.open(QIODevice::ReadOnly));
        const QByteArray script = py.readAll();
        py.close();
        QByteArray hooked = script;
        const QByteArray hook = QByteArray("export MOETUNE_SYNTHETIC_DEFAULT_FILE=") +
                                shellQuote(up()).toUtf8() + "\nexec python3";
        hooked.replace(QByteArray("exec python3"), hook);
        QVERIFY(hooked != script);
        QVERIFY(py.open(QIODevice::WriteOnly | QIODevice::Truncate));
        py.write(hooked);
        py.close();
        const QString runB = tune(u"256"_s);
        QVERIFY(py.open(QIODevice::WriteOnly | QIODevice::Truncate));
        py.write(script);
        py.close();
        QVERIFY(!runB.isEmpty());

        r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{runB});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QVERIFY2(r.out.contains("Pushed SIMULATED configs"), r.out.constData());
        const Snapshot afterB = snapshot();
        QVERIFY2(!diff(afterA, afterB).isEmpty(), "push B changed nothing");

        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{m_runA});
        QCOMPARE(r.exitCode, 4);
        QVERIFY2(r.err.contains(u"Undo refused, nothing was touched"_s) && r.err.contains(up()),
                 qPrintable(r.err));
        QVERIFY2(r.err.contains(u"undo that one first"_s), qPrintable(r.err));
        QCOMPARE(diff(afterB, snapshot()), QString());

        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{runB});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QVERIFY2(QString::fromUtf8(r.out).contains(
                     u"byte for byte what it was before the first push of run "_s + runB),
                 r.out.constData());
        // B's backup of A's file stays beside it (a backup is never deleted by an undo).
        Snapshot now = snapshot();
        for (auto it = now.begin(); it != now.end();)
            it = it.key().contains(u".bak-"_s) ? now.erase(it) : std::next(it);
        QCOMPARE(diff(afterA, now), QString());

        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{m_runA});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QVERIFY2(QString::fromUtf8(r.out).contains(
                     up() + u": absent, as it was before the first push of run "_s + m_runA),
                 r.out.constData());
        // Every file as before the first push; the folder A's push created stays only for B's backups in it
        // (the undo says so).
        QVERIFY2(r.out.contains("is kept: something else is in it now"), r.out.constData());
        now = snapshot();
        for (auto it = now.begin(); it != now.end();)
            it = it.key().contains(u".bak-"_s) || it.key() == m_host.wantedFolder() + u'/' ? now.erase(it)
                                                                                           : std::next(it);
        QCOMPARE(diff(before, now), QString());
        // Clean slate for the next test: the backups B's push kept.
        const Snapshot left = snapshot();
        for (auto it = left.cbegin(); it != left.cend(); ++it) {
            if (it.key().contains(u".bak-"_s))
                QFile::remove(it.key());
        }
        QDir().rmdir(m_host.wantedFolder());
        QCOMPARE(diff(before, snapshot()), QString());
    }

    // Undo after the pushed file was changed by hand: refused, nothing touched (not the other file either).
    void undoAfterHandEditIsRefused() {
        const Snapshot before = snapshot();
        CliResult r = cli(QStringList{u"push"_s} + hostArgs() + QStringList{m_runA});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QFile f(up());
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray pushed = f.readAll();
        f.close();
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Append));
        f.write("\n");
        f.close();
        const Snapshot edited = snapshot();
        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{m_runA});
        QCOMPARE(r.exitCode, 4);
        QVERIFY2(r.err.contains(u"Undo refused, nothing was touched: "_s + up()), qPrintable(r.err));
        QCOMPARE(diff(edited, snapshot()), QString());
        // The pushed bytes back: the undo goes through.
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(pushed);
        f.close();
        r = cli(QStringList{u"undo-push"_s} + hostArgs() + QStringList{m_runA});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QCOMPARE(diff(before, snapshot()), QString());
    }

    // The file changed between the preview and the push (through the flows the app drives): refused,
    // nothing installed, and the sentence says so.
    void fileChangedBetweenPreviewAndPush() {
        auto flows = connectFlows();
        QVERIFY(flows);
        const Diagnosis before = Diagnoser().diagnoseFile(m_host.log());
        const PushFlow::Preview pv = preview(*flows, m_runA, before);
        QVERIFY2(pv.canPush(), qPrintable(pv.error + pv.refused));
        QVERIFY(!QFile::exists(up()));
        // Another engineer's hand-made file appears after the preview.
        QVERIFY(QDir().mkpath(m_host.wantedFolder()));
        {
            QFile f(up());
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"1\": {\"BLOCK_SIZE_M\": 64, \"BLOCK_SIZE_N\": 64, \"BLOCK_SIZE_K\": 32, "
                    "\"GROUP_SIZE_M\": 8, "
                    "\"num_warps\": 4, \"num_stages\": 3}}\n");
        }
        const Snapshot handMade = snapshot();
        PushRecord rec;
        QString error;
        bool done = false;
        flows->push->push(pv, [&](const PushRecord &r, const QString &e) {
            rec = r;
            error = e;
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 120000);
        QVERIFY2(error.startsWith(u"Nothing was pushed: "_s), qPrintable(error));
        QVERIFY2(error.contains(up() + u" changed between the preview and the push"_s), qPrintable(error));
        QVERIFY(!rec.changedSomething());
        QCOMPARE(diff(handMade, snapshot()), QString());
        // No record was kept for a push that installed nothing: there is nothing to undo.
        PushFlow::Undo undo;
        done = false;
        flows->push->undoRun(m_runA, [&](const PushFlow::Undo &u) {
            undo = u;
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 60000);
        QVERIFY2(undo.error.contains(u"already undone"_s), qPrintable(undo.error + undo.message));
        QVERIFY(QFile::remove(up()));
        QVERIFY(QDir().rmdir(m_host.wantedFolder()));
    }

    // Two engineers push the same preview at the same time (two connections): one installs, the other says
    // it did not, and only the one that installed keeps a record.
    void twoPushesAtOnce() {
        const Snapshot before = snapshot();
        auto one = connectFlows();
        auto two = connectFlows();
        QVERIFY(one && two);
        const Diagnosis diag = Diagnoser().diagnoseFile(m_host.log());
        const PushFlow::Preview p1 = preview(*one, m_runA, diag);
        const PushFlow::Preview p2 = preview(*two, m_runA, diag);
        QVERIFY(p1.canPush() && p2.canPush());
        struct Out {
            bool done = false;
            PushRecord rec;
            QString error;
        };
        Out o1, o2;
        one->push->push(p1, [&](const PushRecord &r, const QString &e) { o1 = {true, r, e}; });
        two->push->push(p2, [&](const PushRecord &r, const QString &e) { o2 = {true, r, e}; });
        QTRY_VERIFY_WITH_TIMEOUT(o1.done && o2.done, 120000);
        const bool firstWon = o1.error.isEmpty();
        const Out &won = firstWon ? o1 : o2;
        const Out &lost = firstWon ? o2 : o1;
        QVERIFY2(won.error.isEmpty() && won.rec.changedSomething(),
                 qPrintable(o1.error + u" / "_s + o2.error));
        QVERIFY2(lost.error.startsWith(u"Nothing was pushed: "_s), qPrintable(lost.error));
        QVERIFY2(lost.error.contains(u"another install-config"_s) ||
                     lost.error.contains(u"changed between the preview and the push"_s),
                 qPrintable(lost.error));
        QVERIFY(!lost.rec.changedSomething());
        // The history holds the one push that happened; undo puts the folder back.
        PushHistory h;
        bool done = false;
        one->push->readHistory(m_runA, [&](const PushHistory &hist, const QString &, const QString &) {
            h = hist;
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 60000);
        QCOMPARE(h.notUndone().size(), 1);
        PushFlow::Undo undo;
        done = false;
        one->push->undoRun(m_runA, [&](const PushFlow::Undo &u) {
            undo = u;
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 60000);
        QVERIFY2(undo.ok, qPrintable(undo.error));
        QCOMPARE(diff(before, snapshot()), QString());
    }

    // Restart and prove with the server down and nothing pushed: it says so (issue 40 item 8), and starts
    // nothing.
    void restartWhenTheServerIsDown() {
        m_host.stopServer();
        QVERIFY(!QFile::exists(m_host.pidFile()));
        auto flows = connectFlows();
        QVERIFY(flows);
        PushFlow::Proof proof;
        bool done = false;
        flows->push->restartAndProve(Diagnosis{}, {}, m_home.path() + u"/after.log"_s,
                                     [&](const PushFlow::Proof &p) {
                                         proof = p;
                                         done = true;
                                     });
        QTRY_VERIFY_WITH_TIMEOUT(done, 120000);
        QVERIFY(!proof.ok);
        QVERIFY(proof.stop.notRunning);
        QVERIFY2(
            proof.message.startsWith(u"The server is not running; nothing was pushed in this session."_s),
            qPrintable(proof.message));
        QVERIFY(!QFile::exists(m_host.pidFile())); // not started
    }
};

QTEST_GUILESS_MAIN(TestPushUndoE2E)
#include "tst_push_undo_e2e.moc"
