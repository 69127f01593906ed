// The main window and the Diagnose page driven like a user, offscreen: paste, open, click, copy, cancel.
#include "app/diagnose/diagnosepage.h"
#include "app/diagnose/diagnosisrunner.h"
#include "app/diagnose/evidencemodel.h"
#include "app/diagnose/findingsmodel.h"
#include "app/diagnose/targetfieldsmodel.h"
#include "app/mainwindow.h"
#include "app/widgets/logedit.h"
#include "app/widgets/logtext.h"

#include "core/diagnosis/coreresources.h"
#include "core/diagnosis/diagnoser.h"

#include "guitestlogs.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
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

private:
    DiagnosePage *page() const { return m_window->diagnosePage(); }
    bool waitIdle(int timeoutMs = 30000);
    QString writeFile(const QString &name, const QByteArray &content);

    QTemporaryDir m_settingsDir;
    QTemporaryDir m_files;
    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_findingsTester;
    std::unique_ptr<QAbstractItemModelTester> m_evidenceTester;
    std::unique_ptr<QAbstractItemModelTester> m_targetTester;
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
    m_findingsTester = std::make_unique<QAbstractItemModelTester>(page()->findingsModel(), Mode::QtTest);
    m_evidenceTester = std::make_unique<QAbstractItemModelTester>(page()->evidenceModel(), Mode::QtTest);
    m_targetTester = std::make_unique<QAbstractItemModelTester>(page()->targetModel(), Mode::QtTest);
}

void TestDiagnosePage::cleanup() {
    m_findingsTester.reset();
    m_evidenceTester.reset();
    m_targetTester.reset();
    if (m_window)
        m_window->diagnosePage()->runner()->waitForIdle();
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
    QCOMPARE(page()->logEdit()->toPlainText(), displayLogText(demo));
    QVERIFY(!page()->logEdit()->toPlainText().contains(u'\x1b'));
    QVERIFY(waitIdle());
    const Diagnosis expected = Diagnoser().diagnoseText(demo.toUtf8());
    QVERIFY(!expected.findings.isEmpty());
    QCOMPARE(page()->findingsModel()->rowCount(), expected.findings.size());
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
    QVERIFY(page()->findingsModel()->rowCount() > 0);
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
    QTest::newRow("sglang 8 ranks, typed") << guitestlogs::sglangEightRanks() << false << u"SGLang"_s << 128
                                           << 96 << u"NVIDIA_H200"_s << u"bf16/fp16"_s << u"triton_3_6_0"_s;
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
    LogEdit *edit = page()->logEdit();
    edit->setFocus();
    if (viaClipboard) {
        QGuiApplication::clipboard()->setText(log);
        edit->paste();
        QVERIFY2(page()->isBusy() || finished.size() == 1,
                 "a paste is diagnosed at once, not after the debounce");
    } else {
        edit->setPlainText(log); // like typing: goes through the debounce
    }
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 10000);
    // A paste shows as a terminal shows it: no colour codes, no CRs.
    QCOMPARE(edit->toPlainText(), displayLogText(log));
    QVERIFY(!edit->toPlainText().contains(u'\x1b'));
    QVERIFY(!edit->toPlainText().contains(u'\r'));

    const Diagnosis expected = Diagnoser().diagnoseText(displayLogText(log).toUtf8());
    QCOMPARE(expected.findings.size(), Diagnoser().diagnoseText(log.toUtf8()).findings.size());
    QVERIFY(!expected.findings.isEmpty());
    QAbstractItemModel *shown = page()->findingsView()->model();
    QCOMPARE(shown->rowCount(), expected.findings.size());
    for (int row = 0; row < expected.findings.size(); ++row) {
        QCOMPARE(shown->index(row, FindingsModel::TitleColumn).data().toString(),
                 expected.findings.at(row).title);
        QCOMPARE(shown->index(row, FindingsModel::OccurrencesColumn).data().toInt(),
                 expected.findings.at(row).occurrences);
    }
    const auto countText = [this](const char *severity) {
        return page()->findChild<QLabel *>(u"count-"_s + QLatin1StringView(severity))->text();
    };
    QVERIFY(countText("error").startsWith(QString::number(expected.count(Severity::Error)) + u' '));
    QVERIFY(countText("warning").startsWith(QString::number(expected.count(Severity::Warning)) + u' '));
    QVERIFY(countText("info").startsWith(QString::number(expected.count(Severity::Info)) + u' '));
    QVERIFY(page()->countsText().contains(countText("warning")));
    QCOMPARE(page()->summaryText(), expected.summary);

    // Click the finding that carries this shape's target: the details pane shows its parsed fields.
    int targetRow = -1;
    for (int row = 0; row < expected.findings.size() && targetRow < 0; ++row) {
        const auto &t = expected.findings.at(row).target;
        if (t && t->name.experts == experts && t->name.n == n)
            targetRow = row;
    }
    QVERIFY2(targetRow >= 0, "a finding must carry the E/N target of the warning");
    QTreeView *view = page()->findingsView();
    const QRect rect = view->visualRect(shown->index(targetRow, 0));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(page()->currentFindingRow(), targetRow);

    TargetFieldsModel *fields = page()->targetModel();
    QCOMPARE(page()->targetView()->model(), fields);
    QCOMPARE(fields->value(u"framework"_s), framework);
    QCOMPARE(fields->value(u"experts"_s), QString::number(experts));
    QCOMPARE(fields->value(u"n"_s), QString::number(n));
    QCOMPARE(fields->value(u"device"_s), device);
    QCOMPARE(fields->value(u"dtype"_s), dtype);
    if (!tritonFolder.isEmpty())
        QVERIFY(fields->value(u"tritonFolder"_s).startsWith(tritonFolder));
    const Finding &f = expected.findings.at(targetRow);
    QCOMPARE(fields->value(u"upPath"_s), f.target->upPath());
    QVERIFY(page()->detailsBrowser()->toPlainText().contains(f.title));
    if (!f.advice.isEmpty())
        QVERIFY(page()->detailsBrowser()->toPlainText().contains(f.advice.section(u'\n', 0, 0).left(40)));
    QCOMPARE(page()->evidenceModel()->rowCount(), f.evidence.size());
}

void TestDiagnosePage::quietLogSaysSo() {
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    page()->setLogText(guitestlogs::quietLog());
    QTRY_COMPARE(finished.size(), 1);
    const Diagnosis expected = Diagnoser().diagnoseText(guitestlogs::quietLog().toUtf8());
    QCOMPARE(expected.count(Severity::Warning) + expected.count(Severity::Error), 0);
    QCOMPARE(page()->findingsModel()->rowCount(), expected.findings.size());
    QVERIFY(!page()->summaryText().isEmpty());
    QVERIFY(page()->findChild<QLabel *>(u"count-warning"_s)->text().startsWith(u"0 "_s));
}

void TestDiagnosePage::largePasteLoadsByChunks() {
    // A paste of megabytes is diagnosed at once and goes into the editor by chunks (no long freeze).
    QString log = guitestlogs::sglangEightRanks();
    while (log.size() < 3 * LogEdit::largePasteChars)
        log +=
            u"[2026-11-20 10:01:02 TP1] Decode batch. #running-req: 3, #token: 1234, gen throughput: 99.0\n"_s;
    log += guitestlogs::vllmFp8();
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    QSignalSpy loaded(page(), &DiagnosePage::logLoaded);
    LogEdit *edit = page()->logEdit();
    edit->setPlainText(u"replaced by the paste"_s);
    edit->selectAll();
    QGuiApplication::clipboard()->setText(log);
    edit->paste();
    QVERIFY(page()->isLoading());
    QVERIFY(edit->isReadOnly());
    QVERIFY(edit->toPlainText().size() < log.size());
    QVERIFY(page()->isBusy() || finished.size() == 1);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 30000);
    QVERIFY(!page()->isLoading());
    QVERIFY(!edit->isReadOnly());
    QCOMPARE(edit->toPlainText(), log);
    QTRY_COMPARE(finished.size(), 1);
    const Diagnosis expected = Diagnoser().diagnoseText(log.toUtf8());
    QCOMPARE(page()->diagnosis().findings.size(), expected.findings.size());
    QCOMPARE(page()->diagnosis().linesRead, expected.linesRead);
    // Editing afterwards works as usual (and undo is back on).
    QVERIFY(edit->document()->isUndoRedoEnabled());
}

void TestDiagnosePage::ctrlReturnDiagnosesAtOnce() {
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    LogEdit *edit = page()->logEdit();
    edit->setFocus();
    edit->setPlainText(guitestlogs::vllmFp8()); // starts the debounce only
    QVERIFY(!page()->isBusy());
    QTest::keyClick(edit, Qt::Key_Return, Qt::ControlModifier);
    QVERIFY2(page()->isBusy(), "Ctrl+Return starts the diagnosis without waiting for the debounce");
    QCOMPARE(edit->toPlainText(), guitestlogs::vllmFp8()); // the shortcut did not insert a line break
    QVERIFY(waitIdle());
    QVERIFY(page()->findingsModel()->rowCount() > 0);
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
    QTableView *view = page()->evidenceView();
    QCOMPARE(view->model()->rowCount(), d.findings.at(row).evidence.size());

    for (int ev : {2, 0}) {
        const Evidence &e = d.findings.at(row).evidence.at(ev);
        const QRect rect = view->visualRect(view->model()->index(ev, EvidenceModel::TextColumn));
        QVERIFY(rect.isValid());
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, rect.center());
        LogEdit *edit = page()->logEdit();
        QCOMPARE(edit->cursorLine(), e.line);
        QCOMPARE(edit->markedLine(), e.line);
        const QString lineText = edit->textCursor().block().text();
        QCOMPARE(edit->textCursor().selectedText(), lineText); // the whole line is selected
        QVERIFY2(lineText.contains(e.text.mid(e.matchStart, e.matchLength)), qPrintable(lineText));
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
    QVERIFY(page()->logEdit()->isReadOnly());
    QVERIFY(page()->logEdit()->toPlainText().size() <= DiagnosePage::previewBytes);
    QVERIFY(page()->isBusy());
    QVERIFY(page()->progressBar()->isVisible());
    QVERIFY(page()->cancelButton()->isVisible());
    QSignalSpy cancelled(page()->runner(), &DiagnosisRunner::cancelled);
    QSignalSpy finished(page(), &DiagnosePage::diagnosisFinished);
    page()->cancelButton()->click();
    QCOMPARE(cancelled.size(), 1);
    QVERIFY(!page()->isBusy());
    QVERIFY(!page()->progressBar()->isVisible());
    QVERIFY(!page()->cancelButton()->isVisible());
    // The cancelled worker stops; whatever it returns is dropped.
    page()->runner()->waitForIdle();
    QTest::qWait(50);
    QCOMPARE(finished.size(), 0);
    QCOMPARE(page()->findingsModel()->rowCount(), 0);

    // Run again to the end: the whole file is read, not just the preview.
    page()->diagnoseNow();
    QVERIFY(page()->progressBar()->isVisible());
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 120000);
    QVERIFY(!page()->progressBar()->isVisible());
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
    const quint64 first = page()->runner()->currentJob();
    page()->setLogText(guitestlogs::sglangEightRanks());
    QVERIFY(page()->runner()->currentJob() > first);
    QTRY_COMPARE(finished.size(), 1);
    page()->runner()->waitForIdle();
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
    const int rows = page()->findingsModel()->rowCount();

    const QString path = content.isNull() ? m_files.filePath(name) : writeFile(name, content);
    QVERIFY(!path.isEmpty());
    QVERIFY(!page()->openFile(path));
    QVERIFY2(page()->errorText().contains(expected), qPrintable(page()->errorText()));
    QVERIFY(page()->errorText().contains(QFileInfo(path).fileName()) || name == u"."_s);
    QVERIFY(QApplication::activeModalWidget() == nullptr);
    // Nothing is lost: the log and its findings stay.
    QCOMPARE(page()->logEdit()->toPlainText(), guitestlogs::vllmFp8());
    QCOMPARE(page()->findingsModel()->rowCount(), rows);
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
    LogEdit *edit = page()->logEdit();
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
    QVERIFY(page()->findingsModel()->rowCount() > 0);
    QCOMPARE(m_window->recentFiles().value(0), path);
}

void TestDiagnosePage::addPagePlugsIn() {
    const int pages = m_window->pageCount();
    QVERIFY(pages >= 1);
    QCOMPARE(m_window->navigation()->count(), pages);
    QCOMPARE(m_window->navigation()->item(0)->text(), u"Diagnose"_s);
    QCOMPARE(m_window->currentPage(), 0);
    auto *extra = new QLabel(u"another task"_s);
    const int index = m_window->addPage(extra, QIcon(), u"Extra"_s);
    QCOMPARE(index, pages);
    QCOMPARE(m_window->navigation()->count(), pages + 1);
    QCOMPARE(m_window->currentPage(), 0);
    m_window->navigation()->setCurrentRow(index);
    QCOMPARE(m_window->currentPage(), index);
    QVERIFY(extra->isVisible());
    m_window->setCurrentPage(0);
    QVERIFY(page()->isVisible());
    QVERIFY(!extra->isVisible());
}

QTEST_MAIN(TestDiagnosePage)
#include "tst_diagnosepage.moc"
