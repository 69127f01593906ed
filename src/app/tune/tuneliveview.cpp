// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tuneliveview.h"

#include "app/tune/agentsentence.h"
#include "app/tune/tunebestmodel.h"
#include "charts/livebestchart.h"
#include "ui_tuneliveview.h"

#include <QHeaderView>

using namespace Qt::StringLiterals;

namespace moetune {

TuneLiveView::TuneLiveView(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::TuneLiveView>())
    , m_bestModel(new TuneBestModel(this)) {
    m_ui->setupUi(this);
    m_chart = new LiveBestChart(m_ui->chartHolder);
    m_bestModel->setObjectName(u"tuneBestModel"_s);
    m_chart->setObjectName(u"liveBestChart"_s);
    m_ui->chartLayout->addWidget(m_chart);
    m_ui->bestTable->setModel(m_bestModel);
    m_ui->bestTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ui->bestTable->verticalHeader()->hide();
    connect(m_ui->resultsButton, &QPushButton::clicked, this, &TuneLiveView::showResultsClicked);
    m_ui->resultsButton->setEnabled(false);
    m_ui->runLabel->setText(tr("No run yet: fill in the job, check the GPUs, then start."));
}

TuneLiveView::~TuneLiveView() = default;

void TuneLiveView::setStatus(const QString &line) {
    m_ui->runLabel->setText(line);
}

void TuneLiveView::setResultsEnabled(bool enabled) {
    m_ui->resultsButton->setEnabled(enabled);
}

void TuneLiveView::addEvent(const QJsonObject &e) {
    AgentEvent ev;
    ev.type = e.value("type"_L1).toString();
    ev.object = e;
    m_chart->addEvent(ev);
}

void TuneLiveView::reset() {
    m_bestModel->clear();
    m_chart->reset();
}

void TuneLiveView::showProgress(const RunProgress &p, const QString &hostLabel) {
    // The bar and the per-GPU counts count the same units: journal + each GPU's timed and failed ones.
    const qint64 units = p.unitsDone();
    // Until the run's own done the bar is never full: the total is what is known so far (it grows).
    const qint64 total = qMax<qint64>(1, qMax(p.total, units) + (p.finished() ? 0 : 1));
    m_ui->progressBar->setMaximum(int(total));
    m_ui->progressBar->setValue(int(units));
    m_ui->progressBar->setFormat(p.progressLine());
    QStringList gpus;
    for (auto it = p.gpus.begin(); it != p.gpus.end(); ++it)
        gpus.append(tr("GPU %1: %2 configs tried (%3 timed, %4 failed)")
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
    QString line = tr("Run %1 on %2: %3").arg(p.runId, hostLabel, p.state);
    if (!p.doneStatus.isEmpty())
        line += tr(" (%1, %2 measurements in %3 s)")
                    .arg(p.doneStatus)
                    .arg(p.measurements)
                    .arg(p.wallS, 0, 'f', 1);
    if (!p.error.isEmpty())
        line += u" - "_s + agentSentenceForGui(p.error, hostLabel);
    if (p.simulated)
        line += tr(" - SIMULATED (synthetic backend: a test double for a GPU)");
    m_ui->runLabel->setText(line);
}

} // namespace moetune
