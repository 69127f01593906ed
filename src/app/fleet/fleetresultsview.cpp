// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/fleet/fleetresultsview.h"

#include "report/fleetreport.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

struct FleetLoaded {
    int job = 0;
    std::optional<FleetRecord> record;
    QStringList warnings;
};

} // namespace

FleetResultsView::FleetResultsView(QWidget *parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_export(new QPushButton(tr("Export Fleet Report (PDF)..."), this))
    , m_message(new QLabel(this))
    , m_browser(new QTextBrowser(this)) {
    setObjectName(u"fleetResultsView"_s);
    m_title->setObjectName(u"fleetResultsTitle"_s);
    m_title->setWordWrap(true);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_export->setObjectName(u"exportFleetButton"_s);
    m_export->setToolTip(
        tr("The fleet PDF: per group the hosts, the tuning run and each host's outcome, with "
           "totals, as the workspace holds them now"));
    m_message->setObjectName(u"fleetResultsMessage"_s);
    m_message->setWordWrap(true);
    m_message->hide();
    m_browser->setObjectName(u"fleetReportBrowser"_s);
    m_browser->setOpenLinks(false);
    auto *top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(m_export);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_message);
    layout->addWidget(m_browser, 1);
    m_export->setEnabled(false);
    connect(m_export, &QPushButton::clicked, this, &FleetResultsView::chooseExport);
}

FleetResultsView::~FleetResultsView() {
    const auto watchers = findChildren<QFutureWatcher<FleetLoaded> *>();
    for (auto *w : watchers)
        w->waitForFinished();
}

void FleetResultsView::setWorkspace(const QString &path) {
    m_workspace = path;
    const int job = ++m_job;
    auto *watcher = new QFutureWatcher<FleetLoaded>(this);
    ++m_pending;
    connect(watcher, &QFutureWatcher<FleetLoaded>::finished, this, [this, watcher] {
        --m_pending;
        watcher->deleteLater();
        FleetLoaded l = watcher->result();
        if (l.job != m_job)
            return; // a newer read started
        m_record = std::move(l.record);
        m_export->setEnabled(m_record.has_value());
        if (!m_record) {
            m_title->clear();
            m_browser->clear();
        } else {
            m_title->setText(
                tr("Fleet record %1 (%2): %3")
                    .arg(m_record->id,
                         m_record->selection.isEmpty() ? tr("no selection recorded") : m_record->selection,
                         FleetTotals::of(*m_record).text()));
            m_browser->setHtml(FleetReport::html(*m_record));
        }
        m_message->setVisible(!l.warnings.isEmpty());
        m_message->setText(l.warnings.isEmpty() ? QString()
                                                : tr("Not read: %1").arg(l.warnings.join(u"; "_s)));
        emit shown(m_record.has_value());
    });
    watcher->setFuture(QtConcurrent::run([job, path] {
        FleetLoaded l;
        l.job = job;
        if (path.isEmpty())
            return l;
        const QList<FleetRecord> all = FleetRecord::loadAll(path, &l.warnings);
        if (!all.isEmpty())
            l.record = all.first();
        return l;
    }));
}

QString FleetResultsView::html() const {
    return m_browser->toHtml();
}

QString FleetResultsView::message() const {
    return m_message->text();
}

QString FleetResultsView::exportReport(const QString &path) {
    if (!m_record)
        return {};
    // What the workspace holds now (a rollout may have gone on since the tab was filled).
    QString error;
    const QString file = QDir(m_workspace).filePath(u"fleet/"_s + m_record->id + u".json"_s);
    if (auto now = FleetRecord::load(file, &error))
        m_record = std::move(now);
    QString written = path;
    if (FleetReport::simulated(*m_record) &&
        !QFileInfo(path).fileName().contains(u"SIMULATED"_s, Qt::CaseInsensitive))
        written = QFileInfo(path).dir().filePath(u"SIMULATED-"_s + QFileInfo(path).fileName());
    if (!FleetReport::write(*m_record, written, &error)) {
        m_message->setText(error);
        m_message->show();
        return {};
    }
    m_message->hide();
    m_browser->setHtml(FleetReport::html(*m_record));
    emit statusMessage(tr("Wrote the fleet report to %1").arg(QDir::toNativeSeparators(written)), 0);
    return written;
}

void FleetResultsView::chooseExport() {
    if (!m_record)
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Fleet Report"), QDir::home().filePath(FleetReport::suggestedFileName(*m_record)),
        tr("PDF (*.pdf)"));
    if (!path.isEmpty())
        exportReport(path);
}

} // namespace moetune
