// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/diagnose/diagnosepage.h"

#include "app/diagnose/diagnoselogpane.h"
#include "app/diagnose/evidencedelegate.h"
#include "app/diagnose/evidencemodel.h"
#include "app/diagnose/findingdetailspane.h"
#include "app/diagnose/findingsmodel.h"
#include "app/diagnose/findingspane.h"
#include "app/diagnose/targetfieldsmodel.h"
#include "app/widgets/appresources.h"
#include "app/widgets/banner.h"
#include "app/widgets/logedit.h"
#include "app/widgets/logtext.h"
#include "app/widgets/severitystyle.h"

#include "core/diagnosis/loglineindex.h"
#include "core/diagnosis/logsniff.h"
#include "core/diagnosis/ruleset.h"
#include "core/host/hostmismatch.h"
#include "core/host/hostprobemerge.h"
#include "core/job/tunespec.h"
#include "core/util/coreresources.h"
#include "core/util/jobrunner.h"

#include "ui_diagnosepage.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDataStream>
#include <QFile>
#include <QFileInfo>
#include <QIODevice>
#include <QJsonDocument>
#include <QKeyEvent>
#include <QLocale>
#include <QMenu>
#include <QTableView>
#include <QTextBlock>
#include <QToolButton>
#include <QTreeView>

#include <algorithm>
#include <utility>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString humanBytes(qint64 bytes) {
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

} // namespace

DiagnosePage::DiagnosePage(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::DiagnosePage>())
    , m_jobs(new JobRunner(this))
    , m_findingsModel(new FindingsModel(this))
    , m_windowJobs(new JobRunner(this)) {
    m_ui->setupUi(this);
    m_log = m_ui->logPane;
    m_findings = m_ui->findingsPane;
    m_details = m_ui->detailsPane;
    setObjectName(u"diagnosePage"_s);
    m_jobs->setObjectName(u"diagnosisJobs"_s);
    m_windowJobs->setObjectName(u"logWindowJobs"_s);
    m_findingsModel->setObjectName(u"findingsModel"_s);

    // User rules are data; a broken file is reported inline and the rest still loads.
    QStringList ruleErrors;
    m_diagnoser = Diagnoser(RuleSet::withUserRules(RuleSet::userRulesDir(), &ruleErrors));

    setupActions();
    setupViews();

    m_debounce.setSingleShot(true);
    m_debounce.setInterval(followDebounceMs);
    connect(&m_debounce, &QTimer::timeout, this, &DiagnosePage::diagnoseNow);
    m_showProgressDelay.setSingleShot(true);
    m_showProgressDelay.setInterval(250);
    connect(&m_showProgressDelay, &QTimer::timeout, this, [this] {
        if (isBusy())
            setBusy(true, true);
    });
    connect(m_jobs, &JobRunner::progress, this,
            [this](quint64, qint64 done, qint64 total) { onProgress(done, total); });
    connect(m_jobs, &JobRunner::cancelled, this, &DiagnosePage::onCancelled);

    if (!ruleErrors.isEmpty()) {
        showError(tr("Some of your rule files in %1 could not be used (the built-in rules still apply):\n%2")
                      .arg(RuleSet::userRulesDir(), ruleErrors.join(u'\n')));
    }
    updateCounts();
    updateSourceLabel();
    updateStale();
    showFinding(-1);
}

DiagnosePage::~DiagnosePage() = default;

void DiagnosePage::setupActions() {
    m_diagnoseAction = new QAction(tr("&Diagnose"), this);
    m_diagnoseAction->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    m_diagnoseAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_diagnoseAction->setToolTip(tr("Diagnose the log now (Ctrl+Return)"));
    connect(m_diagnoseAction, &QAction::triggered, this, &DiagnosePage::diagnoseNow);
    addAction(m_diagnoseAction);

    m_copyFindingAction = new QAction(tr("Copy &Finding as Markdown"), this);
    m_copyFindingAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    m_copyFindingAction->setEnabled(false);
    connect(m_copyFindingAction, &QAction::triggered, this, &DiagnosePage::copyFindingMarkdown);
    m_copyDiagnosisAction = new QAction(tr("Copy &Diagnosis as Markdown"), this);
    m_copyDiagnosisAction->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_C));
    m_copyDiagnosisAction->setEnabled(false);
    connect(m_copyDiagnosisAction, &QAction::triggered, this, &DiagnosePage::copyDiagnosisMarkdown);

    // F8 / Shift+F8 walk the findings wherever the focus is on this page (as in IDEs' problem lists).
    m_nextFindingAction = new QAction(tr("&Next Finding"), this);
    m_nextFindingAction->setShortcut(QKeySequence(Qt::Key_F8));
    m_nextFindingAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(m_nextFindingAction, &QAction::triggered, this, [this] { selectAdjacentFinding(1); });
    addAction(m_nextFindingAction);
    m_previousFindingAction = new QAction(tr("&Previous Finding"), this);
    m_previousFindingAction->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F8));
    m_previousFindingAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(m_previousFindingAction, &QAction::triggered, this, [this] { selectAdjacentFinding(-1); });
    addAction(m_previousFindingAction);
    m_findAction = new QAction(tr("&Find in Log..."), this);
    m_findAction->setShortcut(QKeySequence::Find);
    m_findAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(m_findAction, &QAction::triggered, this, &DiagnosePage::showFindBar);
    addAction(m_findAction);
    m_undoAction = new QAction(tr("&Undo Paste"), this);
    m_undoAction->setShortcut(QKeySequence::Undo);
    m_undoAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_undoAction->setEnabled(false);
    m_undoAction->setToolTip(tr("Bring back the log and diagnosis that the last paste replaced"));
    connect(m_undoAction, &QAction::triggered, this, &DiagnosePage::undoPaste);
    addAction(m_undoAction);
}

void DiagnosePage::setupViews() {
    Ui::DiagnosePage &ui = *m_ui;
    ui.summaryBanner->setClosable(false);
    ui.summaryBanner->setMaximumLines(3); // the one-line summary; "Show all" for the rest
    for (Banner *b : {ui.summaryBanner, ui.errorBanner, ui.noteBanner, ui.followBanner}) {
        b->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum); // as tall as their text
        b->hide();
    }
    ui.pageLayout->setStretchFactor(ui.mainSplitter, 1); // the panes get the height, not the banners
    ui.followBanner->setClosable(false);
    connect(ui.noteBanner, &Banner::actionTriggered, this, &DiagnosePage::clearLog);
    connect(ui.followBanner, &Banner::actionTriggered, this,
            [this] { emit stopFollowRequested(m_hostAlias); });

    connect(m_log, &DiagnoseLogPane::cancelClicked, this, &DiagnosePage::cancelDiagnosis);
    connect(m_log, &DiagnoseLogPane::diagnoseClicked, this, &DiagnosePage::diagnoseNow);
    LogEdit *edit = m_log->edit();
    // Ctrl+F and the arrows work once the page is chosen in the sidebar (MainWindow focuses the page).
    setFocusProxy(edit);
    connect(edit, &LogEdit::textPasted, this, &DiagnosePage::pasteText);
    connect(edit, &LogEdit::fileDropped, this, &DiagnosePage::openFile);
    connect(edit, &LogEdit::loaded, this, &DiagnosePage::logLoaded);
    connect(edit, &LogEdit::loaded, this, &DiagnosePage::updateFindingLines);
    connect(edit, &LogEdit::clearRequested, this, &DiagnosePage::clearLog);

    m_findings->setModel(m_findingsModel);
    connect(m_findings, &FindingsPane::filterChanged, this, &DiagnosePage::selectFinding);
    connect(m_findings, &FindingsPane::currentRowChanged, this, &DiagnosePage::showFinding);
    connect(m_findings, &FindingsPane::copyAllClicked, m_copyDiagnosisAction, &QAction::trigger);
    connect(m_copyDiagnosisAction, &QAction::changed, m_findings,
            [this] { m_findings->setCopyEnabled(m_copyDiagnosisAction->isEnabled()); });
    connect(m_details, &FindingDetailsPane::copyClicked, m_copyFindingAction, &QAction::trigger);
    connect(m_copyFindingAction, &QAction::changed, m_details,
            [this] { m_details->setCopyEnabled(m_copyFindingAction->isEnabled()); });
    connect(m_details, &FindingDetailsPane::tuneClicked, this, &DiagnosePage::requestTune);
    connect(m_details, &FindingDetailsPane::headroomClicked, this, [this] {
        const Finding *f = m_findingsModel->finding(currentFindingRow());
        if (f && f->target && f->target->isTunable())
            emit headroomRequested(diagnosis().host, *f->target);
    });
    connect(m_details, &FindingDetailsPane::evidenceClicked, this,
            [this](const Evidence &e) { showLogLine(e.line, e.text.mid(e.matchStart, e.matchLength)); });

    for (QAbstractItemView *view : {static_cast<QAbstractItemView *>(m_findings->view()),
                                    static_cast<QAbstractItemView *>(m_details->targetView()),
                                    static_cast<QAbstractItemView *>(m_details->evidenceView())}) {
        view->setContextMenuPolicy(Qt::CustomContextMenu);
        connect(view, &QWidget::customContextMenuRequested, this,
                [this, view](const QPoint &pos) { showContextMenu(view, pos); });
    }

    ui.mainSplitter->setStretchFactor(0, 5);
    ui.mainSplitter->setStretchFactor(1, 7);
    ui.rightSplitter->setStretchFactor(0, 2);
    ui.rightSplitter->setStretchFactor(1, 5);
    // First-start proportions (restoreState() replaces them): the findings list shows about ten rows.
    ui.mainSplitter->setSizes({560, 780});
    ui.rightSplitter->setSizes({250, 600});
}

void DiagnosePage::showContextMenu(QWidget *view, const QPoint &pos) {
    auto *menu = new QMenu(this);
    menu->setObjectName(u"contextMenu"_s);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    const Finding *f = m_findingsModel->finding(currentFindingRow());
    if (view == m_findings->view()) {
        if (!f) {
            delete menu;
            return;
        }
        menu->addAction(m_copyFindingAction);
        menu->addAction(tr("Copy &Title"), this,
                        [title = f->title] { QGuiApplication::clipboard()->setText(title); });
        if (f->target && f->target->isTunable())
            menu->addAction(tr("&Tune This..."), this, &DiagnosePage::requestTune);
        menu->addSeparator();
        menu->addAction(m_copyDiagnosisAction);
    } else if (view == m_details->targetView()) {
        const QModelIndex index = m_details->targetView()->indexAt(pos);
        if (index.isValid()) {
            const QString value = m_details->targetModel()
                                      ->index(index.row(), TargetFieldsModel::ValueColumn)
                                      .data()
                                      .toString();
            menu->addAction(tr("&Copy Value"), this,
                            [value] { QGuiApplication::clipboard()->setText(value); });
        }
        if (f && f->target && f->target->isTunable()) {
            const QString spec = QString::fromUtf8(
                QJsonDocument(tuneSpecFor(*f->target, m_hostProbe ? &*m_hostProbe : nullptr).toJson())
                    .toJson(QJsonDocument::Compact));
            menu->addAction(tr("Copy Tune &Spec (JSON)"), this,
                            [spec] { QGuiApplication::clipboard()->setText(spec); });
            menu->addAction(tr("&Tune This..."), this, &DiagnosePage::requestTune);
        }
    } else if (view == m_details->evidenceView()) {
        const QModelIndex index = m_details->evidenceView()->indexAt(pos);
        if (index.isValid()) {
            const Evidence e = m_details->evidenceModel()->evidence().at(index.row());
            menu->addAction(tr("&Copy Line"), this, [e] { QGuiApplication::clipboard()->setText(e.text); });
            menu->addAction(tr("&Show in Log"), this,
                            [this, e] { showLogLine(e.line, e.text.mid(e.matchStart, e.matchLength)); });
        }
    }
    if (menu->isEmpty()) {
        delete menu;
        return;
    }
    menu->popup(view->mapToGlobal(pos));
}

bool DiagnosePage::openFile(const QString &path) {
    return openFileFrom(path, {}, {}, std::nullopt);
}

bool DiagnosePage::openFileFrom(const QString &path, const QString &hostAlias, const QString &hostLabel,
                                const std::optional<HostProbe> &probe, const Diagnosis *ready) {
    const QFileInfo info(path);
    if (!info.exists()) {
        showError(tr("Cannot open %1: there is no such file.").arg(path));
        return false;
    }
    if (info.isDir()) {
        showError(tr("Cannot open %1: it is a folder. Pick the server's log file inside it.").arg(path));
        return false;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        showError(tr("Cannot open %1: %2. Check that you may read it.").arg(path, file.errorString()));
        return false;
    }
    const qint64 size = file.size();
    const bool big = size > previewBytes;
    QByteArray head = file.read(big ? previewBytes : size);
    if (file.error() != QFileDevice::NoError) {
        showError(tr("Cannot read %1: %2.").arg(path, file.errorString()));
        return false;
    }
    if (const LogSniff sniff = LogSniff::check(head); !sniff.isText()) {
        showError(sniff.problem(path));
        return false;
    }
    if (big) {
        const qsizetype lastBreak = head.lastIndexOf('\n');
        if (lastBreak >= 0)
            head.truncate(lastBreak + 1);
    }

    beginInput(hostAlias, hostLabel, probe);
    m_filePath = info.absoluteFilePath();
    m_fileSize = size;
    m_preview = big;
    if (big)
        m_lineIndex = std::make_shared<LogLineIndex>(m_filePath);
    // The file is read from disk so the line numbers are the file's own; the findings come first.
    m_log->edit()->loadText(displayLogText(QString::fromUtf8(head)), true);
    holdRestBriefly();
    if (big) {
        m_ui->noteBanner->showMessage(Banner::Kind::Info,
                                      tr("Showing the first %1 of %2. The diagnosis reads the whole file.")
                                          .arg(humanBytes(head.size()), humanBytes(size)));
        m_ui->noteBanner->setAction(tr("Clear"));
    }
    updateSourceLabel();
    emit fileOpened(m_filePath);
    if (!ready) {
        diagnoseNow();
        return true;
    }
    // The host session's Diagnose host flow diagnosed it already: its result, as a job of this input.
    m_debounce.stop();
    m_jobs->cancel();
    m_jobClock.start();
    m_jobSerial = m_inputSerial;
    m_jobSource = sourceText();
    m_jobHost = m_hostAlias;
    onResult(Result{*ready, {}, true});
    return true;
}

void DiagnosePage::setLogText(const QString &text) {
    beginInput();
    // The diagnosis reads the text as given (ANSI, CR bars and all), like it would read a file, and
    // starts before the view has it all.
    m_rawText = text.toUtf8();
    updateSourceLabel();
    diagnoseNow();
    m_log->edit()->loadText(displayLogText(text), isBusy());
    holdRestBriefly();
}

void DiagnosePage::pasteText(const QString &text) {
    if (text.trimmed().isEmpty()) {
        // Nothing to diagnose: the log shown, its findings and what Undo would bring back all stay.
        const QString said = text.isEmpty() ? tr("The clipboard was empty: the log shown stays.")
                                            : tr("The clipboard held only blank space: the log shown stays.");
        m_ui->noteBanner->showMessage(Banner::Kind::Info, said);
        m_ui->noteBanner->setAction({});
        emit statusMessage(said, 5000);
        return;
    }
    const bool hadInput = !m_rawText.isEmpty() || !m_filePath.isEmpty() || m_hasResult;
    if (hadInput && !isBusy()) {
        m_replaced = Replaced{m_filePath.isEmpty() ? m_rawText : QByteArray(),
                              m_filePath,
                              m_hostAlias,
                              m_hostLabel,
                              m_hostProbe,
                              m_findingsModel->diagnosis(),
                              m_demo};
    } else {
        m_replaced.reset(); // a diagnosis still running is no state to come back to
    }
    m_undoAction->setEnabled(m_replaced.has_value());
    setLogText(text);
}

bool DiagnosePage::undoPaste() {
    if (!m_replaced)
        return false;
    const Replaced r = std::move(*m_replaced);
    m_replaced.reset();
    m_undoAction->setEnabled(false);
    if (r.demo)
        return loadDemo();
    if (!r.filePath.isEmpty())
        return openFileFrom(r.filePath, r.hostAlias, r.hostLabel, r.probe, &r.diagnosis);
    setLogText(QString::fromUtf8(r.rawText));
    emit statusMessage(tr("Undo: the log before the paste is back"), 3000);
    return true;
}

void DiagnosePage::holdRestBriefly() {
    // The findings come first: the rest of a big text follows once the worker is done, or soon anyway.
    if (m_log->edit()->isLoading())
        QTimer::singleShot(300, m_log->edit(), &LogEdit::resumeLoading);
}

bool DiagnosePage::isLoading() const {
    return m_log->edit()->isLoading();
}

void DiagnosePage::beginInput(const QString &hostAlias, const QString &hostLabel,
                              const std::optional<HostProbe> &probe) {
    m_debounce.stop();
    ++m_inputSerial;
    // Banners of the old input go with it; the findings stay, dimmed, until the new ones arrive.
    m_ui->errorBanner->hide();
    m_ui->noteBanner->hide();
    if (m_following)
        emit stopFollowRequested(m_hostAlias); // the followed log is not shown any more
    m_following = false;
    m_followedLines = 0;
    updateFollowBanner();
    m_hostAlias = hostAlias;
    m_hostLabel = hostAlias.isEmpty() ? QString() : hostLabel;
    m_hostProbe = hostAlias.isEmpty() ? std::nullopt : probe;
    m_fetchedAt = std::exchange(m_pendingFetchedAt, QDateTime());
    m_filePath.clear();
    m_fileSize = 0;
    m_preview = false;
    m_windowJobs->cancel();
    m_lineIndex.reset();
    m_demo = false;
    m_rawText = QByteArray();
    updateStale();
}

bool DiagnosePage::openFetchedLog(const QString &path, const QString &hostAlias, const QString &hostLabel,
                                  const HostProbe &probe) {
    m_pendingFetchedAt = QFileInfo(path).lastModified();
    const bool ok = openFileFrom(path, hostAlias, hostLabel, probe);
    m_pendingFetchedAt = QDateTime();
    return ok;
}

bool DiagnosePage::openHostDiagnosis(const QString &path, const QString &hostAlias, const QString &hostLabel,
                                     const HostProbe &probe, const Diagnosis &diagnosis) {
    return openFileFrom(path, hostAlias, hostLabel, probe, &diagnosis);
}

void DiagnosePage::beginFollow(const QString &hostAlias, const QString &hostLabel,
                               const std::optional<HostProbe> &probe) {
    beginInput(hostAlias, hostLabel, probe);
    m_following = true;
    m_log->edit()->loadText(QString());
    m_findingsModel->clear();
    m_hasResult = false;
    showFinding(-1);
    updateCounts();
    m_ui->summaryBanner->hide();
    updateSourceLabel();
    updateFollowBanner();
    updateStale();
}

void DiagnosePage::appendFollowedLines(const QString &hostAlias, const QStringList &lines) {
    if (!m_following || hostAlias != m_hostAlias || lines.isEmpty())
        return;
    m_log->edit()->appendLines(lines);
    m_followedLines += lines.size();
    updateFollowBanner();
    m_debounce.start();
}

void DiagnosePage::endFollow(const QString &hostAlias, const QString &error) {
    if (!m_following || hostAlias != m_hostAlias)
        return;
    m_following = false;
    updateFollowBanner();
    updateSourceLabel();
    if (!error.isEmpty())
        showError(tr("Following the log of %1 stopped: %2").arg(m_hostLabel, error));
    if (m_debounce.isActive())
        diagnoseNow();
}

void DiagnosePage::updateHostProbe(const QString &hostAlias, const HostProbe &probe) {
    if (hostAlias.isEmpty() || hostAlias != m_hostAlias)
        return;
    m_hostProbe = probe;
    if (m_following)
        m_debounce.start(); // the facts join the findings at the next diagnosis
}

void DiagnosePage::updateFollowBanner() {
    Banner *b = m_ui->followBanner;
    if (!m_following) {
        b->hide();
        return;
    }
    b->showMessage(
        Banner::Kind::Info,
        m_followedLines == 0
            ? tr("Following the log of %1 live: waiting for the server to write...").arg(m_hostLabel)
            : tr("Following the log of %1 live: %n new line(s) so far, diagnosed as they come.", nullptr,
                 int(qMin<qint64>(m_followedLines, INT_MAX)))
                  .arg(m_hostLabel));
    b->setAction(tr("Stop"));
}

bool DiagnosePage::loadDemo() {
    ensureAppResources();
    QFile demo(demoLogPath());
    if (!demo.open(QIODevice::ReadOnly)) {
        showError(tr("The demo log is missing from this build (:/moetune/demo/demo-sglang.log). "
                     "Paste a server log or open one with File > Open."));
        return false;
    }
    setLogText(QString::fromUtf8(demo.readAll()));
    m_demo = true; // after setLogText, which resets it
    m_ui->noteBanner->showMessage(
        Banner::Kind::Info,
        tr("This is a demo: the startup log of an SGLang server. Paste your own server log "
           "here (Ctrl+V), drop a log file, or open one with Ctrl+O."));
    m_ui->noteBanner->setAction(tr("Clear demo"));
    updateSourceLabel();
    return true;
}

void DiagnosePage::clearLog() {
    m_jobs->cancel();
    beginInput();
    m_ui->summaryBanner->hide();
    m_log->edit()->loadText(QString());
    m_findingsModel->clear();
    m_hasResult = false;
    m_copyDiagnosisAction->setEnabled(false);
    showFinding(-1);
    updateCounts();
    updateSourceLabel();
    updateStale();
    m_log->edit()->setFocus();
}

void DiagnosePage::diagnoseNow() {
    m_debounce.stop();
    if (!m_filePath.isEmpty()) {
        // A file: read from disk (line numbers are the file's own, a preview is diagnosed whole).
        startJob(m_filePath, {}, m_preview);
        return;
    }
    const QByteArray text = m_rawText.isNull() ? m_log->edit()->toPlainText().toUtf8() : m_rawText;
    if (text.trimmed().isEmpty()) {
        m_jobs->cancel();
        m_findingsModel->clear();
        m_hasResult = false;
        m_resultSerial = m_inputSerial;
        m_ui->summaryBanner->hide();
        showFinding(-1);
        updateCounts();
        updateStale();
        return;
    }
    startJob({}, text, text.size() > bigTextBytes);
}

void DiagnosePage::startJob(const QString &path, const QByteArray &text, bool showProgressNow) {
    m_jobClock.start();
    m_jobSerial = m_inputSerial;
    m_jobSource = sourceText();
    m_jobHost = m_hostAlias;
    const Diagnoser diagnoser = m_diagnoser;
    if (!path.isEmpty()) {
        m_jobs->start(
            [diagnoser, path](JobControl &job) {
                Result r;
                r.diagnosis = diagnoser.diagnoseFile(
                    path, [&job](qint64 done, qint64 total) { return job.report(done, total); }, &r.error);
                return r;
            },
            [this](const Result &r) { onResult(r); });
    } else {
        m_jobs->start(
            [diagnoser, text](JobControl &job) {
                Result r;
                r.diagnosis = diagnoser.diagnoseText(
                    text, [&job](qint64 done, qint64 total) { return job.report(done, total); });
                return r;
            },
            [this](const Result &r) { onResult(r); });
    }
    setBusy(true, showProgressNow);
    updateStale();
}

void DiagnosePage::cancelDiagnosis() {
    m_jobs->cancel();
}

void DiagnosePage::setBusy(bool busy, bool showProgressNow) {
    if (!busy) {
        m_log->edit()->resumeLoading();
        m_showProgressDelay.stop();
        m_log->hideProgress();
        return;
    }
    if (showProgressNow) {
        m_showProgressDelay.stop();
        m_log->showProgress();
    } else if (!m_log->progressShown()) {
        m_showProgressDelay.start();
    }
}

void DiagnosePage::onProgress(qint64 done, qint64 total) {
    m_log->setProgress(done, total);
}

void DiagnosePage::onResult(const Result &result) {
    setBusy(false, false);
    if (!result.error.isEmpty()) {
        showError(result.error);
        updateStale();
        emit statusMessage(tr("Diagnosis failed"), 5000);
        return;
    }
    // A log from a host: what the probe knows goes into the findings (confirmed folders, served model).
    Diagnosis diagnosis = m_hostProbe && !result.merged
                              ? mergeHostProbe(result.diagnosis, *m_hostProbe, m_hostLabel)
                              : result.diagnosis;
    diagnosis.host = m_jobHost;
    const qint64 ms = m_jobClock.elapsed();
    QString previousId;
    if (const Finding *f = m_findingsModel->finding(currentFindingRow()))
        previousId = f->id;
    m_findingsModel->setDiagnosis(diagnosis);
    m_hasResult = true;
    m_resultSerial = m_jobSerial;
    m_resultSource = m_jobSource;
    updateCounts();
    updateStale();
    updateFindingLines();

    QString summary = diagnosis.summary;
    Banner::Kind kind = Banner::Kind::Success;
    if (diagnosis.findings.isEmpty()) {
        if (summary.isEmpty())
            summary = tr("Nothing to fix: the log shows no MoE config problems.");
    } else {
        const Severity worst = diagnosis.worst();
        kind = worst == Severity::Error     ? Banner::Kind::Error
               : worst == Severity::Warning ? Banner::Kind::Warning
                                            : Banner::Kind::Success;
    }
    if (m_hostProbe) {
        // The host's facts and the log disagree: say so instead of merging silently.
        const QStringList mismatches = hostMismatches(result.diagnosis, *m_hostProbe, m_hostLabel);
        if (!mismatches.isEmpty()) {
            summary += u"\n"_s + mismatches.join(u'\n');
            if (kind == Banner::Kind::Success)
                kind = Banner::Kind::Warning;
        }
    }
    m_ui->summaryBanner->showMessage(kind, summary);
    const int keep = previousId.isEmpty() ? -1 : m_findingsModel->rowOf(previousId);
    selectFinding(keep >= 0 ? keep : 0);
    m_copyDiagnosisAction->setEnabled(true);
    QString done = tr("Diagnosed %1 lines (%2) in %3 ms")
                       .arg(QLocale().toString(diagnosis.linesRead), humanBytes(diagnosis.bytesRead))
                       .arg(ms);
    if (m_fetchedAt.isValid() && !m_hostLabel.isEmpty()) {
        // A fetched log keeps its age in view (a reopened one may be old; Diagnose Host fetches anew).
        const qint64 s = std::max<qint64>(0, m_fetchedAt.secsTo(QDateTime::currentDateTime()));
        const QString age = s < 60      ? tr("%1 s").arg(s)
                            : s < 3600  ? tr("%1 min").arg(s / 60)
                            : s < 86400 ? tr("%1 h").arg(s / 3600)
                                        : tr("%n day(s)", nullptr, int(s / 86400));
        done = tr("The log of %1 fetched %2 ago (%3): %4")
                   .arg(m_hostLabel, age, QLocale().toString(m_fetchedAt, QLocale::ShortFormat),
                        done.left(1).toLower() + done.mid(1));
    }
    emit statusMessage(done, 0);
    emit diagnosisFinished();
}

void DiagnosePage::onCancelled() {
    setBusy(false, false);
    updateStale();
    emit statusMessage(m_hasResult ? tr("Diagnosis cancelled; the findings shown are from the previous run.")
                                   : tr("Diagnosis cancelled. Press Ctrl+Return to run it again."),
                       8000);
}

bool DiagnosePage::resultsAreStale() const {
    return m_hasResult && m_resultSerial != m_inputSerial;
}

void DiagnosePage::updateStale() {
    const bool stale = resultsAreStale();
    m_findings->setStale(
        stale,
        isBusy() ? tr("These findings are of %1, not of the log shown: diagnosing it...").arg(m_resultSource)
                 : tr("These findings are of %1, not of the log shown (its diagnosis was "
                      "cancelled or failed). Press Ctrl+Return to diagnose the log shown.")
                       .arg(m_resultSource));
    // Dimmed, still readable: they are the last known findings, not this log's.
    m_details->setEnabled(!stale);
    m_ui->summaryBanner->setEnabled(!stale);
}

void DiagnosePage::showError(const QString &text) {
    m_ui->errorBanner->showMessage(Banner::Kind::Error, text);
}

const Diagnosis &DiagnosePage::diagnosis() const {
    return m_findingsModel->diagnosis();
}

bool DiagnosePage::isBusy() const {
    return m_jobs->isRunning();
}

QString DiagnosePage::countsText() const {
    return m_findings->countsText();
}

QString DiagnosePage::summaryText() const {
    return m_ui->summaryBanner->isHidden() ? QString() : m_ui->summaryBanner->text();
}

QString DiagnosePage::errorText() const {
    return m_ui->errorBanner->isHidden() ? QString() : m_ui->errorBanner->text();
}

void DiagnosePage::updateCounts() {
    m_findings->updateCounts();
}

QString DiagnosePage::sourceText() const {
    QString text;
    if (m_demo)
        text = tr("Demo log: demo-sglang.log");
    else if (!m_filePath.isEmpty())
        text = m_filePath + u"  ("_s + humanBytes(m_fileSize) + u')';
    else if (m_following)
        text = tr("Live log");
    else if (m_rawText.isEmpty() && m_log->edit()->document()->isEmpty())
        text = tr("Paste a log, drop a file, or press Ctrl+O");
    else
        text = tr("Pasted text");
    if (!m_hostLabel.isEmpty())
        text = tr("From host %1: %2").arg(m_hostLabel, text);
    return text;
}

void DiagnosePage::updateSourceLabel() {
    m_log->setSource(sourceText());
}

void DiagnosePage::updateFindingLines() {
    QHash<qint64, QColor> lines;
    for (const Finding &f : m_findingsModel->diagnosis().findings) {
        if (f.severity == Severity::Info)
            continue;
        for (const Evidence &e : f.evidence) {
            if (!lines.contains(e.line) || f.severity == Severity::Error)
                lines.insert(e.line, SeverityStyle::color(f.severity));
        }
    }
    m_log->edit()->setFindingLines(lines);
}

int DiagnosePage::currentFindingRow() const {
    return m_findings->currentRow();
}

void DiagnosePage::selectFinding(int row) {
    showFinding(m_findings->selectRow(row));
}

void DiagnosePage::selectAdjacentFinding(int step) {
    const int next = m_findings->adjacentRow(step);
    if (next < 0)
        return;
    selectFinding(next);
    // Show where it is: the first evidence line in the log.
    if (const Finding *f = m_findingsModel->finding(currentFindingRow()); f && !f->evidence.isEmpty()) {
        const Evidence &e = f->evidence.first();
        showLogLine(e.line, e.text.mid(e.matchStart, e.matchLength));
    }
}

void DiagnosePage::showFinding(int row) {
    const Finding *f = m_findingsModel->finding(row);
    m_copyFindingAction->setEnabled(f != nullptr);
    // A finding whose tuned files are in use never tells the user to tune (issue 45).
    m_details->showFinding(f, m_hasResult, m_hostLabel,
                           !f || !f->target                  ? QString()
                           : f->rule == "moe-config-used"_L1 ? inUseText(*f->target)
                                                             : tuneSpecText(*f->target));
}

QString DiagnosePage::inUseText(const TuningTarget &target) {
    return tr("Nothing to do: the server already loads this shape's tuned %1. Tune again only after "
              "something changes (GPU, driver, Triton or server version).")
        .arg(target.upLoaded && target.downLoaded    ? tr("up and down files")
             : target.downLoaded && !target.upLoaded ? tr("_down file")
                                                     : tr("file"));
}

QString DiagnosePage::tuneSpecText(const TuningTarget &target) const {
    // The one next step for this shape, complete: what is not in the log comes from the host's probe.
    // Its tuned files are in use (the log shows them loaded, none missing or fallen back): no tuning to do.
    if (!target.needsTuning() && (target.upLoaded || target.downLoaded))
        return inUseText(target);
    const TuneSpec spec = tuneSpecFor(target, m_hostProbe ? &*m_hostProbe : nullptr);
    QStringList parts{u"E=%1"_s.arg(spec.experts), u"N=%1"_s.arg(spec.n)};
    parts.append(spec.hiddenSize > 0 ? u"K=%1"_s.arg(spec.hiddenSize) : tr("K from the served model"));
    parts.append(spec.topk > 0 ? tr("top-k %1").arg(spec.topk) : tr("top-k from the served model"));
    parts.append(spec.dtype.isEmpty() ? u"bf16"_s : spec.dtype);
    parts.append(spec.upAndDown ? tr("up and down configs") : tr("up config"));
    QString text = tr("Next step: tune %1.").arg(parts.join(u", "_s));
    if (spec.hiddenSize <= 0 || spec.topk <= 0)
        text += u' ' + (m_hostLabel.isEmpty() ? tr("The Tune page reads K and top-k from the host's probe.")
                                              : tr("Probe %1 to fill in K and top-k.").arg(m_hostLabel));
    return text;
}

void DiagnosePage::requestTune() {
    const Finding *f = m_findingsModel->finding(currentFindingRow());
    if (!f || !f->target || !f->target->isTunable())
        return;
    emit tuneRequested(diagnosis().host, *f->target);
}

bool DiagnosePage::showLogLine(qint64 line, const QString &expectedText) {
    LogEdit *edit = m_log->edit();
    if (line < 1)
        return false;
    qint64 target = line;
    // Logical lines can differ from the view's (joined terminal wraps, CR progress bars): look near
    // the reported line for the matched text before trusting the number.
    const QString needle = expectedText.left(60);
    auto has = [&](qint64 l) { return edit->hasLine(l) && edit->lineText(l).contains(needle); };
    if (!needle.isEmpty() && !has(line)) {
        for (qint64 d = 1; d <= 2000; ++d) {
            if (has(line - d)) {
                target = line - d;
                break;
            }
            if (has(line + d)) {
                target = line + d;
                break;
            }
        }
    }
    if (!edit->hasLine(target) && m_lineIndex) {
        // A big file: read the window around the line (on a worker), then show it.
        loadWindowAround(line, expectedText);
        emit statusMessage(tr("Reading the part of the file around line %1...").arg(line), 3000);
        return true;
    }
    if (!edit->hasLine(target) && isLoading() && target > edit->lastLineNumber()) {
        emit statusMessage(tr("Line %1 is not in the log view yet: it is still loading.").arg(line), 5000);
        return false;
    }
    if (!edit->hasLine(target)) {
        emit statusMessage(tr("Line %1 is not in the log view.").arg(line), 8000);
        return false;
    }
    const QString text = edit->lineText(target);
    const qsizetype at = expectedText.isEmpty() ? -1 : text.indexOf(expectedText);
    const bool ok = edit->jumpToLine(target, int(at), int(at >= 0 ? expectedText.size() : 0));
    if (ok)
        emit statusMessage(tr("Line %1").arg(target), 3000);
    return ok;
}

void DiagnosePage::loadWindowAround(qint64 line, const QString &expectedText) {
    const std::shared_ptr<LogLineIndex> index = m_lineIndex;
    const quint64 serial = m_inputSerial;
    m_windowJobs->start([index, line](JobControl &job) { return index->window(line, previewBytes, &job); },
                        [this, serial, line, expectedText](const LogWindow &w) {
                            if (serial != m_inputSerial)
                                return; // another log by now
                            if (!w.error.isEmpty()) {
                                showError(w.error);
                                return;
                            }
                            LogEdit *edit = m_log->edit();
                            edit->loadText(displayLogText(QString::fromUtf8(w.bytes)), false, w.firstLine);
                            updateFindingLines();
                            m_ui->noteBanner->showMessage(
                                Banner::Kind::Info,
                                tr("Showing lines %L1-%L2 of %3 (%4 around line %L5). Click any evidence "
                                   "line to show its part of the file; the diagnosis reads the whole file.")
                                    .arg(edit->firstLineNumber())
                                    .arg(edit->lastLineNumber())
                                    .arg(humanBytes(m_fileSize))
                                    .arg(humanBytes(w.bytes.size()))
                                    .arg(line));
                            m_ui->noteBanner->setAction(tr("Clear"));
                            auto jump = [this, serial, line, expectedText] {
                                if (serial != m_inputSerial)
                                    return;
                                if (m_log->edit()->hasLine(line)) // else the file ends before it: its end
                                    showLogLine(line, expectedText);
                                emit logWindowLoaded();
                            };
                            if (edit->isLoading()) // the window goes in by chunks; the line is mid-way
                                connect(edit, &LogEdit::loaded, this, jump, Qt::SingleShotConnection);
                            else
                                jump();
                        });
}

void DiagnosePage::showFindBar() {
    m_log->showFindBar();
}

bool DiagnosePage::copyFindingMarkdown() {
    const Finding *f = m_findingsModel->finding(currentFindingRow());
    if (!f)
        return false;
    QGuiApplication::clipboard()->setText(m_findingsModel->diagnosis().findingMarkdown(*f));
    emit statusMessage(tr("Copied the finding as Markdown"), 3000);
    return true;
}

void DiagnosePage::copyDiagnosisMarkdown() {
    QGuiApplication::clipboard()->setText(m_findingsModel->diagnosis().toMarkdown());
    emit statusMessage(tr("Copied the diagnosis as Markdown"), 3000);
}

QByteArray DiagnosePage::saveState() const {
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    out << quint32(3) << m_ui->mainSplitter->saveState() << m_ui->rightSplitter->saveState()
        << m_log->edit()->wrapsLines();
    return state;
}

void DiagnosePage::restoreState(const QByteArray &state) {
    QDataStream in(state);
    quint32 version = 0;
    QByteArray mainState;
    QByteArray rightState;
    in >> version >> mainState >> rightState; // version 1 had a third splitter after these: ignored
    if (in.status() != QDataStream::Ok || version < 1 || version > 3)
        return;
    bool wrap = false;
    if (version == 3)
        in >> wrap;
    if (auto *button = findChild<QToolButton *>(u"wrapButton"_s))
        button->setChecked(wrap && in.status() == QDataStream::Ok);
    m_ui->mainSplitter->restoreState(mainState);
    m_ui->rightSplitter->restoreState(rightState);
}

} // namespace moetune
