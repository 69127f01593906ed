// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The push tab's serving benchmark in the main window on the Local machine, against the fake SGLang
// server (TEST DOUBLE, resources/practice/fake_sglang_server.py: an OpenAI-compatible API whose latency
// follows the config file it loaded) and the fake sglang.bench_serving (TEST DOUBLE, fakebenchserving.py): a
// synthetic run (SIMULATED configs), Preview push, "Push, restart and compare" in rigorous mode (A B B A,
// a restart per leg), the verdict and the chart with intervals, the result kept with the run (Results
// page tab, PDF page), Undo offered for a slower result. MOETUNE_SERVING_SCREENSHOTS=DIR saves pictures.
#include "../integration/fakeserverhost.h"
#include "app/mainwindow.h"
#include "app/results/resultspage.h"
#include "app/results/servingresultsview.h"
#include "app/tune/servingbenchbox.h"
#include "app/tune/tunepage.h"
#include "charts/servingchart.h"
#include "core/diagnosis/diagnoser.h"
#include "core/run/workspace.h"
#include "core/run/workspacerun.h"
#include "findchild.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "remote/hosts/hoststore.h"
#include "remote/transport/localtransport.h"
#include "report/pdfreport.h"
#include "report/servingreportpage.h"

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
        named<QSpinBox>(box, u"inputSpin"_s)->setValue(8);
        named<QSpinBox>(box, u"outputSpin"_s)->setValue(24);
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
        QVERIFY2(verdict.startsWith(ServingComparison::verdictName(cmp->verdict())), qPrintable(verdict));
        // 2 pairs rarely decide (t(1) = 12.7); what the legs measured is shown: the primary metric (TPOT
        // for short prompts and longer answers) fell, with its interval.
        QCOMPARE(cmp->primary(), ServingResult::Metric::TpotMedian);
        const ServingComparison::Row primary = cmp->primaryRow();
        QVERIFY2(primary.change.hasInterval() && primary.change.changePct < -5, qPrintable(cmp->text()));
        QVERIFY2(verdict.contains(u"interval"_s), qPrintable(verdict));
        QCOMPARE(named<QProgressBar>(box, u"legBar"_s)->value(), 4);
        QCOMPARE(box->chart()->rowCount(), 4); // the primary row and 3 secondary
        QCOMPARE(box->chart()->intervalCount(), 4);
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
        // Results re-reads the run each time the page keeps something new (push, then the comparison):
        // wait for the read that has serving.json.
        QTRY_VERIFY_WITH_TIMEOUT(results->currentRun() && results->currentRun()->runId == runId &&
                                     results->currentRun()->serving,
                                 60000);
        auto *view = results->findChild<ServingResultsView *>();
        QVERIFY(view);
        QCOMPARE(view->verdictText(), verdict);
        QCOMPARE(view->chart()->intervalCount(), 4);
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

        // Slower after a push: Undo offered, and it is the page's undo (the files put back). Every A leg
        // has the first leg's figures, every B leg those 30% worse: the same ratio on both pairs.
        ServingComparison slower = *cmp;
        for (ServingComparison::Leg &l : slower.legs) {
            l.arm = u"ABBA"_s.at(&l - slower.legs.data());
            l.results = cmp->legs.first().results;
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

    // The four verdict states on known legs (decode preset, concurrency 1, 16, 64): the box, the Results
    // tab and the PDF's serving page say each one with its interval; "not measured" shows no chart and
    // no rows. MOETUNE_SERVING_SCREENSHOTS=DIR keeps the pictures and the PDFs.
    void verdictStates_data() {
        QTest::addColumn<QString>("order");
        QTest::addColumn<QList<double>>("tpotFactor"); // per leg, on 10 ms
        QTest::addColumn<int>("failedLeg");            // -1: none
        QTest::addColumn<QString>("state");
        QTest::addColumn<QString>("says");
        QTest::newRow("faster") << u"ABBAABBA"_s
                                << QList<double>{1.0, 0.90, 0.91, 1.01, 1.0, 0.89, 0.90, 0.99} << -1
                                << u"faster"_s << u"Faster: median TPOT -"_s;
        QTest::newRow("no-change") << u"ABBAABBA"_s
                                   << QList<double>{1.0, 1.005, 0.995, 1.0, 1.01, 1.0, 1.0, 0.995} << -1
                                   << u"no-change"_s << u"No change larger than 5.0% (95% interval"_s;
        QTest::newRow("inconclusive") << u"ABBA"_s << QList<double>{1.0, 0.92, 1.02, 1.0} << -1
                                      << u"inconclusive"_s << u"Inconclusive: the interval"_s;
        QTest::newRow("not-measured") << u"ABBA"_s << QList<double>{1.0, 0.5, 0.5, 1.0} << 1
                                      << u"not-measured"_s << u"Not measured: Leg 2 (B): 198 of 200"_s;
    }
    void verdictStates() {
        QFETCH(QString, order);
        QFETCH(QList<double>, tpotFactor);
        QFETCH(int, failedLeg);
        QFETCH(QString, state);
        QFETCH(QString, says);
        ServingComparison c;
        c.workload = *ServingWorkload::fromPreset(u"decode"_s);
        c.rigorous = true;
        c.pairs = int(order.size() / 2);
        c.runId = u"demo"_s;
        for (qsizetype i = 0; i < order.size(); ++i) {
            ServingComparison::Leg l;
            l.arm = order.at(i);
            for (int conc : c.workload.concurrencies) {
                ServingResult r;
                r.concurrency = conc;
                r.completed = i == failedLeg ? 2 : 200;
                r.failed = i == failedLeg ? 198 : 0;
                r.medianTpotMs = (8 + 0.05 * conc) * tpotFactor.value(i);
                r.medianTtftMs = 40 + 2.0 * conc + (i % 3);
                r.outputThroughput = 100.0 * conc / tpotFactor.value(i);
                l.results.append(r);
            }
            l.commands = c.manualCommands();
            c.legs.append(l);
        }
        QVERIFY2(c.verdictSentence().startsWith(says), qPrintable(c.verdictSentence()));
        const bool measured = state != "not-measured"_L1;

        ServingBenchBox box;
        box.resize(1000, 900);
        box.show();
        box.showComparison(c, true);
        const QString label = named<QLabel>(&box, u"verdictLabel"_s)->text();
        QVERIFY2(label.startsWith(says), qPrintable(label));
        QCOMPARE(box.chart()->isVisible(), measured);
        QVERIFY(!named<QPlainTextEdit>(&box, u"benchText"_s)->toPlainText().contains(u"n/a"_s));

        QString error;
        // The demo workspace's recorded runs, from the source tree: a run for the report's other pages.
        const auto ws = Workspace::open(
            QStringLiteral(MOETUNE_TEST_DATA_DIR) + u"/../../resources/demo-workspace"_s, &error);
        QVERIFY2(ws, qPrintable(error));
        QVERIFY2(!ws->runs().isEmpty(), qPrintable(ws->warnings().join(u'\n')));
        WorkspaceRun run = ws->runs().first();
        run.serving = c.toJson();
        ServingResultsView view;
        view.resize(1000, 800);
        view.show();
        QVERIFY(view.setRun(run));
        QVERIFY2(view.verdictText().startsWith(says), qPrintable(view.verdictText()));
        QCOMPARE(view.chart()->isVisible(), measured);
        const QString html = ServingReportPage::html(c);
        QVERIFY2(html.contains(says.toHtmlEscaped()), qPrintable(html));
        QCOMPARE(html.contains(u"<th>before</th>"_s), measured); // no table of n/a rows
        QCOMPARE(ServingReportPage::hasChart(c), measured);
        QTemporaryDir dir;
        const QString pdf = (m_shots.isEmpty() ? dir.path() : m_shots) + u"/serving-page-%1.pdf"_s.arg(state);
        QVERIFY2(PdfReport::write(run, pdf, &error), qPrintable(error));
        QVERIFY(QFileInfo(pdf).size() > 10000);
        if (!m_shots.isEmpty()) {
            QTest::qWait(200);
            QVERIFY(box.grab().save(m_shots + u"/serving-box-%1.png"_s.arg(state), "PNG"));
            QVERIFY(view.grab().save(m_shots + u"/results-serving-%1.png"_s.arg(state), "PNG"));
        }
    }

    // Two servers on the host and none chosen: the box asks which, and benchmarks neither (issue 41).
    void severalServersAsksWhich() {
        LocalTransport transport;
        HostCalls calls(&transport, nullptr);
        ServingFlow serving(&calls, nullptr, nullptr);
        HostProbe probe;
        probe.hostName = u"gpu-7"_s;
        for (const auto &[pid, port] : {std::pair{4242, 30000}, std::pair{4343, 30001}}) {
            ServerProcess s;
            s.pid = pid;
            s.port = port;
            s.framework = Framework::SGLang;
            s.modelPath = u"/models/m%1"_s.arg(port);
            probe.servers.append(s);
        }
        ServingBenchBox box;
        box.setProvider([&]() -> std::optional<ServingBenchBox::Context> {
            ServingBenchBox::Context c;
            c.serving = &serving;
            c.probe = probe;
            return c;
        });
        box.show();
        click(&box, u"benchButton"_s);
        const QString said = named<QLabel>(&box, u"verdictLabel"_s)->text();
        QVERIFY2(said.contains(u"runs 2 servers"_s) && said.contains(u"pid 4242"_s) &&
                     said.contains(u"pid 4343"_s),
                 qPrintable(said));
        QVERIFY2(named<QPushButton>(&box, u"benchButton"_s)->isEnabled(), "a benchmark was started");
    }
};

QTEST_MAIN(TestServingBox)
#include "tst_servingbox.moc"
