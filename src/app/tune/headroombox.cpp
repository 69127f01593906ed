// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/headroombox.h"

#include "remote/flows/headroomflow.h"
#include "ui_headroombox.h"

#include <QHeaderView>
#include <QTableWidgetItem>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString gainText(double g) {
    return g > 0 ? u"%1x"_s.arg(g, 0, 'f', 2) : u"-"_s;
}

QString classText(const QString &c) {
    if (c == "large"_L1)
        return QObject::tr("worth tuning");
    if (c == "small"_L1)
        return QObject::tr("some gain");
    if (c == "none"_L1)
        return QObject::tr("nothing to gain");
    return QObject::tr("not measured");
}

} // namespace

HeadroomBox::HeadroomBox(QWidget *parent)
    : QGroupBox(parent)
    , m_ui(std::make_unique<Ui::HeadroomBox>()) {
    m_ui->setupUi(this);
    m_ui->headroomTable->setColumnCount(3);
    m_ui->headroomTable->setHorizontalHeaderLabels({tr("Batch sizes"), tr("Likely gain"), tr("Verdict")});
    m_ui->headroomTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ui->headroomTable->horizontalHeader()->setStretchLastSection(true);
    m_ui->headroomTable->verticalHeader()->hide();
    m_ui->headroomTable->setVisible(false);
    m_ui->headroomNote->setVisible(false);
    m_ui->headroomStatus->setText(tr("Before Start tuning: a check of a few seconds says whether there is "
                                     "anything to gain."));
    connect(m_ui->headroomButton, &QPushButton::clicked, this, &HeadroomBox::checkRequested);
}

HeadroomBox::~HeadroomBox() = default;

QList<QWidget *> HeadroomBox::answerWidgets() const {
    return {m_ui->headroomTable, m_ui->headroomVerdict};
}

bool HeadroomBox::running() const {
    return m_checking && m_flow; // a flow gone with its session ends the check too
}

void HeadroomBox::setRunnable(bool ok, const QString &why) {
    m_runnable = ok;
    m_ui->headroomButton->setEnabled(ok && !running());
    m_ui->headroomButton->setToolTip(
        ok ? tr("Seconds on the host's GPU: the server's config, a screen of likely "
                "winners and the HBM floor at every batch size")
           : why);
}

void HeadroomBox::run(HeadroomFlow *flow, const TuneSpec &spec) {
    if (running())
        return;
    if (flow->running()) { // the session's flow, started by another view of this host
        m_ui->headroomStatus->setStyleSheet(QString());
        m_ui->headroomStatus->setText(tr("A headroom check already runs on this host; check again once it "
                                         "has ended."));
        return;
    }
    if (m_flow)
        m_flow->disconnect(this); // the session's flow: only the box's connections go
    m_flow = flow;
    m_checking = true;
    m_running = spec;
    const bool simulated = spec.backend == "synthetic"_L1;
    m_ui->headroomButton->setEnabled(false);
    m_ui->headroomStatus->setStyleSheet(QString());
    m_ui->headroomStatus->setText(simulated ? tr("Checking (SIMULATED: synthetic backend)...")
                                            : tr("Checking on the host's GPU..."));
    connect(m_flow, &HeadroomFlow::progress, this, [this](int done, int total, bool sim) {
        m_ui->headroomStatus->setText(tr("Checking%1: %2 of %3 timings")
                                          .arg(sim ? tr(" (SIMULATED)") : QString())
                                          .arg(done)
                                          .arg(total));
    });
    QPointer<HeadroomBox> self(this);
    m_flow->check(spec, [self](const HeadroomResult &r, const QString &error) {
        if (!self)
            return;
        // Deferred: the flow's job bookkeeping ends after this callback returns.
        QMetaObject::invokeMethod(
            self,
            [self, r, error] {
                if (!self)
                    return;
                self->m_checking = false;
                if (self->m_flow) // its progress from now on is another view's
                    self->m_flow->disconnect(self);
                self->m_ui->headroomButton->setEnabled(self->m_runnable);
                if (r.sizes.isEmpty()) {
                    self->showError(error);
                } else {
                    self->m_resultSpec = self->m_running;
                    self->showResult(r, error);
                }
                emit self->finished(r, error);
            },
            Qt::QueuedConnection);
    });
}

void HeadroomBox::showError(const QString &sentence) {
    m_ui->headroomStatus->setText(tr("The headroom check failed: %1").arg(sentence));
    m_ui->headroomStatus->setStyleSheet(u"color: #b03030;"_s);
}

void HeadroomBox::showResult(const HeadroomResult &r, const QString &error) {
    m_result = r;
    m_ui->headroomVerdict->setText(r.headline());
    QString color = u"#2f6f2f"_s; // worth tuning
    if (r.kind == HeadroomResult::Kind::LittleToGain)
        color = u"#7a5a00"_s;
    else if (r.kind == HeadroomResult::Kind::Unknown)
        color = u"#b03030"_s;
    m_ui->headroomVerdict->setStyleSheet(u"color: %1;"_s.arg(color));
    QStringList notes;
    notes.append(r.defaultSourceKind == "file"_L1
                     ? tr("The server's config: its file %1.").arg(r.defaultSourcePath)
                     : tr("The server's config: its built-in heuristic."));
    if (!r.assumed.isEmpty())
        notes.append(tr("Not seen: %1.").arg(r.assumed));
    notes.append(tr("%1 timings in %2 s on %3 (%4 backend).")
                     .arg(r.units)
                     .arg(r.wallSeconds, 0, 'f', 1)
                     .arg(r.deviceName, r.backend));
    if (const QString pw = r.prewarmNote(); !pw.isEmpty())
        notes.append(pw);
    m_ui->headroomNote->setText(notes.join(u' '));
    m_ui->headroomNote->setVisible(true);
    QTableWidget *t = m_ui->headroomTable;
    t->setRowCount(int(r.ranges.size()));
    for (int i = 0; i < r.ranges.size(); ++i) {
        const HeadroomResult::Range &rg = r.ranges[i];
        QStringList tip;
        for (const HeadroomResult::Size &z : r.sizes)
            if (z.m >= rg.mFrom && z.m <= rg.mTo)
                tip.append(tr("M=%1: server %2 us, best screened %3 us (%4), floor %5 us")
                               .arg(z.m)
                               .arg(z.defaultUs, 0, 'f', 1)
                               .arg(z.bestUs, 0, 'f', 1)
                               .arg(gainText(z.gain))
                               .arg(z.floorUs, 0, 'f', 1));
        const QString range =
            rg.mFrom == rg.mTo ? u"%1"_s.arg(rg.mFrom) : u"%1-%2"_s.arg(rg.mFrom).arg(rg.mTo);
        const QString gain =
            rg.gainMin > 0 && rg.gainMax > rg.gainMin + 0.005
                ? u"%1 (%2-%3)"_s.arg(gainText(rg.gain), gainText(rg.gainMin), gainText(rg.gainMax))
                : gainText(rg.gain);
        const QString items[] = {range, gain, classText(rg.gainClass)};
        for (int c = 0; c < 3; ++c) {
            auto *item = new QTableWidgetItem(items[c]);
            item->setToolTip(tip.join(u'\n'));
            t->setItem(i, c, item);
        }
    }
    t->setVisible(!r.ranges.isEmpty());
    if (error.isEmpty()) {
        m_ui->headroomStatus->setStyleSheet(QString());
        m_ui->headroomStatus->setText(r.simulated ? tr("Checked (SIMULATED numbers).") : tr("Checked."));
    } else {
        showError(error);
    }
}

} // namespace moetune
