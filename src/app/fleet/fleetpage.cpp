// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/fleet/fleetpage.h"

#include "app/fleet/fleetgroupmodel.h"
#include "app/fleet/fleethostmodel.h"
#include "app/widgets/banner.h"
#include "core/run/workspace.h"
#include "remote/fleet/fleetdiagnoseflow.h"
#include "remote/fleet/fleetsessions.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "report/fleetreport.h"

#include "ui_fleetpage.h"

#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

using namespace Qt::StringLiterals;

namespace moetune {

FleetPage::FleetPage(HostRegistry *registry, QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::FleetPage>())
    , m_registry(registry)
    , m_hostModel(new FleetHostModel(this))
    , m_groupModel(new FleetGroupModel(this))
    , m_workspace(Workspace::defaultLocation()) {
    m_ui->setupUi(this);
    setObjectName(u"fleetPage"_s);
    m_hostModel->setObjectName(u"fleetHostModel"_s);
    m_groupModel->setObjectName(u"fleetGroupModel"_s);
    m_ui->hostTable->setModel(m_hostModel);
    m_ui->groupTable->setModel(m_groupModel);
    for (QTableView *t : {m_ui->hostTable, m_ui->groupTable}) {
        t->verticalHeader()->setVisible(false);
        t->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
        t->horizontalHeader()->setStretchLastSection(true);
        t->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
        t->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    }
    // Fixed widths (set once, after a diagnosis) rather than ResizeToContents: measuring every row on
    // every update would cost the GUI thread O(rows) per repaint at 1,000 hosts.
    const QList<int> hostWidths{110, 330, 130, 110, 60, 150, 150, 200};
    for (int c = 0; c < hostWidths.size(); ++c)
        m_ui->hostTable->setColumnWidth(c, hostWidths.at(c));
    // One line per group (the full text of a cell in its tooltip), so three groups fit under the hosts.
    const QList<int> groupWidths{50, 170, 210, 270, 380, 100};
    for (int c = 0; c < groupWidths.size(); ++c)
        m_ui->groupTable->setColumnWidth(c, groupWidths.at(c));
    m_ui->groupTable->setWordWrap(false);
    m_ui->splitter->setStretchFactor(0, 3);
    m_ui->splitter->setStretchFactor(1, 2);
    m_ui->cancelButton->hide();
    m_ui->banner->setMaximumLines(3);
    m_ui->totalsLabel->hide();

    connect(m_ui->openInventoryButton, &QPushButton::clicked, this, &FleetPage::chooseInventory);
    connect(m_ui->diagnoseButton, &QPushButton::clicked, this, &FleetPage::diagnose);
    connect(m_ui->cancelButton, &QPushButton::clicked, this, &FleetPage::cancelDiagnosis);
    connect(m_ui->tuneButton, &QPushButton::clicked, this, &FleetPage::tuneSelectedGroup);
    connect(m_ui->rollOutButton, &QPushButton::clicked, this, &FleetPage::rollOutSelectedGroup);
    connect(m_ui->undoButton, &QPushButton::clicked, this, &FleetPage::undoSelectedGroup);
    connect(m_ui->setCombo, &QComboBox::currentIndexChanged, this, &FleetPage::updateActions);
    connect(m_ui->groupTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &FleetPage::onGroupSelected);
    connect(m_hostModel, &FleetHostModel::flushed, this, &FleetPage::onFlushed);

    showMessage(int(Banner::Kind::Info),
                tr("Select several hosts on the Hosts page and press Diagnose All, or open an Ansible "
                   "inventory: every host is diagnosed at once, and hosts that want the same config file "
                   "and run the same kernel form one tuning group."));
    updateActions();
}

QIcon FleetPage::icon() {
    QIcon icon;
    for (const int size : {32, 64}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter p(&pixmap);
        p.setRenderHint(QPainter::Antialiasing);
        const qreal u = size / 32.0;
        const QColor body(0x37, 0x47, 0x4f);
        for (int rack = 0; rack < 3; ++rack) {
            for (int i = 0; i < 3; ++i) {
                const QRectF unit((2 + rack * 10) * u, (6 + i * 7) * u, 8 * u, 5.5 * u);
                p.setPen(Qt::NoPen);
                p.setBrush(body);
                p.drawRoundedRect(unit, 1 * u, 1 * u);
                p.setBrush(i == 0 ? QColor(0x4c, 0xaf, 0x50) : QColor(0xb0, 0xbe, 0xc5));
                p.drawEllipse(QPointF(unit.left() + 2 * u, unit.center().y()), 1.1 * u, 1.1 * u);
            }
        }
        icon.addPixmap(pixmap);
    }
    return icon;
}

FleetPage::~FleetPage() {
    // The flows point into the record: they go first.
    delete m_diagnoseFlow.data();
    delete m_tuneFlow;
    delete m_rolloutFlow;
}

QString FleetPage::bannerText() const {
    return m_ui->banner->isHidden() ? QString() : m_ui->banner->text();
}

QString FleetPage::totalsText() const {
    return m_ui->totalsLabel->text();
}

void FleetPage::showMessage(int kind, const QString &text) {
    if (text.isEmpty()) {
        m_ui->banner->hide();
        return;
    }
    m_ui->banner->showMessage(Banner::Kind(kind), text);
}

HostSession *FleetPage::sessionFor(const FleetHost &host, QString *error) {
    // A host of the Hosts page: its one connection (already connected ones are reused).
    if (m_registry->host(host.name))
        return m_registry->ensureConnection(host.name);
    if (HostSession *s = m_ownSessions.value(host.name))
        return s;
    const HostConfig config = fleetHostConfig(host, m_registry->sshTemplate().sshConfigFile);
    if (config.alias.isEmpty()) {
        if (error)
            *error = tr("no way to reach %1").arg(host.name);
        return nullptr;
    }
    auto *s = new HostSession(
        config, HostSession::Environment{m_registry->sshTemplate(), QString(), m_registry->agentPath()},
        this);
    m_ownSessions.insert(host.name, s);
    return s;
}

void FleetPage::setSets(const QList<HostSet> &sets, const QString &source) {
    m_sets = sets;
    const QSignalBlocker block(m_ui->setCombo);
    m_ui->setCombo->clear();
    for (int i = 0; i < sets.size(); ++i)
        m_ui->setCombo->addItem(sets.at(i).label, i);
    m_ui->sourceLabel->setText(source);
    m_ui->sourceLabel->setToolTip(source);
    updateActions();
}

void FleetPage::diagnoseRegistryHosts(const QStringList &aliases) {
    HostSet set;
    for (const QString &alias : aliases) {
        const auto h = m_registry->host(alias);
        if (!h)
            continue;
        FleetHost fh;
        fh.name = alias;
        fh.address = h->hostName.isEmpty() ? alias : h->hostName;
        fh.port = h->port;
        fh.user = h->user;
        set.hosts.append(fh);
    }
    if (set.hosts.isEmpty())
        return;
    QStringList names;
    for (const FleetHost &h : set.hosts)
        names.append(m_registry->displayName(h.name));
    set.label = tr("Selected on the Hosts page (%1)").arg(set.hosts.size());
    set.selection = names.join(u' ');
    m_inventory.reset();
    m_inventoryPath.clear();
    setSets({set}, tr("from the Hosts page"));
    startDiagnosis(set);
}

void FleetPage::chooseInventory() {
    const QString dir =
        m_inventoryPath.isEmpty() ? QDir::homePath() : QFileInfo(m_inventoryPath).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open Ansible Inventory"), dir,
        tr("Ansible inventories (*.ini *.yml *.yaml hosts inventory);;All files (*)"));
    if (!path.isEmpty())
        openInventory(path);
}

bool FleetPage::openInventory(const QString &path) {
    QString error;
    auto inventory = FleetInventory::load(path, &error);
    if (!inventory) {
        showMessage(int(Banner::Kind::Error), error);
        return false;
    }
    m_inventory = std::move(inventory);
    m_inventoryPath = QFileInfo(path).absoluteFilePath();
    QList<HostSet> sets;
    auto add = [&](const QString &label, const QString &words, const FleetSelection &sel) {
        QString err;
        const auto hosts = m_inventory->select(sel, &err);
        if (!hosts || hosts->isEmpty())
            return;
        sets.append({u"%1 (%2)"_s.arg(label).arg(hosts->size()), words, m_inventoryPath, *hosts});
    };
    FleetSelection all;
    all.all = true;
    add(tr("All hosts"), u"all"_s, all);
    for (const QString &g : m_inventory->groups()) {
        FleetSelection s;
        s.group = g;
        add(tr("Group %1").arg(g), u"group "_s + g, s);
    }
    for (const QString &t : m_inventory->tags()) {
        FleetSelection s;
        s.tag = t;
        add(tr("Tag %1").arg(t), u"tag "_s + t, s);
    }
    setSets(sets, tr("Inventory %1").arg(QDir::toNativeSeparators(m_inventoryPath)));
    showMessage(int(Banner::Kind::Info),
                tr("Read %1: %n host(s). Choose all, a group or a tag in Hosts, then Diagnose All.", nullptr,
                   int(m_inventory->hosts().size()))
                    .arg(QFileInfo(path).fileName()));
    return true;
}

bool FleetPage::chooseSet(const QString &words) {
    for (int i = 0; i < m_sets.size(); ++i)
        if (m_sets.at(i).selection == words) {
            m_ui->setCombo->setCurrentIndex(i);
            return true;
        }
    return false;
}

void FleetPage::diagnose() {
    const int i = m_ui->setCombo->currentData().toInt();
    if (i < 0 || i >= m_sets.size() || isBusy())
        return;
    startDiagnosis(m_sets.at(i));
}

void FleetPage::newRecord(std::unique_ptr<FleetRecord> record) {
    delete m_tuneFlow;
    delete m_rolloutFlow;
    m_tuneFlow = nullptr;
    m_rolloutFlow = nullptr;
    m_busyGroups.clear();
    m_hostModel->setRecord(nullptr);
    m_groupModel->setRecord(nullptr);
    m_record = std::move(record);
    m_hostModel->setRecord(m_record.get());
    m_groupModel->setRecord(m_record.get());
    if (!m_record)
        return;
    const FleetSessionProvider sessions = [this](const FleetHost &h, QString *error) {
        return sessionFor(h, error);
    };
    m_tuneFlow = new FleetTuneFlow(m_record.get(), sessions, m_workspace, this);
    connect(m_tuneFlow, &FleetTuneFlow::hostChanged, m_hostModel, &FleetHostModel::hostChanged);
    connect(m_tuneFlow, &FleetTuneFlow::groupChanged, this, [this] {
        m_groupsDirty = true;
        m_hostModel->requestFlush();
    });
    connect(m_tuneFlow, &FleetTuneFlow::progress, this, [this](int group, qint64 done, qint64 total) {
        m_hostModel->setTuneProgress(group, done, total);
        m_groupModel->setTuneProgress(group, done, total);
        m_groupsDirty = true;
        m_hostModel->requestFlush();
    });
    connect(m_tuneFlow, &FleetTuneFlow::finished, this, [this](int group, bool ok, const QString &message) {
        m_hostModel->setTuneProgress(group, 0, 0);
        m_groupModel->setTuneProgress(group, 0, 0);
        groupFinished(group, ok, message);
    });
    m_rolloutFlow = new FleetRolloutFlow(m_record.get(), sessions, m_workspace, this);
    connect(m_rolloutFlow, &FleetRolloutFlow::hostChanged, m_hostModel, &FleetHostModel::hostChanged);
    connect(m_rolloutFlow, &FleetRolloutFlow::groupChanged, this, [this] {
        m_groupsDirty = true;
        m_hostModel->requestFlush();
    });
    connect(m_rolloutFlow, &FleetRolloutFlow::finished, this, &FleetPage::groupFinished);
    // What the flows are doing, in their words ("group 1: canary gpu-01, then 3 host(s) ...").
    auto status = [this](int group, const QString &line) {
        if (m_busyGroups.contains(group))
            showMessage(int(Banner::Kind::Info), line.isEmpty() ? line : line.at(0).toUpper() + line.mid(1));
    };
    connect(m_tuneFlow, &FleetTuneFlow::status, this, status);
    connect(m_rolloutFlow, &FleetRolloutFlow::status, this, status);
}

void FleetPage::startDiagnosis(const HostSet &set) {
    if (isBusy())
        return;
    auto record = std::make_unique<FleetRecord>();
    record->id = FleetRecord::newId();
    record->createdAt = double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
    record->inventory = set.inventory;
    record->selection = set.selection;
    for (const FleetHost &h : set.hosts) {
        FleetHostRecord hr;
        hr.host = h;
        record->hosts.append(hr);
    }
    newRecord(std::move(record));
    auto *flow = new FleetDiagnoseFlow(
        m_record.get(), [this](const FleetHost &h, QString *error) { return sessionFor(h, error); },
        m_workspace, this);
    flow->setMaxSessions(m_maxSessions);
    if (m_diagnoser)
        flow->setDiagnoser(m_diagnoser());
    m_diagnoseFlow = flow;
    connect(flow, &FleetDiagnoseFlow::hostChanged, m_hostModel, &FleetHostModel::hostChanged);
    connect(flow, &FleetDiagnoseFlow::finished, this, [this, flow] {
        flow->deleteLater();
        m_diagnoseFlow.clear();
        m_groupModel->refresh(); // regrouped: the groups are new
        m_hostModel->allChanged();
        m_hostModel->flush();
        if (m_groupModel->rowCount() > 0 && selectedGroup() < 0)
            selectGroup(0);
        const FleetTotals t = FleetTotals::of(*m_record);
        showMessage(t.unreachable + t.failed > 0 ? int(Banner::Kind::Warning) : int(Banner::Kind::Success),
                    tr("Diagnosed %1 of %n host(s) into %2 tuning group(s)%3.", nullptr, t.hosts)
                        .arg(t.diagnosed)
                        .arg(t.groups)
                        .arg(t.unreachable + t.failed > 0
                                 ? tr("; %1 could not be diagnosed (the Stage column says why)")
                                       .arg(t.unreachable + t.failed)
                                 : QString()));
        updateActions();
        emit recordSaved(m_workspace, m_record->id);
    });
    m_ui->totalsLabel->show();
    showMessage(int(Banner::Kind::Info),
                tr("Diagnosing %n host(s), at most %1 at once...", nullptr, int(m_record->hosts.size()))
                    .arg(m_maxSessions));
    updateActions();
    flow->start();
}

void FleetPage::cancelDiagnosis() {
    if (m_diagnoseFlow)
        m_diagnoseFlow->cancel();
}

void FleetPage::showEvent(QShowEvent *event) {
    QWidget::showEvent(event);
    if (!std::exchange(m_latestAsked, true) && !m_record)
        openLatestRecord();
}

void FleetPage::openLatestRecord() {
    auto *watcher = new QFutureWatcher<std::optional<FleetRecord>>(this);
    connect(watcher, &QFutureWatcher<std::optional<FleetRecord>>::finished, this, [this, watcher] {
        watcher->deleteLater();
        // Something started meanwhile wins over the saved record.
        if (const auto r = watcher->result(); r && !m_record && !isBusy())
            openRecord(*r);
    });
    watcher->setFuture(QtConcurrent::run([path = m_workspace]() -> std::optional<FleetRecord> {
        const QList<FleetRecord> all = FleetRecord::loadAll(path);
        if (all.isEmpty())
            return std::nullopt;
        return all.first();
    }));
}

void FleetPage::openRecord(const FleetRecord &record) {
    if (isBusy())
        return;
    newRecord(std::make_unique<FleetRecord>(record));
    m_groupsDirty = true;
    m_hostModel->allChanged();
    m_hostModel->flush();
    if (m_groupModel->rowCount() > 0)
        selectGroup(0);
    m_ui->sourceLabel->setText(tr("Record %1").arg(record.id));
    m_ui->sourceLabel->setToolTip(record.inventory.isEmpty() ? record.selection
                                                             : record.inventory + u": "_s + record.selection);
    showMessage(
        int(Banner::Kind::Info),
        tr("Fleet record %1 (%2), as saved: tune, roll out or undo its groups from here, or diagnose "
           "again for fresh facts.")
            .arg(record.id, record.selection.isEmpty() ? tr("no selection recorded") : record.selection));
    updateActions();
}

int FleetPage::selectedGroup() const {
    const QModelIndex i = m_ui->groupTable->currentIndex();
    return i.isValid() ? i.row() : -1;
}

bool FleetPage::selectGroup(int group) {
    if (group < 0 || group >= m_groupModel->rowCount())
        return false;
    m_ui->groupTable->setCurrentIndex(m_groupModel->index(group, 0));
    m_ui->groupTable->selectRow(group);
    return true;
}

QStringList FleetPage::groupHosts(int group, bool reachableOnly) const {
    QStringList names;
    if (!m_record || group < 0 || group >= m_record->groups.size())
        return names;
    for (const QString &name : m_record->groups.at(group).group.hosts) {
        const FleetHostRecord *h = m_record->host(name);
        if (reachableOnly && h &&
            (h->stage == FleetHostStage::Unreachable || h->stage == FleetHostStage::Failed))
            continue;
        names.append(name);
    }
    return names;
}

void FleetPage::onGroupSelected() {
    const int g = selectedGroup();
    const QSignalBlocker b1(m_ui->tuneHostCombo);
    const QSignalBlocker b2(m_ui->canaryCombo);
    m_ui->tuneHostCombo->clear();
    m_ui->canaryCombo->clear();
    if (g >= 0) {
        const QStringList hosts = groupHosts(g, true);
        m_ui->tuneHostCombo->addItem(tr("any host with free GPUs"), QString());
        for (const QString &h : hosts)
            m_ui->tuneHostCombo->addItem(h, h);
        // The canary: the host that tuned (its result is there already) first.
        const QString tuned = m_record->groups.at(g).tuneHost;
        if (hosts.contains(tuned))
            m_ui->canaryCombo->addItem(tr("%1 (tuned here)").arg(tuned), tuned);
        for (const QString &h : hosts)
            if (h != tuned)
                m_ui->canaryCombo->addItem(h, h);
        m_ui->parallelSpin->setMaximum(std::max(1, int(hosts.size()) - 1));
    }
    updateActions();
}

void FleetPage::onFlushed() {
    if (std::exchange(m_groupsDirty, false)) {
        const int g = selectedGroup();
        const QString tuneHost =
            m_record && g >= 0 && g < m_record->groups.size() ? m_record->groups.at(g).tuneHost : QString();
        m_groupModel->refresh();
        if (g >= 0 && selectedGroup() < 0)
            selectGroup(g);
        // A group just tuned: its canary choice starts on the host that tuned it.
        if (g >= 0 && m_record && g < m_record->groups.size() && m_record->groups.at(g).tuneHost != tuneHost)
            onGroupSelected();
    }
    if (m_record) {
        m_ui->totalsLabel->setText(FleetTotals::of(*m_record).text());
        m_ui->totalsLabel->show();
    }
    updateGroupNote();
    updateActions();
}

void FleetPage::updateGroupNote() {
    if (!m_record || isDiagnosing()) {
        m_ui->groupNote->setText(isDiagnosing() ? tr("The groups form when every host is diagnosed.")
                                                : QString());
        return;
    }
    QStringList parts;
    if (!m_record->nothingMissing.isEmpty())
        parts.append(tr("Nothing missing on %1: their servers found their configs.")
                         .arg(m_record->nothingMissing.join(u", "_s)));
    QStringList apart;
    for (const FleetHostRecord &h : m_record->hosts)
        if (h.group < 0 && !m_record->nothingMissing.contains(h.host.name))
            apart.append(h.host.name);
    if (!apart.isEmpty())
        parts.append(tr("In no group: %1 (the Stage column says why).").arg(apart.join(u", "_s)));
    if (m_record->groups.isEmpty() && parts.isEmpty())
        parts.append(tr("No host is missing a config: nothing to tune."));
    m_ui->groupNote->setText(parts.join(u"  "_s));
}

void FleetPage::updateActions() {
    const bool diagnosing = isDiagnosing();
    const int set = m_ui->setCombo->currentData().toInt();
    const bool haveSet = set >= 0 && set < m_sets.size();
    m_ui->setCombo->setEnabled(!m_sets.isEmpty() && !diagnosing);
    m_ui->diagnoseButton->setEnabled(haveSet && !isBusy());
    m_ui->diagnoseButton->setText(haveSet ? tr("Diagnose All (%1)").arg(m_sets.at(set).hosts.size())
                                          : tr("Diagnose All"));
    m_ui->diagnoseButton->setToolTip(
        !haveSet   ? tr("Select hosts on the Hosts page (Diagnose All there), or open an inventory first")
        : isBusy() ? tr("Wait for the fleet work under way to end")
                   : tr("Connect to every host of the set, at most %1 at once: probe, fetch the server log, "
                        "diagnose")
                         .arg(m_maxSessions));
    m_ui->cancelButton->setVisible(diagnosing);
    m_ui->openInventoryButton->setEnabled(!isBusy());

    const int g = selectedGroup();
    const bool group = m_record && g >= 0 && g < m_record->groups.size() && !diagnosing;
    const bool busy = group && m_busyGroups.contains(g);
    const bool tuned = group && !m_record->groups.at(g).runId.isEmpty();
    bool pushedHere = false;
    if (group)
        for (const FleetHostRecord &h : m_record->hosts)
            pushedHere = pushedHere || (h.group == g && !h.push.files.isEmpty() && !h.undone);
    const bool reachable = group && !groupHosts(g, true).isEmpty();
    m_ui->groupPane->setEnabled(m_record != nullptr);
    m_ui->tuneButton->setEnabled(group && !busy && reachable);
    m_ui->tuneButton->setToolTip(!group       ? tr("Select a group in the table")
                                 : busy       ? tr("This group's work is under way")
                                 : !reachable ? tr("No host of this group could be reached")
                                              : tr("Run the group's tuning job once, on the host chosen in "
                                                   "Tune on; every host of the group gets its result"));
    m_ui->rollOutButton->setEnabled(tuned && !busy && reachable);
    m_ui->rollOutButton->setToolTip(!group   ? tr("Select a group in the table")
                                    : busy   ? tr("This group's work is under way")
                                    : !tuned ? tr("Tune the group first: the rollout pushes its tuning run")
                                             : tr("Push the group's config to the canary first (preview, "
                                                  "install, restart, proof), then to the rest in batches"));
    m_ui->undoButton->setEnabled(pushedHere && !busy);
    m_ui->undoButton->setToolTip(!group        ? tr("Select a group in the table")
                                 : busy        ? tr("This group's work is under way")
                                 : !pushedHere ? tr("Nothing of this group's rollout is left to undo")
                                               : tr("Undo every push of this group, host by host, from "
                                                    "their records"));
    for (QWidget *w :
         {static_cast<QWidget *>(m_ui->tuneHostCombo), static_cast<QWidget *>(m_ui->canaryCombo),
          static_cast<QWidget *>(m_ui->parallelSpin), static_cast<QWidget *>(m_ui->servingCheck)})
        w->setEnabled(group && !busy);
}

void FleetPage::tuneSelectedGroup() {
    const int g = selectedGroup();
    if (!m_tuneFlow || g < 0 || m_busyGroups.contains(g) || isDiagnosing())
        return;
    const QString host = m_ui->tuneHostCombo->currentData().toString();
    FleetTuneFlow::Options options = m_tuneOptions;
    options.takeOutOfService = m_ui->outOfServiceCheck->isChecked();
    m_tuneFlow->setOptions(options);
    m_busyGroups.insert(g);
    showMessage(int(Banner::Kind::Info),
                host.isEmpty()
                    ? tr("Tuning group %1 on a host of the group whose GPUs are free...").arg(g + 1)
                    : tr("Tuning group %1 on %2...").arg(g + 1).arg(host));
    updateActions();
    m_tuneFlow->tuneGroup(g, host);
}

void FleetPage::rollOutSelectedGroup() {
    const int g = selectedGroup();
    if (!m_rolloutFlow || g < 0 || m_busyGroups.contains(g))
        return;
    FleetRolloutFlow::Options options;
    options.canary = m_ui->canaryCombo->currentData().toString();
    options.maxParallel = m_ui->parallelSpin->value();
    options.serving = m_ui->servingCheck->isChecked();
    const QStringList hosts = groupHosts(g, true);
    auto *box = new QMessageBox(
        QMessageBox::Question, tr("Roll Out"),
        tr("Roll out group %1's config to its %n reachable host(s)?", nullptr, int(hosts.size())).arg(g + 1),
        QMessageBox::NoButton, this);
    box->setObjectName(u"confirmRollOut"_s);
    box->setInformativeText(
        tr("%1 first, alone: preview, install, restart and proof%2. Then the other %3, at most %4 "
           "restarting at once, each batch proved before the next. Every server restarts. The first failure "
           "stops the rollout of this group and undoes that host.")
            .arg(options.canary)
            .arg(options.serving ? tr(", with the serving comparison") : QString())
            .arg(std::max(0, int(hosts.size()) - 1))
            .arg(options.maxParallel));
    QPushButton *yes = box->addButton(tr("Roll Out"), QMessageBox::AcceptRole);
    yes->setObjectName(u"confirmRollOutButton"_s);
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this, [this, yes, g, options](QAbstractButton *clicked) {
        if (clicked == yes)
            rollOutNow(g, options);
    });
    box->open(); // window-modal, never a nested event loop
}

void FleetPage::rollOutNow(int group, const FleetRolloutFlow::Options &options) {
    if (!m_rolloutFlow || m_busyGroups.contains(group))
        return;
    m_busyGroups.insert(group);
    showMessage(int(Banner::Kind::Info),
                tr("Rolling out group %1: canary %2 first...").arg(group + 1).arg(options.canary));
    updateActions();
    m_rolloutFlow->rollOut(group, options);
}

void FleetPage::undoSelectedGroup() {
    const int g = selectedGroup();
    if (!m_rolloutFlow || g < 0 || m_busyGroups.contains(g))
        return;
    QStringList pushed;
    for (const FleetHostRecord &h : m_record->hosts)
        if (h.group == g && !h.push.files.isEmpty() && !h.undone)
            pushed.append(h.host.name);
    auto *box =
        new QMessageBox(QMessageBox::Question, tr("Undo Group"),
                        tr("Undo group %1's rollout on %n host(s)?", nullptr, int(pushed.size())).arg(g + 1),
                        QMessageBox::NoButton, this);
    box->setObjectName(u"confirmUndoGroup"_s);
    box->setInformativeText(tr("Host by host, from each host's push records, with the single-host undo "
                               "checks: %1.")
                                .arg(pushed.join(u", "_s)));
    QPushButton *yes = box->addButton(tr("Undo Group"), QMessageBox::AcceptRole);
    yes->setObjectName(u"confirmUndoGroupButton"_s);
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this, [this, yes, g](QAbstractButton *clicked) {
        if (clicked == yes)
            undoGroupNow(g);
    });
    box->open();
}

void FleetPage::undoGroupNow(int group) {
    if (!m_rolloutFlow || m_busyGroups.contains(group))
        return;
    m_busyGroups.insert(group);
    showMessage(int(Banner::Kind::Info), tr("Undoing group %1, host by host...").arg(group + 1));
    updateActions();
    m_rolloutFlow->undoGroup(group);
}

void FleetPage::groupFinished(int group, bool ok, const QString &message) {
    m_busyGroups.remove(group);
    m_groupsDirty = true;
    m_hostModel->flush();
    onFlushed();
    // The flows' sentences name their group ("Group 2 rolled out: ..."); one that does not gets it here.
    const QString text = message.contains(u"roup %1"_s.arg(group + 1))
                             ? message
                             : tr("Group %1: %2").arg(group + 1).arg(message);
    showMessage(ok ? int(Banner::Kind::Success) : int(Banner::Kind::Error), text);
    emit statusMessage(text, 0);
    if (m_record)
        emit recordSaved(m_workspace, m_record->id);
}

} // namespace moetune
