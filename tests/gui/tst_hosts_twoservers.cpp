// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The Hosts page on a host that runs two servers (issue 41): two labelled fake SGLang servers on this
// machine (two ports, two models and shapes, two logs, two config folders) seen through the Local
// machine. With no choice the page asks (Server, the tuning job, Diagnose Host); once the user chooses in
// Server, probe facts, diagnose host, "Tune the served model" and the push target (the flows the Tune
// page runs over the host's connection) are the chosen server's. Other SGLang processes on the machine
// (a practice server, another test's fake) change nothing here: the test knows its servers by pid and port.
// With MOETUNE_SCREENSHOT_DIR set it saves the page (before and after the choice) there.
#include "fakesglanghost.h"
#include "findchild.h"
#include "syntheticrun.h"

#include "app/hosts/hostlistmodel.h"
#include "app/hosts/hostoverview.h"
#include "app/hosts/hostspage.h"
#include "app/mainwindow.h"
#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/pushflow.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::named;

class TestHostsTwoServers : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    std::unique_ptr<test::FakeSglangHost> m_host;

    static int itemWith(const QComboBox *box, const QString &data) {
        for (int i = 0; i < box->count(); ++i) {
            if (box->itemData(i).toString() == data)
                return i;
        }
        return -1;
    }
    // The user picks an entry of Server (what a click in its popup does).
    static void choose(QComboBox *box, int index) {
        QVERIFY(index >= 0);
        box->setCurrentIndex(index);
        emit box->activated(index);
    }
    static void shoot(QWidget *w, const QString &name) {
        const QString dir = qEnvironmentVariable("MOETUNE_SCREENSHOT_DIR");
        if (!dir.isEmpty() && QDir().mkpath(dir))
            QVERIFY(w->grab().save(dir + u'/' + name));
    }
    // Diagnose Host on the page; the diagnosis, or nullopt with the banner's sentence in *why.
    static std::optional<Diagnosis> diagnose(HostsPage *page, QString *why) {
        std::optional<Diagnosis> got;
        bool done = false;
        auto c = QObject::connect(page, &HostsPage::logFetched, page, [&] {
            got = page->fetchedDiagnosis();
            done = true;
        });
        const QString before = page->bannerText();
        page->diagnoseHost();
        (void)QTest::qWaitFor(
            [&] {
                return done || (page->bannerText() != before && page->bannerText().contains(u"servers"_s));
            },
            60000);
        QObject::disconnect(c);
        *why = page->bannerText();
        return got;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        m_host = std::make_unique<test::FakeSglangHost>();
        QString error;
        QVERIFY2(m_host->create(&error), qPrintable(error));
        QVERIFY2(m_host->addSecondServer(&error), qPrintable(error));
    }
    void cleanupTestCase() { QSettings().clear(); }

    void eachFlowActsOnTheChosenServer() {
        MainWindow window;
        auto *page = window.findChild<HostsPage *>();
        window.hostRegistry()->setLocalHome(m_host->homePath());
        window.hostRegistry()->setAgentPath(QStringLiteral(MOETUNE_AGENT_PYZ));
        window.resize(1280, 900);
        window.show();
        int hostsIndex = -1;
        for (int i = 0; i < window.pageCount(); ++i) {
            if (window.page(i) == page)
                hostsIndex = i;
        }
        window.setCurrentPage(hostsIndex);
        // The log source: a copy of the first server's log, which no server writes (so the log names none).
        const QString copy = m_home.path() + u"/copied server.log"_s;
        QVERIFY(QFile::copy(m_host->logPath(), copy));
        HostConfig local = window.hostRegistry()->localHost();
        local.logSource = {LogSource::Kind::File, copy};
        page->saveHost(local);
        QVERIFY(page->selectHost(HostListModel::localAlias()));
        page->probeHost();
        auto *ov = named<HostOverview>(page, u"hostOverview"_s);
        QTRY_VERIFY_WITH_TIMEOUT(ov->hasProbe(), 60000);
        const QString pid1 = QString::number(m_host->serverPid());
        const QString pid2 = QString::number(m_host->secondPid());
        const QString port1 = u"port %1"_s.arg(m_host->serverPort());
        const QString port2 = u"port %1"_s.arg(m_host->secondPort());

        // No choice: both offered in Server, the question instead of a model, no job, Diagnose asks.
        QComboBox *server = ov->serverChoice();
        QVERIFY(server->isEnabled());
        QCOMPARE(server->currentData().toString(), QString());
        QVERIFY2(server->currentText().startsWith(u"Choose the server"_s), qPrintable(server->currentText()));
        QVERIFY(itemWith(server, port1) > 0);
        QVERIFY(itemWith(server, port2) > 0);
        QVERIFY2(ov->field(u"model"_s).contains(u"servers run here: choose in Server"_s),
                 qPrintable(ov->field(u"model"_s)));
        const QString ask = server->toolTip();
        QVERIFY2(ask.contains(u"pid "_s + pid1) && ask.contains(u"pid "_s + pid2), qPrintable(ask));
        QCOMPARE(ov->field(u"suggestedSpec"_s), u"none until a server is chosen"_s);
        auto *tuneServed = named<QPushButton>(page, u"tuneServedButton"_s);
        QVERIFY(!tuneServed->isEnabled());
        QVERIFY2(tuneServed->toolTip().contains(u"choose one in Server"_s),
                 qPrintable(tuneServed->toolTip()));
        shoot(&window, u"hosts-two-servers-unchosen.png"_s);
        QString why;
        auto d = diagnose(page, &why);
        QVERIFY2(!d, "diagnosed without knowing which server");
        QVERIFY2(why.contains(u"pid "_s + pid1) && why.contains(u"pid "_s + pid2), qPrintable(why));

        // The first server chosen: diagnose host merges its facts (it serves the log's shape).
        choose(server, itemWith(server, port1));
        QCOMPARE(window.hostRegistry()->localHost().serverProfile.server, port1);
        QVERIFY2(ov->field(u"model"_s).contains(m_host->modelPath()), qPrintable(ov->field(u"model"_s)));
        d = diagnose(page, &why);
        QVERIFY2(d, qPrintable(why));
        QStringList served;
        for (const Finding &f : d->findings) {
            if (f.rule == u"host-served-model"_s)
                served.append(f.title);
        }
        QVERIFY2(served.size() == 1 && served.first().contains(m_host->modelPath()),
                 qPrintable(served.join(u'|')));

        // The second chosen: its model, its job (60 experts, top-k 4), and Tune the Served Model takes it.
        choose(server, itemWith(server, port2));
        QCOMPARE(window.hostRegistry()->localHost().serverProfile.server, port2);
        QVERIFY2(ov->field(u"model"_s).contains(m_host->secondModelPath()),
                 qPrintable(ov->field(u"model"_s)));
        QVERIFY2(ov->field(u"suggestedSpec"_s).contains(u"E=60, N=1408, K=2048, top-k 4"_s),
                 qPrintable(ov->field(u"suggestedSpec"_s)));
        QVERIFY2(page->bannerText().contains(u"pid "_s + pid2), qPrintable(page->bannerText()));
        window.setCurrentPage(hostsIndex); // a diagnosis opens the Diagnose page
        shoot(&window, u"hosts-two-servers-chosen.png"_s);
        QVERIFY(tuneServed->isEnabled());
        QVERIFY2(tuneServed->toolTip().contains(u"pid "_s + pid2), qPrintable(tuneServed->toolTip()));
        QSignalSpy tuneSpy(page, &HostsPage::tuneSpecRequested);
        QTest::mouseClick(tuneServed, Qt::LeftButton);
        QCOMPARE(tuneSpy.size(), 1);
        const auto spec = tuneSpy.first().at(1).value<TuneSpec>();
        QCOMPARE(spec.experts, 60);
        QCOMPARE(spec.n, 1408);
        QCOMPARE(spec.topk, 4);

        // Push: the flows the Tune page runs over this host's connection (its profile names the server)
        // preview a simulated run into the chosen server's config folder.
        QString error;
        const QString runDir = test::runSyntheticTune(
            QStringLiteral(MOETUNE_AGENT_PYZ), m_host->homePath() + u"/.cache/moetune"_s, {1, 2}, &error);
        QVERIFY2(!runDir.isEmpty(), qPrintable(error));
        HostSession *session = window.hostRegistry()->connection(HostListModel::localAlias());
        QVERIFY(session && session->lastProbe());
        const QList<std::pair<QString, QString>> expected{
            {port2, m_host->secondConfigDir() + u"/configs/triton_3_6_0"_s},
            {port1, m_host->configRoot() + u"/triton_3_6_0"_s}};
        for (const auto &[choice, folder] : expected) {
            choose(server, itemWith(server, choice));
            HostFlows flows(session, window.hostRegistry()->localHost().serverProfile);
            PushFlow::Preview preview;
            bool done = false;
            flows.push()->preview(QFileInfo(runDir).fileName(), Framework::SGLang, nullptr,
                                  &*session->lastProbe(), false, [&](const PushFlow::Preview &p) {
                                      preview = p;
                                      done = true;
                                  });
            QTRY_VERIFY_WITH_TIMEOUT(done, 60000);
            QVERIFY2(preview.error.isEmpty(), qPrintable(preview.error));
            QCOMPARE(preview.target.folder, folder);
            QVERIFY2(preview.target.source.contains(choice), qPrintable(preview.target.source));
        }
    }
};

QTEST_MAIN(TestHostsTwoServers)
#include "tst_hosts_twoservers.moc"
