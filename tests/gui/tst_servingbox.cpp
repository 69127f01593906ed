// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The push tab's serving benchmark in the main window on the Local machine, against the fake SGLang
// server (TEST DOUBLE, resources/practice/fake_sglang_server.py: an OpenAI-compatible API whose latency
// follows the config file it loaded) and the fake sglang.bench_serving (TEST DOUBLE, fakebenchserving.py): a
// synthetic run (SIMULATED configs), Preview push, "Push, restart and compare" in rigorous mode (A B B A,
// a restart per leg), the verdict and the chart with intervals, the result kept with the run (Results
// page tab, PDF page), Undo offered for a slower result. MOETUNE_SERVING_SCREENSHOTS=DIR saves pictures.
#include "../integration/fakeserverhost.h"
#include "app/hosts/hostregistry.h"
#include "app/mainwindow.h"
#include "app/results/resultspage.h"
#include "app/results/servingresultsview.h"
#include "app/tune/servingbenchbox.h"
#include "app/tune/tunepage.h"
#include "charts/servingchart.h"
#include "core/diagnosis/diagnoser.h"
#include "core/run/workspacerun.h"
#include "findchild.h"
#include "remote/flows/hostsession.h"
#include "remote/hosts/hoststore.h"
#include "report/pdfreport.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::click;
using moetune::test::named;

class TestServingBox : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    QString m_shots = qEnvironmentVariable("MOETUNE_SERVING_SCREENSHOTS");

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        qRegisterMetaType<moetune::HostSession *>();
    }
    void cleanupTestCase() { QSettings().clear(); }

    void pushRestartCompare() {
        test::FakeServerHost fake;
        QString error;
        QVERIFY2(fake.create(&error), qPrintable(error));
        QTcpServer probePort;
        QVERIFY(probePort.listen(QHostAddress::LocalHost, 0));
        const int port = probePort.serverPort();
        probePort.close();
        QVERIFY2(fake.enableServing(QStringLiteral(MOETUNE_FAKEBENCH_PY), port, 20, &error),
                 qPrintable(error));
        QVERIFY2(fake.startServer(&error), qPrintable(error));

        MainWindow window;
        window.hostRegistry()->setLocalHome(m_home.path());
        window.hostRegistry()->setAgentPath(QStringLiteral(MOETUNE_AGENT_PYZ));
        HostConfig local = window.hostRegistry()->localHost();
        local.python = fake.python();
        local.serverProfile = fake.profile();
        window.hostRegistry()->save(local);
        window.resize(1600, 1000);
        window.show();
        auto *tune = window.findChild<TunePage *>(u"tunePage"_s);
        QVERIFY(tune);
        QTemporaryDir workspace;
        tune->setWorkspacePath(workspace.path());

        // A synthetic run of the served shape (its configs SIMULATED), from the server's own warning.
        const Diagnosis diagnosis = Diagnoser().diagnoseFile(fake.log());
        QVERIFY(!diagnosis.targets.isEmpty());
        tune->tuneTarget(HostStore::localAlias(), diagnosis.targets.first(), diagnosis);
        named<QSpinBox>(tune, u"kSpin"_s)->setValue(2048);
        named<QSpinBox>(tune, u"topkSpin"_s)->setValue(8);
        named<QLineEdit>(tune, u"batchSizesEdit"_s)->setText(u"1,16,256"_s);
        named<QCheckBox>(tune, u"upDownCheck"_s)->setChecked(true);
        auto *backend = named<QComboBox>(tune, u"backendCombo"_s);
        backend->setCurrentIndex(backend->findData(u"synthetic"_s));
        // Check GPUs first, as a user would: the probe sees the server (its port for the benchmark).
        click(tune, u"preflightButton"_s);
        auto *preflight = named<QPlainTextEdit>(tune, u"preflightText"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!preflight->toPlainText().isEmpty(), 120000);
        QSignalSpy finished(tune, &TunePage::runFinished);
        QTRY_VERIFY_WITH_TIMEOUT(named<QPushButton>(tune, u"startButton"_s)->isEnabled(), 60000);
        click(tune, u"startButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(finished.first().at(1).toString(), u"ok"_s);
        const QString runId = finished.first().at(0).toString();

        named<QTabWidget>(tune, u"rightTabs"_s)->setCurrentWidget(named<QWidget>(tune, u"pushTab"_s));
        QSignalSpy previewed(tune, &TunePage::previewReady);
        click(tune, u"pushPreviewButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(previewed.count(), 1, 120000);
        QVERIFY2(previewed.first().at(1).toString().isEmpty(),
                 qPrintable(previewed.first().at(1).toString()));

        // The box: the server's address from the probe of the running server (its --port).
        ServingBenchBox *box = tune->servingBox();
        QVERIFY(box);
        QCOMPARE(named<QSpinBox>(box, u"portSpin"_s)->value(), port);
        // A small workload typed by hand (the preset becomes "custom"), rigorous with 2 pairs.
        named<QSpinBox>(box, u"inputSpin"_s)->setValue(32);
        named<QSpinBox>(box, u"outputSpin"_s)->setValue(8);
        named<QSpinBox>(box, u"promptsSpin"_s)->setValue(16);
        auto *conc = named<QLineEdit>(box, u"concurrencyEdit"_s);
        conc->clear();
        QTest::keyClicks(conc, u"16,x"_s);
        QVERIFY(named<QLabel>(box, u"validationLabel"_s)->text().contains(u"\"x\""_s));
        QVERIFY(!named<QPushButton>(box, u"compareButton"_s)->isEnabled());
        QTest::keyClick(conc, Qt::Key_Backspace);
        QTest::keyClick(conc, Qt::Key_Backspace);
        QCOMPARE(box->validation(), QString());
        QCOMPARE(named<QComboBox>(box, u"presetCombo"_s)->currentData().toString(), u"custom"_s);
        named<QCheckBox>(box, u"rigorousCheck"_s)->setChecked(true);
        named<QSpinBox>(box, u"pairsSpin"_s)->setValue(2);

        QSignalSpy done(box, &ServingBenchBox::finished);
        QSignalSpy pushed(tune, &TunePage::pushed);
        click(box, u"compareButton"_s);
        QVERIFY(box->isRunning());
        QVERIFY(!named<QPushButton>(box, u"compareButton"_s)->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(named<QProgressBar>(box, u"legBar"_s)->maximum() == 4, 120000);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 400000);
        const auto *cmp = &box->comparison().value();
        const QString verdict = named<QLabel>(box, u"verdictLabel"_s)->text();
        // The box shows what the legs measured; the fake server's rule makes each token 20% shorter (the
        // verdict over all metrics is asserted in tst_serving_e2e, where no GUI shares the 2 cores).
        QVERIFY2(cmp->error.isEmpty() && cmp->verdict() != ServingComparison::Verdict::Failed,
                 qPrintable(cmp->text()));
        QVERIFY2(verdict.startsWith(ServingComparison::verdictName(cmp->verdict()) + u": "_s),
                 qPrintable(verdict));
        bool tpotBetter = false;
        for (const ServingComparison::Row &r : cmp->rows())
            tpotBetter = tpotBetter || (r.metric == ServingResult::Metric::TpotMedian &&
                                        r.outcome == ServingChange::Outcome::Better);
        QVERIFY2(tpotBetter, qPrintable(cmp->text()));
        QCOMPARE(named<QProgressBar>(box, u"legBar"_s)->value(), 4);
        QCOMPARE(box->chart()->rowCount(), 3);
        QCOMPARE(box->chart()->intervalCount(), 3);
        QVERIFY(!named<QPushButton>(box, u"undoButton"_s)->isVisible());
        QCOMPARE(pushed.count(), 1);
        QVERIFY2(named<QLabel>(tune, u"proofLabel"_s)->text().contains(u"gone on every rank"_s),
                 qPrintable(named<QLabel>(tune, u"proofLabel"_s)->text()));
        QVERIFY(QFile::exists(fake.wantedFolder() + u'/' + fake.upName()));
        // Kept with the run in the workspace.
        QVERIFY(QFile::exists(tune->runFolder() + u"/serving.json"_s));
        if (!m_shots.isEmpty()) {
            for (int i = 0; i < 8; ++i)
                if (window.page(i) == tune)
                    window.setCurrentPage(i);
            QTest::qWait(300);
            QVERIFY(window.grab().save(m_shots + u"/tune-push-serving.png"_s, "PNG"));
            QVERIFY(box->grab().save(m_shots + u"/serving-box.png"_s, "PNG"));
        }

        // The Results page: a tab with the verdict and the chart; the PDF report: its page.
        auto *results = window.findChild<ResultsPage *>();
        click(tune, u"resultsButton"_s);
        QTRY_VERIFY_WITH_TIMEOUT(results->currentRun() && results->currentRun()->runId == runId, 60000);
        QVERIFY(results->currentRun()->serving);
        auto *view = results->findChild<ServingResultsView *>();
        QVERIFY(view);
        QCOMPARE(view->verdictText(), verdict);
        QCOMPARE(view->chart()->intervalCount(), 3);
        auto *tabs = named<QTabWidget>(results, u"tabs"_s);
        QVERIFY(tabs->indexOf(view) >= 0);
        const QString pdf = (m_shots.isEmpty() ? workspace.path() : m_shots) + u"/serving-report.pdf"_s;
        QVERIFY2(PdfReport::write(*results->currentRun(), pdf, &error), qPrintable(error));
        QVERIFY(QFileInfo(pdf).size() > 10000);
        if (!m_shots.isEmpty()) {
            tabs->setCurrentWidget(view);
            QTest::qWait(300);
            QVERIFY(window.grab().save(m_shots + u"/results-serving.png"_s, "PNG"));
        }

        // Slower after a push: Undo offered, and it is the page's undo (the files put back).
        ServingComparison slower = *cmp;
        for (ServingComparison::Leg &l : slower.legs) {
            l.arm = u"ABBA"_s.at(&l - slower.legs.data());
            for (ServingResult &res : l.results) // B: every figure 30% worse
                if (l.arm == u'B')
                    res = ServingResult{res.concurrency,
                                        res.completed,
                                        0,
                                        NAN,
                                        NAN,
                                        res.outputThroughput * 0.7,
                                        NAN,
                                        res.medianTtftMs * 1.3,
                                        NAN,
                                        NAN,
                                        res.medianTpotMs * 1.3,
                                        NAN};
        }
        for (ServingComparison::Leg &l : slower.legs) // A: the same figures on both A legs
            if (l.arm == u'A')
                l.results = slower.legs.first().results;
        QCOMPARE(slower.verdict(), ServingComparison::Verdict::Slower);
        box->showComparison(slower, true);
        QVERIFY(named<QPushButton>(box, u"undoButton"_s)->isVisibleTo(box));
        QVERIFY(named<QLabel>(box, u"verdictLabel"_s)->text().contains(u"Undo push"_s));
        QSignalSpy undone(tune, &TunePage::undone);
        click(box, u"undoButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(undone.count(), 1, 120000);
        QVERIFY2(undone.first().at(1).toString().isEmpty(), qPrintable(undone.first().at(1).toString()));
        QVERIFY(!QFile::exists(fake.wantedFolder() + u'/' + fake.upName()));
        fake.stopServer();
    }
};

QTEST_MAIN(TestServingBox)
#include "tst_servingbox.moc"
