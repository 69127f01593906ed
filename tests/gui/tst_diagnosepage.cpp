// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The main window and the Diagnose page driven like a user, offscreen: paste, open, click, copy, cancel.
#include "app/diagnose/diagnosepage.h"
#include "app/diagnose/evidencemodel.h"
#include "app/diagnose/findingsmodel.h"
#include "app/diagnose/targetfieldsmodel.h"
#include "app/mainwindow.h"
#include "app/tune/tunepage.h"
#include "app/widgets/banner.h"
#include "app/widgets/logedit.h"
#include "app/widgets/logtext.h"

#include "core/diagnosis/diagnoser.h"
#include "core/host/hostprobe.h"
#include "core/util/coreresources.h"
#include "core/util/jobrunner.h"

#include "guitestlogs.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QHeaderView>
#include <QInputDialog>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QToolButton>
#include <QTreeView>
#include <QUrl>

#include <memory>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

// Writes a log of about `bytes` of ordinary server chatter with `warnings` identical untuned-config
// warnings spread through it; returns false when the file cannot be written.
bool writeBigLog(const QString &path, qint64 bytes, int warnings) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    const QByteArray chatter =
        "[2026-11-20 10:01:02 TP3] Decode batch. #running-req: 57, #token: 81234, token usage: "
        "0.41, cuda graph: True, gen throughput (token/s): 4210.33, #queue-req: 0\n";
    const QByteArray warning =
        "[2026-11-20 10:00:09 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config "
        "file not "
        "found at /opt/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_6_0/"
        "E=64,N=1408,device_name=NVIDIA_H200.json, you can create them with "
        "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n";
    const qint64 linesTotal = bytes / chatter.size();
    const qint64 every = linesTotal / (warnings + 1);
    QByteArray chunk;
    int written = 0;
    for (qint64 line = 1; line <= linesTotal; ++line) {
        if (written < warnings && line % every == 0) {
            chunk += warning;
            ++written;
        } else {
            chunk += chatter;
        }
        if (chunk.size() > (1 << 20)) {
            if (file.write(chunk) != chunk.size())
                return false;
            chunk.clear();
        }
    }
    return file.write(chunk) == chunk.size() && written == warnings;
}

QString demoText() {
    ensureCoreResources();
    QFile demo(demoLogPath());
    if (!demo.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(demo.readAll());
}

} // namespace

class TestDiagnosePage : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();

    void demoOnFirstStart();
    void fileArgumentInsteadOfDemo();
    void pasteShowsFindings_data();
    void pasteShowsFindings();
    void quietLogSaysSo();
    void largePasteLoadsByChunks();
    void ctrlReturnDiagnosesAtOnce();
    void evidenceClickJumpsToLine();
    void copyAsMarkdown();
    void bigFileGoesThroughWorker();
    void staleResultsDropped();
    void inlineErrors_data();
    void inlineErrors();
    void recentFilesRemembered();
    void dropOrPasteFileOpensIt_data();
    void dropOrPasteFileOpensIt();
    void addPagePlugsIn();
    // Issue 12, the Diagnose page as a new user finds it.
    void logIsInputNotDocument();
    void findInLog();
    void severityButtonsFilter();
    void pageShortcutsAndNextFinding();
    void contextMenus();
    void staleFindingsSayWhoseTheyAre();
    void bannersLiveAsLongAsTheirCause();
    void tuneThisOnTheTarget();
    void hostFactsThatDisagreeAreSaid();
    void keyFactsWholeAtMinimumSize();
    void infoFindingsThatDoNotMislead_data();
    void infoFindingsThatDoNotMislead();
    // Issue 41 (a new user's walk) and issue 45 point 10.
    void upAndDownJobIsOneGroup();
    void downFileOfAnOldServerIsNotAskedFor();
    void moeJobSelectedBeforeDenseGemm();
    void emptyPasteKeepsTheLog();
    void undoBringsBackTheReplacedLog();

private:
    DiagnosePage *page() const { return m_window->findChild<DiagnosePage *>(); }
    // Widgets and models are found by their object names (ui/diagnosepage.ui), as a user finds them.
    template <typename T>
    T *named(const QString &name) const {
        T *found = page()->findChild<T *>(name);
        if (!found)
            qWarning("no %s named %s", T::staticMetaObject.className(), qPrintable(name));
        return found;
    }
    LogEdit *logEdit() const { return named<LogEdit>(u"logEdit"_s); }
    FindingsModel *findingsModel() const { return named<FindingsModel>(u"findingsModel"_s); }
    EvidenceModel *evidenceModel() const { return named<EvidenceModel>(u"evidenceModel"_s); }
    TargetFieldsModel *targetModel() const { return named<TargetFieldsModel>(u"targetModel"_s); }
    JobRunner *jobs() const { return named<JobRunner>(u"diagnosisJobs"_s); }
    QListWidget *navigation() const { return m_window->findChild<QListWidget *>(u"navigation"_s); }
    bool waitIdle(int timeoutMs = 30000);
    QString writeFile(const QString &name, const QByteArray &content);

    QTemporaryDir m_settingsDir;
    QTemporaryDir m_files;
    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_findingsTester;
    std::unique_ptr<QAbstractItemModelTester> m_evidenceTester;
    std::unique_ptr<QAbstractItemModelTester> m_targetTester;
    std::unique_ptr<QAbstractItemModelTester> m_filterTester;
};

void TestDiagnosePage::initTestCase() {
    QVERIFY(m_settingsDir.isValid());
    QVERIFY(m_files.isValid());
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settingsDir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
    QCoreApplication::setOrganizationName(u"moetune-test"_s);
    QCoreApplication::setApplicationName(u"tst_diagnosepage"_s);
}

void TestDiagnosePage::init() {
    QSettings().clear(); // every test starts like a first start
    m_window = std::make_unique<MainWindow>();
    m_window->resize(1400, 900);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    using Mode = QAbstractItemModelTester::FailureReportingMode;
    m_findingsTester = std::make_unique<QAbstractItemModelTester>(findingsModel(), Mode::QtTest);
    m_evidenceTester = std::make_unique<QAbstractItemModelTester>(evidenceModel(), Mode::QtTest);
    m_targetTester = std::make_unique<QAbstractItemModelTester>(targetModel(), Mode::QtTest);
    m_filterTester = std::make_unique<QAbstractItemModelTester>(named<QTreeView>(u"findingsView"_s)->model(),
                                                                Mode::QtTest);
}

void TestDiagnosePage::cleanup() {
    m_filterTester.reset();
    m_findingsTester.reset();
    m_evidenceTester.reset();
    m_targetTester.reset();
    if (m_window)
        jobs()->waitForIdle();
    m_window.reset();
}

bool TestDiagnosePage::waitIdle(int timeoutMs) {
    return QTest::qWaitFor([this] { return !page()->isBusy(); }, timeoutMs);
}

QString TestDiagnosePage::writeFile(const QString &name, const QByteArray &content) {
    const QString path = m_files.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size())
        return {};
    return path;
}

void TestDiagnosePage::demoOnFirstStart() {
    const QString demo = demoText();
    QVERIFY2(!demo.isEmpty(), "the demo log must be in the core resources");
    m_window->openInitial({});
    QVERIFY(page()->isDemo());
    // Shown as a terminal shows it (the demo has colour codes and CR progress bars); diagnosed as is.
    QCOMPARE(logEdit()->toPlainText(), displayLogText(demo));
    QVERIFY(!logEdit()->toPlainText().contains(u'\x1b'));
    QVERIFY(waitIdle());
    const Diagnosis expected = Diagnoser().diagnoseText(demo.toUtf8());
    QVERIFY(!expected.findings.isEmpty());
    QCOMPARE(findingsModel()->rowCount(), expected.findings.size());
    QCOMPARE(page()->summaryText(), expected.summary);
    QCOMPARE(page()->currentFindingRow(), 0);
    QVERIFY(page()->copyDiagnosisAction()->isEnabled());
}

void TestDiagnosePage::fileArgumentInsteadOfDemo() {
    const QString path = writeFile(u"given.log"_s, guitestlogs::vllmFp8().toUtf8());
    QVERIFY(!path.isEmpty());
    m_window->openInitial(path);
    QVERIFY(!page()->isDemo());
    QCOMPARE(page()->currentFile(), path);
    QVERIFY(waitIdle());
    QVERIFY(findingsModel()->rowCount() > 0);
}

void TestDiagnosePage::pasteShowsFindings_data() {
    QTest::addColumn<QString>("log");
    QTest::addColumn<bool>("viaClipboard");
    QTest::addColumn<QString>("framework");
    QTest::addColumn<int>("experts");
    QTest::addColumn<int>("n");
    QTest::addColumn<QString>("device");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("tritonFolder");

    QTest::newRow("sglang 8 ranks, pasted") << guitestlogs::sglangEightRanks() << true << u"SGLang"_s << 128
                                            << 96 << u"NVIDIA_H200"_s << u"bf16/fp16"_s << u"triton_3_6_0"_s;
    QTest::newRow("sglang 8 ranks, dropped as text")
        << guitestlogs::sglangEightRanks() << false << u"SGLang"_s << 128 << 96 << u"NVIDIA_H200"_s
        << u"bf16/fp16"_s << u"triton_3_6_0"_s;
    QString coloured = guitestlogs::sglangEightRanks();
    coloured.replace(u"Using default MoE"_s, u"\x1b[33mUsing default MoE"_s)
        .replace(u"\n"_s, u"\x1b[0m\r\n"_s);
    QTest::newRow("sglang with ANSI colours and CRLF, pasted")
        << coloured << true << u"SGLang"_s << 128 << 96 << u"NVIDIA_H200"_s << u"bf16/fp16"_s
        << u"triton_3_6_0"_s;
    QTest::newRow("vllm fp8 block, pasted") << guitestlogs::vllmFp8() << true << u"vLLM"_s << 256 << 256
                                            << u"NVIDIA_H100_80GB_HBM3"_s << u"fp8_w8a8"_s << QString();
}

void TestDiagnosePage::pasteShowsFindings() {
    QFETCH(QString, log);
    QFETCH(bool, viaClipboard);
    QFETCH(QString, framework);
    QFETCH(int, experts);
    QFETCH(int, n);
    QFETCH(QString, device);
    QFETCH(QString, dtype);
    QFETCH(QString, tritonFolder);

    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    LogEdit *edit = logEdit();
    edit->setFocus();
    if (viaClipboard) {
        QGuiApplication::clipboard()->setText(log);
        QTest::keyClick(edit, Qt::Key_V, Qt::ControlModifier);
    } else {
        auto *mime = new QMimeData;
        mime->setText(log);
        QDragEnterEvent enter(QPoint(20, 20), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(edit->viewport(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(20, 20), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(edit->viewport(), &drop);
        delete mime;
    }
    QVERIFY2(page()->isBusy() || finished.size() == 1, "a paste is diagnosed at once, not after a debounce");
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 10000);
    // A paste shows as a terminal shows it: no colour codes, no CRs.
    QCOMPARE(edit->toPlainText(), displayLogText(log));
    QVERIFY(!edit->toPlainText().contains(u'\x1b'));
    QVERIFY(!edit->toPlainText().contains(u'\r'));

    const Diagnosis expected = Diagnoser().diagnoseText(displayLogText(log).toUtf8());
    QCOMPARE(expected.findings.size(), Diagnoser().diagnoseText(log.toUtf8()).findings.size());
    QVERIFY(!expected.findings.isEmpty());
    QAbstractItemModel *shown = findingsModel();
    QCOMPARE(shown->rowCount(), expected.findings.size());
    for (int row = 0; row < expected.findings.size(); ++row) {
        QCOMPARE(shown->index(row, FindingsModel::TitleColumn).data().toString(),
                 expected.findings.at(row).title);
        QCOMPARE(shown->index(row, FindingsModel::OccurrencesColumn).data().toInt(),
                 expected.findings.at(row).occurrences);
    }
    const auto countText = [this](const QString &name) { return named<QToolButton>(name)->text(); };
    QVERIFY(countText(u"countError"_s).startsWith(QString::number(expected.count(Severity::Error)) + u' '));
    QVERIFY(
        countText(u"countWarning"_s).startsWith(QString::number(expected.count(Severity::Warning)) + u' '));
    QVERIFY(countText(u"countInfo"_s).startsWith(QString::number(expected.count(Severity::Info)) + u' '));
    QVERIFY(page()->countsText().contains(countText(u"countWarning"_s)));
    QCOMPARE(page()->summaryText(), expected.summary);

    // Click the finding that carries this shape's target: the details pane shows its parsed fields.
    int targetRow = -1;
    for (int row = 0; row < expected.findings.size() && targetRow < 0; ++row) {
        const auto &t = expected.findings.at(row).target;
        if (t && t->name.experts == experts && t->name.n == n)
            targetRow = row;
    }
    QVERIFY2(targetRow >= 0, "a finding must carry the E/N target of the warning");
    QTreeView *view = named<QTreeView>(u"findingsView"_s);
    const QRect rect = view->visualRect(view->model()->index(targetRow, 0)); // nothing filtered yet
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(page()->currentFindingRow(), targetRow);

    TargetFieldsModel *fields = targetModel();
    QCOMPARE(named<QTableView>(u"targetView"_s)->model(), fields);
    QCOMPARE(fields->value(u"framework"_s), framework);
    QCOMPARE(fields->value(u"experts"_s), QString::number(experts));
    QCOMPARE(fields->value(u"n"_s), QString::number(n));
    QCOMPARE(fields->value(u"device"_s), device);
    QCOMPARE(fields->value(u"dtype"_s), dtype);
    if (!tritonFolder.isEmpty())
        QVERIFY(fields->value(u"tritonFolder"_s).startsWith(tritonFolder));
    const Finding &f = expected.findings.at(targetRow);
    QCOMPARE(fields->value(u"upPath"_s), f.target->upPath());
    QVERIFY(named<QTextBrowser>(u"detailsBrowser"_s)->toPlainText().contains(f.title));
    // The GUI's advice says what to click where the CLI's names the agent's command (issue 45 point 9):
    // its words up to the command are shown as they are.
    if (!f.advice.isEmpty()) {
        const QString details = named<QTextBrowser>(u"detailsBrowser"_s)->toPlainText();
        QVERIFY(details.contains(f.advice.section(u'\n', 0, 0).section(u'(', 0, 0).left(40)));
        QVERIFY2(!details.contains(u"moetune-agent tune with spec"_s), qPrintable(details));
    }
    QCOMPARE(evidenceModel()->rowCount(), f.evidence.size());
}

void TestDiagnosePage::quietLogSaysSo() {
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    page()->setLogText(guitestlogs::quietLog());
    QTRY_COMPARE(finished.size(), 1);
    const Diagnosis expected = Diagnoser().diagnoseText(guitestlogs::quietLog().toUtf8());
    QCOMPARE(expected.count(Severity::Warning) + expected.count(Severity::Error), 0);
    QCOMPARE(findingsModel()->rowCount(), expected.findings.size());
    QVERIFY(!page()->summaryText().isEmpty());
    QVERIFY(named<QToolButton>(u"countWarning"_s)->text().startsWith(u"0 "_s));
}

void TestDiagnosePage::largePasteLoadsByChunks() {
    // A paste of megabytes is diagnosed at once and goes into the editor by chunks (no long freeze).
    QString log = guitestlogs::sglangEightRanks();
    while (log.size() < 6 * LogEdit::loadChunkChars)
        log +=
            u"[2026-11-20 10:01:02 TP1] Decode batch. #running-req: 3, #token: 1234, gen throughput: 99.0\n"_s;
    log += guitestlogs::vllmFp8();
    LogEdit *edit = logEdit();
    page()->setLogText(u"replaced by the paste"_s);
    QVERIFY(waitIdle());
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    QSignalSpy loaded(page(), &DiagnosePage::logLoaded);
    QGuiApplication::clipboard()->setText(log);
    edit->paste();
    QVERIFY(page()->isLoading());
    QVERIFY(edit->toPlainText().size() < log.size());
    QVERIFY(!edit->toPlainText().contains(u"replaced by the paste"_s)); // a paste is the new log
    QVERIFY(page()->isBusy() || finished.size() == 1);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 30000);
    QVERIFY(!page()->isLoading());
    QCOMPARE(edit->toPlainText(), log);
    QTRY_COMPARE(finished.size(), 1);
    const Diagnosis expected = Diagnoser().diagnoseText(log.toUtf8());
    QCOMPARE(page()->diagnosis().findings.size(), expected.findings.size());
    QCOMPARE(page()->diagnosis().linesRead, expected.linesRead);
}

void TestDiagnosePage::ctrlReturnDiagnosesAtOnce() {
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    LogEdit *edit = logEdit();
    edit->setFocus();
    page()->setLogText(guitestlogs::vllmFp8());
    QVERIFY(waitIdle());
    QVERIFY(!page()->isBusy());
    QTest::keyClick(edit, Qt::Key_Return, Qt::ControlModifier);
    QVERIFY2(page()->isBusy(), "Ctrl+Return diagnoses again at once");
    QCOMPARE(edit->toPlainText(), guitestlogs::vllmFp8()); // the shortcut did not insert a line break
    QVERIFY(waitIdle());
    QVERIFY(findingsModel()->rowCount() > 0);
}

void TestDiagnosePage::evidenceClickJumpsToLine() {
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    page()->setLogText(guitestlogs::sglangEightRanks());
    QTRY_COMPARE(finished.size(), 1);
    const Diagnosis &d = page()->diagnosis();
    int row = -1;
    for (int i = 0; i < d.findings.size() && row < 0; ++i) {
        if (d.findings.at(i).evidence.size() >= 3)
            row = i;
    }
    QVERIFY2(row >= 0, "the 8-rank warning must give several evidence lines");
    page()->selectFinding(row);
    QTableView *view = named<QTableView>(u"evidenceView"_s);
    QCOMPARE(view->model()->rowCount(), d.findings.at(row).evidence.size());

    for (int ev : {2, 0}) {
        const Evidence &e = d.findings.at(row).evidence.at(ev);
        const QRect rect = view->visualRect(view->model()->index(ev, EvidenceModel::TextColumn));
        QVERIFY(rect.isValid());
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, rect.center());
        LogEdit *edit = logEdit();
        QCOMPARE(edit->cursorLine(), e.line);
        QCOMPARE(edit->markedLine(), e.line);
        const QString lineText = edit->textCursor().block().text();
        // Shown from its start (not scrolled to the end of a long line), the match highlighted.
        QCOMPARE(edit->textCursor().positionInBlock(), 0);
        QCOMPARE(edit->horizontalScrollBar()->value(), 0);
        QCOMPARE(edit->highlightedText(), e.text.mid(e.matchStart, e.matchLength));
        QVERIFY2(lineText.contains(e.text.mid(e.matchStart, e.matchLength)), qPrintable(lineText));
        // The lines that produced findings are marked (gutter and scrollbar).
        QVERIFY(edit->findingLines().contains(e.line));
    }
}

void TestDiagnosePage::copyAsMarkdown() {
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    page()->setLogText(guitestlogs::sglangEightRanks());
    QTRY_COMPARE(finished.size(), 1);
    const Diagnosis &d = page()->diagnosis();
    QVERIFY(d.findings.size() >= 2);

    QVERIFY(m_window->editMenu()->actions().contains(page()->copyFindingAction()));
    QVERIFY(m_window->editMenu()->actions().contains(page()->copyDiagnosisAction()));

    page()->selectFinding(1);
    page()->copyFindingAction()->trigger();
    QCOMPARE(QGuiApplication::clipboard()->text(), d.findingMarkdown(d.findings.at(1)));

    auto *copyAll = page()->findChild<QPushButton *>(u"copyDiagnosisButton"_s);
    QVERIFY(copyAll && copyAll->isEnabled());
    QTest::mouseClick(copyAll, Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), d.toMarkdown());

    auto *copyOne = page()->findChild<QPushButton *>(u"copyFindingButton"_s);
    page()->selectFinding(0);
    QTest::mouseClick(copyOne, Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), d.findingMarkdown(d.findings.at(0)));
}

void TestDiagnosePage::bigFileGoesThroughWorker() {
    const QString path = m_files.filePath(u"big.log"_s);
    const int warnings = 37;
    QVERIFY(writeBigLog(path, 30 * 1024 * 1024, warnings));
    const qint64 size = QFileInfo(path).size();
    QVERIFY(size > DiagnosePage::previewBytes);

    // Opened: previewed read-only, diagnosed from disk on the worker with progress and Cancel.
    QVERIFY(page()->openFile(path));
    QVERIFY(page()->isPreview());
    QVERIFY(logEdit()->isReadOnly());
    QVERIFY(logEdit()->toPlainText().size() <= DiagnosePage::previewBytes);
    QVERIFY(page()->isBusy());
    QVERIFY(named<QProgressBar>(u"progressBar"_s)->isVisible());
    QVERIFY(named<QPushButton>(u"cancelButton"_s)->isVisible());
    QSignalSpy cancelled(jobs(), &JobRunner::cancelled);
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    named<QPushButton>(u"cancelButton"_s)->click();
    QCOMPARE(cancelled.size(), 1);
    QVERIFY(!page()->isBusy());
    QVERIFY(!named<QProgressBar>(u"progressBar"_s)->isVisible());
    QVERIFY(!named<QPushButton>(u"cancelButton"_s)->isVisible());
    // The cancelled worker stops; whatever it returns is dropped.
    jobs()->waitForIdle();
    QTest::qWait(50);
    QCOMPARE(finished.size(), 0);
    QCOMPARE(findingsModel()->rowCount(), 0);

    // Run again to the end: the whole file is read, not just the preview.
    page()->diagnoseNow();
    QVERIFY(named<QProgressBar>(u"progressBar"_s)->isVisible());
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 120000);
    QVERIFY(!named<QProgressBar>(u"progressBar"_s)->isVisible());
    const Diagnosis &d = page()->diagnosis();
    QCOMPARE(d.bytesRead, size);
    QVERIFY(!d.cancelled);
    bool found = false;
    for (const Finding &f : d.findings) {
        if (f.target && f.target->name.experts == 64 && f.target->name.n == 1408) {
            QCOMPARE(f.occurrences, warnings);
            found = true;
        }
    }
    QVERIFY2(found, "the warnings past the preview must be found");
}

void TestDiagnosePage::staleResultsDropped() {
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    QString chatter;
    for (int i = 0; i < 20000; ++i)
        chatter +=
            u"[2026-11-20 10:01:02 TP1] Decode batch. #running-req: 3, #token: 1234, gen throughput: 99.0\n"_s;
    page()->setLogText(guitestlogs::vllmFp8() + chatter);
    const quint64 first = jobs()->currentJob();
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(jobs()->currentJob() > first);
    QTRY_COMPARE(finished.size(), 1);
    jobs()->waitForIdle();
    QTest::qWait(50);
    QCOMPARE(finished.size(), 1);
    const Diagnosis expected = Diagnoser().diagnoseText(guitestlogs::sglangEightRanks().toUtf8());
    QCOMPARE(page()->diagnosis().linesRead, expected.linesRead);
    QCOMPARE(page()->diagnosis().findings.size(), expected.findings.size());
}

void TestDiagnosePage::inlineErrors_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("content"); // null: do not create
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing") << u"nope.log"_s << QByteArray() << u"no such file"_s;
    QTest::newRow("folder") << u"."_s << QByteArray() << u"folder"_s;
    QTest::newRow("binary") << u"core.bin"_s
                            << QByteArray("\x7f"
                                          "ELF\x02\x01\x01\0\0\0\0",
                                          12)
                            << u"binary"_s;
    QTest::newRow("gzip") << u"server.log.gz"_s << QByteArray("\x1f\x8b\x08\0\0\0\0\0", 8) << u"gunzip"_s;
}

void TestDiagnosePage::inlineErrors() {
    QFETCH(QString, name);
    QFETCH(QByteArray, content);
    QFETCH(QString, expected);

    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    page()->setLogText(guitestlogs::vllmFp8());
    QTRY_COMPARE(finished.size(), 1);
    const int rows = findingsModel()->rowCount();

    const QString path = content.isNull() ? m_files.filePath(name) : writeFile(name, content);
    QVERIFY(!path.isEmpty());
    QVERIFY(!page()->openFile(path));
    QVERIFY2(page()->errorText().contains(expected), qPrintable(page()->errorText()));
    QVERIFY(page()->errorText().contains(QFileInfo(path).fileName()) || name == u"."_s);
    QVERIFY(QApplication::activeModalWidget() == nullptr);
    // Nothing is lost: the log and its findings stay.
    QCOMPARE(logEdit()->toPlainText(), guitestlogs::vllmFp8());
    QCOMPARE(findingsModel()->rowCount(), rows);
    QVERIFY(m_window->recentFiles().isEmpty());
}

void TestDiagnosePage::recentFilesRemembered() {
    const QString a = writeFile(u"a.log"_s, guitestlogs::vllmFp8().toUtf8());
    const QString b = writeFile(u"b.log"_s, guitestlogs::sglangEightRanks().toUtf8());
    QVERIFY(page()->openFile(a));
    QVERIFY(waitIdle());
    QVERIFY(page()->openFile(b));
    QVERIFY(waitIdle());
    QCOMPARE(m_window->recentFiles(), (QStringList{b, a}));

    // Persisted: a new window (next start) lists them in File > Open Recent, and they open.
    m_filterTester.reset();
    m_findingsTester.reset();
    m_evidenceTester.reset();
    m_targetTester.reset();
    m_window = std::make_unique<MainWindow>();
    QCOMPARE(m_window->recentFiles(), (QStringList{b, a}));
    QMenu *recent = nullptr;
    for (QAction *action : m_window->fileMenu()->actions()) {
        if (action->menu() && action->text().contains(u"Recent"_s))
            recent = action->menu();
    }
    QVERIFY(recent);
    emit recent->aboutToShow();
    QAction *openA = nullptr;
    for (QAction *action : recent->actions()) {
        if (action->toolTip() == a)
            openA = action;
    }
    QVERIFY(openA);
    openA->trigger();
    QCOMPARE(page()->currentFile(), a);
    QCOMPARE(m_window->recentFiles(), (QStringList{a, b}));
    QVERIFY(waitIdle());
}

void TestDiagnosePage::dropOrPasteFileOpensIt_data() {
    QTest::addColumn<bool>("drop");
    QTest::newRow("dropped on the log view") << true;
    QTest::newRow("copied in a file manager, pasted") << false;
}

void TestDiagnosePage::dropOrPasteFileOpensIt() {
    QFETCH(bool, drop);
    const QString path = writeFile(u"dropped.log"_s, guitestlogs::vllmFp8().toUtf8());
    QVERIFY(!path.isEmpty());
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    auto *mime = new QMimeData;
    mime->setUrls({QUrl::fromLocalFile(path)});
    LogEdit *edit = logEdit();
    if (drop) {
        QDragEnterEvent enter(QPoint(20, 20), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(edit->viewport(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent dropEvent(QPointF(20, 20), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(edit->viewport(), &dropEvent);
        delete mime;
    } else {
        QGuiApplication::clipboard()->setMimeData(mime); // takes ownership
        edit->paste();
    }
    QCOMPARE(page()->currentFile(), path);
    QCOMPARE(edit->toPlainText(), guitestlogs::vllmFp8()); // the file's text, not its path
    QTRY_COMPARE(finished.size(), 1);
    QVERIFY(findingsModel()->rowCount() > 0);
    QCOMPARE(m_window->recentFiles().value(0), path);
}

void TestDiagnosePage::addPagePlugsIn() {
    const int pages = m_window->pageCount();
    QVERIFY(pages >= 1);
    QCOMPARE(navigation()->count(), pages);
    QCOMPARE(navigation()->item(0)->text(), u"Diagnose"_s);
    QCOMPARE(m_window->currentPage(), 0);
    auto *extra = new QLabel(u"another task"_s);
    const int index = m_window->addPage(extra, QIcon(), u"Extra"_s);
    QCOMPARE(index, pages);
    QCOMPARE(navigation()->count(), pages + 1);
    QCOMPARE(m_window->currentPage(), 0);
    navigation()->setCurrentRow(index);
    QCOMPARE(m_window->currentPage(), index);
    QVERIFY(extra->isVisible());
    m_window->setCurrentPage(0);
    QVERIFY(page()->isVisible());
    QVERIFY(!extra->isVisible());
}

void TestDiagnosePage::logIsInputNotDocument() {
    // Point 5: the log is the input. Keys do not edit it (Tab does not insert a tab and re-diagnose);
    // a paste replaces it.
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    page()->setLogText(guitestlogs::vllmFp8());
    QTRY_COMPARE(finished.size(), 1);
    LogEdit *edit = logEdit();
    m_window->activateWindow();
    edit->setFocus();
    QTest::keyClick(edit, Qt::Key_End, Qt::ControlModifier);
    QTest::keyClick(edit, Qt::Key_Tab);
    QTest::keyClicks(edit, u"typed"_s);
    QTest::keyClick(edit, Qt::Key_Backspace);
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(edit->toPlainText(), guitestlogs::vllmFp8());
    QTest::qWait(DiagnosePage::followDebounceMs + 200);
    QCOMPARE(finished.size(), 1); // nothing was re-diagnosed behind the user's back
    QVERIFY(!page()->isBusy());
    // Ctrl+V replaces the whole log, wherever the cursor is.
    QGuiApplication::clipboard()->setText(guitestlogs::sglangEightRanks());
    edit->setFocus();
    QTest::keyClick(edit, Qt::Key_V, Qt::ControlModifier);
    QCOMPARE(edit->toPlainText(), guitestlogs::sglangEightRanks());
    QTRY_COMPARE(finished.size(), 2);
    QCOMPARE(page()->diagnosis().linesRead,
             Diagnoser().diagnoseText(guitestlogs::sglangEightRanks().toUtf8()).linesRead);
}

void TestDiagnosePage::findInLog() {
    // Point 5: Ctrl+F finds in the log, Enter goes to the next match, Esc closes.
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    LogEdit *edit = logEdit();
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    edit->setFocus();
    auto *bar = named<QWidget>(u"findBar"_s);
    QVERIFY(!bar->isVisible());
    QTest::keyClick(edit, Qt::Key_F, Qt::ControlModifier);
    QVERIFY(bar->isVisible());
    auto *find = named<QLineEdit>(u"findEdit"_s);
    QTRY_VERIFY(find->hasFocus());
    QTest::keyClicks(find, u"TP5"_s);
    QVERIFY(edit->textCursor().hasSelection());
    QCOMPARE(edit->textCursor().selectedText(), u"TP5"_s);
    const qint64 first = edit->cursorLine();
    QVERIFY(edit->textCursor().block().text().contains(u"TP5"_s));
    QTest::keyClick(find, Qt::Key_Return);
    QVERIFY(edit->cursorLine() > first);
    QVERIFY(edit->textCursor().block().text().contains(u"TP5"_s));
    find->selectAll();
    QTest::keyClicks(find, u"no such text anywhere"_s);
    QCOMPARE(named<QLabel>(u"findStatus"_s)->text(), u"not found"_s);
    QTest::keyClick(find, Qt::Key_Escape);
    QVERIFY(!bar->isVisible());
}

void TestDiagnosePage::severityButtonsFilter() {
    // Point 5: the error / warning / info counters filter the list.
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    const Diagnosis &d = page()->diagnosis();
    const int info = d.count(Severity::Info);
    const int all = int(d.findings.size());
    QVERIFY(info > 0 && info < all);
    QTreeView *view = named<QTreeView>(u"findingsView"_s);
    QCOMPARE(view->model()->rowCount(), all);
    auto *infoButton = named<QToolButton>(u"countInfo"_s);
    QVERIFY(infoButton->isCheckable() && infoButton->isChecked());
    QTest::mouseClick(infoButton, Qt::LeftButton);
    QCOMPARE(view->model()->rowCount(), all - info);
    for (int r = 0; r < view->model()->rowCount(); ++r)
        QVERIFY(view->model()->index(r, 0).data(FindingsModel::SeverityRole).toInt() != int(Severity::Info));
    // Selection and details follow what is shown.
    QVERIFY(page()->currentFindingRow() >= 0);
    QVERIFY(d.findings.at(page()->currentFindingRow()).severity != Severity::Info);
    QTest::mouseClick(infoButton, Qt::LeftButton);
    QCOMPARE(view->model()->rowCount(), all);
}

void TestDiagnosePage::pageShortcutsAndNextFinding() {
    // Point 5: shortcuts switch pages; point 4: F8 / Shift+F8 walk the findings and show them in the log.
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QVERIFY(m_window->pageCount() >= 2);
    QTest::keyClick(m_window.get(), Qt::Key_2, Qt::ControlModifier);
    QCOMPARE(m_window->currentPage(), 1);
    QTest::keyClick(m_window.get(), Qt::Key_1, Qt::ControlModifier);
    QCOMPARE(m_window->currentPage(), 0);
    logEdit()->setFocus();
    page()->selectFinding(0);
    QTest::keyClick(logEdit(), Qt::Key_F8);
    QCOMPARE(page()->currentFindingRow(), 1);
    const Finding &second = page()->diagnosis().findings.at(1);
    if (!second.evidence.isEmpty())
        QCOMPARE(logEdit()->markedLine(), second.evidence.first().line);
    QTest::keyClick(logEdit(), Qt::Key_F8, Qt::ShiftModifier);
    QCOMPARE(page()->currentFindingRow(), 0);
    QTest::keyClick(logEdit(), Qt::Key_F8, Qt::ShiftModifier); // wraps to the last
    QCOMPARE(page()->currentFindingRow(), int(page()->diagnosis().findings.size()) - 1);
}

void TestDiagnosePage::contextMenus() {
    // Point 5: context menus on findings, targets and evidence offer copy and the next action.
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    const Diagnosis &d = page()->diagnosis();
    int row = -1;
    for (int i = 0; i < d.findings.size() && row < 0; ++i) {
        if (d.findings.at(i).target && !d.findings.at(i).evidence.isEmpty())
            row = i;
    }
    QVERIFY(row >= 0);
    page()->selectFinding(row);
    const auto menuTexts = [this](QAbstractItemView *view, const QModelIndex &index) {
        QStringList texts;
        emit view->customContextMenuRequested(view->visualRect(index).center());
        QMenu *menu = nullptr;
        for (QMenu *m : page()->findChildren<QMenu *>(u"contextMenu"_s)) {
            if (m->isVisible())
                menu = m;
        }
        if (!menu)
            return texts;
        for (const QAction *a : menu->actions())
            texts.append(a->text().remove(u'&'));
        menu->close();
        return texts;
    };
    QTreeView *findings = named<QTreeView>(u"findingsView"_s);
    QStringList texts = menuTexts(findings, findings->currentIndex());
    QVERIFY2(texts.contains(u"Copy Finding as Markdown"_s) && texts.contains(u"Tune This..."_s),
             qPrintable(texts.join(u", "_s)));
    QTableView *target = named<QTableView>(u"targetView"_s);
    texts = menuTexts(target, target->model()->index(0, 1));
    QVERIFY2(texts.contains(u"Copy Value"_s) && texts.contains(u"Copy Tune Spec (JSON)"_s),
             qPrintable(texts.join(u", "_s)));
    QTableView *evidence = named<QTableView>(u"evidenceView"_s);
    texts = menuTexts(evidence, evidence->model()->index(0, 1));
    QVERIFY2(texts.contains(u"Copy Line"_s) && texts.contains(u"Show in Log"_s),
             qPrintable(texts.join(u", "_s)));
}

void TestDiagnosePage::staleFindingsSayWhoseTheyAre() {
    // Point 6: while a new file loads, and after its diagnosis is cancelled, the old findings are
    // dimmed and say whose they are.
    const QString a = writeFile(u"first.log"_s, guitestlogs::vllmFp8().toUtf8());
    QVERIFY(page()->openFile(a));
    QVERIFY(waitIdle());
    QVERIFY(!page()->resultsAreStale());
    auto *stale = named<QLabel>(u"staleLabel"_s);
    QVERIFY(!stale->isVisible());
    const QString big = m_files.filePath(u"second-big.log"_s);
    QVERIFY(writeBigLog(big, 30 * 1024 * 1024, 3));
    QVERIFY(page()->openFile(big));
    QVERIFY(page()->isBusy());
    QVERIFY(page()->resultsAreStale());
    QVERIFY(stale->isVisible());
    QVERIFY2(stale->text().contains(u"first.log"_s), qPrintable(stale->text()));
    QVERIFY(!named<QTreeView>(u"findingsView"_s)->isEnabled());
    named<QPushButton>(u"cancelButton"_s)->click();
    QVERIFY(!page()->isBusy());
    QVERIFY(page()->resultsAreStale());
    QVERIFY2(stale->text().contains(u"cancelled"_s), qPrintable(stale->text()));
    // Diagnosed after all: the findings are the shown file's again.
    page()->diagnoseNow();
    QTRY_VERIFY_WITH_TIMEOUT(!page()->isBusy(), 120000);
    QVERIFY(!page()->resultsAreStale());
    QVERIFY(!stale->isVisible());
    QVERIFY(named<QTreeView>(u"findingsView"_s)->isEnabled());
}

void TestDiagnosePage::bannersLiveAsLongAsTheirCause() {
    // Point 7: the error of a binary file goes once a new log is pasted.
    const QString bin = writeFile(u"core.bin"_s, QByteArray("\x7f"
                                                            "ELF\0\0\0\0",
                                                            8));
    QVERIFY(!page()->openFile(bin));
    QVERIFY(page()->errorText().contains(u"binary"_s));
    page()->setLogText(guitestlogs::vllmFp8());
    QVERIFY(page()->errorText().isEmpty());
    QVERIFY(waitIdle());
    // The demo note goes with the demo.
    page()->loadDemo();
    auto *note = named<Banner>(u"noteBanner"_s);
    QVERIFY(note->isVisible());
    QGuiApplication::clipboard()->setText(guitestlogs::vllmFp8());
    logEdit()->paste();
    QVERIFY(!note->isVisible());
    QVERIFY(!page()->isDemo());
}

void TestDiagnosePage::infoFindingsThatDoNotMislead_data() {
    // Issue 12 point 11 and the dense GEMM's target, as the page shows them.
    QTest::addColumn<QString>("log");
    QTest::addColumn<QString>("rule");
    QTest::addColumn<QString>("title");
    QTest::addColumn<QString>("evidenceHeader"); // contained
    QTest::addColumn<qint64>("lastEvidenceLine");
    QTest::addColumn<bool>("tunable");
    QTest::addColumn<QString>("targetRow"); // "key=value" of the target fields, or ""
    QString memory;
    int line = 0;
    for (int rank = 0; rank < 8; ++rank) {
        memory +=
            u"[2026-03-14 09:12:07 TP%1] Load weight begin. avail mem=138.%2 GB\n"_s.arg(rank).arg(10 + rank);
        ++line;
    }
    for (int rank = 0; rank < 8; ++rank) {
        memory +=
            u"[2026-03-14 09:13:31 TP%1] Capture cuda graph end. Time elapsed: 42.00 s. mem usage=1.63 GB. "
            "avail mem=31.%2 GB.\n"_s.arg(rank)
                .arg(50 + rank);
        ++line;
    }
    memory += u"[2026-03-14 09:13:35] The server is fired up and ready to roll!\n"_s;
    QTest::newRow("memory left: the last report, latest lines shown")
        << memory << u"memory-left"_s << u"GPU memory left: 31.57 GB at the last startup report"_s
        << u"Evidence (click"_s << qint64(16) << false << QString();
    QString many;
    for (int i = 0; i < 40; ++i)
        many +=
            u"[2026-03-14 09:12:50 TP%1] Using default MoE kernel config. Performance might be sub-optimal! "
            u"Config "
            "file not found at /sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/"
            "triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200.json\n"_s.arg(i % 8);
    QTest::newRow("40 lines: the first 5 and the latest 15")
        << many << u"moe-untuned"_s << u"No tuned MoE config for E=128, N=768, bf16 on NVIDIA_H200"_s
        << u"the first 5 and the latest 15 lines; 20 lines between them left out"_s << qint64(40) << true
        << u"dtype=bf16/fp16"_s;
    QTest::newRow("KV cache once")
        << u"[2026-03-14 09:12:47 TP0] KV Cache is allocated. #tokens: 1046371, K size: 23.95 GB, V size: "
           u"23.95 GB\n"
           "[2026-03-14 09:13:31 TP0] max_total_num_tokens=1046371, chunked_prefill_size=8192, "
           "max_running_requests=4096, context_len=40960\n"_s
        << u"kv-cache-size"_s << u"KV cache: 1046371 tokens, at most 4096 running requests"_s
        << u"Evidence (click"_s << qint64(2) << false << QString();
    QTest::newRow("dense block-FP8 GEMM: a target, not a tuning job")
        << u"[2026-03-14 09:12:50 TP0] Using default W8A8 Block FP8 kernel config. Performance might be "
           "sub-optimal! Config file not found at "
           "/sgl-workspace/sglang/python/sglang/srt/layers/quantization/"
           "configs/N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json\n"_s
        << u"w8a8-block-fp8-untuned"_s << u"Untuned W8A8 block-FP8 GEMM: N=1536, K=7168 on NVIDIA_H200"_s
        << u"Evidence (click"_s << qint64(1) << false << u"k=7168"_s;
}

void TestDiagnosePage::infoFindingsThatDoNotMislead() {
    QFETCH(QString, log);
    QFETCH(QString, rule);
    QFETCH(QString, title);
    QFETCH(QString, evidenceHeader);
    QFETCH(qint64, lastEvidenceLine);
    QFETCH(bool, tunable);
    QFETCH(QString, targetRow);
    page()->setLogText(log);
    QVERIFY(waitIdle());
    const Diagnosis &d = page()->diagnosis();
    int row = -1;
    int kvFindings = 0;
    for (int i = 0; i < d.findings.size(); ++i) {
        if (d.findings.at(i).rule == rule && row < 0)
            row = i;
        kvFindings += d.findings.at(i).title.contains(u"KV cache"_s) ? 1 : 0;
    }
    QVERIFY2(row >= 0, qPrintable(rule));
    QVERIFY(kvFindings <= 1);
    page()->selectFinding(row);
    QVERIFY(findingsModel()->finding(row));
    QCOMPARE(findingsModel()->finding(row)->title, title);
    auto *header = named<QLabel>(u"evidenceHeader"_s);
    QVERIFY2(header->text().contains(evidenceHeader), qPrintable(header->text()));
    const QList<Evidence> &shown = evidenceModel()->evidence();
    QVERIFY(!shown.isEmpty());
    QCOMPARE(shown.back().line, lastEvidenceLine); // the latest line is there
    QCOMPARE(named<QPushButton>(u"tuneButton"_s)->isVisible(), tunable);
    if (!targetRow.isEmpty()) {
        const QString key = targetRow.section(u'=', 0, 0);
        QCOMPARE(targetModel()->value(key), targetRow.section(u'=', 1));
    }
}

void TestDiagnosePage::tuneThisOnTheTarget() {
    // Point 2: the target carries the one action, "Tune this", for the host the log came from.
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    const Diagnosis &d = page()->diagnosis();
    int targetRow = -1;
    int plainRow = -1;
    for (int i = 0; i < d.findings.size(); ++i) {
        if (d.findings.at(i).target && targetRow < 0)
            targetRow = i;
        if (!d.findings.at(i).target && plainRow < 0)
            plainRow = i;
    }
    QVERIFY(targetRow >= 0 && plainRow >= 0);
    auto *tune = named<QPushButton>(u"tuneButton"_s);
    page()->selectFinding(plainRow);
    QVERIFY(!tune->isVisible());
    page()->selectFinding(targetRow);
    QVERIFY(tune->isVisible());
    QSignalSpy requested(page(), &DiagnosePage::tuneRequested);
    QTest::mouseClick(tune, Qt::LeftButton);
    QCOMPARE(requested.size(), 1);
    QCOMPARE(requested.at(0).at(0).toString(), QString()); // pasted: no host known
    // No host is known for a pasted log: the window asks which host tunes it (issue 45 point 7), then
    // opens the Tune page on that target.
    QInputDialog *ask = nullptr;
    QTRY_VERIFY((ask = m_window->findChild<QInputDialog *>(u"tuneHostDialog"_s)) != nullptr);
    ask->setTextValue(ask->comboBoxItems().first()); // this machine
    ask->accept();
    auto *tunePage = m_window->findChild<TunePage *>(u"tunePage"_s);
    QVERIFY(tunePage);
    QTRY_COMPARE(m_window->page(m_window->currentPage()), tunePage);
    QCOMPARE(tunePage->findChild<QSpinBox *>(u"expertsSpin"_s)->value(),
             d.findings.at(targetRow).target->name.experts);
    QCOMPARE(tunePage->findChild<QSpinBox *>(u"nSpin"_s)->value(), d.findings.at(targetRow).target->name.n);
    m_window->setCurrentPage(0);
}

void TestDiagnosePage::hostFactsThatDisagreeAreSaid() {
    // Point 10: an 8-GPU log merged into a host with no GPU says so.
    const QString path = writeFile(u"fetched.log"_s, guitestlogs::sglangEightRanks().toUtf8());
    HostProbe probe;
    probe.hostName = u"laptop"_s;
    QVERIFY(page()->openFetchedLog(path, u"laptop"_s, u"laptop"_s, probe));
    QVERIFY(waitIdle());
    QCOMPARE(page()->diagnosis().host, u"laptop"_s);
    QVERIFY2(page()->summaryText().contains(u"laptop has no GPU"_s), qPrintable(page()->summaryText()));
    // The same log pasted (no host): nothing to compare, nothing said.
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    QVERIFY(page()->diagnosis().host.isEmpty());
    QVERIFY(!page()->summaryText().contains(u"no GPU"_s));
}

void TestDiagnosePage::keyFactsWholeAtMinimumSize() {
    // Point 3: at the declared minimum window size the titles, the Where column, the up/down paths and
    // the evidence lines are shown whole (wrapped, paths broken after a '/'), and the details, target and
    // evidence do not each scroll: one scroll area holds them.
    m_window->resize(m_window->minimumSize());
    QCOMPARE(m_window->size(), MainWindow::minimumWindowSize);
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    const Diagnosis &d = page()->diagnosis();
    int row = -1;
    for (int i = 0; i < d.findings.size() && row < 0; ++i) {
        if (d.findings.at(i).target && d.findings.at(i).evidence.size() >= 2)
            row = i;
    }
    QVERIFY(row >= 0);
    page()->selectFinding(row);
    QTest::qWait(100); // the fitted views settle after the model reset
    QCoreApplication::processEvents();

    QTreeView *findings = named<QTreeView>(u"findingsView"_s);
    // Titles: each row is as tall as its title wrapped at the column's width, so none is cut or elided
    // (at this size at least one title is longer than the column: the check would fail on one-line rows).
    const int titleWidth = findings->header()->sectionSize(FindingsModel::TitleColumn);
    bool someWrapped = false;
    for (int r = 0; r < findings->model()->rowCount(); ++r) {
        const QModelIndex index = findings->model()->index(r, FindingsModel::TitleColumn);
        QFont font = findings->font();
        if (index.data(Qt::FontRole).canConvert<QFont>())
            font = index.data(Qt::FontRole).value<QFont>();
        const QFontMetrics fm(font);
        const QString title = index.data().toString();
        // The text's room: the column less the icon and the item's margins.
        const int room = titleWidth - findings->iconSize().width() -
                         4 * (findings->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 1);
        const int needed = fm.boundingRect(QRect(0, 0, room, 10000), Qt::TextWordWrap, title).height();
        someWrapped = someWrapped || fm.horizontalAdvance(title) > room;
        QVERIFY2(
            findings->visualRect(index).height() >= needed,
            qPrintable(
                u"row %1 \"%2\" (column %5 px, viewport %6 px): %3 px tall, its wrapped title needs %4 px"_s
                    .arg(r)
                    .arg(title)
                    .arg(findings->visualRect(index).height())
                    .arg(needed)
                    .arg(titleWidth)
                    .arg(findings->viewport()->width())));
    }
    QVERIFY2(someWrapped, "no title is longer than the column at the minimum size: the check proves nothing");
    const QModelIndex where = findings->model()->index(row, FindingsModel::SourcesColumn);
    QVERIFY(findings->header()->sectionSize(FindingsModel::SourcesColumn) >=
            findings->fontMetrics().horizontalAdvance(where.data().toString()));

    QTableView *target = named<QTableView>(u"targetView"_s);
    QVERIFY(!target->verticalScrollBar()->isVisible());
    int upRow = -1;
    for (int r = 0; r < target->model()->rowCount(); ++r) {
        if (target->model()->index(r, 0).data(TargetFieldsModel::KeyRole).toString() == u"upPath"_s)
            upRow = r;
    }
    QVERIFY(upRow >= 0);
    const QModelIndex up = target->model()->index(upRow, TargetFieldsModel::ValueColumn);
    QVERIFY(up.data().toString().contains(u"/\u200b"_s)); // breaks only after a folder
    QCOMPARE(up.data(Qt::EditRole).toString(), d.findings.at(row).target->upPath());
    const QFont pathFont = up.data(Qt::FontRole).value<QFont>();
    if (QFontMetrics(pathFont).horizontalAdvance(up.data(Qt::EditRole).toString()) > target->columnWidth(1))
        QVERIFY2(target->rowHeight(upRow) >= 2 * QFontMetrics(pathFont).lineSpacing(),
                 qPrintable(QString::number(target->rowHeight(upRow))));
    // The fitted table is as tall as its rows: nothing below the last one is cut.
    int rowsHeight = 0;
    for (int r = 0; r < target->model()->rowCount(); ++r)
        rowsHeight += target->rowHeight(r);
    QVERIFY(target->height() >= rowsHeight);

    QTableView *evidence = named<QTableView>(u"evidenceView"_s);
    QVERIFY(!evidence->verticalScrollBar()->isVisible());
    QVERIFY(evidence->height() >= evidence->rowHeight(0) * evidence->model()->rowCount());
    const QString firstLine = evidence->model()->index(0, EvidenceModel::TextColumn).data().toString();
    if (evidence->fontMetrics().horizontalAdvance(firstLine) >
        evidence->columnWidth(EvidenceModel::TextColumn))
        QVERIFY(evidence->rowHeight(0) >= 2 * evidence->fontMetrics().lineSpacing());
    auto *browser = named<QTextBrowser>(u"detailsBrowser"_s);
    QCOMPARE(browser->verticalScrollBar()->maximum(), 0);
    // One scroll area for the three.
    auto *scroll = named<QScrollArea>(u"detailsScroll"_s);
    QVERIFY(scroll && scroll->widget()->isAncestorOf(target) && scroll->widget()->isAncestorOf(evidence));
}

QTEST_MAIN(TestDiagnosePage)
// Issue 41: one up+down job was three warnings side by side. Its findings now follow each other, the
// first heads them and the others say (JobRole, tooltip) that they belong to it.
void TestDiagnosePage::upAndDownJobIsOneGroup() {
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    FindingsModel *model = findingsModel();
    QList<int> places;
    QStringList rules;
    for (int row = 0; row < model->rowCount(); ++row) {
        places << model->index(row, 0).data(FindingsModel::JobRole).toInt();
        rules << model->index(row, 0).data(FindingsModel::RuleRole).toString();
    }
    const qsizetype head = places.indexOf(FindingsModel::JobHead);
    QVERIFY2(head == 0, qPrintable(rules.join(u", "_s)));
    QCOMPARE(rules.mid(0, 3),
             (QStringList{u"moe-untuned"_s, u"moe-down-missing"_s, u"triton-folder-no-config"_s}));
    QCOMPARE(places.mid(0, 3),
             (QList<int>{FindingsModel::JobHead, FindingsModel::JobMember, FindingsModel::JobLastMember}));
    QVERIFY(model->index(1, FindingsModel::TitleColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(u"Part of the tuning job for E=128, N=96, bf16 on NVIDIA_H200"_s));
}

// Issue 41: a 2025 SGLang log (no triton_X_Y_Z folder, from before _down files) said "Down projection:
// tuned config found" although nothing was looked up.
void TestDiagnosePage::downFileOfAnOldServerIsNotAskedFor() {
    QFile file(QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs/sglang-old-default.log"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    page()->setLogText(QString::fromUtf8(file.readAll()));
    QVERIFY(waitIdle());
    int row = -1;
    for (int r = 0; r < findingsModel()->rowCount() && row < 0; ++r)
        row = findingsModel()->finding(r)->rule == u"moe-untuned"_s ? r : -1;
    QVERIFY(row >= 0);
    page()->selectFinding(row);
    QCOMPARE(targetModel()->value(u"down"_s),
             u"not asked for by this server version (it predates _down files)"_s);
    QCOMPARE(targetModel()->value(u"up"_s), u"missing: server uses built-in defaults"_s);
    // A newer log that looks the _down file up and finds it missing says so.
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    page()->selectFinding(0);
    QCOMPARE(targetModel()->value(u"down"_s), u"missing: server uses built-in defaults"_s);
}

// Issue 41: the dense W8A8 GEMM, which moetune does not tune, was selected before the MoE finding.
void TestDiagnosePage::moeJobSelectedBeforeDenseGemm() {
    const QString root = guitestlogs::sglangRoot + u"/triton_3_6_0/"_s;
    const QString log =
        u"[2026-11-20 10:00:01] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size=8)\n"
        "[2026-11-20 10:00:04 TP0] Using default W8A8 Block FP8 kernel config. Performance might be "
        "sub-optimal! Config file not found at /usr/local/lib/python3.12/dist-packages/sglang/srt/layers/"
        "quantization/configs/N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, "
        "128].json\n"
        "[2026-11-20 10:00:09 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config "
        "file not found at "_s +
        root +
        u"E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json, you can "
        "create them with https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/"
        "fused_moe_triton\n"_s;
    page()->setLogText(log);
    QVERIFY(waitIdle());
    const Finding *selected = findingsModel()->finding(page()->currentFindingRow());
    QVERIFY(selected);
    QCOMPARE(selected->rule, u"moe-untuned"_s);
    QVERIFY(selected->target && selected->target->isTunable());
    bool denseAfter = false;
    for (int r = page()->currentFindingRow() + 1; r < findingsModel()->rowCount(); ++r)
        denseAfter = denseAfter || findingsModel()->finding(r)->rule == u"w8a8-block-fp8-untuned"_s;
    QVERIFY(denseAfter);
}

// Issue 45 point 10: an empty paste threw the open log away without a word.
void TestDiagnosePage::emptyPasteKeepsTheLog() {
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    const QString shown = logEdit()->toPlainText();
    const int rows = findingsModel()->rowCount();
    QVERIFY(rows > 0);
    logEdit()->setFocus();
    for (const QString &clip : {QString(), u"  \n\t\n"_s}) {
        QGuiApplication::clipboard()->setText(clip);
        QTest::keyClick(logEdit(), Qt::Key_V, Qt::ControlModifier);
        QVERIFY(waitIdle());
        QCOMPARE(logEdit()->toPlainText(), shown);
        QCOMPARE(findingsModel()->rowCount(), rows);
        auto *note = named<Banner>(u"noteBanner"_s);
        QVERIFY(note->isVisible());
        QVERIFY2(note->text().contains(u"the log shown stays"_s), qPrintable(note->text()));
    }
    // MOETUNE_SHOTS_DIR: a picture of the state for a person to look at (window.grab(), as --screenshot).
    if (const QString shots = qEnvironmentVariable("MOETUNE_SHOTS_DIR"); !shots.isEmpty())
        QVERIFY(m_window->grab().save(shots + u"/empty-paste-1400x900.png"_s));
    QVERIFY(!page()->undoAction()->isEnabled()); // nothing was replaced
}

// Issue 45 point 10: Edit > Undo brings back the log and diagnosis a paste replaced.
void TestDiagnosePage::undoBringsBackTheReplacedLog() {
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(waitIdle());
    const QString firstLog = logEdit()->toPlainText();
    const QString firstSummary = page()->summaryText();
    logEdit()->setFocus();
    QGuiApplication::clipboard()->setText(guitestlogs::vllmFp8());
    QTest::keyClick(logEdit(), Qt::Key_V, Qt::ControlModifier);
    QVERIFY(waitIdle());
    QVERIFY(page()->summaryText() != firstSummary);
    QAction *undo = page()->undoAction();
    QVERIFY(undo->isEnabled());
    // It is in the Edit menu.
    bool inMenu = false;
    for (QMenu *menu : m_window->findChildren<QMenu *>()) {
        if (menu->title() == u"&Edit"_s)
            inMenu = menu->actions().contains(undo);
    }
    QVERIFY(inMenu);
    undo->trigger();
    QVERIFY(waitIdle());
    QCOMPARE(logEdit()->toPlainText(), firstLog);
    QCOMPARE(page()->summaryText(), firstSummary);
    QVERIFY(!undo->isEnabled());
}

#include "tst_diagnosepage.moc"
