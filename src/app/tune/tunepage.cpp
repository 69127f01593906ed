// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunepage.h"

#include "app/hosts/hostregistry.h"
#include "app/hosts/serverprofiledialog.h"
#include "app/tune/agentsentence.h"
#include "app/tune/headroombox.h"
#include "app/tune/servingbenchbox.h"
#include "app/tune/tunebestmodel.h"
#include "app/tune/tunejobcheck.h"
#include "charts/livebestchart.h"
#include "core/moe/moemodelcatalog.h"
#include "core/run/workspace.h"
#include "core/run/workspacerun.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/runkeeper.h"
#include "remote/flows/servercontrol.h"
#include "remote/flows/tuneflow.h"
#include "remote/hosts/serverprofilesuggestion.h"
#include "ui_tunepage.h"

#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMessageBox>
#include <QSaveFile>
#include <QScrollArea>
#include <QStandardPaths>
#include <QTimer>

#include <utility>

using namespace Qt::StringLiterals;

namespace moetune {

TunePage::TunePage(HostRegistry *registry, QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::TunePage>())
    , m_registry(registry)
    , m_bestModel(new TuneBestModel(this))
    , m_chart(new LiveBestChart(this))
    , m_headroom(new HeadroomBox(this)) {
    m_ui->setupUi(this);
    m_headroom->setObjectName(u"headroomBox"_s);
    m_ui->headroomHolderLayout->addWidget(m_headroom);
    connect(m_headroom, &HeadroomBox::checkRequested, this, &TunePage::checkHeadroom);
    m_workspacePath = Workspace::defaultLocation();
    m_bestModel->setObjectName(u"tuneBestModel"_s);
    m_chart->setObjectName(u"liveBestChart"_s);
    m_ui->chartLayout->addWidget(m_chart);
    m_ui->bestTable->setModel(m_bestModel);
    m_ui->bestTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ui->bestTable->verticalHeader()->hide();
    m_ui->splitter->setStretchFactor(0, 0);
    m_ui->splitter->setStretchFactor(1, 1);
    // The sentences change as one types: each sits in a box of fixed height (scrolling when longer), so
    // the fields and buttons below never move under the pointer.
    const int line = m_ui->validationLabel->fontMetrics().lineSpacing();
    for (auto [label, lines] : {std::pair{m_ui->validationLabel, 4}, std::pair{m_ui->fileNamesLabel, 4}}) {
        auto *box = new QScrollArea(m_ui->jobPane);
        box->setObjectName(label->objectName() + u"Box"_s);
        box->setFrameShape(QFrame::NoFrame);
        box->setWidgetResizable(true);
        box->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        box->setFixedHeight(lines * line + 4);
        label->setAlignment(Qt::AlignLeft | Qt::AlignTop);
        delete m_ui->jobPane->layout()->replaceWidget(label, box);
        box->setWidget(label);
    }
    setupForm();
    setupServingBox();
    // Events may stream at 1000/s: the labels and the table are refreshed at most 10 times a second.
    auto *refresh = new QTimer(this);
    refresh->setInterval(100);
    connect(refresh, &QTimer::timeout, this, [this] {
        if (m_viewDirty)
            refreshView();
        flushRunEvents();
    });
    refresh->start();
    connect(m_ui->preflightButton, &QPushButton::clicked, this, &TunePage::onPreflight);
    connect(m_ui->stopServerButton, &QPushButton::clicked, this, &TunePage::onStopServer);
    connect(m_ui->startButton, &QPushButton::clicked, this, &TunePage::onStart);
    connect(m_ui->cancelButton, &QPushButton::clicked, this, &TunePage::onCancel);
    connect(m_ui->refreshRunsButton, &QPushButton::clicked, this, &TunePage::onRefreshRuns);
    connect(m_ui->attachButton, &QPushButton::clicked, this, [this] { onAttach(chosenRun()); });
    connect(m_ui->pushPreviewButton, &QPushButton::clicked, this, &TunePage::onPreviewPush);
    connect(m_ui->pushButton, &QPushButton::clicked, this, &TunePage::onPush);
    connect(m_ui->restartButton, &QPushButton::clicked, this, &TunePage::onRestart);
    connect(m_ui->undoButton, &QPushButton::clicked, this, &TunePage::onUndo);
    connect(m_ui->profileButton, &QPushButton::clicked, this, &TunePage::onEditProfile);
    connect(m_ui->resultsButton, &QPushButton::clicked, this, [this] {
        flushRunEvents();
        if (!m_runFolder.isEmpty())
            emit showResultsRequested(m_workspacePath, QDir(m_runFolder).dirName());
    });
    m_ui->resultsButton->setEnabled(false);
    connect(m_ui->runsCombo, &QComboBox::currentIndexChanged, this, [this] {
        // Another run chosen: a preview of the previous one must not be pushed.
        m_preview.reset();
        m_ui->pushButton->setEnabled(false);
    });
    m_ui->stopServerButton->setEnabled(false);
    m_ui->cancelButton->setEnabled(false);
    m_ui->pushButton->setEnabled(false);
    m_ui->runLabel->setText(tr("No run yet: fill in the job, check the GPUs, then start."));
    m_ui->pushText->setPlaceholderText(
        tr("Choose a finished run (after a run, or with Runs on host), then Preview push: the exact "
           "folder the server reads, a diff against the file there, and whether it survives an upgrade."));

    connect(m_registry, &HostRegistry::hostsChanged, this, [this] {
        reloadHosts();
        updateProfileLine();
    });
    connect(m_registry, &HostRegistry::connectionDropped, this, [this](const QString &alias) {
        if (m_session && m_session->host().alias == alias)
            dropFlows();
    });
    reloadHosts();
    updateProfileLine();
}

TunePage::~TunePage() = default;

void TunePage::setupForm() {
    m_ui->frameworkCombo->addItem(u"SGLang"_s, int(Framework::SGLang));
    m_ui->frameworkCombo->addItem(u"vLLM"_s, int(Framework::VLLM));
    m_ui->dtypeCombo->addItem(u"bf16 / fp16"_s, QString());
    for (const QString &d : ConfigName::knownDtypes())
        m_ui->dtypeCombo->addItem(d, d);
    m_ui->strategyCombo->addItems({u"fast"_s, u"exhaustive"_s});
    m_ui->backendCombo->addItem(tr("auto (server's kernel, else Triton)"), u"auto"_s);
    m_ui->backendCombo->addItem(u"triton"_s, u"triton"_s);
    m_ui->backendCombo->addItem(u"server"_s, u"server"_s);
    m_ui->backendCombo->addItem(tr("synthetic (SIMULATED numbers, a test double for a GPU)"), u"synthetic"_s);
    QStringList sizes;
    for (int m : TuneSpec::defaultBatchSizes())
        sizes.append(QString::number(m));
    m_ui->batchSizesEdit->setText(sizes.join(u","_s));
    m_ui->gpusEdit->setText(u"all"_s);
    m_ui->expertsSpin->setValue(0);
    const auto changed = [this] { updateChecks(); };
    for (QSpinBox *s : {m_ui->expertsSpin, m_ui->nSpin, m_ui->kSpin, m_ui->topkSpin, m_ui->budgetSpin})
        connect(s, &QSpinBox::valueChanged, this, changed);
    for (QComboBox *c : {m_ui->frameworkCombo, m_ui->dtypeCombo, m_ui->strategyCombo, m_ui->backendCombo})
        connect(c, &QComboBox::currentIndexChanged, this, changed);
    for (QLineEdit *e : {m_ui->blockShapeEdit, m_ui->batchSizesEdit, m_ui->gpusEdit})
        connect(e, &QLineEdit::textChanged, this, changed);
    for (QCheckBox *b : {m_ui->perChannelCheck, m_ui->upDownCheck})
        connect(b, &QCheckBox::toggled, this, changed);
    connect(m_ui->hostCombo, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_following && m_session && m_session->host().alias != hostAlias())
            dropFlows();
        updateProfileLine();
        updateChecks();
    });
    updateChecks();
}

void TunePage::reloadHosts() {
    const QString current = hostAlias();
    const QSignalBlocker block(m_ui->hostCombo);
    m_ui->hostCombo->clear();
    const HostConfig local = m_registry->localHost();
    m_ui->hostCombo->addItem(local.label(), local.alias);
    for (const HostConfig &h : m_registry->hosts())
        m_ui->hostCombo->addItem(m_registry->displayName(h.alias), h.alias);
    const int i = m_ui->hostCombo->findData(current);
    m_ui->hostCombo->setCurrentIndex(i >= 0 ? i : 0);
}

QString TunePage::hostAlias() const {
    return m_ui->hostCombo->currentData().toString();
}

void TunePage::updateProfileLine() {
    const auto host = m_registry->host(hostAlias());
    const ServerProfile p = host ? host->serverProfile : ServerProfile{};
    const QString problem = p.validate();
    m_ui->profileLabel->setText(problem.isEmpty() ? tr("Server profile: %1").arg(p.summary())
                                                  : tr("Server profile: %1").arg(problem));
    if (m_server)
        m_server->setProfile(p);
}

void TunePage::tuneTarget(const QString &hostAlias, const TuningTarget &target, const Diagnosis &diagnosis) {
    m_target = target;
    m_before = diagnosis;
    const QString alias = hostAlias.isEmpty() ? this->hostAlias() : hostAlias;
    if (const HostSession *c = m_registry->connection(alias); c && c->lastProbe())
        m_probe = c->lastProbe();
    TuneSpec s = tuneSpecFor(target, m_probe ? &*m_probe : nullptr);
    // The probe's config.json knows K and top-k; without one, the model the log names, from the list of
    // common MoE models (only when its expert count is the file's).
    QString fromList;
    const QString model = diagnosis.starts.isEmpty() ? QString() : diagnosis.starts.constLast().model;
    if ((s.hiddenSize == 0 || s.topk == 0) && !model.isEmpty()) {
        if (const auto m = MoeModelCatalog::load().findForShape(model, target.name.experts)) {
            s.hiddenSize = m->hiddenSize;
            s.topk = m->topk;
            fromList = tr(" K and top-k of %1 from the list of common MoE models (%2).")
                           .arg(model, QDir::toNativeSeparators(m->file));
        }
    }
    tuneSpec(alias, s);
    m_ui->sourceLabel->setText(tr("From the finding: %1 wanted in %2 (%3).")
                                   .arg(target.shapeSummary(), target.installFolder(),
                                        hostAlias.isEmpty()
                                            ? tr("a log of no known host: tuning on the host chosen below")
                                            : tr("the log of %1").arg(m_registry->displayName(hostAlias))) +
                               fromList);
}

void TunePage::tuneSpec(const QString &hostAlias, const TuneSpec &s) {
    const int i = m_ui->hostCombo->findData(hostAlias);
    if (i >= 0)
        m_ui->hostCombo->setCurrentIndex(i);
    m_ui->frameworkCombo->setCurrentIndex(qMax(0, m_ui->frameworkCombo->findData(int(s.framework))));
    m_ui->expertsSpin->setValue(s.experts);
    m_ui->nSpin->setValue(s.n);
    m_ui->kSpin->setValue(s.hiddenSize);
    m_ui->topkSpin->setValue(s.topk);
    m_ui->dtypeCombo->setCurrentIndex(qMax(0, m_ui->dtypeCombo->findData(s.dtype)));
    m_ui->blockShapeEdit->setText(s.blockShape ? u"%1,%2"_s.arg((*s.blockShape)[0]).arg((*s.blockShape)[1])
                                               : QString());
    m_ui->perChannelCheck->setChecked(s.perChannelQuant);
    m_ui->upDownCheck->setChecked(s.upAndDown);
    QStringList sizes;
    for (int m : s.batchSizes)
        sizes.append(QString::number(m));
    m_ui->batchSizesEdit->setText(sizes.join(u","_s));
    QStringList gpus;
    for (int g : s.gpus)
        gpus.append(QString::number(g));
    m_ui->gpusEdit->setText(gpus.isEmpty() ? u"all"_s : gpus.join(u","_s));
    if (m_ui->strategyCombo->findText(s.strategy) < 0)
        m_ui->strategyCombo->addItem(s.strategy);
    m_ui->strategyCombo->setCurrentText(s.strategy);
    m_ui->budgetSpin->setValue(int(s.timeBudgetSeconds));
    m_ui->backendCombo->setCurrentIndex(qMax(0, m_ui->backendCombo->findData(s.backend)));
    // The practice server has no GPU: its runs are the synthetic backend's (SIMULATED, said everywhere).
    if (const auto h = m_registry->host(this->hostAlias()); h && h->isPractice() && s.backend == "auto"_L1)
        m_ui->backendCombo->setCurrentIndex(m_ui->backendCombo->findData(u"synthetic"_s));
    if (!m_target)
        m_ui->sourceLabel->setText(tr("From %1's probe or by hand: check every field.")
                                       .arg(m_registry->displayName(this->hostAlias())));
    updateChecks();
}

TuneSpec TunePage::spec() const {
    TuneSpec s;
    s.framework = Framework(m_ui->frameworkCombo->currentData().toInt());
    s.experts = m_ui->expertsSpin->value();
    s.n = m_ui->nSpin->value();
    s.hiddenSize = m_ui->kSpin->value();
    s.topk = m_ui->topkSpin->value();
    s.dtype = m_ui->dtypeCombo->currentData().toString();
    QString err;
    if (const auto b = TuneJobCheck::parseList(m_ui->blockShapeEdit->text(), true, &err); b && b->size() == 2)
        s.blockShape = std::array<int, 2>{(*b)[0], (*b)[1]};
    s.perChannelQuant = m_ui->perChannelCheck->isChecked();
    s.upAndDown = m_ui->upDownCheck->isChecked();
    if (const auto m = TuneJobCheck::parseList(m_ui->batchSizesEdit->text(), false, &err))
        s.batchSizes = *m;
    if (const auto g = TuneJobCheck::parseList(m_ui->gpusEdit->text(), true, &err))
        s.gpus = *g;
    s.strategy = m_ui->strategyCombo->currentText();
    s.timeBudgetSeconds = m_ui->budgetSpin->value();
    s.backend = m_ui->backendCombo->currentData().toString();
    if (m_target)
        s.deviceName = m_target->name.deviceName;
    return s;
}

QString TunePage::validation() const {
    return m_ui->validationLabel->text();
}

void TunePage::updateChecks() {
    const TuneSpec s = spec();
    TuneJobCheck c = TuneJobCheck::check(s, m_target);
    QString err;
    if (!TuneJobCheck::parseList(m_ui->batchSizesEdit->text(), false, &err))
        c.problems.append({u"batchSizesEdit"_s, u"Batch sizes: "_s + err});
    if (!TuneJobCheck::parseList(m_ui->gpusEdit->text(), true, &err))
        c.problems.append(
            {u"gpusEdit"_s, u"GPUs: "_s + err + u" Use device indices such as 0,1 or 'all'."_s});
    const auto block = TuneJobCheck::parseList(m_ui->blockShapeEdit->text(), true, &err);
    if (!block || (!block->isEmpty() && block->size() != 2))
        c.problems.append(
            {u"blockShapeEdit"_s, u"The block shape is two integers such as 128,128, or empty."_s});
    QStringList sentences;
    for (QWidget *w : findChildren<QWidget *>())
        if (w->property("moetuneProblem").toBool()) {
            w->setToolTip(QString());
            w->setProperty("moetuneProblem", false);
        }
    for (const auto &p : c.problems) {
        sentences.append(p.sentence);
        if (QWidget *w = findChild<QWidget *>(p.field)) {
            w->setToolTip(p.sentence);
            w->setProperty("moetuneProblem", true);
        }
    }
    m_ui->validationLabel->setText(sentences.join(u'\n'));
    m_ui->validationLabel->setStyleSheet(sentences.isEmpty() ? QString() : u"color: #b03030;"_s);
    QString names = tr("Files the run writes: %1").arg(c.fileNames.join(u", "_s));
    if (!c.fileNamesMatch.isEmpty())
        names += u"\n"_s + c.fileNamesMatch;
    if (s.backend == "synthetic"_L1)
        names += u"\n"_s +
                 tr("SIMULATED: the synthetic backend measures nothing; its files cannot be installed on a "
                    "real server.");
    m_ui->fileNamesLabel->setText(names);
    const bool blocked = !m_preflightBlocked.isEmpty() &&
                         m_preflightBlocked == QJsonObject{{"host"_L1, hostAlias()}, {"spec"_L1, s.toJson()}};
    m_ui->startButton->setEnabled(c.ok() && m_ui->hostCombo->count() > 0 && !m_following && !blocked);
    m_ui->startButton->setToolTip(blocked ? tr("Check GPUs found a problem with this job on this host: see "
                                               "the check below, change the job, or check again.")
                                          : QString());
    m_headroom->setRunnable(c.ok() && m_ui->hostCombo->count() > 0 && !m_following,
                            tr("Fix the job first: %1").arg(sentences.join(u' ')));
}

void TunePage::checkHeadroom() {
    updateChecks();
    if (!validation().isEmpty()) {
        m_headroom->showError(tr("the job is not complete: %1").arg(validation()));
        return;
    }
    if (!ensureFlows())
        return;
    m_headroom->run(m_calls, spec());
}

void TunePage::appendOutput(const QString &line) {
    m_ui->outputText->appendPlainText(line);
}

void TunePage::setBusy(const QString &what) {
    m_ui->runLabel->setText(what);
}

void TunePage::dropFlows() {
    if (m_flows)
        m_flows->deleteLater();
    m_flows = nullptr;
    m_calls = nullptr;
    m_tune = nullptr;
    m_server = nullptr;
    m_push = nullptr;
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
    // The session remakes its agent when the host's settings change: flows over the old one would stall.
    const bool stale = m_session != session || !m_calls || m_calls->agent() != session->agent() ||
                       m_calls->transport() != session->transport();
    if (stale && m_following)
        return true; // a followed run keeps its flows; the next action after it rebuilds them
    if (stale) {
        if (m_flows)
            m_flows->deleteLater();
        m_session = session;
        const auto host = m_registry->host(alias);
        m_flows = new HostFlows(session, host ? host->serverProfile : ServerProfile{},
                                m_registry->displayName(alias), this);
        m_calls = m_flows->calls();
        m_tune = m_flows->tune();
        m_server = m_flows->server();
        m_push = m_flows->push();
        if (!m_runFolder.isEmpty()) // a run followed again keeps its folder
            m_flows->runKeeper()->resume(m_runFolder);
        connect(m_flows->runKeeper(), &RunKeeper::problem, this, &TunePage::appendOutput);
        connect(m_calls, &HostCalls::commandStarted, this,
                [this](const QString &c) { appendOutput(u"$ "_s + c); });
        connect(m_calls, &HostCalls::commandOutput, this,
                [this](const QString &l) { appendOutput(u"  | "_s + l); });
        connect(
            m_calls, &HostCalls::commandEnded, this, [this](const QString &, int status, const QString &e) {
                if (status != 0 || !e.isEmpty())
                    appendOutput(
                        tr("  (exit status %1%2)").arg(status).arg(e.isEmpty() ? QString() : u", "_s + e));
            });
        connect(m_server, &ServerControl::status, this, &TunePage::appendOutput);
        connect(m_push, &PushFlow::status, this, &TunePage::appendOutput);
        connect(m_tune, &TuneFlow::reattaching, this, [this](const QString &why) {
            appendOutput(why);
            setBusy(why);
        });
        connect(m_tune, &TuneFlow::runEvent, this, [this](const QJsonObject &e) {
            // already applied to m_progress by the flow and kept by its RunKeeper; the chart and table follow
            AgentEvent ev;
            ev.type = e.value("type"_L1).toString();
            ev.object = e;
            m_chart->addEvent(ev);
            m_viewDirty = true;
        });
        connect(session, &HostSession::stateChanged, m_flows,
                [this](Transport::State, const QString &message) {
                    if (!message.isEmpty())
                        appendOutput(message);
                });
    }
    if (const auto host = m_registry->host(alias))
        m_server->setProfile(host->serverProfile);
    if (session->state() == Transport::State::Disconnected || session->state() == Transport::State::Failed)
        session->connectToHost(); // the Hosts page asks for an unknown host key or a password
    return true;
}

void TunePage::applyRunEvent(const QJsonObject &e) {
    if (!m_progress.apply(e))
        return;
    AgentEvent ev;
    ev.type = e.value("type"_L1).toString();
    ev.object = e;
    m_chart->addEvent(ev);
    m_viewDirty = true;
}

void TunePage::refreshView() {
    m_viewDirty = false;
    const RunProgress &p = m_progress;
    // The bar and the per-GPU counts count the same units: journal + each GPU's timed and failed ones.
    const qint64 units = p.unitsDone();
    const qint64 total = qMax<qint64>(1, qMax(p.total, units));
    m_ui->progressBar->setMaximum(int(total));
    m_ui->progressBar->setValue(int(units));
    m_ui->progressBar->setFormat(p.progressLine());
    QStringList gpus;
    for (auto it = p.gpus.begin(); it != p.gpus.end(); ++it)
        gpus.append(tr("GPU %1: %2 units (%3 timed, %4 failed)")
                        .arg(it.key())
                        .arg(it->measured + it->failed)
                        .arg(it->measured)
                        .arg(it->failed));
    if (p.journalUnits > 0)
        gpus.append(tr("%1 from the journal").arg(p.journalUnits));
    QString gpuText = gpus.join(u"   "_s);
    if (p.failures > 0)
        gpuText += u"\n"_s + tr("Failed configs (skipped, never fatal): %1.").arg(p.failureText());
    m_ui->gpuLabel->setText(gpuText);
    m_ui->gpuLabel->setToolTip(
        p.failures > 0
            ? tr("A failed unit is a candidate config that could not run at that batch size: it did "
                 "not compile, needed more shared memory or registers than the GPU has, ran out "
                 "of memory, gave results that differ from the reference, or crashed its worker. "
                 "It is skipped; the others are still timed.")
            : QString());
    m_ui->progressBar->setToolTip(p.failures > 0 ? p.failureText() : QString());
    m_bestModel->setProgress(p);
    QString line = tr("Run %1 on %2: %3").arg(p.runId, m_ui->hostCombo->currentText(), p.state);
    if (!p.doneStatus.isEmpty())
        line += tr(" (%1, %2 measurements in %3 s)")
                    .arg(p.doneStatus)
                    .arg(p.measurements)
                    .arg(p.wallS, 0, 'f', 1);
    if (!p.error.isEmpty())
        line += u" - "_s + agentSentenceForGui(p.error, m_ui->hostCombo->currentText());
    if (p.simulated)
        line += tr(" - SIMULATED (synthetic backend: a test double for a GPU)");
    m_ui->runLabel->setText(line);
}

void TunePage::onPreflight() {
    if (!ensureFlows())
        return;
    setBusy(tr("Checking the GPUs of %1...").arg(m_ui->hostCombo->currentText()));
    m_tune->preflight(spec(), [this](const Preflight &p, const HostProbe &probe, const QString &error) {
        if (!error.isEmpty()) {
            m_ui->preflightText->setPlainText(
                tr("Preflight failed: %1").arg(agentSentenceForGui(error, m_ui->hostCombo->currentText())));
            setBusy(tr("Cannot start yet: see the preflight."));
            return;
        }
        m_probe = probe;
        if (m_target && m_ui->kSpin->value() == 0) // the probe knows what the log does not
            tuneTarget(hostAlias(), *m_target, m_before.value_or(Diagnosis{}));
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
        setBusy(p.canStart() ? tr("The GPUs are ready.") : tr("Cannot start yet: see the preflight."));
    });
}

void TunePage::onStopServer() {
    if (!ensureFlows())
        return;
    m_ui->stopServerButton->setEnabled(false);
    m_server->stop([this](const ServerControl::StopResult &r) {
        m_preflightNote = r.message; // shown above the GPUs as they are after the stop
        if (r.ok) // Restart and prove then only starts it (a stop command would fail on it now)
            m_serverStopped = true;
        onPreflight();
    });
}

void TunePage::onStart() {
    if (!ensureFlows())
        return;
    m_ui->startButton->setEnabled(false);
    setBusy(tr("Starting a run on %1...").arg(m_ui->hostCombo->currentText()));
    m_tune->start(spec(), [this](const QString &runId, const QJsonObject &, const QString &error) {
        updateChecks();
        if (!error.isEmpty()) {
            setBusy(tr("The run did not start: %1")
                        .arg(agentSentenceForGui(error, m_ui->hostCombo->currentText())));
            return;
        }
        onAttach(runId);
    });
}

QString TunePage::chosenRun() const {
    return m_ui->runsCombo->currentData().toString();
}

void TunePage::onAttach(const QString &runId) {
    if (runId.isEmpty()) {
        setBusy(
            tr("Choose a run first: Runs on host lists the runs of %1.").arg(m_ui->hostCombo->currentText()));
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
        m_bestModel->clear();
        m_chart->reset();
        m_runId = runId;
        beginRunFolder(runId); // a fresh follow replays from the first event: the folder starts over
    }
    m_following = true;
    updateChecks();
    m_ui->cancelButton->setEnabled(true);
    setBusy(tr("Following run %1...").arg(runId));
    m_tune->follow(runId, &m_progress, [this, runId](bool ok, const QString &error) {
        m_following = false;
        refreshView();
        flushRunEvents();
        m_ui->cancelButton->setEnabled(false);
        updateChecks();
        if (!ok) {
            setBusy(
                tr("Lost run %1: %2 (Attach follows it again from the last event seen.)").arg(runId, error));
            return;
        }
        if (m_ui->runsCombo->findData(runId) < 0)
            m_ui->runsCombo->addItem(u"%1 (%2%3)"_s.arg(runId, m_progress.doneStatus,
                                                        m_progress.simulated ? tr(", simulated") : QString()),
                                     runId);
        m_ui->runsCombo->setCurrentIndex(m_ui->runsCombo->findData(runId));
        emit runFinished(runId, m_progress.doneStatus);
    });
}

void TunePage::onCancel() {
    if (!m_tune || m_runId.isEmpty())
        return;
    // A cancelled run cannot be resumed from the app: ask first (window-modal, no nested event loop).
    auto *box = new QMessageBox(QMessageBox::Question, tr("Cancel Run"),
                                tr("Cancel run %1 on %2?").arg(m_runId, m_ui->hostCombo->currentText()),
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
        m_tune->cancel(runId, [this](bool, const QString &message) { appendOutput(message); });
    });
    box->open();
}

void TunePage::onRefreshRuns() {
    if (!ensureFlows())
        return;
    m_tune->listRuns([this](const QList<QJsonObject> &runs, const QString &error) {
        const QString keep = m_pendingRun.isEmpty() ? chosenRun() : m_pendingRun;
        m_ui->runsCombo->clear();
        if (!error.isEmpty()) {
            appendOutput(error);
            setBusy(error);
            return;
        }
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
                setBusy(tr("Run %1 is not on %2.").arg(run, m_ui->hostCombo->currentText()));
            else
                onAttach(run); // a finished run replays its events: the table and the chart fill
        }
    });
}

void TunePage::openRun(const QString &hostAlias, const QString &runId) {
    if (const int i = m_ui->hostCombo->findData(hostAlias); i >= 0)
        m_ui->hostCombo->setCurrentIndex(i);
    m_pendingRun = runId;
    m_ui->rightTabs->setCurrentWidget(m_ui->pushTab);
    onRefreshRuns();
}

void TunePage::onPreviewPush() {
    const QString runId = chosenRun().isEmpty() ? m_runId : chosenRun();
    if (runId.isEmpty()) {
        m_ui->pushText->setPlainText(tr("Choose a finished run first (Runs on host lists them)."));
        emit previewReady(QString(), m_ui->pushText->toPlainText());
        return;
    }
    if (!ensureFlows())
        return;
    m_ui->pushButton->setEnabled(false);
    m_ui->proofLabel->clear(); // a proof belongs to the push before this preview
    m_ui->pushText->setPlainText(
        tr("Reading run %1 and the server's view of %2...").arg(runId, m_ui->hostCombo->currentText()));
    m_push->preview(
        runId, spec().framework, m_before ? &*m_before : nullptr, m_probe ? &*m_probe : nullptr,
        m_ui->persistentCheck->isChecked(), [this, runId](const PushFlow::Preview &p) {
            m_preview = p;
            if (!p.ok()) {
                m_ui->pushText->setPlainText(agentSentenceForGui(p.error, m_ui->hostCombo->currentText()));
                emit previewReady(runId, p.error);
                return;
            }
            QStringList t{tr("Run %1: %2").arg(p.runId, p.shape.fileName(p.framework)),
                          tr("Target folder: %1").arg(p.target.folder),
                          tr("Why there: %1").arg(p.target.source)};
            if (p.simulated && p.canPush())
                t.append(tr("SIMULATED results: this host is a practice or test double, so they may go in; a "
                            "real server refuses them."));
            for (const QString &w : p.target.warnings)
                t.append(tr("Warning: %1").arg(w));
            if (!p.target.persistentFolder.isEmpty())
                t.append(
                    tr("Persistent alternative (tick 'persistent folder' and preview again): %1 with %2. %3")
                        .arg(p.target.persistentFolder, p.target.persistentEnv, p.target.persistentNote));
            for (const QJsonObject &d : p.diffs) {
                const bool exists = d.value("exists"_L1).toBool();
                const bool changed = d.value("changed"_L1).toBool(true);
                t.append(u"%1 %2"_s.arg(!exists   ? tr("new file")
                                        : changed ? tr("replace (backup kept)")
                                                  : tr("unchanged"),
                                        d.value("target"_L1).toString()));
                for (const PushRowMerge &m : std::as_const(p.merges)) {
                    if (m.target == d.value("target"_L1).toString())
                        t.append(m.lines()); // every row: kept / replaced with its gain / added / unmeasured
                }
                const QString diff = d.value("diff"_L1).toString();
                if ((exists || !p.canPush()) && !diff.isEmpty())
                    t.append(diff); // a refused push shows what it would have written
            }
            if (!p.refused.isEmpty())
                t.insert(1, tr("Push is off for this run: %1").arg(p.refused));
            m_ui->pushText->setPlainText(t.join(u'\n'));
            m_ui->pushButton->setEnabled(p.canPush());
            m_bench->suggest(p.framework, m_probe ? &*m_probe : nullptr,
                             m_server ? m_server->profile() : ServerProfile{});
            emit previewReady(runId, QString());
        });
}

void TunePage::onPush() {
    if (!m_preview || !m_push)
        return;
    m_ui->pushButton->setEnabled(false);
    const QString runId = m_preview->runId;
    m_push->push(*m_preview, [this, runId](const PushRecord &r, const QString &error) {
        m_pushedTargets.clear();
        QStringList t;
        for (const PushRecord::File &f : r.files) {
            m_pushedTargets.append(f.target);
            t.append(f.unchanged ? tr("unchanged %1 (the same bytes were there)").arg(f.target)
                                 : tr("installed %1%2")
                                       .arg(f.target, f.backup.isEmpty() ? tr(" (new file; undo removes it)")
                                                                         : tr(" (backup %1)").arg(f.backup)));
        }
        if (!error.isEmpty())
            t.append(agentSentenceForGui(error, m_ui->hostCombo->currentText()));
        else if (m_server && !m_server->profile().canStopStart())
            t.append(tr("Restart the server to load it: %1").arg(m_server->profile().validate()));
        else
            t.append(
                tr("Restart and prove restarts the server through its profile and re-diagnoses its log."));
        m_ui->pushText->appendPlainText(u"\n"_s + t.join(u'\n'));
        emit pushed(runId, error);
    });
}

void TunePage::onRestart() {
    if (!ensureFlows())
        return;
    const QString problem = m_server->profile().validate();
    if (!problem.isEmpty()) {
        m_ui->pushText->appendPlainText(u"\n"_s + problem);
        emit proved(m_runId, false);
        return;
    }
    m_ui->restartButton->setEnabled(false);
    const QString runId = chosenRun().isEmpty() ? m_runId : chosenRun();
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
    QDir().mkpath(dir);
    const QString log = QDir(dir).filePath(u"after-restart-%1.log"_s.arg(runId));
    m_ui->pushText->appendPlainText(
        u"\n"_s + (m_serverStopped
                       ? tr("Starting the server (stopped for the tuning) through the profile (%1)...")
                       : tr("Restarting through the profile (%1)..."))
                      .arg(m_server->profile().summary()));
    m_push->restartAndProve(
        m_before.value_or(Diagnosis{}), m_pushedTargets, log,
        [this, runId](const PushFlow::Proof &p) {
            m_ui->restartButton->setEnabled(true);
            if (p.start.ok)
                m_serverStopped = false;
            QStringList t{tr("Before/after: %1").arg(p.message)};
            if (!p.proof.ranksBefore.isEmpty())
                t.append(tr("  warned before: %1").arg(p.proof.ranksBefore.join(u", "_s)));
            for (const PushProof::Remaining &r : p.proof.remaining)
                t.append(tr("  still: %1 (%2)").arg(r.title, r.sources.join(u", "_s)));
            if (p.ok && p.proof.warningGone())
                t.append(tr("  warning gone on every rank"));
            if (!p.proof.ranksUsing.isEmpty())
                t.append(tr("  ranks using the pushed file: %1").arg(p.proof.ranksUsing.join(u", "_s)));
            if (!p.afterLogFile.isEmpty())
                t.append(tr("  log since the restart: %1").arg(p.afterLogFile));
            m_ui->proofLabel->setText(p.ok ? p.proof.summary() : p.message);
            if (p.ok && runId == QDir(m_runFolder).dirName())
                saveRunPart(u"diagnosis-after.json"_s, p.after.toJson());
            m_ui->pushText->appendPlainText(t.join(u'\n'));
            emit proved(runId, p.ok && p.proof.warningGone());
        },
        m_serverStopped);
}

void TunePage::onUndo() {
    const QString runId = chosenRun().isEmpty() ? m_runId : chosenRun();
    if (runId.isEmpty()) {
        m_ui->pushText->appendPlainText(tr("Choose the run whose push to undo first."));
        emit undone(QString(), tr("no run"));
        return;
    }
    if (!ensureFlows())
        return;
    m_push->undo(runId, [this, runId](const PushRecord &r, const QString &error) {
        QStringList t;
        if (error.isEmpty()) {
            for (const PushRecord::File &f : r.files)
                t.append(f.backup.isEmpty()
                             ? tr("removed %1 (it did not exist before the push)").arg(f.target)
                             : tr("restored %1 from %2").arg(f.target, f.backup));
            t.append(tr("Undone: the files the push replaced are back; restart the server to load them."));
        } else {
            t.append(error);
        }
        m_ui->pushText->appendPlainText(u"\n"_s + t.join(u'\n'));
        emit undone(runId, error);
    });
}

void TunePage::onEditProfile() {
    const auto host = m_registry->host(hostAlias());
    if (!host)
        return;
    std::optional<ServerProfile> suggestion;
    const HostSession *c = m_registry->connection(host->alias);
    const std::optional<HostProbe> probe = c ? c->lastProbe() : m_probe;
    if (probe && !probe->servers.isEmpty())
        suggestion = suggestServerProfile(probe->servers.first());
    auto *dialog =
        new ServerProfileDialog(m_registry->displayName(host->alias), host->serverProfile, suggestion, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ServerProfileDialog::profileAccepted, this,
            [this, alias = host->alias](const ServerProfile &p) {
                auto h = m_registry->host(alias);
                if (!h)
                    return;
                h->serverProfile = p;
                m_registry->save(*h);
                updateProfileLine();
            });
    dialog->open();
}

void TunePage::beginRunFolder(const QString &runId) {
    m_runFolder.clear();
    m_ui->resultsButton->setEnabled(false);
    QString error;
    WorkspaceRun run;
    run.runId = runId;
    run.host = m_ui->hostCombo->currentText();
    run.source = tr("Tune page, followed from %1").arg(m_ui->hostCombo->currentText());
    run.spec = spec().toJson();
    if (m_probe)
        run.hostFacts = m_probe->raw;
    if (m_before)
        run.diagnosisBefore = m_before->toJson();
    // The headroom check of this very job, when one ran before the tune (the report shows it).
    if (m_headroom->result() && m_headroom->resultSpec().toJson() == run.spec)
        run.headroom = m_headroom->result()->toJson();
    if (!m_flows->runKeeper()->begin(m_workspacePath, run, &error, tr("My runs"))) {
        appendOutput(tr("This run is not kept locally: %1").arg(error));
        return;
    }
    m_runFolder = m_flows->runKeeper()->runFolder();
    m_ui->resultsButton->setEnabled(true);
}

void TunePage::flushRunEvents() {
    QString error;
    if (m_flows && !m_flows->runKeeper()->flush(&error))
        appendOutput(error);
}

void TunePage::saveRunPart(const QString &file, const QJsonObject &json) {
    QSaveFile f(QDir(m_runFolder).filePath(file));
    const QByteArray bytes = QJsonDocument(json).toJson();
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        appendOutput(tr("Could not write %1: %2").arg(f.fileName(), f.errorString()));
}

// The serving benchmark box of the push tab (app/tune/servingbenchbox): the page hands it the host's
// flows and the preview when it asks, keeps its result with the run, and takes over its push.
void TunePage::setupServingBox() {
    m_bench = new ServingBenchBox(this);
    m_bench->setObjectName(u"servingBenchBox"_s);
    m_ui->pushPane->layout()->addWidget(m_bench);
    m_bench->setProvider([this]() -> std::optional<ServingBenchBox::Context> {
        if (!ensureFlows())
            return std::nullopt;
        ServingBenchBox::Context c{m_calls,   m_push,   m_server, spec().framework,
                                   m_preview, m_before, m_probe,  {}};
        const QString dir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
        QDir().mkpath(dir);
        c.afterLogFile =
            QDir(dir).filePath(u"after-restart-%1.log"_s.arg(m_preview ? m_preview->runId : m_runId));
        return c;
    });
    connect(m_bench, &ServingBenchBox::finished, this, [this](const ServingComparison &c) {
        if (!m_runFolder.isEmpty() && !c.runId.isEmpty() && c.runId == QDir(m_runFolder).dirName())
            saveRunPart(u"serving.json"_s, c.toJson());
    });
    connect(m_bench, &ServingBenchBox::pushedByComparison, this,
            [this](const PushRecord &r, bool, const QString &summary) {
                m_pushedTargets.clear();
                for (const PushRecord::File &f : r.files)
                    m_pushedTargets.append(f.target);
                m_ui->proofLabel->setText(summary);
                emit pushed(r.runId, QString());
            });
    connect(m_bench, &ServingBenchBox::undoRequested, this, &TunePage::onUndo);
}

} // namespace moetune
