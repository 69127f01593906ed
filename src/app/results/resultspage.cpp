// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/results/resultspage.h"

#include "app/fleet/fleetresultsview.h"
#include "app/results/chosenconfigmodel.h"
#include "app/results/comparemodel.h"
#include "app/results/servingresultsview.h"
#include "ui_resultspage.h"

#include "charts/landscapechart.h"
#include "charts/latencychart.h"
#include "charts/speedupchart.h"
#include "core/report/report.h"
#include "core/report/reporttext.h"
#include "core/run/kernelconfigjson.h"
#include "report/demoworkspace.h"
#include "report/pdfreport.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QSettings>
#include <QStandardPaths>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

using Parameter = KernelConfigJson::Parameter;
constexpr Parameter kParameters[] = {Parameter::BlockM, Parameter::BlockN, Parameter::BlockK,
                                     Parameter::GroupM, Parameter::Warps,  Parameter::Stages};

void fill(QWidget *holder, QWidget *child) {
    auto *layout = new QVBoxLayout(holder);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(child);
}

} // namespace

ResultsPage::ResultsPage(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::ResultsPage>())
    , m_latency(nullptr)
    , m_landscape(nullptr)
    , m_configModel(new ChosenConfigModel(this))
    , m_compareModel(new CompareModel(this)) {
    m_ui->setupUi(this);
    setObjectName(u"resultsPage"_s);
    // Until a workspace is open the page says what to do, never a blank "Run:" alone (issue 45).
    showMessage(emptyText(), false);
    m_latency = new LatencyChart(m_ui->latencyHolder);
    fill(m_ui->latencyHolder, m_latency);
    // The speedup itself, on its own tab: a few percent is invisible on the log-latency chart.
    m_speedup = new SpeedupChart(m_ui->tabs);
    m_ui->tabs->insertTab(1, m_speedup, tr("Speedup"));
    m_landscape = new LandscapeChart(m_ui->landscapeHolder);
    fill(m_ui->landscapeHolder, m_landscape);
    m_ui->configTable->setModel(m_configModel);
    m_ui->configTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ui->configTable->horizontalHeader()->setStretchLastSection(false);
    m_ui->configTable->verticalHeader()->setVisible(false);
    m_ui->compareTable->setModel(m_compareModel);
    m_ui->compareTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ui->compareTable->verticalHeader()->setVisible(false);
    // The chart gets the height (its axis titles and labels are cut below ~260 px); the table scrolls.
    m_serving = new ServingResultsView(this); // a tab while the run has a serving benchmark
    m_serving->hide();
    // Fleet records (issue 46): a tab while the workspace holds one.
    m_fleet = new FleetResultsView(this);
    m_fleet->hide();
    connect(m_fleet, &FleetResultsView::statusMessage, this, &ResultsPage::statusMessage);
    connect(m_fleet, &FleetResultsView::shown, this, [this](bool has) {
        const int tab = m_ui->tabs->indexOf(m_fleet);
        if (has && tab < 0) {
            m_ui->tabs->addTab(m_fleet, tr("Fleet"));
        } else if (!has && tab >= 0) {
            m_ui->tabs->removeTab(tab);
            m_fleet->setParent(this);
            m_fleet->hide();
        }
    });
    m_ui->overviewSplitter->setStretchFactor(0, 1);
    m_ui->overviewSplitter->setStretchFactor(1, 0);
    m_ui->overviewSplitter->setChildrenCollapsible(false);
    m_ui->latencyHolder->setMinimumHeight(260);
    m_ui->configTable->setMinimumHeight(110);
    m_ui->overviewSplitter->setSizes({560, 200});

    m_ui->landscapeX->addItem(tr("rank (fastest first)"), -1);
    for (auto p : kParameters) {
        m_ui->landscapeX->addItem(KernelConfigJson::name(p), int(p));
        m_ui->landscapeColour->addItem(KernelConfigJson::name(p), int(p));
    }
    m_ui->landscapeColour->setCurrentIndex(0);
    m_ui->exportButton->setEnabled(false);
    m_ui->compareOpenButton->setEnabled(false);
    m_ui->pushHostButton->hide(); // shown for runs that name the host they ran on
    connect(m_ui->pushHostButton, &QPushButton::clicked, this, [this] {
        if (const WorkspaceRun *run = currentRun(); run && !run->host.isEmpty())
            Q_EMIT pushRequested(run->host, run->runId);
    });

    connect(m_ui->openButton, &QPushButton::clicked, this, &ResultsPage::chooseOpen);
    connect(m_ui->demoButton, &QPushButton::clicked, this, &ResultsPage::openDemo);
    connect(m_ui->exportButton, &QPushButton::clicked, this, &ResultsPage::chooseExport);
    connect(m_ui->compareOpenButton, &QPushButton::clicked, this, &ResultsPage::chooseCompareFile);
    connect(m_ui->runCombo, &QComboBox::activated, this,
            [this](int index) { showRun(m_ui->runCombo->itemData(index).toString()); });
    for (QComboBox *box : {m_ui->landscapeBatch, m_ui->landscapeOp, m_ui->landscapeX, m_ui->landscapeColour})
        connect(box, &QComboBox::activated, this, &ResultsPage::refreshLandscape);
    connect(m_ui->compareSource, &QComboBox::activated, this, &ResultsPage::refreshCompare);
}

ResultsPage::~ResultsPage() {
    // The workers only read files; let them end before the watchers they report to go away.
    const auto watchers = findChildren<QFutureWatcher<Loaded> *>();
    for (auto *w : watchers)
        w->waitForFinished();
}

bool ResultsPage::isLoading() const {
    return m_pending > 0;
}

QString ResultsPage::emptyText() {
    return tr("No runs yet: tune one on the Tune page (its results appear here when it finishes), or click "
              "Demo to see a recorded sweep.");
}

QString ResultsPage::message() const {
    return m_ui->messageLabel->text();
}

const WorkspaceRun *ResultsPage::currentRun() const {
    return m_workspace && m_run >= 0 && m_run < m_workspace->runs().size() ? &m_workspace->runs().at(m_run)
                                                                           : nullptr;
}

void ResultsPage::showFleetRecords(const QString &workspacePath) {
    m_fleet->setWorkspace(workspacePath);
}

void ResultsPage::showMessage(const QString &text, bool error) {
    m_ui->messageLabel->setStyleSheet(error ? u"QLabel { color: #c0392b; }"_s : QString());
    m_ui->messageLabel->setText(text);
}

void ResultsPage::openInitial() {
    const QString last = QSettings().value(u"results/workspace"_s).toString();
    // The user's own runs before the demo: the workspace the Tune page keeps followed runs in, once it
    // holds one (the newest run is shown first).
    const QString mine = Workspace::defaultLocation();
    if (!last.isEmpty() && QFileInfo::exists(last))
        openWorkspace(last);
    else if (QFileInfo::exists(QDir(mine).filePath(u"workspace.json"_s)) &&
             !QDir(mine).entryList(QDir::Dirs | QDir::NoDotAndDotDot).isEmpty())
        openWorkspace(mine);
    else
        openDemo();
}

void ResultsPage::openDemo() {
    openWorkspace(DemoWorkspace::path());
}

void ResultsPage::openWorkspace(const QString &path) {
    const int job = ++m_job;
    showMessage(tr("Reading %1 ...").arg(QDir::toNativeSeparators(path)), false);
    // Big workspaces take a moment to parse: off the GUI thread, one watcher per open, newest wins.
    auto *watcher = new QFutureWatcher<Loaded>(this);
    ++m_pending;
    connect(watcher, &QFutureWatcher<Loaded>::finished, this, [this, watcher] {
        --m_pending;
        watcher->deleteLater();
        loaded(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run([job, path] {
        Loaded l;
        l.job = job;
        l.path = path;
        l.workspace = Workspace::open(path, &l.error);
        return l;
    }));
}

void ResultsPage::loaded(Loaded l) {
    if (l.job != m_job)
        return; // an older open finished after a newer one started
    if (!l.workspace) {
        showMessage(l.error, true);
        Q_EMIT openFailed(l.error);
        return;
    }
    m_workspace = std::move(l.workspace);
    m_fleet->setWorkspace(l.path);
    const bool demo = l.path == DemoWorkspace::path();
    if (!demo)
        QSettings().setValue(u"results/workspace"_s, l.path);
    else
        QSettings().remove(u"results/workspace"_s);
    m_ui->runCombo->clear();
    for (const auto &run : m_workspace->runs())
        m_ui->runCombo->addItem((run.result.simulated ? u"[SIMULATED] "_s : QString()) + run.displayTitle() +
                                    u"  (" + run.runId + u')',
                                run.runId);
    QStringList notes = m_workspace->warnings();
    QString text = demo ? tr("Demo workspace: a real sweep recorded on one NVIDIA H200 (remote_agent/bench).")
                        : tr("Workspace %1: %n run(s).", nullptr, int(m_workspace->runs().size()))
                              .arg(QDir::toNativeSeparators(m_workspace->path()));
    if (!demo && m_workspace->runs().isEmpty())
        text += u' ' + emptyText();
    if (!notes.isEmpty())
        text += u' ' + tr("Not read: %1").arg(notes.join(u"; "_s));
    showMessage(text, !notes.isEmpty());
    // The demo opens on its headline run (tuned vs SGLang's built-in defaults, 18 sizes); else the newest.
    m_run = -1;
    const QString headline = DemoWorkspace::headlineRun();
    if (!m_workspace->runs().isEmpty())
        showRun(demo && m_workspace->run(headline) ? headline : m_workspace->runs().first().runId);
    Q_EMIT workspaceShown(l.path);
}

void ResultsPage::showRun(const QString &runId) {
    if (!m_workspace)
        return;
    int index = -1;
    for (int i = 0; i < m_workspace->runs().size(); ++i)
        if (m_workspace->runs().at(i).runId == runId)
            index = i;
    if (index < 0)
        return;
    m_run = index;
    m_ui->runCombo->setCurrentIndex(m_ui->runCombo->findData(runId));
    const WorkspaceRun &run = m_workspace->runs().at(index);
    const SweepResult &r = run.result;
    m_ui->simulatedBanner->setVisible(r.simulated);
    m_latency->setResult(r);
    m_speedup->setResult(r);
    m_configModel->setResult(r);
    m_ui->exportButton->setEnabled(true);
    m_ui->compareOpenButton->setEnabled(true);
    // The demo (a resource folder) ran on a lent machine that is not one of the user's hosts.
    m_ui->pushHostButton->setVisible(!run.host.isEmpty() && !m_workspace->path().startsWith(u':'));

    m_ui->landscapeOp->clear();
    for (auto op : r.ops)
        m_ui->landscapeOp->addItem(sweepOpName(op), int(op));
    m_ui->landscapeBatch->clear();
    int bestIndex = 0;
    double bestSpeedup = 0;
    for (const auto &b : r.perBatch) {
        m_ui->landscapeBatch->addItem(u"M=%1"_s.arg(b.m), b.m);
        if (known(b.speedup) && b.speedup > bestSpeedup) {
            bestSpeedup = b.speedup;
            bestIndex = m_ui->landscapeBatch->count() - 1;
        }
    }
    m_ui->landscapeBatch->setCurrentIndex(bestIndex);
    refreshLandscape();

    const int servingTab = m_ui->tabs->indexOf(m_serving);
    if (m_serving->setRun(run) && servingTab < 0)
        m_ui->tabs->addTab(m_serving, tr("Serving before/after"));
    else if (!run.serving && servingTab >= 0) {
        m_ui->tabs->removeTab(servingTab);
        m_serving->setParent(this);
        m_serving->hide();
    }
    const Report report = Report::fromRun(run);
    m_ui->runDetails->setMarkdown(ReportText::toMarkdown(report));
    rebuildCompareSources();
}

void ResultsPage::refreshLandscape() {
    const WorkspaceRun *run = currentRun();
    if (!run || m_ui->landscapeBatch->count() == 0)
        return;
    const int m = m_ui->landscapeBatch->currentData().toInt();
    const auto op = SweepOp(m_ui->landscapeOp->currentData().toInt());
    const auto points = run->result.landscape(op, m);
    m_landscape->setColorBy(Parameter(m_ui->landscapeColour->currentData().toInt()));
    const int x = m_ui->landscapeX->currentData().toInt();
    m_landscape->setXMode(x < 0 ? LandscapeChart::XMode::Rank : LandscapeChart::XMode::Parameter,
                          x < 0 ? Parameter::BlockN : Parameter(x));
    m_landscape->setPoints(points, tr("Every config timed at M=%1 (%2)").arg(m).arg(sweepOpName(op)),
                           run->result.simulated);
}

void ResultsPage::rebuildCompareSources() {
    m_sources.clear();
    const WorkspaceRun *run = currentRun();
    if (!run)
        return;
    // Config files fetched from the host with the run (the file a push would replace, an older
    // triton_X_Y_Z folder's file) live under host-files/ in the run folder.
    QDirIterator it(run->dir + u"/host-files"_s, {u"*.json"_s}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile f(path);
        QString why;
        if (!f.open(QIODevice::ReadOnly))
            continue;
        if (auto file = ConfigFile::parse(f.readAll(), &why))
            m_sources.append(CompareSource{
                tr("On the host: %1").arg(QDir(run->dir + u"/host-files"_s).relativeFilePath(path)), *file,
                path.endsWith(u"_down.json"_s)});
    }
    for (const auto &other : m_workspace->runs()) {
        if (other.runId == run->runId)
            continue;
        bool listed = false;
        for (const auto &f : other.result.files)
            if (!f.config.entries.isEmpty()) {
                m_sources.append(CompareSource{tr("Run %1: %2").arg(other.runId, f.fileName), f.config,
                                               f.kind == "sglang_down"_L1});
                listed = true;
            }
        if (listed)
            continue;
        // A run whose files were not kept (followed from its events, cancelled): its winners are its file.
        for (const SweepOp op : other.result.ops) {
            ConfigFile file;
            for (const SweepEntry &w : other.result.winners)
                if (w.op == op)
                    file.entries.insert(w.m, w.config);
            if (!file.entries.isEmpty())
                m_sources.append(
                    CompareSource{op == SweepOp::Both // one file for both GEMMs: no op to name
                                      ? tr("Run %1: its winners").arg(other.runId)
                                      : tr("Run %1: its %2 winners").arg(other.runId, sweepOpName(op)),
                                  file, op == SweepOp::Down});
        }
    }
    m_sources += m_localSources;
    m_ui->compareSource->clear();
    for (const auto &s : std::as_const(m_sources))
        m_ui->compareSource->addItem(s.label);
    if (m_sources.isEmpty())
        m_ui->compareSource->addItem(tr("No other config file yet: open one"));
    refreshCompare();
}

void ResultsPage::refreshCompare() {
    const WorkspaceRun *run = currentRun();
    const int i = m_ui->compareSource->currentIndex();
    if (!run || i < 0 || i >= m_sources.size()) {
        m_compareModel->clear();
        m_ui->compareSummary->setText(
            tr("Compare this run's configs with a config file: the one on the host it "
               "would replace, another run's, or a file on this machine."));
        return;
    }
    const CompareSource &source = m_sources.at(i);
    const SweepResult &r = run->result;
    SweepOp op = r.ops.value(0, SweepOp::Both);
    if (r.ops.size() > 1)
        op = source.down ? SweepOp::Down : SweepOp::Up;
    QList<SweepResult> measuredIn{r};
    for (const auto &other : m_workspace->runs())
        if (other.runId != run->runId)
            measuredIn.append(other.result);
    m_compareModel->setComparison(r, op, source.file, source.label, measuredIn);
    m_ui->compareSummary->setText(
        tr("%1 of %2 batch sizes differ; the other file's config was timed at %3 of them.")
            .arg(m_compareModel->differingRows())
            .arg(m_compareModel->rowCount())
            .arg(m_compareModel->measuredOtherRows()) +
        (m_compareModel->isSimulated() ? tr(" SIMULATED numbers.") : QString()));
}

bool ResultsPage::compareWithFile(const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        showMessage(tr("Could not read %1: %2").arg(QDir::toNativeSeparators(path), f.errorString()), true);
        return false;
    }
    QString why;
    const auto file = ConfigFile::parse(f.readAll(), &why);
    if (!file) {
        showMessage(tr("%1 is not a MoE config file: %2").arg(QDir::toNativeSeparators(path), why), true);
        return false;
    }
    m_localSources.append(CompareSource{tr("This machine: %1").arg(QDir::toNativeSeparators(path)), *file,
                                        path.endsWith(u"_down.json"_s)});
    rebuildCompareSources();
    m_ui->compareSource->setCurrentIndex(int(m_sources.size()) - 1);
    refreshCompare();
    m_ui->tabs->setCurrentWidget(m_ui->compareTab);
    return true;
}

QString ResultsPage::exportReport(const QString &path) {
    const WorkspaceRun *run = currentRun();
    if (!run) {
        showMessage(tr("Open a workspace or run first."), true);
        return {};
    }
    // The name the user chose is the name written; a simulated report says SIMULATED on every page.
    QElapsedTimer timer;
    timer.start();
    QString error;
    // What the folder holds now (a push, a proof, the run's end may have landed since it was read).
    std::optional<WorkspaceRun> fresh;
    if (!run->dir.isEmpty() && !run->dir.startsWith(u':'))
        fresh = WorkspaceRun::open(run->dir);
    if (!PdfReport::write(fresh ? *fresh : *run, path, &error)) {
        showMessage(error, true);
        return {};
    }
    showMessage(run->result.simulated
                    ? tr("Wrote %1 (%2 ms): a SIMULATED run's report, marked SIMULATED on every page.")
                          .arg(QDir::toNativeSeparators(path))
                          .arg(timer.elapsed())
                    : tr("Wrote %1 (%2 ms).").arg(QDir::toNativeSeparators(path)).arg(timer.elapsed()),
                false);
    Q_EMIT statusMessage(tr("Report written: %1").arg(QDir::toNativeSeparators(path)), 5000);
    return path;
}

void ResultsPage::chooseExport() {
    const WorkspaceRun *run = currentRun();
    if (!run)
        return;
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Report"), QDir(dir).filePath(PdfReport::suggestedFileName(*run)), tr("PDF (*.pdf)"));
    if (!path.isEmpty())
        exportReport(path);
}

void ResultsPage::chooseOpen() {
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Open Workspace or Run Folder"), m_workspace ? m_workspace->path() : QDir::homePath());
    if (!dir.isEmpty())
        openWorkspace(dir);
}

void ResultsPage::chooseCompareFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Config File"), QDir::homePath(),
                                                      tr("MoE config files (*.json)"));
    if (!path.isEmpty())
        compareWithFile(path);
}

} // namespace moetune
