// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/mainwindow.h"

#include "app/diagnose/diagnosepage.h"
#include "app/fleet/fleetpage.h"
#include "app/hosts/hosticons.h"
#include "app/hosts/hostspage.h"
#include "app/results/resultspage.h"
#include "app/tune/tunepage.h"
#include "app/widgets/appresources.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"

#include "core/diagnosis/diagnosis.h"
#include "core/host/tunejob.h"
#include "core/job/tuningtarget.h"

#include "core/util/version.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QJsonDocument>
#include <QListWidget>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>

#include <memory>

using namespace Qt::StringLiterals;

namespace moetune {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_navigation(new QListWidget(this))
    , m_stack(new QStackedWidget(this))
    , m_hosts(new HostRegistry(this))
    , m_diagnosePage(nullptr)
    , m_hostsPage(nullptr)
    , m_tunePage(nullptr) {
    ensureAppResources();
    setObjectName(u"mainWindow"_s);
    setWindowTitle(u"moetune"_s);
    setWindowIcon(QIcon(u":/moetune/icons/moetune.svg"_s));

    auto *central = new QWidget(this);
    auto *layout = new QHBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);

    m_navigation->setObjectName(u"navigation"_s);
    m_navigation->setViewMode(QListView::IconMode);
    m_navigation->setFlow(QListView::TopToBottom);
    m_navigation->setMovement(QListView::Static);
    m_navigation->setIconSize(QSize(32, 32));
    m_navigation->setGridSize(QSize(92, 72));
    m_navigation->setFixedWidth(96);
    m_navigation->setSpacing(0);
    m_navigation->setFrameShape(QFrame::NoFrame);
    m_navigation->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_navigation->setStyleSheet(
        u"QListWidget#navigation { background: palette(window); border-right: 1px solid palette(mid); }"
        u"QListWidget#navigation::item { border-radius: 6px; padding: 4px; }"
        u"QListWidget#navigation::item:selected { background: palette(highlight); color: palette(highlighted-text); }"_s);
    connect(m_navigation, &QListWidget::currentRowChanged, m_stack, &QStackedWidget::setCurrentIndex);
    // A page's status line ("Diagnosed 13 lines") belongs to that page: another page starts clear.
    connect(m_navigation, &QListWidget::currentRowChanged, this, [this] { statusBar()->clearMessage(); });
    // A click on a page's icon hands the keyboard to the page (its shortcuts, Ctrl+F, work at once);
    // the arrow keys in the sidebar still move between pages.
    connect(m_navigation, &QListWidget::itemClicked, this, [this] {
        if (QWidget *page = m_stack->currentWidget())
            page->setFocus(Qt::MouseFocusReason);
    });
    layout->addWidget(m_navigation);
    layout->addWidget(m_stack, 1);
    setCentralWidget(central);

    m_diagnosePage = new DiagnosePage(this);
    addPage(m_diagnosePage, QIcon(u":/moetune/icons/page-diagnose.svg"_s), tr("Diagnose"));
    connect(m_diagnosePage, &DiagnosePage::fileOpened, this, &MainWindow::addRecentFile);
    connect(m_diagnosePage, &DiagnosePage::statusMessage, statusBar(), &QStatusBar::showMessage);

    m_hostsPage = new HostsPage(m_hosts, this);
    m_hostsPage->setDiagnoser([this] { return m_diagnosePage->diagnoser(); }); // the same rules
    addPage(m_hostsPage, HostIcons::page(), tr("Hosts"));

    // Hosts -> Diagnose: a fetched log, and a followed one, are diagnosed with the host's facts.
    connect(m_hostsPage, &HostsPage::logFetched, this,
            [this](const QString &alias, const QString &path, const HostProbe &probe) {
                // A failure shows inline on the Diagnose page, which is where the user is sent. Diagnose
                // host brings the flow's diagnosis (fetch + probe + diagnosis + merge, below both shells).
                if (const auto &d = m_hostsPage->fetchedDiagnosis())
                    m_diagnosePage->openHostDiagnosis(path, alias, m_hosts->displayName(alias), probe, *d);
                else
                    m_diagnosePage->openFetchedLog(path, alias, m_hosts->displayName(alias), probe);
                showDiagnosePage();
                // The next start reopens this host's log, not the demo.
                QSettings settings;
                settings.setValue(u"diagnose/lastHostLog"_s, path);
                settings.setValue(u"diagnose/lastHostAlias"_s, alias);
                settings.setValue(u"diagnose/lastHostProbe"_s,
                                  QJsonDocument(probe.raw).toJson(QJsonDocument::Compact));
                if (m_tuneServedAfterDiagnosis == alias) { // "Tune the Served Model" asked for this
                    m_tuneServedAfterDiagnosis.clear();
                    if (m_hostsPage->fetchedDiagnosis())
                        tuneServedModel(alias, true);
                }
            });
    connect(m_hostsPage, &HostsPage::followStarted, this, [this](const QString &alias) {
        const HostSession *c = m_hosts->connection(alias);
        m_diagnosePage->beginFollow(alias, m_hosts->displayName(alias),
                                    c ? c->lastProbe() : std::optional<HostProbe>());
        showDiagnosePage();
    });
    connect(m_hostsPage, &HostsPage::followLines, m_diagnosePage, &DiagnosePage::appendFollowedLines);
    connect(m_hostsPage, &HostsPage::followStopped, m_diagnosePage, &DiagnosePage::endFollow);
    connect(m_hostsPage, &HostsPage::hostProbed, m_diagnosePage, &DiagnosePage::updateHostProbe);
    connect(m_diagnosePage, &DiagnosePage::stopFollowRequested, m_hostsPage, [this](const QString &alias) {
        if (m_hostsPage->followingAlias() == alias)
            m_hostsPage->stopFollowing();
    });
    // The Tune page works on the registry's connections (the Hosts page asks for keys and secrets).
    m_tunePage = new TunePage(m_hosts, this);
    m_tunePage->setObjectName(u"tunePage"_s);
    addPage(m_tunePage, QIcon(u":/moetune/icons/page-tune.svg"_s), tr("Tune"));
    connect(m_tunePage, &TunePage::statusMessage, statusBar(), &QStatusBar::showMessage);
    // Diagnose -> Tune: "Tune this" on a target, on the host the diagnosed log came from.
    connect(m_diagnosePage, &DiagnosePage::tuneRequested, this, &MainWindow::tuneTarget);
    // Diagnose -> Tune: "Check headroom" opens the Tune page on the target and runs the check there.
    connect(m_diagnosePage, &DiagnosePage::headroomRequested, this,
            [this](const QString &hostAlias, const TuningTarget &target) {
                if (hostAlias.isEmpty())
                    return askTuneHost(target, true);
                tuneTarget(hostAlias, target);
                m_tunePage->checkHeadroom();
            });
    // Hosts -> Tune: "Tune the served model" with the job the probe implies.
    // The same job as "Tune This..." on that host's diagnosis (core/host/tunejob.h): the log decides the
    // files (up and _down), their device name and folder, so a host not diagnosed yet is diagnosed first.
    connect(m_hostsPage, &HostsPage::tuneSpecRequested, this,
            [this](const QString &alias, const TuneSpec &) { tuneServedModel(alias, false); });

    auto *resultsPage = new ResultsPage(this);
    addPage(resultsPage, style()->standardIcon(QStyle::SP_FileDialogDetailedView), tr("Results"));
    connect(resultsPage, &ResultsPage::statusMessage, statusBar(), &QStatusBar::showMessage);
    // Tune -> Results: the run kept in the local workspace, shown once the workspace is read.
    connect(m_tunePage, &TunePage::showResultsRequested, this,
            [this, resultsPage](const QString &workspace, const QString &runId) {
                auto once = std::make_shared<QMetaObject::Connection>();
                *once = connect(resultsPage, &ResultsPage::workspaceShown, this, [resultsPage, runId, once] {
                    QObject::disconnect(*once);
                    resultsPage->showRun(runId);
                });
                resultsPage->openWorkspace(workspace);
                setCurrentPage(m_stack->indexOf(resultsPage));
            });
    // Tune -> Results: the newest run of the session (begun, ended, pushed, proved) is what Results shows,
    // read again from its folder, without leaving the page the user is on.
    connect(m_tunePage, &TunePage::keptRunChanged, this,
            [this, resultsPage](const QString &workspace, const QString &runId) {
                auto once = std::make_shared<QMetaObject::Connection>();
                *once = connect(resultsPage, &ResultsPage::workspaceShown, this, [resultsPage, runId, once] {
                    QObject::disconnect(*once);
                    resultsPage->showRun(runId);
                });
                resultsPage->openWorkspace(workspace);
            });
    // Results -> Tune: push a kept run from the host it ran on (run.json names the host as shown).
    connect(resultsPage, &ResultsPage::pushRequested, this,
            [this](const QString &host, const QString &runId) {
                QString alias;
                for (const HostConfig &h : QList<HostConfig>{m_hosts->localHost()} + m_hosts->hosts())
                    if (h.alias == host || m_hosts->displayName(h.alias) == host)
                        alias = h.alias;
                if (alias.isEmpty()) {
                    statusBar()->showMessage(
                        tr("Run %1 ran on \"%2\", which is not one of your hosts: add it on the "
                           "Hosts page to push from here.")
                            .arg(runId, host),
                        0);
                    return;
                }
                m_tunePage->openRun(alias, runId);
                setCurrentPage(m_stack->indexOf(m_tunePage));
            });

    // Fleet (issue 46): several hosts selected on the Hosts page -> Diagnose All there -> diagnosed here
    // at once over the registry's sessions; Results shows the newest fleet record.
    auto *fleetPage = new FleetPage(m_hosts, this);
    fleetPage->setDiagnoser([this] { return m_diagnosePage->diagnoser(); }); // the same rules
    addPage(fleetPage, FleetPage::icon(), tr("Fleet"));
    connect(fleetPage, &FleetPage::statusMessage, statusBar(), &QStatusBar::showMessage);
    connect(m_hostsPage, &HostsPage::fleetDiagnoseRequested, this,
            [this, fleetPage](const QStringList &aliases) {
                setCurrentPage(m_stack->indexOf(fleetPage));
                fleetPage->diagnoseRegistryHosts(aliases);
            });
    connect(fleetPage, &FleetPage::recordSaved, resultsPage, &ResultsPage::showFleetRecords);

    createMenus();
    // The declared minimum: every page shows its key facts whole down to this size.
    setMinimumSize(minimumWindowSize);
    statusBar()->showMessage(tr("Ready"), 2000);
    restoreSettings();
}

MainWindow::~MainWindow() = default;

int MainWindow::addPage(QWidget *page, const QIcon &icon, const QString &title) {
    auto *item = new QListWidgetItem(icon, title);
    item->setTextAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    item->setSizeHint(QSize(92, 72));
    m_navigation->addItem(item);
    const int index = m_stack->addWidget(page);
    if (m_navigation->currentRow() < 0)
        m_navigation->setCurrentRow(0);
    updatePageShortcuts();
    return index;
}

QWidget *MainWindow::page(int index) const {
    return m_stack->widget(index);
}

void MainWindow::updatePageShortcuts() {
    // Ctrl+1..9 show the pages in navigation order.
    qDeleteAll(m_pageShortcuts);
    m_pageShortcuts.clear();
    for (int i = 0; i < m_stack->count() && i < 9; ++i) {
        auto *action = new QAction(this);
        action->setObjectName(u"pageShortcut%1"_s.arg(i + 1));
        action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
        action->setShortcutContext(Qt::WindowShortcut);
        connect(action, &QAction::triggered, this, [this, i] { setCurrentPage(i); });
        addAction(action);
        m_pageShortcuts.append(action);
        if (QListWidgetItem *item = m_navigation->item(i))
            item->setToolTip(tr("%1 (Ctrl+%2)").arg(item->text()).arg(i + 1));
    }
}

void MainWindow::showDiagnosePage() {
    setCurrentPage(m_stack->indexOf(m_diagnosePage));
}

void MainWindow::tuneTarget(const QString &hostAlias, const TuningTarget &target) {
    // The Tune page opens on the target, the host its log came from and the diagnosis (the proof's
    // "before"); a pasted log has no host: the user says which one (the last one used may be another
    // machine altogether).
    if (hostAlias.isEmpty()) {
        askTuneHost(target);
        return;
    }
    m_tunePage->tuneTarget(hostAlias, target, m_diagnosePage->diagnosis());
    setCurrentPage(m_stack->indexOf(m_tunePage));
}

void MainWindow::tuneServedModel(const QString &alias, bool diagnosed) {
    m_tuneServedAfterDiagnosis.clear();
    const HostSession *c = m_hosts->connection(alias);
    const HostProbe *probe = c && c->lastProbe() ? &*c->lastProbe() : nullptr;
    const Diagnosis &d = m_diagnosePage->diagnosis();
    const auto host = m_hosts->host(alias);
    const bool hasLog = host && host->logSource.kind != LogSource::Kind::None;
    if (d.host != alias && !diagnosed && hasLog) { // no log to read: the probe's job, said on the Tune page
        m_tuneServedAfterDiagnosis = alias;
        if (m_hostsPage->currentAlias() == alias)
            m_hostsPage->diagnoseHost();
        else
            m_tuneServedAfterDiagnosis.clear();
        if (!m_tuneServedAfterDiagnosis.isEmpty()) {
            statusBar()->showMessage(
                tr("Diagnosing %1's log first: it names the files the server wants (up and _down) and where.")
                    .arg(m_hosts->displayName(alias)));
            return;
        }
    }
    if (d.host == alias)
        if (const auto target = servedTarget(d, probe)) {
            tuneTarget(alias, *target);
            return;
        }
    // The log names no file of the served shape: the probe's job, with the host GPU's device name.
    const TuneJob job = buildTuneJob(d.host == alias ? &d : nullptr, probe);
    if (!job.valid())
        return;
    m_tunePage->tuneSpec(alias, job.spec);
    setCurrentPage(m_stack->indexOf(m_tunePage));
}

void MainWindow::askTuneHost(const TuningTarget &target, bool thenHeadroom) {
    QStringList names;
    QStringList aliases;
    for (const HostConfig &h : QList<HostConfig>{m_hosts->localHost()} + m_hosts->hosts()) {
        names.append(m_hosts->displayName(h.alias));
        aliases.append(h.alias);
    }
    const QString none = tr("None yet (fill the job; choose the host on the Tune page)");
    names.append(none);
    aliases.append(QString());
    auto *dialog = new QInputDialog(this);
    dialog->setObjectName(u"tuneHostDialog"_s);
    dialog->setWindowTitle(tr("Tune on Which Host?"));
    dialog->setLabelText(tr("This log came from no host moetune knows (it was pasted or opened from a "
                            "file). Which host should tune %1?")
                             .arg(target.shapeSummary()));
    dialog->setComboBoxItems(names);
    dialog->setComboBoxEditable(false);
    dialog->setTextValue(none);
    dialog->setOkButtonText(tr("Fill the Job"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QInputDialog::textValueSelected, this,
            [this, target, names, aliases, thenHeadroom](const QString &v) {
                const qsizetype i = names.indexOf(v);
                const QString alias = i >= 0 ? aliases.at(i) : QString();
                m_tunePage->tuneTarget(alias, target, m_diagnosePage->diagnosis(), false);
                setCurrentPage(m_stack->indexOf(m_tunePage));
                if (thenHeadroom && !alias.isEmpty())
                    m_tunePage->checkHeadroom();
            });
    dialog->open();
}

void MainWindow::setCurrentPage(int index) {
    m_navigation->setCurrentRow(index);
}

int MainWindow::currentPage() const {
    return m_stack->currentIndex();
}

int MainWindow::pageCount() const {
    return m_stack->count();
}

void MainWindow::createMenus() {
    m_fileMenu = menuBar()->addMenu(tr("&File"));
    QAction *open = m_fileMenu->addAction(tr("&Open Log..."), this, &MainWindow::openLogDialog);
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = m_fileMenu->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    rebuildRecentMenu();
    QAction *demo = m_fileMenu->addAction(tr("Open &Demo Log"), m_diagnosePage, &DiagnosePage::loadDemo);
    demo->setToolTip(tr("The bundled SGLang startup log, to see what moetune finds"));
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_diagnosePage->diagnoseAction());
    m_fileMenu->addSeparator();
    QAction *quit = m_fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    m_editMenu = menuBar()->addMenu(tr("&Edit"));
    m_editMenu->addAction(m_diagnosePage->undoAction());
    m_editMenu->addSeparator();
    m_editMenu->addAction(m_diagnosePage->copyFindingAction());
    m_editMenu->addAction(m_diagnosePage->copyDiagnosisAction());
    m_editMenu->addSeparator();
    m_editMenu->addAction(m_diagnosePage->findAction());
    m_editMenu->addAction(m_diagnosePage->nextFindingAction());
    m_editMenu->addAction(m_diagnosePage->previousFindingAction());
    m_editMenu->addSeparator();
    m_editMenu->addAction(tr("C&lear Log"), m_diagnosePage, &DiagnosePage::clearLog);

    m_helpMenu = menuBar()->addMenu(tr("&Help"));
    m_helpMenu->addAction(tr("&About moetune"), this, &MainWindow::showAbout);
    m_helpMenu->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    const QStringList files = recentFiles();
    for (int i = 0; i < files.size(); ++i) {
        const QString &path = files.at(i);
        const QString label = u"&%1 %2"_s.arg(i + 1).arg(QFileInfo(path).fileName());
        QAction *action = m_recentMenu->addAction(label, this, [this, path] {
            showDiagnosePage();
            m_diagnosePage->openFile(path);
        });
        action->setToolTip(path);
        action->setStatusTip(path);
    }
    if (files.isEmpty()) {
        m_recentMenu->addAction(tr("No recent logs"))->setEnabled(false);
        return;
    }
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("Clear Menu"), this, [this] {
        QSettings().remove(u"recentFiles"_s);
        rebuildRecentMenu();
    });
}

QStringList MainWindow::recentFiles() const {
    return QSettings().value(u"recentFiles"_s).toStringList();
}

void MainWindow::addRecentFile(const QString &path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList files = recentFiles();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > maxRecentFiles)
        files.removeLast();
    QSettings().setValue(u"recentFiles"_s, files);
    rebuildRecentMenu();
}

void MainWindow::openLogDialog() {
    const QStringList recent = recentFiles();
    const QString dir = recent.isEmpty() ? QDir::homePath() : QFileInfo(recent.first()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Server Log"), dir,
                                                      tr("Logs (*.log *.txt *.out *.err);;All files (*)"));
    if (path.isEmpty())
        return;
    showDiagnosePage();
    m_diagnosePage->openFile(path);
}

void MainWindow::openInitial(const QString &logPath) {
    // The Results page shows its last workspace, or on first start the demo workspace beside the demo log.
    if (auto *results = findChild<ResultsPage *>())
        results->openInitial();
    // Runs moetune was following when it closed: the Tune page offers to follow them again.
    if (const int n = m_tunePage->offerUnfinishedRuns(); n > 0)
        statusBar()->showMessage(tr("%1 - see the Tune page.").arg(m_tunePage->unfinishedRunsText()), 0);
    if (!logPath.isEmpty() && m_diagnosePage->openFile(logPath))
        return;
    // The last host's log this app diagnosed, with that host's facts, while the host is still known.
    const QSettings settings;
    const QString lastLog = settings.value(u"diagnose/lastHostLog"_s).toString();
    const QString lastAlias = settings.value(u"diagnose/lastHostAlias"_s).toString();
    if (logPath.isEmpty() && !lastLog.isEmpty() && QFileInfo(lastLog).isFile() && m_hosts->host(lastAlias)) {
        const auto probe = HostProbe::fromJson(
            QJsonDocument::fromJson(settings.value(u"diagnose/lastHostProbe"_s).toByteArray()).object());
        if (m_diagnosePage->openFetchedLog(lastLog, lastAlias, m_hosts->displayName(lastAlias),
                                           probe.value_or(HostProbe{}))) {
            statusBar()->showMessage(
                tr("Reopened %1's log as fetched on %2 (Diagnose Host on the Hosts page fetches it anew).")
                    .arg(m_hosts->displayName(lastAlias),
                         QLocale().toString(QFileInfo(lastLog).lastModified(), QLocale::ShortFormat)));
            return;
        }
    }
    // Nothing else to show: the demo tells a first-time user what the app does.
    if (logPath.isEmpty())
        m_diagnosePage->loadDemo();
}

void MainWindow::restoreSettings() {
    QSettings settings;
    if (!restoreGeometry(settings.value(u"window/geometry"_s).toByteArray()))
        resize(1440, 900);
    restoreState(settings.value(u"window/state"_s).toByteArray());
    m_diagnosePage->restoreState(settings.value(u"diagnose/layout"_s).toByteArray());
}

void MainWindow::saveSettings() const {
    QSettings settings;
    settings.setValue(u"window/geometry"_s, saveGeometry());
    settings.setValue(u"window/state"_s, saveState());
    settings.setValue(u"diagnose/layout"_s, m_diagnosePage->saveState());
}

void MainWindow::closeEvent(QCloseEvent *event) {
    // Quitting does not stop a followed run (it is detached on its host): say so, and ask once.
    if (m_tunePage->isFollowing() && !m_quitConfirmed) {
        event->ignore();
        if (findChild<QMessageBox *>(u"quitWhileFollowing"_s))
            return;
        auto *box = new QMessageBox(
            QMessageBox::Question, tr("Quit moetune"),
            tr("Run %1 goes on on %2 after moetune quits.")
                .arg(m_tunePage->followedRun(), m_tunePage->hostAlias().isEmpty()
                                                    ? tr("its host")
                                                    : m_hosts->displayName(m_tunePage->hostAlias())),
            QMessageBox::NoButton, this);
        box->setObjectName(u"quitWhileFollowing"_s);
        box->setInformativeText(tr("Its events are kept with the run on the host. When moetune opens again, "
                                   "the Tune page offers to follow it; Results shows it once followed to "
                                   "its end."));
        QPushButton *quit = box->addButton(tr("Quit"), QMessageBox::AcceptRole);
        quit->setObjectName(u"confirmQuitButton"_s);
        QPushButton *stay = box->addButton(tr("Keep Following"), QMessageBox::RejectRole);
        stay->setObjectName(u"keepFollowingButton"_s);
        box->setDefaultButton(stay);
        box->setAttribute(Qt::WA_DeleteOnClose);
        connect(box, &QMessageBox::buttonClicked, this, [this, quit](QAbstractButton *clicked) {
            if (clicked != quit)
                return;
            m_quitConfirmed = true;
            QTimer::singleShot(0, this, &QWidget::close);
        });
        box->open();
        return;
    }
    saveSettings();
    m_diagnosePage->cancelDiagnosis();
    event->accept();
}

void MainWindow::showAbout() {
    QMessageBox::about(
        this, tr("About moetune"),
        tr("<h3>moetune %1</h3>"
           "<p>Diagnoses and tunes the fused-MoE Triton kernel configs of LLM inference servers "
           "(SGLang, vLLM).</p>"
           "<p>Paste a server log to see which tuned configs are missing, where they belong, and "
           "how to create them.</p>")
            .arg(versionString()));
}

} // namespace moetune
