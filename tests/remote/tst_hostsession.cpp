// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// HostSession's flows on the Local machine: the real agent zipapp, the real LocalTransport, real files and
// processes (a fake SGLang install, tests/support/fakesglanghost.h), driven through the signals the app uses
// and through HostSessionSync as the CLI uses it.
#include "core/diagnosis/diagnoser.h"
#include "fakesglanghost.h"
#include "remote/flows/headroomflow.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/hostsessionsync.h"
#include "remote/flows/servercontrol.h"
#include "remote/flows/servingflow.h"
#include "remote/flows/tuneflow.h"
#include "remote/hosts/hoststore.h"

#include <QSignalSpy>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

QStringList rulesOf(const Diagnosis &d) {
    QStringList rules;
    for (const Finding &f : d.findings)
        rules.append(f.rule);
    return rules;
}

QByteArray readAll(const QString &path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestHostSession : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<test::FakeSglangHost> m_host;
    QTemporaryDir m_tmp;

    HostConfig local(const QString &logSource = {}) const {
        HostConfig h;
        h.alias = HostStore::localAlias();
        h.local = true;
        h.logSource = LogSource::fromString(logSource.isNull() ? m_host->logPath() : logSource);
        return h;
    }
    HostSession::Environment env() const {
        HostSession::Environment e;
        e.localHome = m_host->homePath();
        e.agentPath = QStringLiteral(MOETUNE_AGENT_PYZ);
        return e;
    }

private slots:
    void initTestCase() {
        QVERIFY2(QFile::exists(QStringLiteral(MOETUNE_AGENT_PYZ)), MOETUNE_AGENT_PYZ " not built");
        m_host = std::make_unique<test::FakeSglangHost>();
        QString error;
        QVERIFY2(m_host->create(&error), qPrintable(error));
        QVERIFY(m_tmp.isValid());
    }

    void probeJoinsAndNamesTheHost() {
        HostSession s(local(), env());
        QSignalSpy started(&s, &HostSession::jobStarted);
        QSignalSpy probed(&s, &HostSession::probed);
        QSignalSpy finished(&s, &HostSession::jobFinished);
        const JobId id = s.probe();
        QVERIFY(id != 0);
        QVERIFY(s.isProbing());
        QCOMPARE(s.probe(), id); // a second request joins the running probe
        QCOMPARE(started.count(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(finished.first().at(0).value<JobId>(), id);
        QCOMPARE(finished.first().at(2).toBool(), true);
        QCOMPARE(probed.count(), 1);
        const auto p = probed.first().at(1).value<HostProbe>();
        QCOMPARE(p.hostName, s.label()); // one name for this machine: "Local machine"
        QCOMPARE(s.label(), u"Local machine"_s);
        QVERIFY(p.tritonVersion);
        QCOMPARE(p.tritonVersion->toString(), u"3.6.0"_s);
        QVERIFY(s.lastProbe());
        QVERIFY(!s.isProbing());
    }

    void fetchLogComesWithTheProbe_data() {
        QTest::addColumn<qint64>("maxBytes");
        QTest::newRow("whole log") << qint64(64) * 1024 * 1024;
        QTest::newRow("last 60 bytes") << qint64(60);
    }

    void fetchLogComesWithTheProbe() {
        QFETCH(qint64, maxBytes);
        HostSession s(local(), env());
        QSignalSpy fetched(&s, &HostSession::logFetched);
        QSignalSpy failed(&s, &HostSession::jobFailed);
        QSignalSpy finished(&s, &HostSession::jobFinished);
        const QString file = m_tmp.filePath(u"fetched-%1.log"_s.arg(maxBytes));
        QString error;
        const JobId id = s.fetchLog(maxBytes, file, &error);
        QVERIFY2(id != 0, qPrintable(error));
        QVERIFY(s.isFetching());
        QString other;
        QCOMPARE(s.fetchLog(maxBytes, file, &other), JobId(0)); // one fetch at a time, said why
        QVERIFY2(other.contains(u"already being fetched"_s), qPrintable(other));
        QTRY_COMPARE_WITH_TIMEOUT(fetched.count(), 1, 60000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(2).toString()));
        QCOMPARE(fetched.first().at(0).value<JobId>(), id);
        QCOMPARE(fetched.first().at(1).toString(), file);
        const auto probe = fetched.first().at(2).value<HostProbe>();
        QVERIFY(probe.tritonVersion); // the probe came along without being asked for
        const QByteArray whole = readAll(m_host->logPath());
        QCOMPARE(readAll(file), whole.right(qMin<qint64>(maxBytes, whole.size())));
        // the probe job and the fetch job both end with jobFinished, the fetch last
        QTRY_COMPARE(finished.count(), 2);
        QCOMPARE(finished.last().at(0).value<JobId>(), id);
        QCOMPARE(finished.last().at(1).value<HostSession::Flow>(), HostSession::Flow::FetchLog);
    }

    void fetchErrors_data() {
        QTest::addColumn<QString>("logSource");
        QTest::addColumn<bool>("starts");
        QTest::addColumn<QString>("message");
        QTest::newRow("no log source") << QString(u""_s) << false << u"Local machine has no log source"_s;
        QTest::newRow("missing file")
            << u"/nonexistent/sglang.log"_s << true << u"Cannot fetch the log of Local machine"_s;
        QTest::newRow("failing command")
            << u"echo broken >&2; exit 3"_s << true << u"(exit status 3): broken"_s;
    }

    void fetchErrors() {
        QFETCH(QString, logSource);
        QFETCH(bool, starts);
        QFETCH(QString, message);
        HostSession s(local(logSource), env());
        QSignalSpy failed(&s, &HostSession::jobFailed);
        QSignalSpy fetched(&s, &HostSession::logFetched);
        QString error;
        const JobId id = s.fetchLog(1 << 20, m_tmp.filePath(u"err.log"_s), &error);
        QCOMPARE(id != 0, starts);
        if (!starts) {
            QVERIFY2(error.contains(message), qPrintable(error));
            return;
        }
        QTRY_VERIFY_WITH_TIMEOUT(!s.isFetching(), 60000);
        QVERIFY(fetched.isEmpty());
        bool seen = false;
        for (const auto &args : std::as_const(failed)) {
            if (args.at(0).value<JobId>() == id) {
                seen = true;
                QCOMPARE(args.at(1).value<HostSession::Flow>(), HostSession::Flow::FetchLog);
                QVERIFY2(args.at(2).toString().contains(message), qPrintable(args.at(2).toString()));
            }
        }
        QVERIFY(seen);
    }

    void cancelFetch() {
        HostSession s(local(u"sleep 30; echo late"_s), env());
        QSignalSpy failed(&s, &HostSession::jobFailed);
        QString error;
        QElapsedTimer t;
        t.start();
        const JobId id = s.fetchLog(1 << 20, m_tmp.filePath(u"cancelled.log"_s), &error);
        QVERIFY2(id, qPrintable(error));
        QTest::qWait(300);
        s.cancel(id);
        QTRY_VERIFY_WITH_TIMEOUT(!s.isFetching(), 20000);
        QVERIFY(t.elapsed() < 25000); // the sleep was ended, not waited out
        QVERIFY(!failed.isEmpty());
        QCOMPARE(failed.last().at(0).value<JobId>(), id);
        QVERIFY2(failed.last().at(2).toString().contains(u"cancelled"_s),
                 qPrintable(failed.last().at(2).toString()));
    }

    void followSeesNewLines() {
        const QString log = m_tmp.filePath(u"follow.log"_s);
        {
            QFile f(log);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("old line\n");
        }
        HostSession s(local(log), env());
        QSignalSpy lines(&s, &HostSession::followLines);
        QSignalSpy stopped(&s, &HostSession::followStopped);
        QSignalSpy finished(&s, &HostSession::jobFinished);
        QString error;
        const JobId id = s.startFollow(&error);
        QVERIFY2(id, qPrintable(error));
        QCOMPARE(s.startFollow(&error), id);
        QTest::qWait(1000); // tail -F has opened the file
        {
            QFile f(log);
            QVERIFY(f.open(QIODevice::Append));
            f.write("[TP0] a new line\n");
        }
        QTRY_VERIFY_WITH_TIMEOUT(!lines.isEmpty(), 20000);
        QCOMPARE(lines.first().at(0).value<JobId>(), id);
        QStringList got;
        for (const auto &args : std::as_const(lines))
            got += args.at(1).toStringList();
        QTRY_VERIFY_WITH_TIMEOUT(
            got.contains(u"[TP0] a new line"_s) ||
                [&] {
                    got.clear();
                    for (const auto &args : std::as_const(lines))
                        got += args.at(1).toStringList();
                    return got.contains(u"[TP0] a new line"_s);
                }(),
            20000);
        // The log's latest lines first (Follow Live never opens on an empty view), then what came after.
        QCOMPARE(got, (QStringList{u"old line"_s, u"[TP0] a new line"_s}));
        s.stopFollow();
        QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 1, 20000);
        QCOMPARE(stopped.first().at(1).toString(), QString()); // stopped by us: no error
        QTRY_VERIFY(!finished.isEmpty());
        QCOMPARE(finished.last().at(2).toBool(), true);
        QVERIFY(!s.isFollowing());
    }

    void diagnoseHostMergesTheProbe() {
        HostSession s(local(), env());
        QSignalSpy diagnosed(&s, &HostSession::hostDiagnosed);
        QSignalSpy finished(&s, &HostSession::jobFinished);
        QString error;
        const JobId id = s.diagnoseHost(64 << 20, m_tmp.filePath(u"diag.log"_s), Diagnoser(), &error);
        QVERIFY2(id, qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(diagnosed.count(), 1, 60000);
        QCOMPARE(diagnosed.first().at(0).value<JobId>(), id);
        const QStringList rules = rulesOf(diagnosed.first().at(1).value<Diagnosis>());
        QVERIFY2(rules.contains(u"moe-fallback"_s), qPrintable(rules.join(u' '))); // from the log
        QVERIFY2(rules.contains(u"host-triton-folder-missing"_s), qPrintable(rules.join(u' '))); // the probe
        QTRY_VERIFY(!finished.isEmpty());
        QCOMPARE(finished.last().at(0).value<JobId>(), id);
        QCOMPARE(finished.last().at(1).value<HostSession::Flow>(), HostSession::Flow::DiagnoseHost);
    }

    // The session owns its flows: one bundle over its agent and the host's profile, made again when the
    // host's settings remade the agent, but not under a followed run (the run keeps its agent).
    void flowsBelongToTheSession() {
        HostConfig h = local();
        h.serverProfile.stopCommand = u"true"_s;
        HostSession s(h, env());
        QPointer<HostFlows> first = s.flows();
        QVERIFY(first);
        QCOMPARE(s.flows(), first.data());
        QCOMPARE(first->session(), &s);
        QVERIFY(first->isCurrent());
        QVERIFY(first->serving() && first->headroom() && first->runKeeper());
        QCOMPARE(first->calls()->agent(), s.agent());
        QCOMPARE(first->server()->profile().stopCommand, u"true"_s);

        // A followed run (here one the host does not know: the agent says so) keeps the bundle and its
        // agent while the host's settings change under it.
        RunProgress progress;
        bool followed = false;
        QString followError;
        first->tune()->follow(u"no-such-run"_s, &progress, [&](bool ok, const QString &error) {
            followed = true;
            QVERIFY(!ok);
            followError = error;
        });
        QVERIFY(first->tune()->isFollowing());
        QVERIFY(first->isBusy());
        h.serverProfile.stopCommand = u"false"_s;
        s.setHost(h);
        QCOMPARE(s.flows(), first.data());
        QVERIFY(first->isCurrent());
        QCOMPARE(first->server()->profile().stopCommand, u"false"_s); // the profile follows setHost

        QTRY_VERIFY_WITH_TIMEOUT(followed, 60000);
        QVERIFY2(!followError.isEmpty(), "the follow of an unknown run ended without a reason");
        QVERIFY(!first->tune()->isFollowing());
        // Idle now: the session remakes its agent, and the bundle over the old one is replaced.
        QPointer<HostFlows> second = s.flows();
        QVERIFY(second && second != first);
        QVERIFY(second->isCurrent());
        QCOMPARE(second->calls()->agent(), s.agent());
        QTRY_VERIFY(first.isNull()); // deleted, so a shell's QPointer to it turns null
        QCOMPARE(s.flows(), second.data());
    }

    void syncWrapper() {
        HostSessionSync sync(local(), {}, env());
        QString error;
        QVERIFY2(sync.connect(&error), qPrintable(error));
        const auto probe = sync.probe(&error);
        QVERIFY2(probe, qPrintable(error));
        QCOMPARE(probe->hostName, u"Local machine"_s);
        QString probeError;
        const auto d =
            sync.diagnoseHost(64 << 20, m_tmp.filePath(u"sync.log"_s), Diagnoser(), &error, &probeError);
        QVERIFY2(d, qPrintable(error));
        QVERIFY(probeError.isEmpty());
        QVERIFY(rulesOf(*d).contains(u"host-triton-folder-missing"_s));
    }

    void syncTimeoutCancels() {
        HostSessionSync::Options o;
        o.timeoutMs = 1500;
        HostSessionSync sync(local(u"sleep 30"_s), o, env());
        QString error;
        QVERIFY2(sync.connect(&error), qPrintable(error));
        QElapsedTimer t;
        t.start();
        QVERIFY(!sync.fetchLog(1 << 20, m_tmp.filePath(u"slow.log"_s), &error));
        QVERIFY2(error.contains(u"timed out after 1 s"_s), qPrintable(error));
        QVERIFY(t.elapsed() < 10000);
        QTRY_VERIFY_WITH_TIMEOUT(!sync.session()->isFetching(), 10000); // cancelled, not left running
    }
};

QTEST_GUILESS_MAIN(TestHostSession)
#include "tst_hostsession.moc"
