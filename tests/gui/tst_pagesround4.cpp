// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Issue 45 (points 3, 4, 5, 7 and the lesser items), offscreen: a followed run and quitting, the Results
// page following the session's newest run, the live view's progress and labels, "Tune This..." on a
// pasted log. MOETUNE_SHOTS_DIR=folder also saves the states touched at 1440x900 and 1024x640
// (screenshots(), a tool, not a check).
#include "app/diagnose/diagnosepage.h"
#include "app/mainwindow.h"
#include "app/results/resultspage.h"
#include "app/tune/tunejobform.h"
#include "app/tune/tunepage.h"
#include "app/tune/tunerunfolder.h"
#include "app/widgets/banner.h"
#include "charts/livebestchart.h"
#include "core/job/tunespec.h"
#include "core/run/runprogress.h"
#include "core/run/workspace.h"
#include "core/run/workspacerun.h"
#include "core/util/jobrunner.h"
#include "findchild.h"
#include "remote/flows/hostregistry.h"
#include "remote/hosts/hoststore.h"
#include "report/demoworkspace.h"

#include <QApplication>
#include <QChart>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QInputDialog>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QXYSeries>

#include <memory>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::click;
using moetune::test::named;

namespace {

QJsonObject obj(const QString &json) {
    return QJsonDocument::fromJson(json.toUtf8()).object();
}

AgentEvent agentEvent(const QJsonObject &o) {
    AgentEvent e;
    e.type = o.value("type"_L1).toString();
    e.object = o;
    return e;
}

// The sizes of the reference tuners, and their curves all ending within a few per cent of each other
// (the small sizes of a real sweep do: "M=4096  096", "M=16M=16" were labels drawn over each other).
const QList<int> kSizes{1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096};

} // namespace

class TestPagesRound4 : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    std::unique_ptr<MainWindow> m_window;
    QString m_agent = QStringLiteral(MOETUNE_AGENT_PYZ);

    TunePage *tune() const { return m_window->findChild<TunePage *>(); }
    void showPage(QWidget *page) {
        for (int i = 0; i < m_window->pageCount(); ++i)
            if (m_window->page(i) == page)
                m_window->setCurrentPage(i);
    }
    void newWindow(QSize size) {
        m_window = std::make_unique<MainWindow>();
        m_window->hostRegistry()->setLocalHome(m_home.path());
        m_window->hostRegistry()->setAgentPath(m_agent);
        m_window->resize(size);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void feedSizes(LiveBestChart *chart, const QString &run, const QList<int> &sizes, int *seq) {
        QStringList list;
        for (int m : sizes)
            list.append(QString::number(m));
        chart->addEvent(agentEvent(
            obj(uR"({"type":"run_started","run_id":"%1","seq":%2,"spec":{"ops":"up","batch_sizes":[%3]}})"_s
                    .arg(run)
                    .arg((*seq)++)
                    .arg(list.join(u',')))));
        for (int m : sizes) {
            chart->addEvent(agentEvent(obj(
                uR"({"type":"measurement","run_id":"%1","seq":%2,"op":"both","m":%3,"round":0})"_s.arg(run)
                    .arg((*seq)++)
                    .arg(m))));
            chart->addEvent(agentEvent(
                obj(uR"({"type":"best","run_id":"%1","seq":%2,"op":"both","m":%3,"median_us":%4})"_s.arg(run)
                        .arg((*seq)++)
                        .arg(m)
                        .arg(40.0 + 0.01 * m))));
        }
    }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_home.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_home.path());
        QCoreApplication::setOrganizationName(u"moetune-test"_s);
        QCoreApplication::setApplicationName(u"tst_pagesround4"_s);
        QSettings().clear();
        QDir().mkpath(m_home.path() + u"/.ssh"_s);
        QVERIFY2(QFileInfo::exists(m_agent), qPrintable(m_agent));
    }
    void cleanup() {
        if (m_window)
            for (auto *jobs : m_window->findChildren<JobRunner *>())
                jobs->waitForIdle();
        m_window.reset();
    }

    // Point 5: "911/911 (100%), ETA 0 s" mid-run, when the strategy had not yet added its next phase.
    void progressNeverDoneBeforeTheRun() {
        RunProgress p;
        p.apply(
            obj(uR"({"type":"run_started","run_id":"g","seq":0,"spec":{"ops":"up"},"journal_entries":0})"_s));
        p.apply(obj(uR"({"type":"progress","run_id":"g","seq":1,"done":911,"total":911,"eta_s":0})"_s));
        QString line = p.progressLine();
        QVERIFY2(!line.contains(u"100%"_s) && !line.contains(u"ETA"_s), qPrintable(line));
        QVERIFY2(line.contains(u"known so far"_s), qPrintable(line));
        p.apply(obj(uR"({"type":"progress","run_id":"g","seq":2,"done":1000,"total":1876,"eta_s":80})"_s));
        line = p.progressLine();
        QVERIFY2(line.contains(u"1000/1876 known so far (53%), ETA 80 s for those"_s), qPrintable(line));
        p.apply(obj(uR"({"type":"progress","run_id":"g","seq":3,"done":1876,"total":1876,"eta_s":0})"_s));
        p.apply(obj(uR"({"type":"done","run_id":"g","seq":4,"status":"ok"})"_s));
        QCOMPARE(p.progressLine(), u"1876/1876 (100%)"_s);

        // The bar of the Run tab: never full before the run's own done.
        newWindow({1024, 640});
        tune()->applyRunEvent(
            obj(uR"({"type":"run_started","run_id":"h","seq":0,"spec":{"ops":"up"},"journal_entries":0})"_s));
        tune()->applyRunEvent(
            obj(uR"({"type":"progress","run_id":"h","seq":1,"done":911,"total":911,"eta_s":0})"_s));
        auto *bar = named<QProgressBar>(tune(), u"progressBar"_s);
        QTRY_VERIFY(bar->maximum() > 1);
        QVERIFY2(bar->value() < bar->maximum(), qPrintable(bar->format()));
        QVERIFY2(!bar->format().contains(u"100%"_s), qPrintable(bar->format()));
    }

    // Point 5: the curves' end labels never overlap, never leave the plot, each size once; the legend
    // names every size (M=4096 too); a new run (Attach) leaves no label of the old one behind.
    void endLabelsPlaced() {
        newWindow({1024, 640});
        showPage(tune());
        LiveBestChart *chart = tune()->liveChart();
        chart->setRedrawInterval(0);
        int seq = 0;
        feedSizes(chart, u"a"_s, kSizes, &seq);
        QSignalSpy redrawn(chart, &LiveBestChart::redrawn);
        QTRY_VERIFY(!chart->endLabels().isEmpty());
        QCoreApplication::processEvents();
        QTest::qWait(50);
        const QStringList labels = chart->endLabels();
        const QList<QRectF> rects = chart->endLabelRects();
        QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), labels.size());
        const QRectF plot = chart->chart()->plotArea();
        for (int i = 0; i < rects.size(); ++i) {
            QVERIFY2(plot.adjusted(-0.5, -0.5, 0.5, 0.5).contains(rects[i]), qPrintable(labels[i]));
            for (int j = i + 1; j < rects.size(); ++j)
                QVERIFY2(!rects[i].intersects(rects[j]), qPrintable(labels[i] + u" / "_s + labels[j]));
        }
        QVERIFY(chart->legendNames().contains(u"M=4096"_s));
        // At 1024x640 the legend holds a few of the 18 names: never without the first and the last.
        const QStringList legend = chart->visibleLegendNames();
        QVERIFY2(legend.contains(u"M=1"_s) && legend.contains(u"M=4096"_s), qPrintable(legend.join(u' ')));
        QVERIFY2(legend.size() >= 3, qPrintable(legend.join(u' ')));
        // What the scene draws is what was placed: no second copy of a label (Qt's point labels).
        auto drawnLabels = [chart] {
            QStringList out;
            for (QGraphicsItem *item : chart->chart()->scene()->items())
                if (auto *t = dynamic_cast<QGraphicsSimpleTextItem *>(item);
                    t && t->text().startsWith(u"M="_s))
                    out.append(t->text());
            out.sort();
            return out;
        };
        QStringList sorted = labels;
        if (!chart->chart()->legend()->isVisible()) // the chart's own short legend: text items too
            sorted += chart->visibleLegendNames();
        sorted.sort();
        QCOMPARE(drawnLabels(), sorted);
        for (const auto *s : chart->chart()->series())
            QVERIFY(!static_cast<const QXYSeries *>(s)->pointLabelsVisible());
        // Attach to another run: the chart starts over, none of the old labels stay.
        chart->reset();
        seq = 0;
        feedSizes(chart, u"b"_s, {64, 128}, &seq);
        QTRY_COMPARE(chart->batchSizes(), (QList<int>{64, 128}));
        QTRY_VERIFY(!chart->endLabels().isEmpty());
        for (const QString &l : drawnLabels())
            QVERIFY2(l == "M=64"_L1 || l == "M=128"_L1, qPrintable(l));
        QVERIFY(chart->chart()->legend()->isVisible()); // two sizes fit Qt's own legend again
    }

    // Point 7: "Tune This..." on a pasted log asks which host (or none yet), never takes the last used.
    void tuneThisAsksForTheHost() {
        newWindow({1440, 900});
        auto *diagnose = m_window->findChild<DiagnosePage *>();
        TuningTarget target;
        target.framework = Framework::SGLang;
        target.configRoot = u"/srv/cfg"_s;
        target.tritonFolder = u"triton_3_6_0"_s;
        target.name = *ConfigName::parse(u"E=128,N=384,device_name=NVIDIA_H200_NVL.json"_s);
        target.upMissing = true;
        Q_EMIT diagnose->tuneRequested(QString(), target);
        QInputDialog *ask = nullptr;
        QTRY_VERIFY((ask = m_window->findChild<QInputDialog *>(u"tuneHostDialog"_s)) != nullptr);
        QVERIFY(ask->isVisible());
        QVERIFY(ask->comboBoxItems().last().startsWith(u"None yet"_s));
        ask->setTextValue(ask->comboBoxItems().last());
        ask->accept();
        QTRY_COMPARE(m_window->page(m_window->currentPage()), static_cast<QWidget *>(tune()));
        QCOMPARE(tune()->hostAlias(), QString());
        QVERIFY(!named<QPushButton>(tune(), u"startButton"_s)->isEnabled());
        QVERIFY2(named<QLabel>(tune(), u"sourceLabel"_s)->text().contains(u"choose the host"_s),
                 qPrintable(named<QLabel>(tune(), u"sourceLabel"_s)->text()));
        QCOMPARE(tune()->spec().experts, 128);
        // "Lesser": a batch size the agent would refuse is refused here, with the limit.
        named<QLineEdit>(tune(), u"batchSizesEdit"_s)->setText(u"1,99999999"_s);
        QVERIFY2(tune()->validation().contains(u"at most 65536"_s), qPrintable(tune()->validation()));
        named<QLineEdit>(tune(), u"batchSizesEdit"_s)->setText(u"1,16"_s);
        // "Lesser": a page's status line does not follow the user to another page.
        m_window->statusBar()->showMessage(u"Diagnosed 13 lines"_s);
        showPage(m_window->findChild<ResultsPage *>());
        QCOMPARE(m_window->statusBar()->currentMessage(), QString());
        showPage(tune());
        // No probe at hand: K and top-k from the model's config.json the user points to.
        QVERIFY(named<QPushButton>(tune(), u"configJsonButton"_s)->isVisible());
        QTemporaryDir files;
        QFile config(files.filePath(u"config.json"_s));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(R"({"architectures":["Qwen3MoeForCausalLM"],"text_config":{"hidden_size":2048,)"
                     R"("num_experts_per_tok":8,"num_experts":128}})");
        config.close();
        auto *form = tune()->findChild<TuneJobForm *>();
        QCOMPARE(form->loadModelConfig(config.fileName()), QString());
        QCOMPARE(tune()->spec().hiddenSize, 2048);
        QCOMPARE(tune()->spec().topk, 8);
        QVERIFY(!form->loadModelConfig(files.filePath(u"missing.json"_s)).isEmpty());
        // Again, choosing this machine.
        Q_EMIT diagnose->tuneRequested(QString(), target);
        QTRY_VERIFY((ask = m_window->findChild<QInputDialog *>(u"tuneHostDialog"_s)) != nullptr);
        ask->setTextValue(ask->comboBoxItems().first());
        ask->accept();
        QTRY_COMPARE(tune()->hostAlias(), HostStore::localAlias());
        QVERIFY(named<QLabel>(tune(), u"sourceLabel"_s)->text().contains(u"as chosen"_s));
    }

    // Point 3 and 4: quitting while a run is followed says it goes on and asks; reopening offers to
    // follow it; Follow fills the form from the run's spec and ends the kept copy's "running"; Results
    // shows the newest run of the session, finished.
    void quitWhileFollowingThenReopen() {
        qputenv("MOETUNE_SYNTHETIC_DELAY_MS", "40");
        newWindow({1440, 900});
        TuneSpec s;
        s.framework = Framework::SGLang;
        s.experts = 64;
        s.n = 256;
        s.hiddenSize = 1024;
        s.topk = 4;
        s.batchSizes = {1, 16, 64, 256};
        s.backend = u"synthetic"_s;
        s.strategy = u"exhaustive"_s;
        tune()->tuneSpec(HostStore::localAlias(), s);
        QCOMPARE(tune()->validation(), QString());
        click(tune(), u"startButton"_s);
        QTRY_VERIFY_WITH_TIMEOUT(tune()->isFollowing() && tune()->progress().measurements > 0, 120000);
        const QString runId = tune()->followedRun();
        QVERIFY(!runId.isEmpty());
        // Ctrl+Q: asked, and "Keep Following" keeps the window.
        m_window->close();
        QMessageBox *box = nullptr;
        QTRY_VERIFY((box = m_window->findChild<QMessageBox *>(u"quitWhileFollowing"_s)) != nullptr);
        QVERIFY2(box->text().contains(runId) && box->text().contains(u"goes on"_s), qPrintable(box->text()));
        if (const QString dir = qEnvironmentVariable("MOETUNE_SHOTS_DIR"); !dir.isEmpty())
            m_window->grab().save(dir + u"/quit-while-following-1440x900.png"_s);
        click(box, u"keepFollowingButton"_s);
        QTRY_VERIFY(!m_window->findChild<QMessageBox *>(u"quitWhileFollowing"_s));
        QVERIFY(m_window->isVisible());
        m_window->close();
        QTRY_VERIFY((box = m_window->findChild<QMessageBox *>(u"quitWhileFollowing"_s)) != nullptr);
        click(box, u"confirmQuitButton"_s);
        QTRY_VERIFY(!m_window->isVisible());
        m_window.reset();
        qunsetenv("MOETUNE_SYNTHETIC_DELAY_MS");

        // Reopening: the Tune page offers the run; Follow fills the form and follows it to its end.
        newWindow({1440, 900});
        m_window->openInitial(QString());
        auto *banner = named<Banner>(tune(), u"resumeRunBanner"_s);
        QTRY_VERIFY(!banner->isHidden());
        QVERIFY2(m_window->statusBar()->currentMessage().contains(runId),
                 qPrintable(m_window->statusBar()->currentMessage()));
        showPage(tune());
        if (const QString dir = qEnvironmentVariable("MOETUNE_SHOTS_DIR"); !dir.isEmpty())
            m_window->grab().save(dir + u"/tune-reopened-offers-run-1440x900.png"_s);
        QVERIFY2(banner->text().contains(runId), qPrintable(banner->text()));
        TuneSpec other = s;
        other.experts = 0; // the form at E=0, as it opened
        tune()->tuneSpec(HostStore::localAlias(), other);
        QSignalSpy finished(tune(), &TunePage::runFinished);
        Q_EMIT banner->actionTriggered();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(finished.first().at(0).toString(), runId);
        QCOMPARE(tune()->spec().experts, 64);
        QCOMPARE(tune()->spec().batchSizes, s.batchSizes);
        QString error;
        const auto kept = WorkspaceRun::open(QDir(tune()->workspacePath()).filePath(runId), &error);
        QVERIFY2(kept, qPrintable(error));
        QCOMPARE(kept->result.status, u"ok"_s);
        QVERIFY(TuneRunFolder::unfinishedRuns(tune()->workspacePath()).isEmpty());
        // Results follows the session's newest run, finished (not the demo, not "running").
        auto *results = m_window->findChild<ResultsPage *>();
        QTRY_VERIFY_WITH_TIMEOUT(results->currentRun() && results->currentRun()->runId == runId, 60000);
        QTRY_COMPARE(results->currentRun()->result.status, u"ok"_s);
    }

    // Point 4: the PDF reflects what the run's folder holds at export, not what it held when Results read
    // it (a push recorded after: "no push recorded" was exported right after push and proof).
    void reportReadsTheFolderAtExport() {
        if (QStandardPaths::findExecutable(u"pdftotext"_s).isEmpty())
            QFAIL("pdftotext is missing (poppler-utils; packaging/install-deps.sh installs it)");
        QTemporaryDir ws;
        QString error;
        const auto demo = Workspace::open(DemoWorkspace::path(), &error);
        QVERIFY2(demo && !demo->runs().isEmpty(), qPrintable(error));
        WorkspaceRun run = demo->runs().first();
        run.dir = QDir(ws.path()).filePath(run.runId);
        run.push.reset();
        QVERIFY2(run.save(&error), qPrintable(error));
        ResultsPage page;
        QSignalSpy shown(&page, &ResultsPage::workspaceShown);
        page.openWorkspace(ws.path());
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() > 0, 60000);
        QVERIFY(page.currentRun() && !page.currentRun()->push);
        // The push lands in the folder after Results read it (TunePage records it there).
        QFile push(QDir(run.dir).filePath(u"push.json"_s));
        QVERIFY(push.open(QIODevice::WriteOnly));
        push.write(R"({"installed":[{"file_name":"E=128,N=768,device_name=NVIDIA_H200.json",)"
                   R"("target":"/srv/cfg/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200.json","backup":"",)"
                   R"("sha256":"ab","unchanged":false}],"target_folder":"/srv/cfg/triton_3_6_0"})");
        push.close();
        const QString pdf = QDir(ws.path()).filePath(u"report.pdf"_s);
        QCOMPARE(page.exportReport(pdf), pdf);
        QProcess p;
        p.start(u"pdftotext"_s, {pdf, u"-"_s});
        QVERIFY(p.waitForFinished(60000));
        const QString text = QString::fromUtf8(p.readAllStandardOutput()).simplified();
        QVERIFY2(text.contains(u"/srv/cfg/triton_3_6_0"_s), qPrintable(text.left(2000)));
        QVERIFY2(!text.contains(u"no push recorded"_s), qPrintable(text.left(2000)));
    }

    // A tool: MOETUNE_SHOTS_DIR=folder saves the Tune page (a run's live view with 18 sizes) and the
    // Results page at 1440x900 and 1024x640.
    void screenshots() {
        const QString dir = qEnvironmentVariable("MOETUNE_SHOTS_DIR");
        if (dir.isEmpty())
            QSKIP("set MOETUNE_SHOTS_DIR to save screenshots");
        for (const QSize size : {QSize(1440, 900), QSize(1024, 640)}) {
            newWindow(size);
            showPage(tune());
            tune()->liveChart()->setRedrawInterval(0);
            int seq = 0;
            feedSizes(tune()->liveChart(), u"a"_s, kSizes, &seq);
            tune()->applyRunEvent(obj(
                uR"({"type":"run_started","run_id":"a","seq":0,"spec":{"ops":"up"},"journal_entries":0})"_s));
            tune()->applyRunEvent(
                obj(uR"({"type":"progress","run_id":"a","seq":1,"done":911,"total":911,"eta_s":0})"_s));
            QTest::qWait(400);
            const QString suffix = u"%1x%2.png"_s.arg(size.width()).arg(size.height());
            QVERIFY(m_window->grab().save(dir + u"/tune-live-"_s + suffix));
            auto *results = m_window->findChild<ResultsPage *>();
            QSignalSpy shown(results, &ResultsPage::workspaceShown);
            results->openDemo();
            QTRY_VERIFY_WITH_TIMEOUT(shown.count() > 0, 60000);
            showPage(results);
            auto *tabs = named<QTabWidget>(results, u"tabs"_s);
            for (int t = 0; t < tabs->count(); ++t) {
                tabs->setCurrentIndex(t);
                QTest::qWait(300);
                QVERIFY(m_window->grab().save(dir + u"/results-tab%1-"_s.arg(t) + suffix));
            }
            tabs->setCurrentIndex(0);
            for (int i = 0; i < m_window->pageCount(); ++i) {
                m_window->setCurrentPage(i);
                QTest::qWait(400);
                const QString name = m_window->page(i)->objectName().isEmpty()
                                         ? u"page%1"_s.arg(i)
                                         : m_window->page(i)->objectName();
                QVERIFY(m_window->grab().save(dir + u"/"_s + name + u"-"_s + suffix));
            }
            // The states of this issue: the question on a pasted log, the form without a host, the run
            // list on its own row.
            TuningTarget target;
            target.framework = Framework::SGLang;
            target.configRoot = u"/srv/cfg"_s;
            target.tritonFolder = u"triton_3_6_0"_s;
            target.name = *ConfigName::parse(u"E=128,N=384,device_name=NVIDIA_H200_NVL.json"_s);
            target.upMissing = true;
            Q_EMIT m_window->findChild<DiagnosePage *>()->tuneRequested(QString(), target);
            QInputDialog *ask = nullptr;
            QTRY_VERIFY((ask = m_window->findChild<QInputDialog *>(u"tuneHostDialog"_s)) != nullptr);
            QTest::qWait(300);
            QVERIFY(ask->grab().save(dir + u"/tune-which-host-dialog-"_s + suffix));
            ask->setTextValue(ask->comboBoxItems().last());
            ask->accept();
            QTest::qWait(400);
            QVERIFY(m_window->grab().save(dir + u"/tune-no-host-yet-"_s + suffix));
            auto *scroll = tune()->findChild<QScrollArea *>(u"jobScroll"_s);
            scroll->ensureWidgetVisible(named<QComboBox>(tune(), u"runsCombo"_s));
            QTest::qWait(300);
            QVERIFY(m_window->grab().save(dir + u"/tune-runs-row-"_s + suffix));
            m_window.reset();
        }
    }
};

QTEST_MAIN(TestPagesRound4)
#include "tst_pagesround4.moc"
