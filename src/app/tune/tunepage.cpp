// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunepage.h"

#include "app/tune/agentsentence.h"
#include "app/tune/headroombox.h"
#include "app/tune/servingbenchbox.h"
#include "app/tune/tunejobform.h"
#include "app/tune/tuneliveview.h"
#include "app/tune/tunepushpanel.h"
#include "app/tune/tunerunfolder.h"
#include "app/widgets/banner.h"
#include "app/widgets/serverprofiledialog.h"
#include "core/host/tunejob.h"
#include "core/run/workspace.h"
#include "core/run/workspacerun.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/runkeeper.h"
#include "remote/flows/servercontrol.h"
#include "remote/flows/tuneflow.h"
#include "remote/hosts/serverprofilesuggestion.h"
#include "ui_tunepage.h"

#include <QDir>
#include <QJsonArray>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTimer>

#include <utility>

using namespace Qt::StringLiterals;

namespace moetune {

TunePage::TunePage(HostRegistry *registry, QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::TunePage>())
    , m_registry(registry) {
    m_ui->setupUi(this);
    m_form = m_ui->jobForm;
    m_live = m_ui->livePane;
    m_pushPanel = m_ui->pushPane;
    m_runFolder = new TuneRunFolder(this);
    m_resumeBanner = new Banner(this);
    m_resumeBanner->setObjectName(u"resumeRunBanner"_s);
    m_resumeBanner->setClosable(true);
    m_resumeBanner->hide();
    m_ui->pageLayout->insertWidget(0, m_resumeBanner);
    connect(m_runFolder, &TuneRunFolder::problem, this, &TunePage::appendOutput);
    connect(m_ui->headroomBox, &HeadroomBox::checkRequested, this, &TunePage::checkHeadroom);
    // The check's answer sits below the job's fields: bring its table, then its verdict, into view (on a
    // 900 px screen the table was below the column's fold, seen on a screenshot).
    connect(m_ui->headroomBox, &HeadroomBox::finished, this, [this] {
        QTimer::singleShot(0, this, [this] { // once the box has its new height
            for (QWidget *w : m_ui->headroomBox->answerWidgets())
                m_ui->jobScroll->ensureWidgetVisible(w, 0, 8);
        });
    });
    m_ui->splitter->setStretchFactor(0, 0);
    m_ui->splitter->setStretchFactor(1, 1);
    connect(m_form, &TuneJobForm::changed, this, &TunePage::updateChecks);
    connect(m_form, &TuneJobForm::hostChanged, this, [this] {
        if (!m_following && m_session && m_session->host().alias != hostAlias())
            dropFlows();
        updateProfileLine();
        updateChecks();
    });
    setupServingBox();
    // Events may stream at 1000/s: the labels and the table are refreshed at most 10 times a second.
    auto *refresh = new QTimer(this);
    refresh->setInterval(100);
    connect(refresh, &QTimer::timeout, this, [this] {
        if (m_viewDirty)
            refreshView();
        m_runFolder->flush();
    });
    refresh->start();
    connect(m_ui->preflightButton, &QPushButton::clicked, this, &TunePage::onPreflight);
    connect(m_ui->stopServerButton, &QPushButton::clicked, this, &TunePage::onStopServer);
    connect(m_ui->startButton, &QPushButton::clicked, this, &TunePage::onStart);
    connect(m_ui->cancelButton, &QPushButton::clicked, this, &TunePage::onCancel);
    connect(m_ui->refreshRunsButton, &QPushButton::clicked, this, &TunePage::onRefreshRuns);
    connect(m_ui->attachButton, &QPushButton::clicked, this, [this] {
        if (!m_following || chosenRun() != m_runId)
            fillFormFromRun(chosenRun());
        onAttach(chosenRun());
    });
    connect(m_pushPanel, &TunePushPanel::previewClicked, this, &TunePage::onPreviewPush);
    connect(m_pushPanel, &TunePushPanel::pushClicked, this, &TunePage::onPush);
    connect(m_pushPanel, &TunePushPanel::restartClicked, this, &TunePage::onRestart);
    connect(m_pushPanel, &TunePushPanel::undoClicked, this, &TunePage::onUndo);
    connect(m_pushPanel, &TunePushPanel::profileClicked, this, &TunePage::onEditProfile);
    connect(m_live, &TuneLiveView::showResultsClicked, this, [this] {
        m_runFolder->flush();
        if (!m_runFolder->folder().isEmpty())
            emit showResultsRequested(m_runFolder->workspacePath(), m_runFolder->runId());
    });
    connect(m_ui->runsCombo, &QComboBox::currentIndexChanged, this, [this] {
        // Another run chosen: a preview of the previous one must not be pushed.
        m_preview.reset();
        m_pushPanel->setPushEnabled(false);
    });
    m_ui->stopServerButton->setEnabled(false);
    m_ui->cancelButton->setEnabled(false);

    connect(m_registry, &HostRegistry::hostsChanged, this, [this] {
        m_form->reloadHosts(*m_registry);
        updateProfileLine();
    });
    connect(m_registry, &HostRegistry::connectionDropped, this, [this](const QString &alias) {
        if (m_session && m_session->host().alias == alias)
            dropFlows();
    });
    updateChecks();
    m_form->reloadHosts(*m_registry);
    updateProfileLine();
}

TunePage::~TunePage() {
    // A followed run writes into m_progress, which goes with the page: so do the flows it runs on (the
    // run goes on on the host; the session makes new flows when next asked).
    if (m_following && m_flows)
        delete m_flows.data();
}

HeadroomBox *TunePage::headroomBox() const {
    return m_ui->headroomBox;
}

TuneBestModel *TunePage::bestModel() const {
    return m_live->bestModel();
}

LiveBestChart *TunePage::liveChart() const {
    return m_live->chart();
}

ServingBenchBox *TunePage::servingBox() const {
    return m_pushPanel->servingBox();
}

void TunePage::setWorkspacePath(const QString &path) {
    m_runFolder->setWorkspacePath(path);
}

QString TunePage::workspacePath() const {
    return m_runFolder->workspacePath();
}

QString TunePage::runFolder() const {
    return m_runFolder->folder();
}

QString TunePage::hostAlias() const {
    return m_form->hostAlias();
}

void TunePage::updateProfileLine() {
    const auto host = m_registry->host(hostAlias());
    const ServerProfile p = host ? host->serverProfile : ServerProfile{};
    m_pushPanel->setProfile(p);
    if (m_server)
        m_server->setProfile(p);
}

void TunePage::tuneTarget(const QString &hostAlias, const TuningTarget &target, const Diagnosis &diagnosis,
                          bool logOfHost) {
    m_target = target;
    m_before = diagnosis;
    // "": a pasted log of no known host, and the user chose none yet (MainWindow asked).
    const QString &alias = hostAlias;
    if (const HostSession *c = m_registry->connection(alias); c && c->lastProbe())
        m_probe = c->lastProbe();
    // The one job builder (core/host/tunejob.h), shared with the Hosts page's "Tune the Served Model".
    const TuneJob job = buildTuneJob(&diagnosis, m_probe ? &*m_probe : nullptr, target);
    QString fromList;
    if (!job.catalogFile.isEmpty())
        fromList = tr(" K and top-k of %1 from the list of common MoE models (%2).")
                       .arg(job.model, QDir::toNativeSeparators(job.catalogFile));
    tuneSpec(alias, job.spec);
    if (alias.isEmpty())
        m_form->clearHost();
    m_form->setSource(
        tr("From the finding: %1 wanted in %2 (%3).")
            .arg(target.shapeSummary(), target.installFolder(),
                 alias.isEmpty() ? tr("a log of no known host: choose the host to tune on")
                 : !logOfHost
                     ? tr("a log of no known host, tuned on %1 as chosen").arg(m_registry->displayName(alias))
                     : tr("the log of %1").arg(m_registry->displayName(alias))) +
        fromList);
}

void TunePage::tuneSpec(const QString &hostAlias, const TuneSpec &s) {
    m_runDeviceName = s.deviceName;
    m_form->chooseHost(hostAlias);
    m_form->setSpec(s);
    // The practice server has no GPU: its runs are the synthetic backend's (SIMULATED, said everywhere).
    if (const auto h = m_registry->host(this->hostAlias()); h && h->isPractice() && s.backend == "auto"_L1)
        m_form->chooseBackend(u"synthetic"_s);
    if (!m_target)
        m_form->setSource(tr("From %1's probe or by hand: check every field.")
                              .arg(m_registry->displayName(this->hostAlias())));
    updateChecks();
}

TuneSpec TunePage::spec() const {
    TuneSpec s = m_form->spec();
    if (m_target)
        s.deviceName = m_target->name.deviceName;
    else if (s.deviceName.isEmpty())
        s.deviceName = m_runDeviceName; // a run's job keeps its GPU's name (its files are the server's)
    return s;
}

QString TunePage::validation() const {
    return m_form->validation();
}

void TunePage::updateChecks() {
    const TuneSpec s = spec();
    const TuneJobCheck c = m_form->showCheck(s, m_target);
    QStringList sentences;
    for (const auto &p : c.problems)
        sentences.append(p.sentence);
    const bool blocked = !m_preflightBlocked.isEmpty() &&
                         m_preflightBlocked == QJsonObject{{"host"_L1, hostAlias()}, {"spec"_L1, s.toJson()}};
    m_ui->startButton->setEnabled(c.ok() && !hostAlias().isEmpty() && !m_following && !blocked);
    m_ui->startButton->setToolTip(blocked ? tr("Check GPUs found a problem with this job on this host: see "
                                               "the check below, change the job, or check again.")
                                          : QString());
    m_ui->headroomBox->setRunnable(c.ok() && m_form->hostCount() > 0 && !m_following,
                                   tr("Fix the job first: %1").arg(sentences.join(u' ')));
}

void TunePage::checkHeadroom() {
    updateChecks();
    if (!validation().isEmpty()) {
        m_ui->headroomBox->showError(tr("the job is not complete: %1").arg(validation()));
        return;
    }
    if (!ensureFlows())
        return;
    m_ui->headroomBox->run(m_flows->headroom(), spec());
}

void TunePage::appendOutput(const QString &line) {
    m_ui->outputText->appendPlainText(line);
}

void TunePage::setBusy(const QString &what) {
    m_live->setStatus(what);
}

void TunePage::dropFlows() {
    useFlows(nullptr);
    m_session = nullptr;
    m_following = false;
    m_serverStopped = false;
    m_ui->cancelButton->setEnabled(false);
    updateChecks();
}

bool TunePage::ensureFlows() {
    const QString alias = hostAlias();
    HostSession *session = m_registry->ensureConnection(alias);
    if (!session) {
        appendOutput(tr("No host named %1: choose one on the left or add it on the Hosts page.").arg(alias));
        return false;
    }
    // The session owns its flows and makes them again when its agent was remade (host settings changed);
    // a followed run keeps the flows it runs on, and the next action after it takes the new ones.
    if (m_following && m_session != session)
        return true;
    HostFlows *flows = session->flows();
    if (m_following && !flows->isCurrent())
        return true;
    if (m_session != session || flows != m_flows) {
        m_session = session;
        useFlows(flows);
    }
    if (session->state() == Transport::State::Disconnected || session->state() == Transport::State::Failed)
        session->connectToHost(); // the Hosts page asks for an unknown host key or a password
    return true;
}

void TunePage::useFlows(HostFlows *flows) {
    // The bundle belongs to its session and outlives the page's use of it: the page's connections go.
    for (const QMetaObject::Connection &c : std::as_const(m_flowConnections))
        disconnect(c);
    m_flowConnections.clear();
    m_flows = flows;
    m_calls = flows ? flows->calls() : nullptr;
    m_tune = flows ? flows->tune() : nullptr;
    m_server = flows ? flows->server() : nullptr;
    m_push = flows ? flows->push() : nullptr;
    m_runFolder->setKeeper(flows ? flows->runKeeper() : nullptr); // a run followed again keeps its folder
    if (!flows)
        return;
    m_flowConnections = {
        connect(m_calls, &HostCalls::commandStarted, this,
                [this](const QString &c) { appendOutput(u"$ "_s + c); }),
        connect(m_calls, &HostCalls::commandOutput, this,
                [this](const QString &l) { appendOutput(u"  | "_s + l); }),
        connect(
            m_calls, &HostCalls::commandEnded, this,
            [this](const QString &, int status, const QString &e) {
                if (status != 0 || !e.isEmpty())
                    appendOutput(
                        tr("  (exit status %1%2)").arg(status).arg(e.isEmpty() ? QString() : u", "_s + e));
            }),
        connect(m_server, &ServerControl::status, this, &TunePage::appendOutput),
        connect(m_push, &PushFlow::status, this, &TunePage::appendOutput),
        connect(m_tune, &TuneFlow::reattaching, this,
                [this](const QString &why) {
                    appendOutput(why);
                    setBusy(why);
                }),
        connect(m_tune, &TuneFlow::runEvent, this,
                [this](const QJsonObject &e) {
                    // already applied to m_progress by the flow and kept by its RunKeeper; the chart and
                    // table follow
                    m_live->addEvent(e);
                    m_viewDirty = true;
                }),
        connect(flows->session(), &HostSession::stateChanged, this,
                [this](Transport::State, const QString &message) {
                    if (!message.isEmpty())
                        appendOutput(message);
                }),
    };
}

void TunePage::applyRunEvent(const QJsonObject &e) {
    if (!m_progress.apply(e))
        return;
    m_live->addEvent(e);
    m_viewDirty = true;
}

void TunePage::refreshView() {
    m_viewDirty = false;
    m_live->showProgress(m_progress, m_form->hostLabel());
}

void TunePage::onPreflight() {
    if (!ensureFlows())
        return;
    setBusy(tr("Checking the GPUs of %1...").arg(m_form->hostLabel()));
    m_tune->preflight(
        spec(), guarded([this](const Preflight &p, const HostProbe &probe, const QString &error) {
            if (!error.isEmpty()) {
                m_ui->preflightText->setPlainText(
                    tr("Preflight failed: %1").arg(agentSentenceForGui(error, m_form->hostLabel())));
                setBusy(tr("Cannot start yet: see the preflight."));
                return;
            }
            m_probe = probe;
            if (m_target && m_form->spec().hiddenSize == 0) // the probe knows what the log does not
                tuneTarget(hostAlias(), *m_target, m_before.value_or(Diagnosis{}), false);
            QStringList lines;
            for (const Preflight::Gpu &g : p.gpus)
                lines.append(tr("GPU %1 %2: %3 of %4 MiB used%5")
                                 .arg(g.index)
                                 .arg(g.name)
                                 .arg(g.usedMiB)
                                 .arg(g.totalMiB)
                                 .arg(g.heldByServer ? tr(" - held by the inference server") : QString()));
            lines += p.holderLines();
            lines += p.problems;
            if (p.canStart())
                lines.append(tr("Ready to start."));
            if (p.serverHoldsGpus && m_server && !m_server->profile().canStopStart())
                lines.append(m_server->profile().validate());
            if (!m_preflightNote.isEmpty())
                lines.prepend(std::exchange(m_preflightNote, QString()));
            m_ui->preflightText->setPlainText(lines.join(u'\n'));
            // Start stays off for this job on this host until the job or the host changes (or a new check).
            m_preflightBlocked = p.canStart()
                                     ? QJsonObject()
                                     : QJsonObject{{"host"_L1, hostAlias()}, {"spec"_L1, spec().toJson()}};
            updateChecks();
            m_ui->stopServerButton->setEnabled(p.serverHoldsGpus && m_server &&
                                               m_server->profile().canStopStart());
            // "Ready" only when no process holds the job's GPUs (issue 40 item 8); held but with room enough,
            // the tune may still start, and the page says who holds them.
            bool held = false;
            for (const Preflight::Gpu &g : p.gpus)
                held = held || !g.holders.isEmpty();
            setBusy(!p.canStart() ? tr("Cannot start yet: see the preflight.")
                    : held
                        ? tr("The GPUs have room for the tune, but processes hold them: see the preflight.")
                        : tr("The GPUs are ready: no process holds them."));
        }));
}

void TunePage::onStopServer() {
    if (!ensureFlows())
        return;
    m_ui->stopServerButton->setEnabled(false);
    m_server->stop(guarded([this](const ServerControl::StopResult &r) {
        m_preflightNote = r.message; // shown above the GPUs as they are after the stop
        if (r.ok) { // Restart and prove then only starts it (a stop command would fail on it now)
            m_serverStopped = true;
            m_pushPanel->setServerStopped(true);
        }
        onPreflight();
    }));
}

void TunePage::onStart() {
    if (!ensureFlows())
        return;
    m_ui->startButton->setEnabled(false);
    setBusy(tr("Starting a run on %1...").arg(m_form->hostLabel()));
    m_tune->start(
        spec(), guarded([this](const QString &runId, const QJsonObject &, const QString &error) {
            updateChecks();
            if (!error.isEmpty()) {
                setBusy(tr("The run did not start: %1").arg(agentSentenceForGui(error, m_form->hostLabel())));
                return;
            }
            onAttach(runId);
        }));
}

QString TunePage::chosenRun() const {
    return m_ui->runsCombo->currentData().toString();
}

void TunePage::onAttach(const QString &runId) {
    if (runId.isEmpty()) {
        setBusy(tr("Choose a run first: Runs on host lists the runs of %1.").arg(m_form->hostLabel()));
        return;
    }
    if (m_following && runId == m_runId)
        return;
    if (!ensureFlows())
        return;
    if (m_following)
        m_tune->stopFollowing();
    if (runId != m_runId || m_progress.runId != runId) {
        m_progress = RunProgress{};
        m_live->reset();
        m_runId = runId;
        beginRunFolder(runId); // a fresh follow replays from the first event: the folder starts over
    }
    m_following = true;
    updateChecks();
    m_ui->cancelButton->setEnabled(true);
    setBusy(tr("Following run %1...").arg(runId));
    m_tune->follow(runId, &m_progress, guarded([this, runId](bool ok, const QString &error) {
                       m_following = false;
                       refreshView();
                       m_runFolder->flush();
                       m_ui->cancelButton->setEnabled(false);
                       updateChecks();
                       if (!ok) {
                           setBusy(tr("Lost run %1: %2 (Attach follows it again from the last event seen.)")
                                       .arg(runId, error));
                           return;
                       }
                       if (m_ui->runsCombo->findData(runId) < 0)
                           m_ui->runsCombo->addItem(
                               u"%1 (%2%3)"_s.arg(runId, m_progress.doneStatus,
                                                  m_progress.simulated ? tr(", simulated") : QString()),
                               runId);
                       m_ui->runsCombo->setCurrentIndex(m_ui->runsCombo->findData(runId));
                       if (runId == m_runFolder->runId())
                           emit keptRunChanged(m_runFolder->workspacePath(), runId);
                       emit runFinished(runId, m_progress.doneStatus);
                   }));
}

void TunePage::onCancel() {
    if (!m_tune || m_runId.isEmpty())
        return;
    // A cancelled run cannot be resumed from the app: ask first (window-modal, no nested event loop).
    auto *box = new QMessageBox(QMessageBox::Question, tr("Cancel Run"),
                                tr("Cancel run %1 on %2?").arg(m_runId, m_form->hostLabel()),
                                QMessageBox::NoButton, this);
    box->setObjectName(u"cancelRunConfirm"_s);
    box->setInformativeText(
        tr("The agent stops its workers; what was measured so far is kept with the run."));
    QPushButton *yes = box->addButton(tr("Cancel Run"), QMessageBox::DestructiveRole);
    yes->setObjectName(u"confirmCancelRunButton"_s);
    QPushButton *keep = box->addButton(tr("Keep Running"), QMessageBox::RejectRole);
    keep->setObjectName(u"keepRunningButton"_s);
    box->setDefaultButton(keep);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this, [this, yes, runId = m_runId](QAbstractButton *clicked) {
        if (clicked != yes || !m_tune || m_runId != runId)
            return;
        m_tune->cancel(runId, guarded([this](bool, const QString &message) { appendOutput(message); }));
    });
    box->open();
}

void TunePage::onRefreshRuns() {
    if (!ensureFlows())
        return;
    m_tune->listRuns(guarded([this](const QList<QJsonObject> &runs, const QString &error) {
        const QString keep = m_pendingRun.isEmpty() ? chosenRun() : m_pendingRun;
        m_ui->runsCombo->clear();
        if (!error.isEmpty()) {
            appendOutput(error);
            setBusy(error);
            return;
        }
        for (const QJsonObject &r : runs)
            m_runSpecs.insert(r.value("run_id"_L1).toString(), r.value("spec"_L1).toObject());
        for (const QJsonObject &r : runs)
            m_ui->runsCombo->addItem(
                u"%1 (%2%3)"_s.arg(r.value("run_id"_L1).toString(), r.value("state"_L1).toString(),
                                   r.value("simulated"_L1).toBool() ? tr(", simulated") : QString()),
                r.value("run_id"_L1).toString());
        if (const int i = m_ui->runsCombo->findData(keep); i >= 0)
            m_ui->runsCombo->setCurrentIndex(i);
        if (!m_pendingRun.isEmpty()) {
            const QString run = m_pendingRun;
            m_pendingRun.clear();
            if (m_ui->runsCombo->findData(run) < 0)
                setBusy(tr("Run %1 is not on %2.").arg(run, m_form->hostLabel()));
            else {
                fillFormFromRun(run);
                onAttach(run); // a finished run replays its events: the table and the chart fill
            }
        }
    }));
}

void TunePage::openRun(const QString &hostAlias, const QString &runId) {
    m_form->chooseHost(hostAlias);
    m_pendingRun = runId;
    m_ui->rightTabs->setCurrentWidget(m_ui->pushTab);
    onRefreshRuns();
}

void TunePage::onPreviewPush() {
    const QString runId = chosenRun().isEmpty() ? m_runId : chosenRun();
    if (runId.isEmpty()) {
        m_pushPanel->setText(tr("Choose a finished run first (Runs on host lists them)."));
        emit previewReady(QString(), m_pushPanel->text());
        return;
    }
    if (!ensureFlows())
        return;
    m_pushPanel->setPushEnabled(false);
    m_pushPanel->setProof(QString()); // a proof belongs to the push before this preview
    m_pushPanel->setText(tr("Reading run %1 and the server's view of %2...").arg(runId, m_form->hostLabel()));
    m_push->preview(runId, spec().framework, m_before ? &*m_before : nullptr, m_probe ? &*m_probe : nullptr,
                    m_pushPanel->persistentFolder(), guarded([this, runId](const PushFlow::Preview &p) {
                        m_preview = p;
                        m_pushPanel->showPreview(p, m_form->hostLabel());
                        if (!p.ok()) {
                            emit previewReady(runId, p.error);
                            return;
                        }
                        servingBox()->suggest(p.framework, m_probe ? &*m_probe : nullptr,
                                              m_server ? m_server->profile() : ServerProfile{});
                        emit previewReady(runId, QString());
                    }));
}

void TunePage::onPush() {
    if (!m_preview || !m_push)
        return;
    m_pushPanel->setPushEnabled(false);
    const QString runId = m_preview->runId;
    m_push->push(*m_preview, guarded([this, runId](const PushRecord &r, const QString &error) {
        m_pushedTargets.clear();
        for (const PushRecord::File &f : r.files)
            m_pushedTargets.append(f.target);
        const ServerProfile profile = m_server ? m_server->profile() : ServerProfile{};
        m_pushPanel->showPushed(r, error, m_form->hostLabel(), m_server ? &profile : nullptr);
        if (error.isEmpty())
            recordPush(runId, r, m_preview ? m_preview->target.folder : QString());
        emit pushed(runId, error);
    }));
}

void TunePage::onRestart() {
    if (!ensureFlows())
        return;
    const QString problem = m_server->profile().validate();
    if (!problem.isEmpty()) {
        m_pushPanel->appendText(u"\n"_s + problem);
        emit proved(m_runId, false);
        return;
    }
    m_pushPanel->setRestartEnabled(false);
    const QString runId = chosenRun().isEmpty() ? m_runId : chosenRun();
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
    QDir().mkpath(dir);
    const QString log = QDir(dir).filePath(u"after-restart-%1.log"_s.arg(runId));
    m_pushPanel->appendText(
        u"\n"_s + (m_serverStopped
                       ? tr("Starting the server (stopped for the tuning) through the profile (%1)...")
                       : tr("Restarting through the profile (%1)..."))
                      .arg(m_server->profile().summary()));
    m_push->restartAndProve(
        m_before.value_or(Diagnosis{}), m_pushedTargets, log,
        guarded([this, runId](const PushFlow::Proof &p) {
            m_pushPanel->setRestartEnabled(true);
            if (p.start.ok) {
                m_serverStopped = false;
                m_pushPanel->setServerStopped(false);
            }
            if (p.ok) { // the report of the run shows the proof: kept with the run, whichever it is
                m_runFolder->saveFor(runId, u"diagnosis-after.json"_s, p.after.toJson());
                emit keptRunChanged(m_runFolder->workspacePath(), runId);
            }
            m_pushPanel->showProof(p);
            emit proved(runId, p.ok && p.proof.warningGone());
        }),
        m_serverStopped);
}

void TunePage::onUndo() {
    const QString runId = chosenRun().isEmpty() ? m_runId : chosenRun();
    if (runId.isEmpty()) {
        m_pushPanel->appendText(tr("Choose the run whose push to undo first."));
        emit undone(QString(), tr("no run"));
        return;
    }
    if (!ensureFlows())
        return;
    m_push->undoRun(runId, guarded([this, runId](const PushFlow::Undo &u) {
                        m_pushPanel->showUndone(u);
                        emit undone(runId, u.ok ? QString() : u.error);
                    }));
}

void TunePage::onEditProfile() {
    const auto host = m_registry->host(hostAlias());
    if (!host)
        return;
    std::optional<ServerProfile> suggestion;
    const HostSession *c = m_registry->connection(host->alias);
    const std::optional<HostProbe> probe = c ? c->lastProbe() : m_probe;
    if (probe && probe->servers.size() == 1) // the chosen server's; with several unchosen, none (41)
        suggestion = suggestServerProfile(probe->servers.first());
    auto *dialog =
        new ServerProfileDialog(m_registry->displayName(host->alias), host->serverProfile, suggestion, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ServerProfileDialog::profileAccepted, this,
            [this, alias = host->alias](const ServerProfile &p) {
                auto h = m_registry->host(alias);
                if (!h)
                    return;
                const QString chosen = h->serverProfile.server;
                h->serverProfile = p;
                if (h->serverProfile.server.isEmpty()) // the dialog edits how it runs, not which server
                    h->serverProfile.server = chosen;
                m_registry->save(*h);
                updateProfileLine();
            });
    dialog->open();
}

void TunePage::beginRunFolder(const QString &runId) {
    m_live->setResultsEnabled(false);
    WorkspaceRun run;
    run.runId = runId;
    run.host = m_form->hostLabel();
    run.source = tr("Tune page, followed from %1").arg(m_form->hostLabel());
    run.spec = spec().toJson();
    if (m_probe)
        run.hostFacts = m_probe->raw;
    if (m_before)
        run.diagnosisBefore = m_before->toJson();
    // The headroom check of this very job, when one ran before the tune (the report shows it).
    if (const HeadroomBox *h = m_ui->headroomBox; h->result() && h->resultSpec().toJson() == run.spec)
        run.headroom = h->result()->toJson();
    const bool kept = m_runFolder->begin(run);
    m_live->setResultsEnabled(kept);
    if (kept)
        emit keptRunChanged(m_runFolder->workspacePath(), runId);
}

void TunePage::recordPush(const QString &runId, const PushRecord &r, const QString &folder) {
    // What the report's "Installed" part reads (core/run/workspacerun.h: push.json).
    QJsonArray installed;
    for (const PushRecord::File &f : r.files)
        installed.append(QJsonObject{{"file_name"_L1, f.fileName},
                                     {"target"_L1, f.target},
                                     {"backup"_L1, f.backup},
                                     {"sha256"_L1, f.sha256},
                                     {"unchanged"_L1, f.unchanged}});
    m_runFolder->saveFor(runId, u"push.json"_s,
                         QJsonObject{{"installed"_L1, installed},
                                     {"target_folder"_L1, folder},
                                     {"host"_L1, m_form->hostLabel()},
                                     {"record"_L1, r.toJson()}});
    emit keptRunChanged(m_runFolder->workspacePath(), runId);
}

QString TunePage::aliasOfHost(const QString &shown) const {
    for (const HostConfig &h : QList<HostConfig>{m_registry->localHost()} + m_registry->hosts())
        if (h.alias == shown || h.label() == shown || m_registry->displayName(h.alias) == shown)
            return h.alias;
    return {};
}

void TunePage::fillFormFromRun(const QString &runId) {
    const auto it = m_runSpecs.constFind(runId);
    if (runId.isEmpty() || it == m_runSpecs.cend() || it->isEmpty())
        return;
    const auto s = TuneSpec::fromJson(*it);
    if (!s)
        return;
    m_target.reset(); // the job is the run's now, not the finding's
    m_runDeviceName = s->deviceName;
    m_form->setSpec(*s);
    m_form->setSource(tr("The job of run %1 on %2, as the host lists it.").arg(runId, m_form->hostLabel()));
    updateChecks();
}

QString TunePage::unfinishedRunsText() const {
    return m_resumeBanner->isHidden() ? QString() : m_resumeBanner->text();
}

int TunePage::offerUnfinishedRuns() {
    QList<TuneRunFolder::Unfinished> runs;
    for (const auto &u : TuneRunFolder::unfinishedRuns(m_runFolder->workspacePath()))
        if (!aliasOfHost(u.host).isEmpty() && !(m_following && u.runId == m_runId))
            runs.append(u);
    if (runs.isEmpty()) {
        m_resumeBanner->hide();
        return 0;
    }
    const TuneRunFolder::Unfinished newest = runs.first();
    QString text = tr("Run %1 on %2 was being followed when moetune stopped following it; it may still be "
                      "running there.")
                       .arg(newest.runId, newest.host);
    if (runs.size() > 1)
        text += u' ' + tr("%n more such run(s): Runs on host lists them.", nullptr, int(runs.size() - 1));
    m_resumeBanner->showMessage(Banner::Kind::Info, text);
    m_resumeBanner->setAction(tr("Follow It"));
    disconnect(m_resumeBanner, &Banner::actionTriggered, this, nullptr);
    connect(m_resumeBanner, &Banner::actionTriggered, this, [this, newest] {
        m_resumeBanner->hide();
        m_form->chooseHost(aliasOfHost(newest.host));
        m_runSpecs.insert(newest.runId, newest.spec);
        fillFormFromRun(newest.runId);
        m_ui->rightTabs->setCurrentWidget(m_ui->liveTab);
        onAttach(newest.runId); // replays from the first event: the kept copy gets the run's end
    });
    m_resumeBanner->show();
    return int(runs.size());
}

// The serving benchmark box of the push tab (app/tune/servingbenchbox): the page hands it the host's
// flows and the preview when it asks, keeps its result with the run, and takes over its push.
void TunePage::setupServingBox() {
    ServingBenchBox *bench = servingBox();
    bench->setProvider([this]() -> std::optional<ServingBenchBox::Context> {
        if (!ensureFlows())
            return std::nullopt;
        ServingBenchBox::Context c{
            m_flows->serving(), m_server, spec().framework, m_preview, m_before, m_probe, {}};
        const QString dir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
        QDir().mkpath(dir);
        c.afterLogFile =
            QDir(dir).filePath(u"after-restart-%1.log"_s.arg(m_preview ? m_preview->runId : m_runId));
        return c;
    });
    connect(bench, &ServingBenchBox::finished, this, [this](const ServingComparison &c) {
        if (!c.runId.isEmpty()) {
            m_runFolder->saveFor(c.runId, u"serving.json"_s, c.toJson());
            emit keptRunChanged(m_runFolder->workspacePath(), c.runId);
        }
    });
    connect(bench, &ServingBenchBox::pushedByComparison, this,
            [this](const PushRecord &r, bool, const QString &summary) {
                m_pushedTargets.clear();
                for (const PushRecord::File &f : r.files)
                    m_pushedTargets.append(f.target);
                m_pushPanel->setProof(summary);
                recordPush(r.runId, r, m_preview ? m_preview->target.folder : QString());
                emit pushed(r.runId, QString());
            });
    connect(bench, &ServingBenchBox::undoRequested, this, &TunePage::onUndo);
}

} // namespace moetune
