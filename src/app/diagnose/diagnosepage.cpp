#include "app/diagnose/diagnosepage.h"

#include "app/appresources.h"
#include "app/diagnose/diagnosisrunner.h"
#include "app/diagnose/evidencedelegate.h"
#include "app/diagnose/evidencemodel.h"
#include "app/diagnose/findingsmodel.h"
#include "app/diagnose/targetfieldsmodel.h"
#include "app/widgets/banner.h"
#include "app/widgets/logedit.h"
#include "app/widgets/logtext.h"
#include "app/widgets/severitystyle.h"

#include "core/diagnosis/coreresources.h"
#include "core/diagnosis/logsniff.h"
#include "core/diagnosis/ruleset.h"
#include "core/tuning/hostprobemerge.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDataStream>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIODevice>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSplitter>
#include <QTableView>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTreeView>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

constexpr Severity severities[3] = {Severity::Error, Severity::Warning, Severity::Info};

QString humanBytes(qint64 bytes) {
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

QLabel *sectionHeader(const QString &text, QWidget *parent) {
    auto *label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    label->setContentsMargins(2, 6, 0, 2);
    return label;
}

QString htmlParagraphs(const QString &text) {
    return text.toHtmlEscaped().replace(u"\n"_s, u"<br>"_s);
}

} // namespace

DiagnosePage::DiagnosePage(QWidget *parent)
    : QWidget(parent)
    , m_runner(new DiagnosisRunner(this))
    , m_findingsModel(new FindingsModel(this))
    , m_evidenceModel(new EvidenceModel(this))
    , m_targetModel(new TargetFieldsModel(this)) {
    setObjectName(u"diagnosePage"_s);

    // User rules are data; a broken file is reported inline and the rest still loads.
    QStringList ruleErrors;
    m_runner->setDiagnoser(Diagnoser(RuleSet::withUserRules(RuleSet::userRulesDir(), &ruleErrors)));

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

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(10, 10, 10, 6);
    layout->setSpacing(6);

    m_summaryBanner = new Banner(this);
    m_summaryBanner->setObjectName(u"summaryBanner"_s);
    m_summaryBanner->setClosable(false);
    m_summaryBanner->hide();
    m_errorBanner = new Banner(this);
    m_errorBanner->setObjectName(u"errorBanner"_s);
    m_errorBanner->hide();
    m_noteBanner = new Banner(this);
    m_noteBanner->setObjectName(u"noteBanner"_s);
    m_noteBanner->hide();
    connect(m_noteBanner, &Banner::actionTriggered, this, &DiagnosePage::clearLog);
    layout->addWidget(m_summaryBanner);
    layout->addWidget(m_errorBanner);
    layout->addWidget(m_noteBanner);

    m_mainSplitter = new QSplitter(Qt::Horizontal, this);
    m_mainSplitter->setChildrenCollapsible(false);
    m_mainSplitter->addWidget(createLogPane());
    m_rightSplitter = new QSplitter(Qt::Vertical, m_mainSplitter);
    m_rightSplitter->setChildrenCollapsible(false);
    m_rightSplitter->addWidget(createFindingsPane());
    m_rightSplitter->addWidget(createDetailsPane());
    m_rightSplitter->setStretchFactor(0, 2);
    m_rightSplitter->setStretchFactor(1, 5);
    m_mainSplitter->addWidget(m_rightSplitter);
    m_mainSplitter->setStretchFactor(0, 5);
    m_mainSplitter->setStretchFactor(1, 7);
    // First-start proportions (restoreState() replaces them): the findings list shows about ten rows.
    m_mainSplitter->setSizes({560, 780});
    m_rightSplitter->setSizes({250, 600});
    m_detailsSplitter->setSizes({230, 260, 150});
    layout->addWidget(m_mainSplitter, 1);

    m_debounce.setSingleShot(true);
    m_debounce.setInterval(400);
    connect(&m_debounce, &QTimer::timeout, this, &DiagnosePage::diagnoseNow);
    m_loadTimer.setInterval(0);
    connect(&m_loadTimer, &QTimer::timeout, this, &DiagnosePage::loadNextChunk);
    m_showProgressDelay.setSingleShot(true);
    m_showProgressDelay.setInterval(250);
    connect(&m_showProgressDelay, &QTimer::timeout, this, [this] {
        if (isBusy())
            setBusy(true, true);
    });

    connect(m_runner, &DiagnosisRunner::finished, this, &DiagnosePage::onFinished);
    connect(m_runner, &DiagnosisRunner::failed, this, &DiagnosePage::onFailed);
    connect(m_runner, &DiagnosisRunner::cancelled, this, &DiagnosePage::onCancelled);
    connect(m_runner, &DiagnosisRunner::progress, this, &DiagnosePage::onProgress);

    if (!ruleErrors.isEmpty()) {
        showError(tr("Some of your rule files in %1 could not be used (the built-in rules still apply):\n%2")
                      .arg(RuleSet::userRulesDir(), ruleErrors.join(u'\n')));
    }
    updateCounts();
    updateSourceLabel();
    showFinding(-1);
}

DiagnosePage::~DiagnosePage() = default;

QWidget *DiagnosePage::createLogPane() {
    auto *pane = new QWidget(this);
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 4, 0);
    layout->setSpacing(4);

    auto *bar = new QHBoxLayout;
    bar->setSpacing(6);
    m_sourceLabel = new QLabel(pane);
    m_sourceLabel->setObjectName(u"sourceLabel"_s);
    m_sourceLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_sourceLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    bar->addWidget(m_sourceLabel, 1);
    m_progress = new QProgressBar(pane);
    m_progress->setObjectName(u"progressBar"_s);
    m_progress->setMaximumWidth(220);
    m_progress->setTextVisible(true);
    m_progress->setFormat(u"%p%"_s);
    m_progress->hide();
    bar->addWidget(m_progress);
    m_cancelButton = new QPushButton(tr("Cancel"), pane);
    m_cancelButton->setObjectName(u"cancelButton"_s);
    m_cancelButton->hide();
    connect(m_cancelButton, &QPushButton::clicked, this, &DiagnosePage::cancelDiagnosis);
    bar->addWidget(m_cancelButton);
    m_diagnoseButton = new QPushButton(tr("Diagnose"), pane);
    m_diagnoseButton->setObjectName(u"diagnoseButton"_s);
    m_diagnoseButton->setToolTip(m_diagnoseAction->toolTip());
    m_diagnoseButton->setDefault(true);
    connect(m_diagnoseButton, &QPushButton::clicked, this, &DiagnosePage::diagnoseNow);
    bar->addWidget(m_diagnoseButton);
    layout->addLayout(bar);

    m_logEdit = new LogEdit(pane);
    m_logEdit->setObjectName(u"logEdit"_s);
    connect(m_logEdit, &QPlainTextEdit::textChanged, this, &DiagnosePage::onTextChanged);
    connect(m_logEdit, &LogEdit::pasted, this, [this] {
        m_debounce.stop();
        diagnoseNow();
    });
    connect(m_logEdit, &LogEdit::fileDropped, this, &DiagnosePage::openFile);
    connect(m_logEdit, &LogEdit::largePaste, this, &DiagnosePage::pasteLargeText);
    layout->addWidget(m_logEdit, 1);
    return pane;
}

QWidget *DiagnosePage::createFindingsPane() {
    auto *pane = new QWidget(this);
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(4, 0, 0, 4);
    layout->setSpacing(4);

    auto *bar = new QHBoxLayout;
    bar->setSpacing(4);
    bar->addWidget(sectionHeader(tr("Findings"), pane));
    bar->addSpacing(8);
    for (int i = 0; i < 3; ++i) {
        m_countIcons[i] = new QLabel(pane);
        m_countIcons[i]->setPixmap(SeverityStyle::icon(severities[i]).pixmap(14, 14));
        m_countLabels[i] = new QLabel(pane);
        m_countLabels[i]->setObjectName(u"count-"_s + severityName(severities[i]));
        bar->addWidget(m_countIcons[i]);
        bar->addWidget(m_countLabels[i]);
        bar->addSpacing(8);
    }
    bar->addStretch(1);
    auto *copyAll = new QPushButton(tr("Copy all as Markdown"), pane);
    copyAll->setObjectName(u"copyDiagnosisButton"_s);
    copyAll->setEnabled(false);
    connect(copyAll, &QPushButton::clicked, m_copyDiagnosisAction, &QAction::trigger);
    connect(m_copyDiagnosisAction, &QAction::changed, copyAll,
            [copyAll, this] { copyAll->setEnabled(m_copyDiagnosisAction->isEnabled()); });
    bar->addWidget(copyAll);
    layout->addLayout(bar);

    m_findingsView = new QTreeView(pane);
    m_findingsView->setObjectName(u"findingsView"_s);
    m_findingsView->setModel(m_findingsModel);
    m_findingsView->setRootIsDecorated(false);
    m_findingsView->setUniformRowHeights(true);
    m_findingsView->setAlternatingRowColors(true);
    m_findingsView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_findingsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_findingsView->setIconSize(QSize(16, 16));
    m_findingsView->header()->setStretchLastSection(false);
    m_findingsView->header()->setSectionResizeMode(FindingsModel::TitleColumn, QHeaderView::Stretch);
    m_findingsView->header()->setSectionResizeMode(FindingsModel::OccurrencesColumn,
                                                   QHeaderView::ResizeToContents);
    m_findingsView->header()->setSectionResizeMode(FindingsModel::SourcesColumn, QHeaderView::Interactive);
    m_findingsView->header()->resizeSection(FindingsModel::SourcesColumn, 150);
    connect(m_findingsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showFinding(current.isValid() ? current.row() : -1); });
    layout->addWidget(m_findingsView, 1);
    return pane;
}

QWidget *DiagnosePage::createDetailsPane() {
    auto *pane = new QWidget(this);
    auto *layout = new QVBoxLayout(pane);
    layout->setContentsMargins(4, 4, 0, 0);
    layout->setSpacing(4);

    auto *bar = new QHBoxLayout;
    m_detailsTitle = sectionHeader(tr("Details"), pane);
    m_detailsTitle->setObjectName(u"detailsTitle"_s);
    bar->addWidget(m_detailsTitle, 1);
    auto *copyFinding = new QPushButton(tr("Copy finding as Markdown"), pane);
    copyFinding->setObjectName(u"copyFindingButton"_s);
    copyFinding->setEnabled(false);
    connect(copyFinding, &QPushButton::clicked, m_copyFindingAction, &QAction::trigger);
    connect(m_copyFindingAction, &QAction::changed, copyFinding,
            [copyFinding, this] { copyFinding->setEnabled(m_copyFindingAction->isEnabled()); });
    bar->addWidget(copyFinding);
    layout->addLayout(bar);

    m_detailsSplitter = new QSplitter(Qt::Vertical, pane);
    m_detailsSplitter->setChildrenCollapsible(false);

    m_details = new QTextBrowser(m_detailsSplitter);
    m_details->setObjectName(u"detailsBrowser"_s);
    m_details->setOpenExternalLinks(false);
    m_details->setOpenLinks(false);
    m_details->document()->setDocumentMargin(8);
    m_details->setMinimumHeight(90);

    auto *targetBox = new QWidget(m_detailsSplitter);
    auto *targetLayout = new QVBoxLayout(targetBox);
    targetLayout->setContentsMargins(0, 0, 0, 0);
    targetLayout->setSpacing(2);
    m_targetHeader = sectionHeader(tr("Tuning target"), targetBox);
    targetLayout->addWidget(m_targetHeader);
    m_targetView = new QTableView(targetBox);
    m_targetView->setObjectName(u"targetView"_s);
    m_targetView->setModel(m_targetModel);
    m_targetView->horizontalHeader()->hide();
    m_targetView->verticalHeader()->hide();
    m_targetView->horizontalHeader()->setSectionResizeMode(TargetFieldsModel::FieldColumn,
                                                           QHeaderView::ResizeToContents);
    m_targetView->horizontalHeader()->setStretchLastSection(true);
    m_targetView->verticalHeader()->setDefaultSectionSize(m_targetView->fontMetrics().height() + 6);
    m_targetView->setShowGrid(false);
    m_targetView->setAlternatingRowColors(true);
    m_targetView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_targetView->setWordWrap(false);
    m_targetView->setTextElideMode(Qt::ElideMiddle);
    m_targetView->setMinimumHeight(60);
    targetLayout->addWidget(m_targetView, 1);

    auto *evidenceBox = new QWidget(m_detailsSplitter);
    auto *evidenceLayout = new QVBoxLayout(evidenceBox);
    evidenceLayout->setContentsMargins(0, 0, 0, 0);
    evidenceLayout->setSpacing(2);
    m_evidenceHeader = sectionHeader(tr("Evidence"), evidenceBox);
    evidenceLayout->addWidget(m_evidenceHeader);
    m_evidenceView = new QTableView(evidenceBox);
    m_evidenceView->setObjectName(u"evidenceView"_s);
    m_evidenceView->setModel(m_evidenceModel);
    m_evidenceView->setItemDelegate(new EvidenceDelegate(m_evidenceView));
    m_evidenceView->horizontalHeader()->hide();
    m_evidenceView->verticalHeader()->hide();
    m_evidenceView->verticalHeader()->setDefaultSectionSize(m_evidenceView->fontMetrics().height() + 6);
    m_evidenceView->horizontalHeader()->setSectionResizeMode(EvidenceModel::LineColumn,
                                                             QHeaderView::ResizeToContents);
    m_evidenceView->horizontalHeader()->setStretchLastSection(true);
    m_evidenceView->setShowGrid(false);
    m_evidenceView->setWordWrap(false);
    m_evidenceView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_evidenceView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_evidenceView->setCursor(Qt::PointingHandCursor);
    m_evidenceView->setMinimumHeight(60);
    auto jump = [this](const QModelIndex &index) {
        if (!index.isValid())
            return;
        const Evidence &e = m_evidenceModel->evidence().at(index.row());
        showLogLine(e.line, e.text.mid(e.matchStart, e.matchLength));
    };
    connect(m_evidenceView, &QTableView::clicked, this, jump);
    connect(m_evidenceView, &QTableView::activated, this, jump);
    evidenceLayout->addWidget(m_evidenceView, 1);

    m_detailsSplitter->addWidget(m_details);
    m_detailsSplitter->addWidget(targetBox);
    m_detailsSplitter->addWidget(evidenceBox);
    m_detailsSplitter->setStretchFactor(0, 3);
    m_detailsSplitter->setStretchFactor(1, 4);
    m_detailsSplitter->setStretchFactor(2, 2);
    layout->addWidget(m_detailsSplitter, 1);
    return pane;
}

bool DiagnosePage::openFile(const QString &path) {
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

    m_errorBanner->hide();
    if (!m_openingFetched)
        setHostContext({}, std::nullopt);
    m_filePath = info.absoluteFilePath();
    m_fileSize = size;
    m_preview = big;
    m_rawText = QByteArray();
    m_demo = false;
    replaceText(displayLogText(QString::fromUtf8(head)), big);
    if (big) {
        m_noteBanner->showMessage(
            Banner::Kind::Info,
            tr("Showing the first %1 of %2 (read-only). The diagnosis reads the whole file.")
                .arg(humanBytes(head.size()), humanBytes(size)));
        m_noteBanner->setAction(tr("Clear"));
    } else {
        m_noteBanner->hide();
    }
    updateSourceLabel();
    emit fileOpened(m_filePath);
    diagnoseNow();
    return true;
}

void DiagnosePage::setLogText(const QString &text) {
    m_filePath.clear();
    m_preview = false;
    m_demo = false;
    m_noteBanner->hide();
    // The diagnosis reads the text as given (ANSI, CR bars and all), like it would read a file, and
    // starts before the editor has it all.
    m_rawText = text.toUtf8();
    diagnoseNow();
    replaceText(displayLogText(text), false);
    updateSourceLabel();
}

void DiagnosePage::pasteLargeText(const QString &text) {
    // Replaces the selection like a paste would, but through the worker and the chunked loader.
    QString full = m_logEdit->toPlainText();
    const QTextCursor cursor = m_logEdit->textCursor();
    full.replace(cursor.selectionStart(), cursor.selectionEnd() - cursor.selectionStart(), text);
    setLogText(full);
}

void DiagnosePage::setHostContext(const QString &hostLabel, const std::optional<HostProbe> &probe) {
    m_hostLabel = hostLabel;
    m_hostProbe = hostLabel.isEmpty() ? std::nullopt : probe;
    updateSourceLabel();
}

bool DiagnosePage::openFetchedLog(const QString &path, const QString &hostLabel, const HostProbe &probe) {
    setHostContext(hostLabel, probe);
    m_openingFetched = true;
    const bool ok = openFile(path);
    m_openingFetched = false;
    return ok;
}

bool DiagnosePage::loadDemo() {
    setHostContext({}, std::nullopt);
    ensureAppResources();
    QFile demo(demoLogPath());
    if (!demo.open(QIODevice::ReadOnly)) {
        showError(tr("The demo log is missing from this build (:/moetune/demo/demo-sglang.log). "
                     "Paste a server log or open one with File > Open."));
        return false;
    }
    setLogText(QString::fromUtf8(demo.readAll()));
    m_demo = true; // after setLogText, which resets it
    m_noteBanner->showMessage(
        Banner::Kind::Info,
        tr("This is a demo: the startup log of an SGLang server. Paste your own server log "
           "here, drop a log file, or open one with Ctrl+O."));
    m_noteBanner->setAction(tr("Clear demo"));
    updateSourceLabel();
    return true;
}

void DiagnosePage::clearLog() {
    m_runner->cancel();
    setHostContext({}, std::nullopt);
    m_rawText = QByteArray();
    m_filePath.clear();
    m_preview = false;
    m_demo = false;
    m_noteBanner->hide();
    m_summaryBanner->hide();
    m_errorBanner->hide();
    replaceText({}, false);
    m_findingsModel->clear();
    m_hasResult = false;
    showFinding(-1);
    updateCounts();
    updateSourceLabel();
    m_logEdit->setFocus();
}

void DiagnosePage::replaceText(const QString &text, bool readOnly) {
    m_loadTimer.stop();
    m_pendingText.clear();
    m_pendingPos = 0;
    m_settingText = true;
    m_debounce.stop();
    m_logEdit->setMarkedLine(0);
    m_logEdit->setReadOnly(false);
    // Big texts go in by chunks between events: laying out megabytes at once would freeze the window.
    const qsizetype first = text.size() <= loadChunkChars ? text.size() : chunkEnd(text, 0);
    m_logEdit->setPlainText(first == text.size() ? text : text.left(first));
    m_settingText = false;
    if (first < text.size()) {
        m_pendingText = text;
        m_pendingPos = first;
        m_pendingReadOnly = readOnly;
        m_logEdit->setReadOnly(true);
        m_logEdit->document()->setUndoRedoEnabled(false);
        // The findings come first: the rest of the text follows once the worker is done (or soon anyway).
        if (isBusy())
            QTimer::singleShot(300, this, [this] { resumeLoading(); });
        else
            m_loadTimer.start();
        return;
    }
    m_logEdit->setReadOnly(readOnly);
}

qsizetype DiagnosePage::chunkEnd(const QString &text, qsizetype from) {
    const qsizetype limit = from + loadChunkChars;
    if (limit >= text.size())
        return text.size();
    const qsizetype lineEnd = text.lastIndexOf(u'\n', limit);
    return lineEnd > from ? lineEnd + 1 : limit;
}

void DiagnosePage::loadNextChunk() {
    if (m_pendingPos >= m_pendingText.size()) {
        m_loadTimer.stop();
        return;
    }
    const qsizetype end = chunkEnd(m_pendingText, m_pendingPos);
    m_settingText = true;
    QTextCursor cursor(m_logEdit->document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(QStringView(m_pendingText).mid(m_pendingPos, end - m_pendingPos).toString());
    m_settingText = false;
    m_pendingPos = end;
    if (m_pendingPos >= m_pendingText.size()) {
        m_loadTimer.stop();
        m_pendingText.clear();
        m_pendingPos = 0;
        m_logEdit->document()->setUndoRedoEnabled(true);
        m_logEdit->setReadOnly(m_pendingReadOnly);
        emit logLoaded();
    }
}

bool DiagnosePage::isLoading() const {
    return !m_pendingText.isEmpty();
}

void DiagnosePage::resumeLoading() {
    if (!m_pendingText.isEmpty() && !m_loadTimer.isActive())
        m_loadTimer.start();
}

void DiagnosePage::onTextChanged() {
    if (m_settingText)
        return;
    // The user edited: what is diagnosed from now on is the text, not the file or the demo.
    m_rawText = QByteArray();
    if (!m_filePath.isEmpty() || m_demo) {
        m_filePath.clear();
        m_demo = false;
        m_noteBanner->hide();
        updateSourceLabel();
    }
    m_debounce.start();
}

void DiagnosePage::diagnoseNow() {
    m_debounce.stop();
    if (m_preview && !m_filePath.isEmpty()) {
        m_jobBytes = m_fileSize;
        m_jobClock.start();
        m_runner->startFile(m_filePath);
        setBusy(true, true);
        return;
    }
    if (!m_filePath.isEmpty()) {
        // A small file shown whole: read it from disk so the line numbers are the file's own.
        m_jobBytes = m_fileSize;
        m_jobClock.start();
        m_runner->startFile(m_filePath);
        setBusy(true, false);
        return;
    }
    const QByteArray text = m_rawText.isNull() ? m_logEdit->toPlainText().toUtf8() : m_rawText;
    if (text.trimmed().isEmpty()) {
        m_runner->cancel();
        m_findingsModel->clear();
        m_hasResult = false;
        m_summaryBanner->hide();
        showFinding(-1);
        updateCounts();
        return;
    }
    m_jobBytes = text.size();
    m_jobClock.start();
    m_runner->startText(text);
    setBusy(true, text.size() > bigTextBytes);
}

void DiagnosePage::cancelDiagnosis() {
    m_runner->cancel();
}

void DiagnosePage::setBusy(bool busy, bool showProgressNow) {
    if (!busy) {
        resumeLoading();
        m_showProgressDelay.stop();
        m_progress->hide();
        m_cancelButton->hide();
        return;
    }
    if (showProgressNow) {
        m_showProgressDelay.stop();
        m_progress->setRange(0, 1000);
        m_progress->setValue(0);
        m_progress->show();
        m_cancelButton->show();
        m_cancelButton->setEnabled(true);
    } else if (!m_progress->isVisible()) {
        m_showProgressDelay.start();
    }
}

void DiagnosePage::onProgress(quint64, qint64 done, qint64 total) {
    if (total > 0)
        m_progress->setValue(int(qBound(qint64(0), done * 1000 / total, qint64(1000))));
    else
        m_progress->setRange(0, 0);
}

void DiagnosePage::onFinished(quint64, const Diagnosis &logDiagnosis) {
    // A log from a host: what the probe knows goes into the findings (confirmed folders, served model).
    const Diagnosis diagnosis = m_hostProbe ? mergeHostProbe(logDiagnosis, *m_hostProbe) : logDiagnosis;
    setBusy(false, false);
    const qint64 ms = m_jobClock.elapsed();
    QString previousId;
    if (const Finding *f = m_findingsModel->finding(currentFindingRow()))
        previousId = f->id;
    m_findingsModel->setDiagnosis(diagnosis);
    m_hasResult = true;
    updateCounts();

    if (diagnosis.findings.isEmpty()) {
        m_summaryBanner->showMessage(Banner::Kind::Success,
                                     diagnosis.summary.isEmpty()
                                         ? tr("Nothing to fix: the log shows no MoE config problems.")
                                         : diagnosis.summary);
    } else {
        const Severity worst = diagnosis.worst();
        const Banner::Kind kind = worst == Severity::Error     ? Banner::Kind::Error
                                  : worst == Severity::Warning ? Banner::Kind::Warning
                                                               : Banner::Kind::Success;
        m_summaryBanner->showMessage(kind, diagnosis.summary);
    }
    const int keep = previousId.isEmpty() ? -1 : m_findingsModel->rowOf(previousId);
    selectFinding(keep >= 0 ? keep : 0);
    m_copyDiagnosisAction->setEnabled(true);
    emit statusMessage(tr("Diagnosed %1 lines (%2) in %3 ms")
                           .arg(QLocale().toString(diagnosis.linesRead), humanBytes(diagnosis.bytesRead))
                           .arg(ms),
                       0);
    emit diagnosisFinished();
}

void DiagnosePage::onFailed(quint64, const QString &error) {
    setBusy(false, false);
    showError(error);
    emit statusMessage(tr("Diagnosis failed"), 5000);
}

void DiagnosePage::onCancelled(quint64) {
    setBusy(false, false);
    emit statusMessage(m_hasResult ? tr("Diagnosis cancelled; the findings shown are from the previous run.")
                                   : tr("Diagnosis cancelled. Press Ctrl+Return to run it again."),
                       8000);
}

void DiagnosePage::showError(const QString &text) {
    m_errorBanner->showMessage(Banner::Kind::Error, text);
}

const Diagnosis &DiagnosePage::diagnosis() const {
    return m_findingsModel->diagnosis();
}

bool DiagnosePage::isBusy() const {
    return m_runner->isRunning();
}

QString DiagnosePage::countsText() const {
    QStringList parts;
    for (const QLabel *label : m_countLabels)
        parts.append(label->text());
    return parts.join(u", "_s);
}

QString DiagnosePage::summaryText() const {
    return m_summaryBanner->isHidden() ? QString() : m_summaryBanner->text();
}

QString DiagnosePage::errorText() const {
    return m_errorBanner->isHidden() ? QString() : m_errorBanner->text();
}

void DiagnosePage::updateCounts() {
    const Diagnosis &d = m_findingsModel->diagnosis();
    for (int i = 0; i < 3; ++i) {
        const int n = d.count(severities[i]);
        m_countLabels[i]->setText(QString::number(n) + u' ' +
                                  (severities[i] == Severity::Info ? tr("info")
                                   : severities[i] == Severity::Error
                                       ? (n == 1 ? tr("error") : tr("errors"))
                                       : (n == 1 ? tr("warning") : tr("warnings"))));
        m_countIcons[i]->setEnabled(n > 0);
        m_countLabels[i]->setEnabled(n > 0);
    }
}

void DiagnosePage::updateSourceLabel() {
    QString text;
    if (m_demo)
        text = tr("Demo log: demo-sglang.log");
    else if (!m_filePath.isEmpty())
        text = m_filePath + u"  ("_s + humanBytes(m_fileSize) + u')';
    else if (m_logEdit->document()->isEmpty())
        text = tr("Paste a log, drop a file, or press Ctrl+O");
    else
        text = tr("Pasted text");
    if (!m_hostLabel.isEmpty())
        text = tr("From host %1: %2").arg(m_hostLabel, text);
    m_sourceLabel->setText(text);
    m_sourceLabel->setToolTip(text);
}

int DiagnosePage::currentFindingRow() const {
    const QModelIndex current = m_findingsView->currentIndex();
    return current.isValid() ? current.row() : -1;
}

void DiagnosePage::selectFinding(int row) {
    if (row < 0 || row >= m_findingsModel->rowCount()) {
        m_findingsView->setCurrentIndex({});
        showFinding(-1);
        return;
    }
    const QModelIndex index = m_findingsModel->index(row, 0);
    m_findingsView->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                                 QItemSelectionModel::Rows);
    showFinding(row);
}

void DiagnosePage::showFinding(int row) {
    const Finding *f = m_findingsModel->finding(row);
    m_copyFindingAction->setEnabled(f != nullptr);
    if (!f) {
        m_detailsTitle->setText(tr("Details"));
        m_details->setHtml(m_hasResult
                               ? tr("<p style='color:gray'>Select a finding to see what it means and what "
                                    "to do about it.</p>")
                               : tr("<p style='color:gray'>Paste a server log on the left: its findings "
                                    "appear above, their details here.</p>"));
        m_targetModel->setTarget(std::nullopt);
        m_evidenceModel->setEvidence({});
        m_targetHeader->setText(tr("Tuning target"));
        m_evidenceHeader->setText(tr("Evidence"));
        return;
    }
    const QColor color = SeverityStyle::color(f->severity);
    m_detailsTitle->setText(tr("Details"));
    QString html;
    html +=
        u"<h3 style='margin-top:0; margin-bottom:4px'><span style='color:%1'>%2</span> &nbsp;%3</h3>"_s.arg(
            color.name(), SeverityStyle::label(f->severity).toHtmlEscaped(), f->title.toHtmlEscaped());
    QString seen = tr("Seen %n time(s)", nullptr, f->occurrences);
    if (!f->sources.isEmpty())
        seen += tr(" on %1").arg(compactSources(f->sources));
    html += u"<p style='color:gray; margin-top:0'>"_s + seen.toHtmlEscaped() + u" &middot; rule <code>"_s +
            f->rule.toHtmlEscaped() + u"</code></p>"_s;
    // What to do first: it is what a person came for; the why follows.
    if (!f->advice.isEmpty()) {
        html += u"<table width='100%' cellpadding='8' style='background-color:#eaf3ea; margin-top:2px'>"
                u"<tr><td><b>What to do</b><br>"_s +
                htmlParagraphs(f->advice) + u"</td></tr></table>"_s;
    }
    if (!f->explanation.isEmpty())
        html += u"<p><b>Why</b><br>"_s + htmlParagraphs(f->explanation) + u"</p>"_s;
    m_details->setHtml(html);

    m_targetModel->setTarget(f->target);
    m_targetHeader->setText(f->target ? tr("Tuning target: %1").arg(f->target->shapeSummary())
                                      : tr("Tuning target: none for this finding"));
    m_evidenceModel->setEvidence(f->evidence);
    m_evidenceHeader->setText(f->occurrences > f->evidence.size()
                                  ? tr("Evidence: %1 of %2 lines (click one to show it in the log)")
                                        .arg(f->evidence.size())
                                        .arg(f->occurrences)
                                  : tr("Evidence (click a line to show it in the log)"));
}

bool DiagnosePage::showLogLine(qint64 line, const QString &expectedText) {
    const int blocks = m_logEdit->blockCount();
    if (line < 1)
        return false;
    qint64 target = line;
    // Logical lines can differ from the editor's (joined terminal wraps, CR progress bars): look near
    // the reported line for the matched text before trusting the number.
    const QString needle = expectedText.left(60);
    if (!needle.isEmpty()) {
        auto has = [&](qint64 l) {
            if (l < 1 || l > blocks)
                return false;
            return m_logEdit->document()->findBlockByNumber(int(l - 1)).text().contains(needle);
        };
        if (!has(line)) {
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
    }
    if (target > blocks && isLoading()) {
        emit statusMessage(tr("Line %1 is not in the log view yet: it is still loading.").arg(line), 5000);
        return false;
    }
    if (target > blocks) {
        emit statusMessage(m_preview
                               ? tr("Line %1 is past the preview (first %2 shown); open the file in a pager "
                                    "to read it there.")
                                     .arg(line)
                                     .arg(humanBytes(previewBytes))
                               : tr("Line %1 is not in the log view.").arg(line),
                           8000);
        return false;
    }
    const bool ok = m_logEdit->jumpToLine(target);
    if (ok)
        emit statusMessage(tr("Line %1").arg(target), 3000);
    return ok;
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
    out << quint32(1) << m_mainSplitter->saveState() << m_rightSplitter->saveState()
        << m_detailsSplitter->saveState();
    return state;
}

void DiagnosePage::restoreState(const QByteArray &state) {
    QDataStream in(state);
    quint32 version = 0;
    QByteArray mainState;
    QByteArray rightState;
    QByteArray detailsState;
    in >> version >> mainState >> rightState >> detailsState;
    if (in.status() != QDataStream::Ok || version != 1)
        return;
    m_mainSplitter->restoreState(mainState);
    m_rightSplitter->restoreState(rightState);
    m_detailsSplitter->restoreState(detailsState);
}

} // namespace moetune
