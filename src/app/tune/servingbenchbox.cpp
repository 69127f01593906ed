// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/servingbenchbox.h"

#include "charts/servingchart.h"

#include "ui_servingbenchbox.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpacerItem>

using namespace Qt::StringLiterals;

namespace moetune {

ServingBenchBox::ServingBenchBox(QWidget *parent)
    : QGroupBox(parent)
    , m_ui(std::make_unique<Ui::ServingBenchBox>())
    , m_chart(new ServingChart(this))
    , m_adaptiveCheck(new QCheckBox(tr("adaptive"), this))
    , m_marginSpin(new QDoubleSpinBox(this))
    , m_hoursSpin(new QDoubleSpinBox(this))
    , m_filler(new QSpacerItem(0, 0, QSizePolicy::Minimum, QSizePolicy::Minimum)) {
    m_ui->setupUi(this);
    m_ui->boxLayout->addSpacerItem(m_filler);
    // The statistics row: the margin of "no change", the adaptive mode, the whole comparison's time limit.
    m_adaptiveCheck->setObjectName(u"adaptiveCheck"_s);
    m_adaptiveCheck->setToolTip(
        tr("Adds order-balanced pairs (from 2) until the primary metric's 95% interval "
           "is narrower than the margin, the pairs above being the cap"));
    m_marginSpin->setObjectName(u"marginSpin"_s);
    m_marginSpin->setRange(0.5, 50);
    m_marginSpin->setDecimals(1);
    m_marginSpin->setSingleStep(0.5);
    m_marginSpin->setValue(ServingComparison::kDefaultMarginPct);
    m_marginSpin->setSuffix(u" %"_s);
    m_marginSpin->setToolTip(tr("\"No change\" only when the 95% interval lies within plus or minus this"));
    m_hoursSpin->setObjectName(u"hoursSpin"_s);
    m_hoursSpin->setRange(0.1, 48);
    m_hoursSpin->setDecimals(1);
    m_hoursSpin->setValue(6);
    m_hoursSpin->setSuffix(tr(" h"));
    m_hoursSpin->setToolTip(tr("No leg starts, and no benchmark run goes on, past this time for the whole "
                               "comparison"));
    auto *statsRow = new QHBoxLayout;
    statsRow->addWidget(new QLabel(tr("margin \u00b1"), this));
    statsRow->addWidget(m_marginSpin);
    statsRow->addWidget(m_adaptiveCheck);
    statsRow->addWidget(new QLabel(tr("time limit"), this));
    statsRow->addWidget(m_hoursSpin);
    statsRow->addStretch(1);
    m_ui->boxLayout->insertLayout(m_ui->boxLayout->indexOf(m_ui->rigorRow) + 1, statsRow);
    m_adaptiveCheck->setEnabled(false);
    connect(m_ui->rigorousCheck, &QCheckBox::toggled, m_adaptiveCheck, &QCheckBox::setEnabled);
    m_ui->chartLayout->addWidget(m_chart);
    // The labels keep their height: when the chart is hidden (nothing measured) the text takes the room.
    for (QWidget *w : std::initializer_list<QWidget *>{m_ui->verdictLabel, m_ui->legLabel})
        w->setSizePolicy(w->sizePolicy().horizontalPolicy(), QSizePolicy::Maximum);
    // Floors, so that a short window scrolls the Push and proof tab (its scroll area) instead of
    // squeezing the verdict, the chart and the notes into slivers.
    const int line = fontMetrics().lineSpacing();
    m_ui->verdictLabel->setMinimumHeight(3 * line);
    m_ui->legLabel->setMinimumHeight(2 * line);
    m_ui->chartHolder->setMinimumHeight(16 * line);
    m_ui->benchText->setMinimumHeight(3 * line);
    for (const QString &id : ServingWorkload::presetIds())
        m_ui->presetCombo->addItem(id, id);
    m_ui->presetCombo->addItem(tr("custom"), u"custom"_s);
    m_ui->hostEdit->setText(u"127.0.0.1"_s);
    m_ui->portSpin->setValue(30000);
    applyPreset(u"decode"_s);
    connect(m_ui->presetCombo, &QComboBox::currentIndexChanged, this, [this] {
        const QString id = m_ui->presetCombo->currentData().toString();
        if (!m_loading && id != "custom"_L1)
            applyPreset(id);
    });
    const auto edited = [this] {
        if (!m_loading) {
            m_loading = true;
            m_ui->presetCombo->setCurrentIndex(m_ui->presetCombo->findData(u"custom"_s));
            m_loading = false;
        }
        updateValidation();
    };
    for (QSpinBox *s : {m_ui->inputSpin, m_ui->outputSpin, m_ui->promptsSpin, m_ui->seedSpin})
        connect(s, &QSpinBox::valueChanged, this, edited);
    connect(m_ui->concurrencyEdit, &QLineEdit::textEdited, this, edited);
    const auto typed = [this] {
        m_addressTyped = true;
        updateValidation();
    };
    connect(m_ui->hostEdit, &QLineEdit::textEdited, this, typed);
    connect(m_ui->portSpin, &QSpinBox::valueChanged, this, [this] { updateValidation(); });
    connect(m_ui->rigorousCheck, &QCheckBox::toggled, m_ui->pairsSpin, &QSpinBox::setEnabled);
    m_ui->pairsSpin->setEnabled(false);
    connect(m_ui->benchButton, &QPushButton::clicked, this, &ServingBenchBox::benchmarkNow);
    connect(m_ui->compareButton, &QPushButton::clicked, this, &ServingBenchBox::compare);
    connect(m_ui->cancelButton, &QPushButton::clicked, this, [this] {
        if (m_flow) {
            m_flow->cancel();
            m_ui->legLabel->setText(tr("Cancelling after the command that runs now..."));
        }
    });
    connect(m_ui->undoButton, &QPushButton::clicked, this, &ServingBenchBox::undoRequested);
    m_ui->undoButton->setVisible(false);
    m_ui->legBar->setRange(0, 1);
    m_ui->legBar->setValue(0);
    m_ui->legBar->setFormat(tr("no leg run yet")); // never "leg 0 of 1"
    m_ui->legLabel->setText(tr("Preview push, then \"Push, restart and compare\": the server's own serving "
                               "benchmark before the push and after the restart."));
    m_ui->benchText->setPlaceholderText(tr("The figures of each leg and the exact commands appear here."));
    setRunning(false);
    updateValidation();
}

ServingBenchBox::~ServingBenchBox() = default;

void ServingBenchBox::applyPreset(const QString &id) {
    const auto w = ServingWorkload::fromPreset(id);
    if (!w)
        return;
    m_loading = true;
    m_ui->presetCombo->setCurrentIndex(m_ui->presetCombo->findData(id));
    m_ui->inputSpin->setValue(w->inputLen);
    m_ui->outputSpin->setValue(w->outputLen);
    m_ui->promptsSpin->setValue(w->numPrompts);
    QStringList cs;
    for (int c : w->concurrencies)
        cs.append(QString::number(c));
    m_ui->concurrencyEdit->setText(cs.join(u','));
    m_ui->seedSpin->setValue(w->seed);
    m_ui->presetCombo->setToolTip(ServingWorkload::presetDescription(id));
    m_loading = false;
    updateValidation();
}

void ServingBenchBox::suggest(Framework framework, const HostProbe *probe, const ServerProfile &profile) {
    const ServingBenchCommand c = ServingBenchCommand::suggest(framework, probe, profile);
    if (!m_addressTyped) {
        m_ui->hostEdit->setText(c.host);
        m_ui->portSpin->setValue(c.port);
        m_addressFrom = c.addressFrom;
    }
    updateValidation();
}

ServingFlow::Plan ServingBenchBox::plan() const {
    ServingFlow::Plan p;
    p.workload.preset = m_ui->presetCombo->currentData().toString();
    p.workload.inputLen = m_ui->inputSpin->value();
    p.workload.outputLen = m_ui->outputSpin->value();
    p.workload.numPrompts = m_ui->promptsSpin->value();
    p.workload.seed = m_ui->seedSpin->value();
    p.workload.concurrencies =
        ServingWorkload::parseConcurrencies(m_ui->concurrencyEdit->text()).value_or(QList<int>{});
    p.bench.host = m_ui->hostEdit->text().trimmed();
    p.bench.port = m_ui->portSpin->value();
    p.bench.tool = m_ui->toolEdit->text().trimmed();
    p.bench.addressFrom = m_addressTyped ? ServingBenchCommand::AddressFrom::User : m_addressFrom;
    p.rigorous = m_ui->rigorousCheck->isChecked();
    p.pairs = m_ui->pairsSpin->value();
    p.adaptive = p.rigorous && m_adaptiveCheck->isChecked();
    p.marginPct = m_marginSpin->value();
    p.timeLimitS = int(std::lround(m_hoursSpin->value() * 3600));
    return p;
}

QString ServingBenchBox::validation() const {
    QString err;
    if (!ServingWorkload::parseConcurrencies(m_ui->concurrencyEdit->text(), &err))
        return err;
    return plan().validate();
}

void ServingBenchBox::updateValidation() {
    const QString v = validation();
    m_ui->validationLabel->setText(v);
    m_ui->validationLabel->setVisible(!v.isEmpty());
    m_ui->benchButton->setEnabled(v.isEmpty() && !m_flow);
    m_ui->compareButton->setEnabled(v.isEmpty() && !m_flow);
}

void ServingBenchBox::endRun() {
    if (m_flow)
        m_flow->disconnect(this); // its progress from now on is another view's
    m_flow = nullptr;
    setRunning(false);
}

void ServingBenchBox::setRunning(bool running) {
    m_ui->cancelButton->setEnabled(running);
    updateValidation();
}

void ServingBenchBox::useFlow(ServingFlow *flow) {
    m_flow = flow;
    connect(flow, &ServingFlow::legStarted, this, [this](int i, int total, QChar arm) {
        m_ui->legBar->setRange(0, total);
        m_ui->legBar->setValue(i);
        m_ui->legBar->setFormat(tr("%v of %m legs done"));
        m_ui->legLabel->setText(
            tr("Leg %1 of %2 (%3): %4")
                .arg(i + 1)
                .arg(total)
                .arg(arm)
                .arg(arm == u'A' ? tr("the files the server had") : tr("the pushed files")));
    });
    connect(flow, &ServingFlow::status, this,
            [this](const QString &line) { m_ui->benchText->appendPlainText(line); });
    connect(flow, &ServingFlow::legFinished, this, [this](int i, const ServingComparison &soFar) {
        m_ui->legBar->setValue(i + 1);
        const ServingComparison::Leg &l = soFar.legs.last();
        QStringList parts;
        for (const ServingResult &r : l.results)
            parts.append(tr("c=%1: TTFT %2 ms, TPOT %3 ms, %4 tok/s")
                             .arg(r.concurrency)
                             .arg(r.medianTtftMs, 0, 'f', 2)
                             .arg(r.medianTpotMs, 0, 'f', 2)
                             .arg(r.outputThroughput, 0, 'f', 1));
        m_ui->benchText->appendPlainText(
            tr("Leg %1 (%2) %3%4")
                .arg(i + 1)
                .arg(l.arm)
                .arg(l.ok() ? parts.join(u"; "_s) : l.error,
                     soFar.servingSimulated ? tr(" (SIMULATED figures, no server measured)") : QString()));
        m_chart->setComparison(soFar);
    });
}

void ServingBenchBox::benchmarkNow() {
    if (m_flow || !m_provider)
        return;
    const auto c = m_provider();
    if (!c || !c->serving) {
        m_ui->verdictLabel->setText(
            tr("Not connected to the host: choose it on the left (the Hosts page logs in)."));
        return;
    }
    if (c->serving->running()) { // the session's flow, started by another view of this host
        m_ui->verdictLabel->setText(tr("A serving benchmark already runs on this host: wait for it to end."));
        return;
    }
    // Several servers and no choice: ask which, never benchmark the first one (issue 41).
    if (const QString ask =
            c->probe ? c->probe->serverQuestion(tr("in the Hosts page's Server list")) : QString();
        !ask.isEmpty()) {
        m_ui->verdictLabel->setText(ask);
        return;
    }
    suggest(c->framework, c->probe ? &*c->probe : nullptr,
            c->server ? c->server->profile() : ServerProfile{});
    m_ui->benchText->clear();
    m_ui->undoButton->setVisible(false);
    m_ui->verdictLabel->setText(tr("Benchmarking the server as it is..."));
    m_chart->setVisible(true);
    m_ui->chartHolder->setVisible(true);
    m_filler->changeSize(0, 0, QSizePolicy::Minimum, QSizePolicy::Minimum);
    useFlow(c->serving);
    setRunning(true);
    ServingFlow::Plan p = plan();
    const ServingBenchCommand suggested = ServingBenchCommand::suggest(
        c->framework, c->probe ? &*c->probe : nullptr, c->server ? c->server->profile() : ServerProfile{});
    p.bench.framework = suggested.framework;
    p.bench.model = suggested.model;
    p.bench.python = suggested.python;
    p.bench.container = suggested.container;
    p.bench.environment = suggested.environment;
    QPointer<ServingBenchBox> self(this); // the flow is the session's: it may outlive the box
    m_flow->benchmark(p, [self](const ServingComparison &cmp) {
        if (!self)
            return;
        self->endRun();
        self->showComparison(cmp);
        emit self->finished(cmp);
    });
}

void ServingBenchBox::compare() {
    if (m_flow || !m_provider)
        return;
    const auto c = m_provider();
    if (!c || !c->serving) {
        m_ui->verdictLabel->setText(
            tr("Not connected to the host: choose it on the left (the Hosts page logs in)."));
        return;
    }
    if (c->serving->running()) { // the session's flow, started by another view of this host
        m_ui->verdictLabel->setText(tr("A serving benchmark already runs on this host: wait for it to end."));
        return;
    }
    // Several servers and no choice: ask which, never benchmark the first one (issue 41).
    if (const QString ask =
            c->probe ? c->probe->serverQuestion(tr("in the Hosts page's Server list")) : QString();
        !ask.isEmpty()) {
        m_ui->verdictLabel->setText(ask);
        return;
    }
    if (!c->preview || !c->preview->ok()) {
        m_ui->verdictLabel->setText(
            tr("Preview push first: the comparison pushes exactly the files the preview shows."));
        return;
    }
    suggest(c->preview->framework, c->probe ? &*c->probe : nullptr,
            c->server ? c->server->profile() : ServerProfile{});
    m_ui->benchText->clear();
    m_ui->undoButton->setVisible(false);
    m_chart->clear();
    m_chart->setVisible(true);
    m_ui->chartHolder->setVisible(true);
    m_filler->changeSize(0, 0, QSizePolicy::Minimum, QSizePolicy::Minimum);
    m_ui->verdictLabel->setText(tr("Benchmark before the push, then push, restart and benchmark again..."));
    useFlow(c->serving);
    setRunning(true);
    ServingFlow::Plan p = plan();
    const ServingBenchCommand suggested =
        ServingBenchCommand::suggest(c->preview->framework, c->probe ? &*c->probe : nullptr,
                                     c->server ? c->server->profile() : ServerProfile{});
    p.bench.framework = suggested.framework;
    p.bench.model = suggested.model;
    p.bench.python = suggested.python;
    p.bench.container = suggested.container;
    p.bench.environment = suggested.environment;
    QPointer<ServingBenchBox> self(this); // the flow is the session's: it may outlive the box
    m_flow->compare(p, *c->preview, c->before.value_or(Diagnosis{}), c->afterLogFile,
                    [self](const ServingFlow::Outcome &o) {
                        if (!self)
                            return;
                        self->endRun();
                        self->showComparison(o.comparison, o.pushed);
                        if (!o.record.files.isEmpty())
                            emit self->pushedByComparison(
                                o.record, o.proof.ok, o.proof.ok ? o.proof.proof.summary() : o.proof.message);
                        emit self->finished(o.comparison);
                    });
}

void ServingBenchBox::showComparison(const ServingComparison &cmp, bool pushed) {
    m_comparison = cmp;
    m_ui->undoButton->setVisible(pushed && cmp.verdict() == ServingComparison::Verdict::Slower);
    const ServingComparison::Verdict v = cmp.verdict();
    // Nothing measured: no chart of n/a rows, the reason only.
    m_chart->setVisible(v != ServingComparison::Verdict::Failed);
    m_ui->chartHolder->setVisible(v != ServingComparison::Verdict::Failed);
    m_filler->changeSize(0, 0, QSizePolicy::Minimum,
                         v == ServingComparison::Verdict::Failed ? QSizePolicy::Expanding
                                                                 : QSizePolicy::Minimum);
    m_ui->boxLayout->invalidate();
    m_chart->setComparison(cmp);
    const QString colour = v == ServingComparison::Verdict::Faster   ? u"#1a7f37"_s
                           : v == ServingComparison::Verdict::Slower ? u"#c0392b"_s
                           : v == ServingComparison::Verdict::Failed ? u"#c0392b"_s
                                                                     : u"#333333"_s;
    m_ui->verdictLabel->setStyleSheet(u"color: %1;"_s.arg(colour));
    QString line = cmp.verdictSentence();
    if (const QString see = cmp.sensitivitySentence(); !see.isEmpty())
        line += u'\n' + see;
    m_ui->verdictLabel->setText(line);
    m_ui->legLabel->setText(tr("%1 leg(s): %2").arg(cmp.legs.size()).arg(cmp.workload.summary()));
    m_ui->benchText->appendPlainText(u"\n"_s + cmp.text() + tr("Commands:\n") +
                                     cmp.manualCommands().join(u'\n'));
}

} // namespace moetune
