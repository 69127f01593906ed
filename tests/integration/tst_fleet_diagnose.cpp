// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Fleet diagnose (issue 46) against FleetFixture's standard scenario: 10 hosts, 9 real sshd on 127.0.0.1,
// each with its own labelled fake server tree (PRACTICE / TEST DOUBLE: fake SGLang packages, a fake
// fused-MoE kernel source, a fake nvidia-smi, the fake SGLang server), forming three tuning groups (two
// GPU names, two Triton versions), plus one unreachable host, one whose host key changed and one whose
// restart fails. The agent, its probe, the transport and the diagnosis are the real ones.
#include "fleetfixture.h"
#include "remote/flows/jobwaiter.h"
#include "remote/transport/sshtransport.h"

#include <QFile>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace moetune;
using namespace moetune::test;

class TestFleetDiagnose : public QObject {
    Q_OBJECT

    std::unique_ptr<FleetFixture> m_fleet;

private slots:
    void initTestCase() {
        qunsetenv("SSH_AUTH_SOCK");
        m_fleet = std::make_unique<FleetFixture>(FleetFixture::standardScenario());
        QString error;
        QVERIFY2(m_fleet->start(&error), qPrintable(error));
    }

    // The fixture itself: every reachable host answers over its own sshd with the fleet's ~/.ssh, the
    // unreachable one does not, the changed key is refused; each server's log names the file it wants.
    void fixtureHostsStartAndAnswer() {
        int sshds = 0;
        for (int i = 0; i < m_fleet->size(); ++i) {
            const FleetHostSpec &spec = m_fleet->spec(i);
            sshds += m_fleet->sshd(i) ? 1 : 0;
            SshOptions o = m_fleet->environment({}).ssh;
            o.host = m_fleet->hostConfig(i);
            o.maxReconnectAttempts = 0;
            o.connectTimeoutMs = 5000;
            SshTransport t(o);
            t.connectToHost();
            QString error;
            const bool connected = waitForConnected(&t, 20000, &error);
            if (spec.unreachable || spec.hostKeyChanged) {
                QVERIFY2(!connected, qPrintable(spec.name));
                if (spec.hostKeyChanged)
                    QVERIFY2(error.contains(u"changed"_s), qPrintable(error));
            } else {
                QVERIFY2(connected, qPrintable(spec.name + u": "_s + error));
            }
            QFile log(m_fleet->log(i));
            QVERIFY(log.open(QIODevice::ReadOnly));
            const QString text = QString::fromUtf8(log.readAll());
            QVERIFY2(text.contains(m_fleet->tritonFolder(i) + u'/' + m_fleet->missingConfig(i)),
                     qPrintable(text));
            QVERIFY2(text.contains(u"PRACTICE DOUBLE"_s), qPrintable(text));
            QVERIFY(m_fleet->serverPid(i) > 0);
        }
        QVERIFY(sshds >= 8);
        // Kernel variants: the same bytes give the same hash on every host.
        QCOMPARE(m_fleet->kernelSourceHash(0), m_fleet->kernelSourceHash(1));
        QCOMPARE(m_fleet->kernelSourceHash(0).size(), 64);
        QVERIFY(m_fleet->deviceName(3) == u"NVIDIA_H100_80GB_HBM3"_s);
    }
};

QTEST_GUILESS_MAIN(TestFleetDiagnose)
#include "tst_fleet_diagnose.moc"
