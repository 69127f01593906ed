#include "app/tune/tunepage.h"

#include "app/tune/tunebestmodel.h"
#include "app/tune/tunejobcheck.h"
#include "charts/livebestchart.h"
#include "remote/hostcalls.h"
#include "remote/servercontrol.h"
#include "remote/tuneflow.h"
#include "ui_tunepage.h"

#include <QDir>
#include <QHeaderView>
#include <QJsonArray>
#include <QScrollBar>
#include <QTimer>

using namespace Qt::StringLiterals;

namespace moetune {

TunePage::TunePage(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::TunePage>())
    , m_env(HostSession::userEnvironment())
    , m_bestModel(new TuneBestModel(this))
    , m_chart(new LiveBestChart(this)) {
    m_ui->setupUi(this);
    m_ui->chartLayout->addWidget(m_chart);
    m_ui->bestTable->setModel(m_bestModel);
    m_ui->bestTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ui->bestTable->verticalHeader()->hide();
    setupForm();
    // Events may stream at 1000/s: the labels and the table are refreshed at most 10 times a second.
    auto *refresh = new QTimer(this);
    refresh->setInterval(100);
    connect(refresh, &QTimer::timeout, this, [this] {
        if (m_viewDirty)
            refreshView();
    });
    refresh->start();
    connect(m_ui->preflightButton, &QPushButton::clicked, this, &TunePage::onPreflight);
    connect(m_ui->stopServerButton, &QPushButton::clicked, this, &TunePage::onStopServer);
    connect(m_ui->startButton, &QPushButton::clicked, this, &TunePage::onStart);
    connect(m_ui->cancelButton, &QPushButton::clicked, this, &TunePage::onCancel);
    connect(m_ui->refreshRunsButton, &QPushButton::clicked, this, &TunePage::onRefreshRuns);
    connect(m_ui->attachButton, &QPushButton::clicked, this,
            [this] { onAttach(m_ui->runsCombo->currentData().toString()); });
    connect(m_ui->pushPreviewButton, &QPushButton::clicked, this, &TunePage::onPreviewPush);
    connect(m_ui->pushButton, &QPushButton::clicked, this, &TunePage::onPush);
    connect(m_ui->restartButton, &QPushButton::clicked, this, &TunePage::onRestart);
    connect(m_ui->undoButton, &QPushButton::clicked, this, &TunePage::onUndo);
    m_ui->stopServerButton->setEnabled(false);
    m_ui->cancelButton->setEnabled(false);
    m_ui->pushButton->setEnabled(false);
    m_ui->restartButton->setEnabled(false);
    m_ui->runLabel->setText(tr("No run yet: fill in the job, check the GPUs, then start."));
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
    m_ui->backendCombo->addItem(tr("synthetic (SIMULATED numbers)"), u"synthetic"_s);
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
        if (m_session && m_session->host().alias != m_ui->hostCombo->currentData().toString()) {
            m_session->deleteLater();
            m_session = nullptr;
        }
    });
    updateChecks();
}

void TunePage::setHosts(const QList<HostConfig> &hosts) {
    m_hosts = hosts;
    const QString current = m_ui->hostCombo->currentData().toString();
    m_ui->hostCombo->clear();
    for (const HostConfig &h : hosts)
        m_ui->hostCombo->addItem(h.label(), h.alias);
    const int i = m_ui->hostCombo->findData(current);
    if (i >= 0)
        m_ui->hostCombo->setCurrentIndex(i);
}

void TunePage::tuneTarget(const QString &hostAlias, const TuningTarget &target, const Diagnosis &diagnosis) {
    m_target = target;
    m_before = diagnosis;
    TuneSpec s = TuneSpec::fromTarget(target, m_probe ? &*m_probe : nullptr);
    tuneSpec(hostAlias, s);
    m_ui->sourceLabel->setText(
        tr("From the finding: %1 wanted in %2.").arg(target.shapeSummary(), target.installFolder()));
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
    if (!m_target)
        m_ui->sourceLabel->setText(tr("By hand or from the host's probe: check every field."));
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
    for (const auto &p : c.problems) {
        sentences.append(p.sentence);
        if (QWidget *w = findChild<QWidget *>(p.field))
            w->setToolTip(p.sentence);
    }
    m_ui->validationLabel->setText(sentences.join(u'\n'));
    m_ui->validationLabel->setStyleSheet(sentences.isEmpty() ? QString() : u"color: #b03030;"_s);
    QString names = tr("Files the run writes: %1").arg(c.fileNames.join(u", "_s));
    if (!c.fileNamesMatch.isEmpty())
        names += u"\n"_s + c.fileNamesMatch;
    if (s.backend == "synthetic"_L1)
        names +=
            u"\n"_s + tr("SIMULATED: the synthetic backend measures nothing; its files cannot be installed.");
    m_ui->fileNamesLabel->setText(names);
    m_ui->startButton->setEnabled(c.ok() && m_ui->hostCombo->count() > 0);
}

void TunePage::appendOutput(const QString &line) {
    m_ui->outputText->appendPlainText(line);
}

void TunePage::setBusy(const QString &what) {
    m_ui->runLabel->setText(what);
}

void TunePage::ensureSession() {
    if (m_session)
        return;
    const QString alias = m_ui->hostCombo->currentData().toString();
    HostConfig host;
    for (const HostConfig &h : std::as_const(m_hosts)) {
        if (h.alias == alias)
            host = h;
    }
    m_session = new HostSession(host, m_env, this);
    // Host keys and secrets are asked on the Hosts page; here an unknown key or a secret is a sentence.
    connect(m_session, &HostSession::hostKeyUnknown, this, [this](const QString &, const QString &fp) {
        m_session->answerHostKey(false);
        appendOutput(tr("The host key (%1) is not known yet: connect on the Hosts page first.").arg(fp));
    });
    connect(m_session, &HostSession::secretRequested, this, [this] {
        m_session->cancelSecret();
        appendOutput(tr("The host asks for a password or passphrase: connect on the Hosts page first."));
    });
    m_session->connectToHost();
    m_calls = new HostCalls(m_session->transport(), m_session->agent(), m_session);
    m_tune = new TuneFlow(m_calls, m_session);
    m_server = new ServerControl(m_calls, host.serverProfile, m_session);
    m_push = new PushFlow(m_calls, m_server, host.label(), m_session);
    connect(m_calls, &HostCalls::commandStarted, this,
            [this](const QString &c) { appendOutput(u"$ "_s + c); });
    connect(m_calls, &HostCalls::commandOutput, this,
            [this](const QString &l) { appendOutput(u"  | "_s + l); });
    connect(m_calls, &HostCalls::commandEnded, this, [this](const QString &, int status, const QString &e) {
        if (status != 0 || !e.isEmpty())
            appendOutput(tr("  (exit status %1%2)").arg(status).arg(e.isEmpty() ? QString() : u", "_s + e));
    });
    connect(m_server, &ServerControl::status, this, &TunePage::appendOutput);
    connect(m_push, &PushFlow::status, this, &TunePage::appendOutput);
    connect(m_tune, &TuneFlow::reattaching, this, [this](const QString &why) {
        appendOutput(why);
        setBusy(why);
    });
    connect(m_tune, &TuneFlow::runEvent, this, [this](const QJsonObject &e) {
        // already applied to m_progress by the flow; the chart and the table follow
        AgentEvent ev;
        ev.type = e.value("type"_L1).toString();
        ev.object = e;
        m_chart->addEvent(ev);
        m_viewDirty = true;
    });
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
    m_ui->progressBar->setMaximum(int(qMax<qint64>(1, p.total)));
    m_ui->progressBar->setValue(int(qMin(p.done, qMax<qint64>(1, p.total))));
    m_ui->progressBar->setFormat(p.progressLine());
    QStringList gpus;
    for (auto it = p.gpus.begin(); it != p.gpus.end(); ++it)
        gpus.append(tr("GPU %1: %2 measured, %3 failed").arg(it.key()).arg(it->measured).arg(it->failed));
    m_ui->gpuLabel->setText(gpus.join(u"   "_s));
    m_bestModel->setProgress(p);
    m_ui->runLabel->setText(tr("Run %1 on %2: %3%4")
                                .arg(p.runId, m_ui->hostCombo->currentText(), p.state,
                                     p.simulated ? tr(" - SIMULATED (synthetic backend)") : QString()));
}

void TunePage::onPreflight() {
    ensureSession();
    setBusy(tr("Checking the GPUs of %1...").arg(m_ui->hostCombo->currentText()));
    m_tune->preflight(spec(), [this](const Preflight &p, const HostProbe &probe, const QString &error) {
        if (!error.isEmpty()) {
            m_ui->preflightText->setPlainText(tr("Preflight failed: %1").arg(error));
            return;
        }
        m_probe = probe;
        if (m_target && m_ui->kSpin->value() == 0) // the probe knows what the log does not
            tuneTarget(m_ui->hostCombo->currentData().toString(), *m_target, m_before.value_or(Diagnosis{}));
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
        m_ui->preflightText->setPlainText(lines.join(u'\n'));
        m_ui->stopServerButton->setEnabled(p.serverHoldsGpus && m_server->profile().canStopStart());
        setBusy(p.canStart() ? tr("The GPUs are ready.") : tr("Cannot start yet: see the preflight."));
    });
}

void TunePage::onStopServer() {
    ensureSession();
    m_ui->stopServerButton->setEnabled(false);
    m_server->stop([this](const ServerControl::StopResult &r) {
        m_ui->preflightText->appendPlainText(r.message);
        onPreflight();
    });
}

void TunePage::onStart() {
    ensureSession();
    m_ui->startButton->setEnabled(false);
    m_tune->start(spec(), [this](const QString &runId, const QJsonObject &, const QString &error) {
        m_ui->startButton->setEnabled(true);
        if (!error.isEmpty()) {
            setBusy(tr("The run did not start: %1").arg(error));
            return;
        }
        onAttach(runId);
    });
}

void TunePage::onAttach(const QString &runId) {
    if (runId.isEmpty())
        return;
    ensureSession();
    if (m_runId != runId) {
        m_progress = RunProgress{};
        m_bestModel->clear();
        m_chart->reset();
        m_runId = runId;
    }
    m_ui->cancelButton->setEnabled(true);
    setBusy(tr("Following run %1...").arg(runId));
    m_tune->follow(runId, &m_progress, [this, runId](bool ok, const QString &error) {
        refreshView();
        m_ui->cancelButton->setEnabled(false);
        if (!ok) {
            setBusy(tr("Lost run %1: %2").arg(runId, error));
            return;
        }
        emit runFinished(runId, m_progress.doneStatus);
    });
}

void TunePage::onCancel() {
    if (!m_tune || m_runId.isEmpty())
        return;
    m_tune->cancel(m_runId, [this](bool, const QString &message) { appendOutput(message); });
}

void TunePage::onRefreshRuns() {
    ensureSession();
    m_tune->listRuns([this](const QList<QJsonObject> &runs, const QString &error) {
        m_ui->runsCombo->clear();
        if (!error.isEmpty()) {
            appendOutput(error);
            return;
        }
        for (const QJsonObject &r : runs)
            m_ui->runsCombo->addItem(
                u"%1 (%2%3)"_s.arg(r.value("run_id"_L1).toString(), r.value("state"_L1).toString(),
                                   r.value("simulated"_L1).toBool() ? u", simulated"_s : QString()),
                r.value("run_id"_L1).toString());
    });
}

void TunePage::onPreviewPush() {
    if (m_runId.isEmpty() && m_ui->runsCombo->count() > 0)
        m_runId = m_ui->runsCombo->currentData().toString();
    if (m_runId.isEmpty()) {
        m_ui->pushText->setPlainText(tr("Choose a finished run first."));
        return;
    }
    ensureSession();
    m_push->preview(
        m_runId, spec().framework, m_before ? &*m_before : nullptr, m_probe ? &*m_probe : nullptr,
        m_ui->persistentCheck->isChecked(), [this](const PushFlow::Preview &p) {
            m_preview = p;
            if (!p.ok()) {
                m_ui->pushText->setPlainText(p.error);
                m_ui->pushButton->setEnabled(false);
                return;
            }
            QStringList t{tr("Target: %1").arg(p.target.folder), tr("From %1").arg(p.target.source)};
            if (p.simulated)
                t.append(tr("SIMULATED results: the agent refuses to install them on a real host."));
            for (const QString &w : p.target.warnings)
                t.append(tr("Warning: %1").arg(w));
            if (!p.target.persistentFolder.isEmpty())
                t.append(
                    tr("Persistent alternative: %1 with %2. %3")
                        .arg(p.target.persistentFolder, p.target.persistentEnv, p.target.persistentNote));
            for (const QJsonObject &d : p.diffs) {
                t.append(u"%1 %2"_s.arg(d.value("exists"_L1).toBool() ? tr("replace") : tr("new"),
                                        d.value("target"_L1).toString()));
                const QString diff = d.value("diff"_L1).toString();
                if (d.value("exists"_L1).toBool() && !diff.isEmpty())
                    t.append(diff);
            }
            m_ui->pushText->setPlainText(t.join(u'\n'));
            m_ui->pushButton->setEnabled(true);
        });
}

void TunePage::onPush() {
    if (!m_preview || !m_push)
        return;
    m_ui->pushButton->setEnabled(false);
    m_push->push(*m_preview, [this](const PushRecord &r, const QString &error) {
        m_pushedTargets.clear();
        QStringList t;
        for (const PushRecord::File &f : r.files) {
            m_pushedTargets.append(f.target);
            t.append(tr("installed %1%2")
                         .arg(f.target, f.backup.isEmpty() ? QString() : tr(" (backup %1)").arg(f.backup)));
        }
        if (!error.isEmpty())
            t.append(error);
        m_ui->pushText->appendPlainText(t.join(u'\n'));
        m_ui->restartButton->setEnabled(error.isEmpty() && m_server->profile().canStopStart());
    });
}

void TunePage::onRestart() {
    if (!m_push)
        return;
    m_ui->restartButton->setEnabled(false);
    const QString log = QDir::temp().filePath(u"moetune-after-restart-%1.log"_s.arg(m_runId));
    m_push->restartAndProve(m_before.value_or(Diagnosis{}), m_pushedTargets, log,
                            [this](const PushFlow::Proof &p) {
                                QStringList t{tr("Before/after: %1").arg(p.message)};
                                for (const PushProof::Remaining &r : p.proof.remaining)
                                    t.append(tr("  still: %1 (%2)").arg(r.title, r.sources.join(u", "_s)));
                                m_ui->pushText->appendPlainText(t.join(u'\n'));
                            });
}

void TunePage::onUndo() {
    if (!m_push || m_runId.isEmpty())
        return;
    m_push->undo(m_runId, [this](const PushRecord &, const QString &error) {
        m_ui->pushText->appendPlainText(error.isEmpty() ? tr("Undone: the files the push replaced are back.")
                                                        : error);
    });
}

} // namespace moetune
