// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The Results page driven offscreen like a user: the demo workspace (a real recorded H200 sweep), a
// real agent run folder from the synthetic backend (the labelled GPU test double), compare with other
// config files, export the PDF; models under QAbstractItemModelTester.
#include "app/results/chosenconfigmodel.h"
#include "app/results/comparemodel.h"
#include "app/results/resultspage.h"
#include "charts/landscapechart.h"
#include "core/moe/configfile.h"
#include "core/run/kernelconfigjson.h"
#include "core/run/workspace.h"
#include "report/demoworkspace.h"

#include "syntheticrun.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

QString cell(QAbstractItemModel *model, int row, int column) {
    return model->data(model->index(row, column)).toString();
}

int rowOf(QAbstractItemModel *model, int m) {
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->data(model->index(r, 0)).toInt() == m)
            return r;
    return -1;
}

} // namespace

class TstResultsPage : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_home;
    QString m_simulatedRun;

    void waitShown(ResultsPage &page, QSignalSpy &spy, int count = 1) {
        QTRY_VERIFY_WITH_TIMEOUT(spy.count() >= count, 20000);
        QVERIFY(!page.isLoading());
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        // Settings of this test only: the page remembers the last workspace.
        qputenv("XDG_CONFIG_HOME", m_home.filePath(u"config"_s).toUtf8());
        // ... and its own app data folder (Workspace::defaultLocation(), where the Tune page keeps runs).
        qputenv("XDG_DATA_HOME", m_home.filePath(u"data"_s).toUtf8());
        QSettings().clear();
        QString error;
        m_simulatedRun = moetune::test::runSyntheticTune(QStringLiteral(MOETUNE_AGENT_PYZ), m_home.path(),
                                                         QJsonArray{1, 16, 256}, &error);
        QVERIFY2(!m_simulatedRun.isEmpty(), qPrintable(error));
    }

    void demoOnFirstStart() {
        QSettings().clear();
        ResultsPage page;
        page.resize(1400, 900);
        page.show();
        QSignalSpy shown(&page, &ResultsPage::workspaceShown);
        page.openInitial();
        waitShown(page, shown);
        QCOMPARE(shown.first().first().toString(), DemoWorkspace::path());
        auto *runs = page.findChild<QComboBox *>(u"runCombo"_s);
        QCOMPARE(runs->count(), 3);
        // The demo opens on its 18-size run.
        QCOMPARE(page.currentRun()->runId, u"20261129-qwen3-h200-fast"_s);
        QVERIFY(!page.findChild<QLabel *>(u"simulatedBanner"_s)->isVisible());

        auto *table = page.findChild<QTableView *>(u"configTable"_s);
        QAbstractItemModelTester tester(table->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(table->model()->rowCount(), 18);
        const int row = rowOf(table->model(), 256);
        QVERIFY(row >= 0);
        QCOMPARE(cell(table->model(), row, ChosenConfigModel::ColConfig), u"m32n128k128g1w4s2"_s);
        QCOMPARE(cell(table->model(), row, ChosenConfigModel::ColTuned), u"349.3"_s);
        QCOMPARE(cell(table->model(), row, ChosenConfigModel::ColDefault), u"490.5"_s);
        QCOMPARE(cell(table->model(), row, ChosenConfigModel::ColSpeedup), u"1.40x"_s);
        QCOMPARE(cell(table->model(), row, ChosenConfigModel::ColFraction), u"79%"_s);
        QVERIFY(!table->model()
                     ->headerData(ChosenConfigModel::ColTuned, Qt::Horizontal)
                     .toString()
                     .contains(u"simulated"_s));

        // The landscape shows every config timed at the batch size chosen there.
        auto *landscape = page.findChild<LandscapeChart *>(u"landscapeChart"_s);
        auto *batch = page.findChild<QComboBox *>(u"landscapeBatch"_s);
        QCOMPARE(
            landscape->pointCount(),
            int(page.currentRun()->result.landscape(SweepOp::Both, batch->currentData().toInt()).size()));
        const int before = landscape->pointCount();
        batch->setCurrentIndex(batch->findData(1));
        QVERIFY(QMetaObject::invokeMethod(batch, "activated", Q_ARG(int, batch->currentIndex())));
        QCOMPARE(landscape->pointCount(), int(page.currentRun()->result.landscape(SweepOp::Both, 1).size()));
        QVERIFY(landscape->pointCount() != before || before > 0);

        // The other run is one click away.
        page.showRun(u"20261129-qwen3-h200-exhaustive"_s);
        QCOMPARE(table->model()->rowCount(), 5);
    }

    void simulatedRunIsMarked() {
        ResultsPage page;
        page.show();
        QSignalSpy shown(&page, &ResultsPage::workspaceShown);
        page.openWorkspace(m_simulatedRun);
        waitShown(page, shown);
        QVERIFY(page.findChild<QLabel *>(u"simulatedBanner"_s)->isVisible());
        QVERIFY(page.findChild<QComboBox *>(u"runCombo"_s)->currentText().startsWith(u"[SIMULATED]"_s));
        auto *table = page.findChild<QTableView *>(u"configTable"_s);
        QAbstractItemModelTester tester(table->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(table->model()->rowCount(), 3);
        QVERIFY(table->model()
                    ->headerData(ChosenConfigModel::ColTuned, Qt::Horizontal)
                    .toString()
                    .contains(u"(simulated)"_s));
        QVERIFY(table->model()
                    ->data(table->model()->index(0, ChosenConfigModel::ColTuned), Qt::ToolTipRole)
                    .toString()
                    .startsWith(u"SIMULATED"_s));
        auto *landscape = page.findChild<LandscapeChart *>(u"landscapeChart"_s);
        QVERIFY(landscape->pointCount() > 0);
        QTemporaryDir out;
        const QString written = page.exportReport(out.filePath(u"report.pdf"_s));
        // The name chosen is the name written (it was SIMULATED-report.pdf); SIMULATED is said inside.
        QCOMPARE(written, out.filePath(u"report.pdf"_s));
        QVERIFY(!QFileInfo::exists(out.filePath(u"SIMULATED-report.pdf"_s)));
        QVERIFY(QFileInfo(written).size() > 1000);
        QVERIFY(page.message().contains(u"Wrote"_s));
        QVERIFY(page.message().contains(u"SIMULATED"_s));
        if (const QString pdftotext = QStandardPaths::findExecutable(u"pdftotext"_s); !pdftotext.isEmpty()) {
            QProcess text;
            text.start(pdftotext, {written, u"-"_s});
            QVERIFY(text.waitForFinished(30000));
            QVERIFY(text.readAllStandardOutput().contains("SIMULATED"));
        }
    }

    void userRunsBeforeTheDemo() {
        // Once the Tune page kept a run in the user's workspace, the page opens there (it opened the demo).
        QSettings().clear();
        const QString mine = Workspace::defaultLocation();
        QVERIFY(mine.startsWith(m_home.path()));
        QString error;
        auto ws = Workspace::create(mine, u"My runs"_s, &error);
        QVERIFY2(ws, qPrintable(error));
        auto run = WorkspaceRun::open(m_simulatedRun, &error);
        QVERIFY2(run, qPrintable(error));
        QVERIFY2(ws->addRun(*run, &error), qPrintable(error));
        ResultsPage page;
        page.show();
        QSignalSpy shown(&page, &ResultsPage::workspaceShown);
        page.openInitial();
        waitShown(page, shown);
        QDir(mine).removeRecursively(); // the other tests start on the demo
        QSettings().clear();
        QCOMPARE(shown.first().first().toString(), mine);
        QVERIFY(page.currentRun());
        QCOMPARE(page.currentRun()->runId, run->runId);
    }

    void compareWithAnotherRun() {
        ResultsPage page;
        page.show();
        QSignalSpy shown(&page, &ResultsPage::workspaceShown);
        page.openDemo();
        waitShown(page, shown);
        auto *source = page.findChild<QComboBox *>(u"compareSource"_s);
        // The other two runs of the demo offer their files (the SGLang-kernel run wrote two).
        QCOMPARE(source->count(), 3);
        const int exhaustive = source->findText(
            u"Run 20261129-qwen3-h200-exhaustive: E=128,N=768,device_name=NVIDIA_H200.json"_s);
        QVERIFY(exhaustive >= 0);
        source->setCurrentIndex(exhaustive);
        QVERIFY(QMetaObject::invokeMethod(source, "activated", Q_ARG(int, exhaustive)));
        auto *table = page.findChild<QTableView *>(u"compareTable"_s);
        QAbstractItemModelTester tester(table->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(table->model()->rowCount(), 18);
        // M=1: fast chose m16n64k64g1w4s5, exhaustive m16n32k64g16w4s5 (RESULTS.md): BN and GM differ.
        const int row = rowOf(table->model(), 1);
        QCOMPARE(cell(table->model(), row, CompareModel::ColThis), u"m16n64k64g1w4s5"_s);
        QCOMPARE(cell(table->model(), row, CompareModel::ColOther), u"m16n32k64g16w4s5"_s);
        QCOMPARE(cell(table->model(), row, CompareModel::ColDiff), u"BN 32→64, GM 16→1"_s);
        // The fast run itself timed that config at M=1 during its sweep: its own timing is shown.
        const double us = page.currentRun()->result.latencyOf(
            SweepOp::Both, 1, *KernelConfigJson::fromKey(u"m16n32k64g16w4s5"_s));
        QVERIFY(known(us));
        QCOMPARE(cell(table->model(), row, CompareModel::ColOtherUs), QString::number(us, 'f', 1));
        QCOMPARE(table->model()
                     ->data(table->model()->index(row, CompareModel::ColOtherUs), Qt::ToolTipRole)
                     .toString(),
                 u"Timed in run 20261129-qwen3-h200-fast"_s);
        // At M=1024 both strategies chose the same config (remote_agent/bench/RESULTS.md).
        const int row1024 = rowOf(table->model(), 1024);
        QCOMPARE(cell(table->model(), row1024, CompareModel::ColDiff), u"same"_s);
        // M=2 has no key in the 5-size file: the server would use key 1's config.
        const int row2 = rowOf(table->model(), 2);
        QCOMPARE(cell(table->model(), row2, CompareModel::ColOther), u"m16n32k64g16w4s5 (key 1)"_s);
        QVERIFY(
            page.findChild<QLabel *>(u"compareSummary"_s)->text().contains(u"of 18 batch sizes differ"_s));
    }

    void compareWithLocalFile_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<bool>("ok");
        QTest::newRow("a config file") << QByteArray() << true;
        QTest::newRow("not JSON") << QByteArray("{\"1\": {\"BLOCK_SIZE_M\": 16,") << false;
        QTest::newRow("not a config") << QByteArray("{\"hello\": 1}") << false;
    }
    void compareWithLocalFile() {
        QFETCH(QByteArray, content);
        QFETCH(bool, ok);
        ResultsPage page;
        page.show();
        QSignalSpy shown(&page, &ResultsPage::workspaceShown);
        page.openDemo();
        waitShown(page, shown);
        QTemporaryDir dir;
        const QString path = dir.filePath(u"E=128,N=768,device_name=NVIDIA_H200.json"_s);
        if (content.isEmpty()) {
            // The same configs as the tuned file except at 256, where the default config is used.
            ConfigFile file = page.currentRun()->result.files.first().config;
            file.entries[256] = page.currentRun()->result.defaultEntry(SweepOp::Both, 256)->config;
            content = file.toJson(Framework::SGLang);
        }
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
        f.close();
        const int sourcesBefore = page.findChild<QComboBox *>(u"compareSource"_s)->count();
        QCOMPARE(page.compareWithFile(path), ok);
        auto *source = page.findChild<QComboBox *>(u"compareSource"_s);
        if (!ok) {
            QCOMPARE(source->count(), sourcesBefore);
            QVERIFY2(page.message().contains(u"is not a MoE config file"_s), qPrintable(page.message()));
            return;
        }
        QVERIFY(source->currentText().startsWith(u"This machine: "_s));
        auto *table = page.findChild<QTableView *>(u"compareTable"_s);
        QCOMPARE(static_cast<CompareModel *>(table->model())->differingRows(), 1);
        const int row = rowOf(table->model(), 256);
        QCOMPARE(cell(table->model(), row, CompareModel::ColOther), u"m64n64k32g8w4s3"_s);
        QCOMPARE(cell(table->model(), row, CompareModel::ColOtherUs), u"490.5"_s);
        QCOMPARE(cell(table->model(), row, CompareModel::ColRatio), u"1.40x"_s);
        QCOMPARE(page.findChild<QTabWidget *>(u"tabs"_s)->currentWidget()->objectName(), u"compareTab"_s);
    }

    // A folder that is no run loses nothing: the error is inline and the shown run stays.
    void badFolderKeepsWhatIsShown() {
        ResultsPage page;
        page.show();
        QSignalSpy shown(&page, &ResultsPage::workspaceShown);
        QSignalSpy failed(&page, &ResultsPage::openFailed);
        page.openDemo();
        waitShown(page, shown);
        QTemporaryDir empty;
        page.openWorkspace(empty.path());
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY2(page.message().contains(u"holds no tuning runs"_s), qPrintable(page.message()));
        QCOMPARE(page.currentRun()->runId, u"20261129-qwen3-h200-fast"_s);
        QCOMPARE(page.findChild<QTableView *>(u"configTable"_s)->model()->rowCount(), 18);
    }

    // Two opens in a row: the newer one is what is shown, whichever finishes first.
    void newerOpenWins() {
        ResultsPage page;
        page.show();
        QSignalSpy shown(&page, &ResultsPage::workspaceShown);
        page.openDemo();
        page.openWorkspace(m_simulatedRun);
        QTRY_VERIFY_WITH_TIMEOUT(!page.isLoading(), 20000);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(shown.first().first().toString(), m_simulatedRun);
        // The last opened folder is the next start's workspace.
        QCOMPARE(QSettings().value(u"results/workspace"_s).toString(), m_simulatedRun);
        ResultsPage next;
        QSignalSpy nextShown(&next, &ResultsPage::workspaceShown);
        next.openInitial();
        QTRY_COMPARE_WITH_TIMEOUT(nextShown.count(), 1, 20000);
        QCOMPARE(nextShown.first().first().toString(), m_simulatedRun);
    }
};

QTEST_MAIN(TstResultsPage)
#include "tst_resultspage.moc"
