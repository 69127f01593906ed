// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The agent end to end over a REAL sshd (SshdFixture): deploy, probe -> diagnose host against a fake
// SGLang install tree, and reattaching to a detached (synthetic-backend) tuning run after the link dropped.
#include "core/diagnosis/diagnoser.h"
#include "core/host/hostprobemerge.h"
#include "fakehosttree.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/jobwaiter.h"
#include "remote/transport/sshtransport.h"
#include "sshdfixture.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::SshdFixture;

namespace {

using moetune::test::FakeHostTree;

const char kConfig[] =
    "{\n    \"1\": {\n        \"BLOCK_SIZE_M\": 16,\n        \"BLOCK_SIZE_N\": 32,\n"
    "        \"BLOCK_SIZE_K\": 64,\n        \"GROUP_SIZE_M\": 1,\n        \"num_warps\": 4,\n"
    "        \"num_stages\": 3\n    }\n}\n";

} // namespace

class TestAgentIntegration : public QObject {
    Q_OBJECT

    SshdFixture m_sshd;
    QString m_hostDir; // the fake GPU host's files (a space in it on purpose)
    QString m_python;  // the host's interpreter: a wrapper that puts the fake sglang on PYTHONPATH
    QString m_configRoot;
    QString m_log;

    HostConfig host() const {
        HostConfig h = m_sshd.options().host;
        h.python = m_python;
        h.logSource = LogSource::fromString(m_log);
        return h;
    }

private slots:
    void initTestCase() {
        qunsetenv("SSH_AUTH_SOCK");
        QVERIFY2(QFile::exists(QStringLiteral(MOETUNE_AGENT_PYZ)), MOETUNE_AGENT_PYZ " not built");
        QString error;
        QVERIFY2(m_sshd.start(&error), qPrintable(error));

        m_hostDir = m_sshd.dir() + u"/gpu host"_s;
        FakeHostTree tree(m_hostDir);
        QVERIFY2(tree.create(u"0.5.6"_s, u"3.6.0"_s, &error,
                             u"MOETUNE_SYNTHETIC_DELAY_MS=${MOETUNE_SYNTHETIC_DELAY_MS:-15}"_s),
                 qPrintable(error));
        m_configRoot = tree.configRoot();
        QVERIFY(tree.addConfig(u"triton_3_4_0"_s, u"E=128,N=768,device_name=NVIDIA_H200.json"_s, kConfig));
        QVERIFY(tree.addConfig(u"triton_3_3_1"_s, u"E=64,N=1024,device_name=NVIDIA_H200.json"_s, kConfig));
        m_python = tree.python();

        // the server's log: SGLang under Triton 3.6.0 with no triton_3_6_0 folder, two ranks
        m_log = m_hostDir + u"/logs/sglang server.log"_s;
        QByteArray log;
        for (int tp = 0; tp < 2; ++tp) {
            const QByteArray prefix =
                "[2026-11-29 10:00:0" + QByteArray::number(tp) + " TP" + QByteArray::number(tp) + "] ";
            const QByteArray root = m_configRoot.toUtf8();
            log += prefix + "Load weight end. avail mem=40.12 GB\n";
            log +=
                prefix + "Config file not found at " + root +
                "/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200.json. Fallback to triton version 3.4.0 "
                "and use "
                "MoE kernel config from " +
                root +
                "/triton_3_4_0/E=128,N=768,device_name=NVIDIA_H200.json. Performance might be sub-optimal!\n";
            log += prefix +
                   "Using MoE kernel config with down_moe=False. Performance might be sub-optimal! Config "
                   "file not found at " +
                   root +
                   "/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200_down.json, you can create them with "
                   "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n";
        }
        QVERIFY(FakeHostTree::writeFile(m_log, log));
    }

    void cleanupTestCase() { m_sshd.stop(); }

    void probeThenDiagnoseHost() {
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        AgentClient agent(t.get(), host(), QStringLiteral(MOETUNE_AGENT_PYZ));
        QSignalSpy probed(&agent, &AgentClient::probed);
        QSignalSpy done(&agent, &AgentClient::commandFinished);
        const JobId probeId = agent.probe();
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 60000);
        QVERIFY2(done[0][1].toBool(), qPrintable(done[0][2].toString()));
        QCOMPARE(probed.size(), 1);
        QCOMPARE(probed[0][0].value<JobId>(), probeId);

        // deployed into the host's per-user cache, byte-identical
        const QString deployed =
            m_sshd.remoteHome() + u"/.cache/moetune/agent-%1.pyz"_s.arg(agent.agentVersion());
        QFile a(QStringLiteral(MOETUNE_AGENT_PYZ)), b(deployed);
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(b.readAll(), a.readAll());

        const HostProbe p = probed[0][1].value<HostProbe>();
        QCOMPARE(p.framework, Framework::SGLang);
        QCOMPARE(p.frameworkVersion, u"0.5.6"_s);
        QCOMPARE(p.tritonVersion, std::optional<TritonVersion>(TritonVersion(3, 6, 0)));
        QCOMPARE(p.configRoot, m_configRoot);
        QVERIFY(!p.installedTritonFolderExists);
        QVERIFY(p.folder(u"triton_3_4_0"_s));
        QCOMPARE(p.folder(u"triton_3_4_0"_s)->files,
                 QStringList{u"E=128,N=768,device_name=NVIDIA_H200.json"_s});

        // fetch the log through the host's log source, with progress
        const QString local = m_sshd.dir() + u"/fetched.log"_s;
        QSignalSpy progress(&agent, &AgentClient::progress);
        agent.fetchLog(8 << 20, local);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 2, 30000);
        QVERIFY2(done[1][1].toBool(), qPrintable(done[1][2].toString()));
        QVERIFY(!progress.isEmpty());
        QFile fetched(local), original(m_log);
        QVERIFY(fetched.open(QIODevice::ReadOnly) && original.open(QIODevice::ReadOnly));
        QCOMPARE(fetched.readAll(), original.readAll());

        // diagnose host = the log's diagnosis + the probe's facts
        QString error;
        const Diagnosis logOnly = Diagnoser().diagnoseFile(local, {}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(logOnly.targets.size(), 1);
        const Diagnosis d = mergeHostProbe(logOnly, p);
        QStringList rules;
        for (const Finding &f : d.findings)
            rules.append(f.rule);
        QVERIFY2(rules.contains(u"host-triton-folder-missing"_s), qPrintable(rules.join(u", "_s)));
        QVERIFY(rules.contains(u"host-facts"_s));
        const Finding *missing = nullptr;
        for (const Finding &f : d.findings) {
            if (f.rule == u"host-triton-folder-missing")
                missing = &f;
        }
        QVERIFY(missing->title.contains(u"triton_3_6_0"_s));
        QVERIFY(missing->explanation.contains(u"triton_3_4_0"_s)); // the listing names the folders there are
        QVERIFY(d.targets.first().tritonFolderMissing);
        QCOMPARE(d.targets.first().fallbackFolder, u"triton_3_4_0"_s);
        QVERIFY2(d.summary.contains(u"triton_3_6_0 confirmed missing"_s), qPrintable(d.summary));
        // the second deploy is skipped: same checksum
        QSignalSpy up(t.get(), &Transport::progress);
        AgentClient again(t.get(), host(), QStringLiteral(MOETUNE_AGENT_PYZ));
        QSignalSpy done2(&again, &AgentClient::commandFinished);
        again.deploy();
        QTRY_COMPARE_WITH_TIMEOUT(done2.size(), 1, 30000);
        QVERIFY(done2[0][1].toBool());
        QCOMPARE(up.size(), 0);
    }

    void malformedAgentOutputIsAnError() {
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        HostConfig h = host();
        // an interpreter that prints garbage instead of running the agent
        h.python = m_hostDir + u"/bin/noisy python"_s;
        QVERIFY(FakeHostTree::writeFile(h.python, "#!/bin/sh\necho 'Welcome to the GPU cluster!'\nexit 0\n",
                                        true));
        AgentClient agent(t.get(), h, QStringLiteral(MOETUNE_AGENT_PYZ));
        QSignalSpy done(&agent, &AgentClient::commandFinished);
        agent.probe();
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 60000);
        QVERIFY(!done[0][1].toBool());
        const QString error = done[0][2].toString();
        QVERIFY2(error.contains(u"Welcome to the GPU cluster!"_s), qPrintable(error));
    }

    void reattachAfterConnectionDrop() {
        SshOptions o = m_sshd.options();
        o.initialBackoffMs = 300;
        auto t = m_sshd.connectedTransport(o);
        QVERIFY(t);
        AgentClient agent(t.get(), host(), QStringLiteral(MOETUNE_AGENT_PYZ));
        agent.setAgentHome(m_sshd.remoteHome() + u"/moetune home"_s);
        TuneSpec spec;
        spec.framework = Framework::SGLang;
        spec.experts = 8;
        spec.n = 64;
        spec.hiddenSize = 128;
        spec.topk = 2;
        spec.batchSizes = {1, 2, 4, 8};
        spec.backend = u"synthetic"_s;
        spec.strategy = u"exhaustive"_s;
        QSignalSpy started(&agent, &AgentClient::runStarted);
        QSignalSpy done(&agent, &AgentClient::commandFinished);
        agent.startTune(spec);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 60000);
        QVERIFY2(done[0][1].toBool(), qPrintable(done[0][2].toString()));
        QCOMPARE(done[0][3].toString(), u"detached"_s);
        QCOMPARE(started.size(), 1);
        const QString runId = started[0][1].toString();
        QVERIFY(!runId.isEmpty());

        QList<qint64> seqs;
        bool sawDone = false;
        bool allSimulated = true;
        connect(&agent, &AgentClient::agentEvent, this, [&](JobId, const AgentEvent &e) {
            if (e.isError() || e.seq() < 0)
                return;
            seqs.append(e.seq());
            allSimulated &= e.object.value("simulated"_L1).toBool();
            if (e.type == u"done")
                sawDone = true;
        });
        agent.attach(runId);
        QTRY_VERIFY_WITH_TIMEOUT(seqs.size() >= 30, 60000);
        QVERIFY(!sawDone); // the run is still going: the drop happens mid-run
        m_sshd.killSessions();
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 2, 20000);
        QVERIFY(!done[1][1].toBool());
        QVERIFY2(done[1][2].toString().contains(u"lost"_s), qPrintable(done[1][2].toString()));

        QTRY_COMPARE_WITH_TIMEOUT(t->state(), Transport::State::Connected, 30000);
        const qint64 resumeFrom = seqs.last() + 1;
        agent.attach(runId, resumeFrom);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 3, 180000);
        QVERIFY2(done[2][1].toBool(), qPrintable(done[2][2].toString()));
        QVERIFY(sawDone);
        QVERIFY(allSimulated); // synthetic numbers are labelled as such on every run event
        // nothing lost, nothing twice: 0..last, each once
        for (qsizetype i = 0; i < seqs.size(); ++i)
            QCOMPARE(seqs[i], qint64(i));
    }
};

QTEST_GUILESS_MAIN(TestAgentIntegration)
#include "tst_agentintegration.moc"
