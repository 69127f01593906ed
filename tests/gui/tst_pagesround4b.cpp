// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Issue 45, the rest (points 1, 6, 3, 8, 9 and lesser items), offscreen, on the practice server (a labelled
// PRACTICE DOUBLE: resources/practice/fake_sglang_server.py for the server, practice_bench_serving.py for
// its serving benchmark tool, a script for nvidia-smi; the agent and every file are real):
// - "Tune the Served Model" (Hosts) and "Tune This..." (Diagnose) build the same job (core/host/tunejob.h);
// - "Push, restart and compare" walks all its legs to a verdict with its interval, SIMULATED;
// - the whole loop from a fresh HOME with the time each step took (MOETUNE_WALK_LOG=file writes the list).
// MOETUNE_SHOTS_DIR=folder also saves the states touched at 1440x900 and 1024x640 (screenshots()).
#include "app/diagnose/diagnosepage.h"
#include "app/hosts/hostspage.h"
#include "app/mainwindow.h"
#include "app/results/resultspage.h"
#include "app/tune/servingbenchbox.h"
#include "app/tune/tunepage.h"
#include "app/widgets/banner.h"
#include "charts/servingchart.h"
#include "core/diagnosis/diagnosis.h"
#include "core/job/tunespec.h"
#include "core/push/pushproof.h"
#include "core/run/workspace.h"
#include "core/serving/servingcomparison.h"
#include "findchild.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "remote/hosts/practiceserver.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFontMetrics>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QToolButton>
#include <QTreeView>

#include <memory>
#include <signal.h>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::click;
using moetune::test::named;

namespace {

QByteArray readAll(const QString &path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QString specJson(const TuneSpec &s) {
    return QString::fromUtf8(QJsonDocument(s.toJson()).toJson(QJsonDocument::Compact));
}

} // namespace

class TestPagesRound4b : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    QString m_agent = QStringLiteral(MOETUNE_AGENT_PYZ);
    std::unique_ptr<MainWindow> m_window;
    QStringList m_walk; // "step: seconds"
    QElapsedTimer m_step;

    HostsPage *hosts() const { return m_window->findChild<HostsPage *>(); }
    DiagnosePage *diagnose() const { return m_window->findChild<DiagnosePage *>(); }
    TunePage *tune() const { return m_window->findChild<TunePage *>(u"tunePage"_s); }
    ResultsPage *results() const { return m_window->findChild<ResultsPage *>(); }
    void showPage(QWidget *page) {
        for (int i = 0; i < m_window->pageCount(); ++i)
            if (m_window->page(i) == page)
                m_window->setCurrentPage(i);
    }
    QWidget *currentPage() const { return m_window->page(m_window->currentPage()); }
    void newWindow(QSize size) {
        m_window = std::make_unique<MainWindow>();
        m_window->hostRegistry()->setAgentPath(m_agent);
        m_window->resize(size);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void stepDone(const QString &what) {
        m_walk.append(u"%1: %2 s"_s.arg(what).arg(m_step.elapsed() / 1000.0, 0, 'f', 1));
        qInfo("walk: %s", qPrintable(m_walk.constLast()));
        m_step.restart();
    }
    void shot(const QString &name) {
        const QString dir = qEnvironmentVariable("MOETUNE_SHOTS_DIR");
        if (dir.isEmpty())
            return;
        QTest::qWait(300);
        QVERIFY(m_window->grab().save(
            u"%1/%2-%3x%4.png"_s.arg(dir, name).arg(m_window->width()).arg(m_window->height())));
    }
    // A walk state that exists only in the walk (1440x900): also saved at the smallest size, 1024x640.
    void shotBothSizes(const QString &name) {
        if (qEnvironmentVariable("MOETUNE_SHOTS_DIR").isEmpty())
            return;
        const QSize was = m_window->size();
        shot(name);
        m_window->resize(1024, 640);
        shot(name);
        m_window->resize(was);
        QTest::qWait(200);
    }
    // The lines of a chart's title (it is HTML: "<br>" breaks a line) that do not fit the chart's width.
    static QStringList cutTitleLines(QChart *chart, int width) {
        QStringList cut;
        const QFontMetrics fm(chart->titleFont());
        for (const QString &line : chart->title().split(u"<br>"_s)) {
            if (fm.horizontalAdvance(line) > width - 24)
                cut.append(u"\"%1\": %2 > %3 px"_s.arg(line).arg(fm.horizontalAdvance(line)).arg(width - 24));
        }
        return cut;
    }
    // The practice server, made and selected by its button; probed; diagnosed by "Tune the Served Model".
    void practiceReady() {
        click(hosts(), u"practiceButton"_s);
        const PracticeServer practice;
        QTRY_VERIFY_WITH_TIMEOUT(readAll(practice.log()).contains("ready to roll"), 30000);
        // A practice server runs until stopped (it exited after an hour before); cleanupTestCase stops it.
        QVERIFY(readAll(practice.log()).contains("runs until stopped"));
        QVERIFY(QFile::exists(practice.site() + u"/sglang/bench_serving.py"_s));
        QVERIFY(readAll(practice.site() + u"/sglang/bench_serving.py"_s).contains("PRACTICE DOUBLE"));
    }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        QStandardPaths::setTestModeEnabled(true); // the practice server goes below this HOME
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_home.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_home.path());
        QCoreApplication::setOrganizationName(u"moetune-test"_s);
        QCoreApplication::setApplicationName(u"tst_pagesround4b"_s);
        QSettings().clear();
        QDir().mkpath(m_home.path() + u"/.ssh"_s);
        QVERIFY2(QFileInfo::exists(m_agent), qPrintable(m_agent));
    }
    void cleanupTestCase() {
        m_window.reset();
        PracticeServer practice;
        QFile pid(practice.pidFile());
        if (pid.open(QIODevice::ReadOnly))
            ::kill(pid_t(pid.readAll().trimmed().toLongLong()), SIGTERM);
        QSettings().clear();
        if (const QString log = qEnvironmentVariable("MOETUNE_WALK_LOG");
            !log.isEmpty() && !m_walk.isEmpty()) {
            QFile f(log);
            if (f.open(QIODevice::WriteOnly | QIODevice::Truncate))
                f.write((m_walk.join(u'\n') + u'\n').toUtf8());
        }
    }

    // Points 1 and 6, and the walk of the whole loop from a fresh HOME (this test's HOME is new): the
    // practice server -> probe -> "Tune the Served Model" (diagnoses its log first) -> the same job as
    // "Tune This..." -> run -> preview -> "Push, restart and compare" (push, restart and proof, serving
    // legs on the practice double of the benchmark tool) -> a verdict with its interval, SIMULATED ->
    // Results on the run -> PDF.
    void wholeLoopOnThePracticeServer() {
        m_step.start();
        newWindow({1440, 900});
        stepDone(u"open the app (fresh HOME)"_s);
        practiceReady();
        stepDone(u"make and start the practice server"_s);

        click(hosts(), u"probeButton"_s);
        auto *tuneServed = named<QPushButton>(hosts(), u"tuneServedButton"_s);
        QTRY_VERIFY_WITH_TIMEOUT(tuneServed->isEnabled(), 120000);
        stepDone(u"probe"_s);
        showPage(hosts());
        shot(u"hosts-probed"_s);

        // Point 1: Hosts' button, with no diagnosis of the host at hand, diagnoses its log first and
        // builds the job from the log's target: up AND _down, the log's device name, its folder.
        QTest::mouseClick(tuneServed, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(currentPage() == tune() && tune()->spec().experts == 128, 120000);
        stepDone(u"diagnose (Tune the Served Model diagnoses the log first)"_s);
        QCOMPARE(diagnose()->diagnosis().host, PracticeServer::alias());
        const TuneSpec fromHosts = tune()->spec();
        QVERIFY2(fromHosts.upAndDown, qPrintable(specJson(fromHosts)));
        QCOMPARE(fromHosts.deviceName, u"NVIDIA_H200"_s); // the name the practice server's log asks for
        QCOMPARE(fromHosts.hiddenSize, 2048);
        QCOMPARE(fromHosts.topk, 8);
        QVERIFY2(named<QLabel>(tune(), u"sourceLabel"_s)->text().contains(PracticeServer().wantedFolder()),
                 qPrintable(named<QLabel>(tune(), u"sourceLabel"_s)->text()));
        shot(u"tune-from-served-model"_s);

        // "Tune This..." on the same diagnosis: the same job, field by field.
        int row = -1;
        for (int i = 0; i < diagnose()->diagnosis().findings.size() && row < 0; ++i)
            if (diagnose()->diagnosis().findings.at(i).target)
                row = i;
        QVERIFY(row >= 0);
        showPage(diagnose());
        diagnose()->selectFinding(row);
        // Point 9: the GUI's "What to do" says what to click, not the agent's command line.
        const QString details = named<QTextBrowser>(diagnose(), u"detailsBrowser"_s)->toPlainText();
        QVERIFY2(details.contains(u"click Tune This"_s) && !details.contains(u"moetune-agent tune"_s),
                 qPrintable(details));
        click(diagnose(), u"tuneButton"_s);
        QTRY_COMPARE(currentPage(), static_cast<QWidget *>(tune()));
        QCOMPARE(specJson(tune()->spec()), specJson(fromHosts));

        // The run (synthetic backend on the practice server: SIMULATED).
        named<QLineEdit>(tune(), u"batchSizesEdit"_s)->setText(u"1,16"_s);
        QCOMPARE(tune()->validation(), QString());
        QSignalSpy finished(tune(), &TunePage::runFinished);
        QTRY_VERIFY_WITH_TIMEOUT(named<QPushButton>(tune(), u"startButton"_s)->isEnabled(), 60000);
        m_step.restart();
        click(tune(), u"startButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(finished.first().at(1).toString(), u"ok"_s);
        stepDone(u"tune (E=128 N=384 up+down, M=1,16, synthetic)"_s);

        // Preview: knows where the server reads (the log's folder), no "cannot tell".
        named<QTabWidget>(tune(), u"rightTabs"_s)->setCurrentWidget(named<QWidget>(tune(), u"pushTab"_s));
        QSignalSpy previewed(tune(), &TunePage::previewReady);
        click(tune(), u"pushPreviewButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(previewed.count(), 1, 120000);
        const QString preview = named<QPlainTextEdit>(tune(), u"pushText"_s)->toPlainText();
        QVERIFY2(previewed.first().at(1).toString().isEmpty(), qPrintable(preview));
        QVERIFY2(!preview.contains(u"cannot tell where"_s), qPrintable(preview));
        QVERIFY2(preview.contains(PracticeServer().wantedFolder()), qPrintable(preview));
        QVERIFY2(preview.contains(PracticeServer().downName()), qPrintable(preview));
        stepDone(u"preview push"_s);
        shotBothSizes(u"tune-preview"_s);

        // Point 6: push, restart and compare, every leg on the practice server (rigorous, 2 pairs).
        ServingBenchBox *box = tune()->servingBox();
        named<QSpinBox>(box, u"promptsSpin"_s)->setValue(32);
        auto *conc = named<QLineEdit>(box, u"concurrencyEdit"_s);
        conc->setText(u"16"_s);
        named<QCheckBox>(box, u"rigorousCheck"_s)->setChecked(true);
        named<QSpinBox>(box, u"pairsSpin"_s)->setValue(2);
        QCOMPARE(box->validation(), QString());
        auto *legBar = named<QProgressBar>(box, u"legBar"_s);
        QVERIFY2(!legBar->text().contains(u"leg 0"_s), qPrintable(legBar->text())); // never "leg 0 of 1"
        QSignalSpy compared(box, &ServingBenchBox::finished);
        QSignalSpy pushed(tune(), &TunePage::pushed);
        click(box, u"compareButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(compared.count(), 1, 400000);
        const ServingComparison cmp = *box->comparison();
        QVERIFY2(cmp.error.isEmpty(), qPrintable(cmp.text()));
        QCOMPARE(cmp.legs.size(), 4);
        QVERIFY(cmp.servingSimulated);
        const QString verdict = named<QLabel>(box, u"verdictLabel"_s)->text();
        QVERIFY2(verdict.contains(u"interval"_s) && verdict.contains(u"SIMULATED"_s), qPrintable(verdict));
        // The tuned file has a row at the concurrency; the fallback it replaced had none: faster.
        QVERIFY2(cmp.primaryRow().change.changePct < -5, qPrintable(cmp.text()));
        QCOMPARE(pushed.count(), 1);
        QCOMPARE(legBar->text(), u"4 of 4 legs done"_s);
        const QString proof = named<QLabel>(tune(), u"proofLabel"_s)->text();
        QVERIFY2(proof.contains(u"gone on every rank"_s) && !proof.contains(u"probe"_s), qPrintable(proof));
        stepDone(u"push, restart and prove, serving compare (4 legs, SIMULATED)"_s);
        // The serving chart's title is never cut (it was "serving fig..." at 1440x900).
        for (const QSize size : {QSize(1440, 900), QSize(1024, 640)}) {
            m_window->resize(size);
            QTest::qWait(200);
            const QStringList cutTitle = cutTitleLines(box->chart()->chart(), box->chart()->width());
            QVERIFY2(cutTitle.isEmpty(), qPrintable(cutTitle.join(u"; "_s)));
        }
        m_window->resize(1440, 900);
        shotBothSizes(u"tune-serving-verdict"_s);

        // Lesser item: a re-preview of the file this run pushed says so (push.json and the file's sha256),
        // not "18 kept, unmeasured".
        QSignalSpy repreviewed(tune(), &TunePage::previewReady);
        click(tune(), u"pushPreviewButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(repreviewed.count(), 1, 120000);
        const QString again = named<QPlainTextEdit>(tune(), u"pushText"_s)->toPlainText();
        QVERIFY2(again.contains(u"already installed by this run (pushed "_s), qPrintable(again));
        QVERIFY2(!again.contains(u"kept, unmeasured"_s), qPrintable(again));
        shot(u"tune-repreview"_s);

        // Results follows the run, with its push and its comparison; the PDF says so.
        QTRY_VERIFY_WITH_TIMEOUT(results()->currentRun() &&
                                     results()->currentRun()->runId == finished.first().at(0).toString(),
                                 60000);
        QTRY_VERIFY_WITH_TIMEOUT(results()->currentRun()->push.has_value(), 60000);
        const QString pdf = m_home.filePath(u"report.pdf"_s);
        QCOMPARE(results()->exportReport(pdf), pdf);
        QVERIFY(QFileInfo(pdf).size() > 1000);
        stepDone(u"PDF export"_s);
        if (!QStandardPaths::findExecutable(u"pdftotext"_s).isEmpty()) {
            QProcess p;
            p.start(u"pdftotext"_s, {pdf, u"-"_s});
            QVERIFY(p.waitForFinished(60000));
            const QString text = QString::fromUtf8(p.readAllStandardOutput()).simplified();
            QVERIFY2(!text.contains(u"no push recorded"_s), qPrintable(text.left(3000)));
            QVERIFY2(text.contains(u"SIMULATED"_s), qPrintable(text.left(3000)));
        }
        showPage(results());
        // The SIMULATED banner and the chart's own title are two lines ("not measurements Tuned vs default"
        // ran together before: the title is HTML, where "\n" is a space).
        int simulatedTitles = 0;
        for (QChartView *v : results()->findChildren<QChartView *>()) {
            const QChart *c = v->chart();
            simulatedTitles += c->title().startsWith(u"SIMULATED"_s) ? 1 : 0;
            if (c->title().startsWith(u"SIMULATED"_s))
                QVERIFY2(c->title().startsWith(u"SIMULATED (synthetic backend): not measurements<br>"_s),
                         qPrintable(c->title()));
        }
        QVERIFY(simulatedTitles > 0);
        shotBothSizes(u"results-after-walk"_s);
    }

    // Lesser item: the app reopens on the last host's diagnosis (the walk's), not on the demo.
    void reopensOnTheLastHostsDiagnosis() {
        newWindow({1440, 900});
        m_window->openInitial(QString());
        QTRY_VERIFY_WITH_TIMEOUT(!diagnose()->isBusy() && !diagnose()->diagnosis().targets.isEmpty(), 60000);
        QCOMPARE(diagnose()->diagnosis().host, PracticeServer::alias());
        // The reopened log's age stays in the status after the diagnosis ("Diagnosed N lines" alone before).
        const QString status = m_window->statusBar()->currentMessage();
        QVERIFY2(status.contains(u"fetched"_s) && status.contains(u" ago"_s) &&
                     status.contains(u"iagnosed"_s),
                 qPrintable(status));
        shot(u"reopened-last-host"_s);
    }

    // Lesser item: a finding whose tuned files are in use (the server loads them) never says to tune
    // ("Next step: tune ... up config." before).
    void inUseFindingHasNoNextStep() {
        newWindow({1440, 900});
        const QString dir = u"/usr/lib/python3/dist-packages/sglang/srt/layers/moe/fused_moe_triton/configs/"
                            u"triton_3_6_0/"_s;
        QFile log(m_home.filePath(u"in-use.log"_s));
        QVERIFY(log.open(QIODevice::WriteOnly));
        log.write((u"[2026-12-08 02:00:00 TP0] Using MoE kernel config from %1E=128,N=384,"
                   u"device_name=NVIDIA_H200.json.\n"_s.arg(dir))
                      .toUtf8());
        log.close();
        showPage(diagnose());
        QVERIFY(diagnose()->openFile(log.fileName()));
        QTRY_VERIFY_WITH_TIMEOUT(!diagnose()->isBusy() && !diagnose()->diagnosis().findings.isEmpty(), 30000);
        int inUse = -1;
        QStringList seen;
        for (int i = 0; i < diagnose()->diagnosis().findings.size(); ++i) {
            const Finding &f = diagnose()->diagnosis().findings.at(i);
            seen.append(u"%1 [%2] %3"_s.arg(f.rule, f.target ? u"target"_s : u"-"_s, f.title));
            if (f.target && f.rule == u"moe-config-used"_s && inUse < 0)
                inUse = i;
        }
        QVERIFY2(inUse >= 0, qPrintable(seen.join(u"\n"_s)));
        diagnose()->selectFinding(inUse);
        const QString text = named<QLabel>(diagnose(), u"tuneSpecLabel"_s)->text();
        QVERIFY2(!text.contains(u"Next step: tune"_s) &&
                     text.contains(u"Nothing to do: the server already"_s),
                 qPrintable(text));
        shot(u"diagnose-in-use-finding"_s);
    }

    // Lesser item: an empty Results page says what to do, not a blank "Run:" alone.
    void emptyResultsSaysWhatToDo() {
        newWindow({1024, 640});
        showPage(results());
        QVERIFY(!results()->currentRun());
        QVERIFY2(results()->message().contains(u"No runs yet"_s) && results()->message().contains(u"Demo"_s),
                 qPrintable(results()->message()));
        shot(u"results-empty"_s);
    }

    // Point 9: the proof lists ranks, never the probe's folder listing as if it were one ("probe before").
    void proofListsRanksOnly() {
        Finding f;
        f.severity = Severity::Warning;
        f.sources = {u"TP0"_s, u"probe"_s, u"TP1"_s};
        TuningTarget t;
        t.framework = Framework::SGLang;
        t.name = *ConfigName::parse(u"E=128,N=384,device_name=NVIDIA_H200.json"_s);
        f.target = t;
        Diagnosis before;
        before.findings = {f};
        const PushProof p =
            PushProof::compare(before, Diagnosis{}, {u"/cfg/E=128,N=384,device_name=NVIDIA_H200.json"_s}, {});
        QCOMPARE(p.ranksBefore, (QStringList{u"TP0"_s, u"TP1"_s}));
        QVERIFY2(!p.summary().contains(u"probe"_s), qPrintable(p.summary()));
    }

    // Point 8: the Hosts page at the smallest window (1024x640) with the practice server probed: no
    // button whose text does not fit, no column header cut.
    void hostsPageFitsAt1024x640() {
        newWindow({1024, 640});
        showPage(hosts());
        QVERIFY(hosts()->selectHost(PracticeServer::alias()));
        QVERIFY(named<QPushButton>(hosts(), u"tuneServedButton"_s)->text().contains(u"Served Model"_s));
        click(hosts(), u"probeButton"_s);
        QTRY_VERIFY_WITH_TIMEOUT(named<QPushButton>(hosts(), u"tuneServedButton"_s)->isEnabled(), 120000);
        QTest::qWait(300);
        QStringList cut;
        for (QAbstractButton *b : hosts()->findChildren<QAbstractButton *>()) {
            if (!b->isVisible() || b->text().isEmpty())
                continue;
            if (b->width() < b->sizeHint().width())
                cut.append(
                    u"button \"%1\": %2 < %3 px"_s.arg(b->text()).arg(b->width()).arg(b->sizeHint().width()));
        }
        for (QHeaderView *h : hosts()->findChildren<QHeaderView *>()) {
            if (!h->isVisible() || h->orientation() != Qt::Horizontal)
                continue;
            for (int i = 0; i < h->count(); ++i) {
                if (h->isSectionHidden(i))
                    continue;
                const QString text = h->model()->headerData(i, Qt::Horizontal).toString();
                const int need = h->fontMetrics().horizontalAdvance(text) + 12;
                if (h->sectionSize(i) < need)
                    cut.append(u"header \"%1\": %2 < %3 px"_s.arg(text).arg(h->sectionSize(i)).arg(need));
            }
        }
        shot(u"hosts-probed"_s);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(u"; "_s)));
    }

    // A tool: MOETUNE_SHOTS_DIR=folder saves every page at 1440x900 and 1024x640 with the practice server
    // probed and diagnosed (the finding's "What to do" on the Diagnose page).
    void screenshots() {
        if (qEnvironmentVariable("MOETUNE_SHOTS_DIR").isEmpty())
            QSKIP("set MOETUNE_SHOTS_DIR to save screenshots");
        for (const QSize size : {QSize(1440, 900), QSize(1024, 640)}) {
            newWindow(size);
            QVERIFY(hosts()->selectHost(PracticeServer::alias()));
            click(hosts(), u"probeButton"_s);
            auto *tuneServed = named<QPushButton>(hosts(), u"tuneServedButton"_s);
            QTRY_VERIFY_WITH_TIMEOUT(tuneServed->isEnabled(), 120000);
            showPage(hosts());
            shot(u"shots-hosts"_s);
            QTest::mouseClick(tuneServed, Qt::LeftButton);
            QTRY_VERIFY_WITH_TIMEOUT(currentPage() == tune() && tune()->spec().experts == 128, 120000);
            // The tuned files are in use now: still the log's target (its folder), not the probe's guess.
            QVERIFY2(named<QLabel>(tune(), u"sourceLabel"_s)->text().startsWith(u"From the finding"_s),
                     qPrintable(named<QLabel>(tune(), u"sourceLabel"_s)->text()));
            shot(u"shots-tune-served"_s);
            showPage(diagnose());
            for (int i = 0; i < diagnose()->diagnosis().findings.size(); ++i)
                if (diagnose()->diagnosis().findings.at(i).target) {
                    diagnose()->selectFinding(i);
                    break;
                }
            shot(u"shots-diagnose-finding"_s);
            showPage(results());
            shot(u"shots-results"_s);
            m_window.reset();
        }
    }

    // Point 3, the rest: a run the CLI started and followed on a known host (kept where the app keeps its
    // runs, `moetune-cli tune --follow`) and left unfinished is offered on reopening like the app's own.
    void cliRunIsOfferedOnReopening() {
        const QString dir = QDir(Workspace::defaultLocation()).filePath(u"20261208-cli-run-0001"_s);
        QVERIFY(QDir().mkpath(dir));
        QFile run(dir + u"/run.json"_s);
        QVERIFY(run.open(QIODevice::WriteOnly));
        run.write(R"({"run_id":"20261208-cli-run-0001","host":"practice",)"
                  R"("source":"moetune-cli tune, followed from practice"})");
        run.close();
        QFile events(dir + u"/events.jsonl"_s);
        QVERIFY(events.open(QIODevice::WriteOnly));
        events.write(R"({"type":"run_started","run_id":"20261208-cli-run-0001","seq":0,"spec":{"ops":"up"}})"
                     "\n");
        events.close();
        newWindow({1440, 900});
        m_window->openInitial(QString());
        auto *banner = named<Banner>(tune(), u"resumeRunBanner"_s);
        QTRY_VERIFY(!banner->isHidden());
        QVERIFY2(banner->text().contains(u"20261208-cli-run-0001"_s), qPrintable(banner->text()));
        m_window.reset();
        QVERIFY(QDir(dir).removeRecursively());
    }
};

QTEST_MAIN(TestPagesRound4b)
#include "tst_pagesround4b.moc"
