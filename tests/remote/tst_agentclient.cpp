// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// AgentClient against a REAL sshd (SshdFixture) and this machine: several clients deploying the agent to
// one host at the same moment, and an agent that speaks another protocol version.
#include "core/job/tunespec.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/jobwaiter.h"
#include "remote/transport/localtransport.h"
#include "remote/transport/sshtransport.h"
#include "sshdfixture.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::SshdFixture;

class TestAgentClient : public QObject {
    Q_OBJECT

    SshdFixture m_sshd;

    std::unique_ptr<Transport> transport(bool ssh) {
        if (!ssh)
            return std::make_unique<LocalTransport>(m_sshd.remoteHome());
        auto t = std::make_unique<SshTransport>(m_sshd.options());
        t->connectToHost();
        QString error;
        if (!waitForConnected(t.get(), 30000, &error)) {
            qWarning() << "connect failed:" << error;
            return nullptr;
        }
        return t;
    }

    static QByteArray sha256(const QString &path) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            return {};
        QCryptographicHash h(QCryptographicHash::Sha256);
        h.addData(&f);
        return h.result().toHex();
    }

private slots:
    void initTestCase() {
        qunsetenv("SSH_AUTH_SOCK");
        QVERIFY2(QFile::exists(QStringLiteral(MOETUNE_AGENT_PYZ)), MOETUNE_AGENT_PYZ " not built");
        QString error;
        QVERIFY2(m_sshd.start(&error), qPrintable(error));
        QVERIFY2(m_sshd.trustHostKey(&error), qPrintable(error));
    }

    void cleanupTestCase() { m_sshd.stop(); }

    // Six clients (own SSH connections) find no agent on the host and deploy it at once, four times over.
    // Each must run a byte-identical agent and leave no temporary behind; with one shared "<file>.part"
    // one client moved another's half-written upload into place and ran it.
    void concurrentDeploy() {
        constexpr int clients = 6;
        std::vector<std::unique_ptr<Transport>> transports;
        for (int i = 0; i < clients; ++i) {
            transports.push_back(transport(true));
            QVERIFY(transports.back());
        }
        const QString cache = m_sshd.remoteHome() + u"/.cache/moetune"_s;
        const QByteArray want = sha256(QStringLiteral(MOETUNE_AGENT_PYZ));
        for (int round = 0; round < 4; ++round) {
            QDir(cache).removeRecursively();
            std::vector<std::unique_ptr<AgentClient>> agents;
            std::vector<std::unique_ptr<QSignalSpy>> spies;
            for (int i = 0; i < clients; ++i) {
                HostConfig h = m_sshd.options().host;
                agents.push_back(
                    std::make_unique<AgentClient>(transports[i].get(), h, QStringLiteral(MOETUNE_AGENT_PYZ)));
                spies.push_back(
                    std::make_unique<QSignalSpy>(agents.back().get(), &AgentClient::commandFinished));
            }
            for (auto &a : agents)
                a->run(u"version"_s, {});
            for (int i = 0; i < clients; ++i) {
                QTRY_COMPARE_WITH_TIMEOUT(spies[i]->size(), 1, 120000);
                const auto &args = spies[i]->first();
                QVERIFY2(args.at(1).toBool(), qPrintable(u"round %1 client %2: %3"_s.arg(round).arg(i).arg(
                                                  args.at(2).toString())));
            }
            const QString deployed = cache + u"/agent-%1.pyz"_s.arg(agents.front()->agentVersion());
            QCOMPARE(sha256(deployed), want);
            const QStringList left = QDir(cache).entryList(QDir::Files | QDir::Hidden);
            QCOMPARE(left, QStringList{QFileInfo(deployed).fileName()});
        }
    }

    // A run slow to announce itself is reported as running (its id given), not as "did not start": a client
    // that took it for failed started a second sweep on the same GPUs. The agent's wait is shortened to 1 s.
    void slowRunStartIsARun() {
        const QString slow = m_sshd.dir() + u"/slow-python"_s;
        {
            QFile f(slow);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("#!/bin/sh\nsleep 5\nexec python3 \"$@\"\n"); // TEST DOUBLE: a slow interpreter start
        }
        QFile::setPermissions(slow, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        qputenv("MOETUNE_AGENT_START_WAIT_S", "1");
        auto t = transport(false);
        AgentClient agent(t.get(), m_sshd.options().host, QStringLiteral(MOETUNE_AGENT_PYZ));
        agent.setAgentHome(m_sshd.dir() + u"/agent home"_s);
        TuneSpec spec;
        spec.experts = 8;
        spec.n = 256;
        spec.hiddenSize = 512;
        spec.topk = 2;
        spec.batchSizes = {1, 16};
        spec.framework = Framework::SGLang;
        spec.backend = u"triton"_s;
        spec.python = slow;
        QSignalSpy started(&agent, &AgentClient::runStarted);
        QSignalSpy done(&agent, &AgentClient::commandFinished);
        agent.startTune(spec);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 60000);
        qunsetenv("MOETUNE_AGENT_START_WAIT_S");
        QVERIFY2(done.first().at(1).toBool(), qPrintable(done.first().at(2).toString()));
        QCOMPARE(done.first().at(3).toString(), u"detached"_s);
        QCOMPARE(started.size(), 1);
        const QString runId = started.first().at(1).toString();
        QVERIFY(!runId.isEmpty());
        QVERIFY(QFileInfo::exists(m_sshd.dir() + u"/agent home/runs/"_s + runId));
        // It is there to attach to; stop it (its process group) so nothing outlives the test.
        agent.cancelRun(runId);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 2, 60000);
    }

    void versionMismatchSaysSo_data() {
        QTest::addColumn<bool>("ssh");
        QTest::newRow("local") << false;
        QTest::newRow("ssh") << true;
    }

    // TEST DOUBLE: an "interpreter" that answers like an agent of protocol 99 and then hangs; moetune must
    // stop it and say what it is, not "Cancelled.".
    void versionMismatchSaysSo() {
        QFETCH(bool, ssh);
        const QString fake = m_sshd.dir() + u"/future-agent"_s;
        {
            QFile f(fake);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("#!/bin/sh\n"
                    "echo '{\"type\":\"hello\",\"protocol\":99,\"agent_version\":\"9.0.0\"}'\n"
                    "sleep 30\n");
        }
        QFile::setPermissions(fake, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        auto t = transport(ssh);
        QVERIFY(t);
        HostConfig h = m_sshd.options().host;
        h.python = fake;
        AgentClient agent(t.get(), h, QStringLiteral(MOETUNE_AGENT_PYZ));
        QSignalSpy done(&agent, &AgentClient::commandFinished);
        QElapsedTimer timer;
        timer.start();
        agent.probe();
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 60000);
        QVERIFY(timer.elapsed() < 25000); // stopped, not waited out
        QCOMPARE(done.first().at(1).toBool(), false);
        const QString error = done.first().at(2).toString();
        QVERIFY2(error.contains(u"protocol 99"_s), qPrintable(error));
        QVERIFY2(!error.contains(u"Cancelled"_s), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestAgentClient)
#include "tst_agentclient.moc"
