// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hostspage.h"

#include "app/hosts/hostdialog.h"
#include "app/hosts/hostkeydialog.h"
#include "app/hosts/hostlistmodel.h"
#include "app/hosts/hostoverview.h"
#include "app/hosts/hostsecretdialog.h"
#include "app/widgets/banner.h"
#include "app/widgets/serverprofiledialog.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "remote/hosts/practiceserver.h"
#include "remote/hosts/serverprofilesuggestion.h"

#include "ui_hostspage.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTreeView>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

HostsPage::HostsPage(HostRegistry *registry, QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::HostsPage>())
    , m_registry(registry)
    , m_model(new HostListModel(this)) {
    m_ui->setupUi(this);
    setObjectName(u"hostsPage"_s);
    m_model->setObjectName(u"hostListModel"_s);
    m_ui->hostView->setModel(m_model);
    // Several hosts at once (Ctrl / Shift) for "Diagnose All" in the Fleet view; the current host is the
    // one every other button acts on.
    m_ui->hostView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_diagnoseAllButton = new QPushButton(tr("Diagnose All"), this);
    m_diagnoseAllButton->setObjectName(u"diagnoseAllButton"_s);
    m_ui->connectionButtons->insertWidget(2, m_diagnoseAllButton);
    connect(m_diagnoseAllButton, &QPushButton::clicked, this, &HostsPage::diagnoseSelected);
    m_ui->hostView->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ui->hostBanner->hide();
    m_ui->fetchSizeSpin->setValue(defaultFetchMiB);
    m_ui->fetchLabel->hide();
    m_ui->fetchProgress->hide();
    m_ui->cancelButton->hide();
    m_ui->splitter->setStretchFactor(0, 2);
    m_ui->splitter->setStretchFactor(1, 5);
    m_ui->splitter->setSizes({420, 1000});

    connect(m_ui->addButton, &QPushButton::clicked, this, &HostsPage::addHost);
    connect(m_ui->practiceButton, &QPushButton::clicked, this, &HostsPage::addPracticeServer);
    connect(m_ui->editButton, &QPushButton::clicked, this, &HostsPage::editHost);
    connect(m_ui->removeButton, &QPushButton::clicked, this, &HostsPage::removeHost);
    connect(m_ui->connectButton, &QPushButton::clicked, this, &HostsPage::connectHost);
    connect(m_ui->disconnectButton, &QPushButton::clicked, this, &HostsPage::disconnectHost);
    connect(m_ui->probeButton, &QPushButton::clicked, this, &HostsPage::probeHost);
    connect(m_ui->diagnoseHostButton, &QPushButton::clicked, this, &HostsPage::diagnoseHost);
    connect(m_ui->followButton, &QPushButton::toggled, this, &HostsPage::setFollowing);
    connect(m_ui->cancelButton, &QPushButton::clicked, this, &HostsPage::cancelFetch);
    connect(m_ui->tuneServedButton, &QPushButton::clicked, this, &HostsPage::tuneServedModel);
    connect(m_ui->serverProfileButton, &QPushButton::clicked, this, &HostsPage::editServerProfile);
    connect(m_ui->hostOverview, &HostOverview::serverChosen, this,
            [this](const QString &choice) { chooseServer(currentAlias(), choice); });
    connect(m_ui->hostView, &QTreeView::doubleClicked, this, [this] {
        const HostSession *c = connection(currentAlias());
        if (!c || c->state() != Transport::State::Connected)
            connectHost();
    });
    connect(m_ui->hostView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &HostsPage::onSelectionChanged);
    connect(m_ui->hostView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &HostsPage::updateActions);

    connect(m_registry, &HostRegistry::hostsChanged, this, &HostsPage::onHostsChanged);
    connect(m_registry, &HostRegistry::connectionCreated, this, &HostsPage::wireConnection);
    connect(m_registry, &HostRegistry::connectionDropped, this, [this](const QString &alias) {
        if (m_following == alias) {
            m_following.clear();
            m_followFlush.stop();
            m_followBuffer.clear();
            emit followStopped(alias, QString());
        }
        if (m_fetching == alias)
            m_fetching.clear();
        m_model->setState(alias, Transport::State::Disconnected, QString());
        m_model->setBusy(alias, false);
        updateActions();
    });

    m_followFlush.setInterval(followFlushMs);
    connect(&m_followFlush, &QTimer::timeout, this, &HostsPage::flushFollowed);
    onHostsChanged();
}

HostsPage::~HostsPage() = default;

void HostsPage::onHostsChanged() {
    const QString current = currentAlias();
    m_model->setHosts(m_registry->hosts(), m_registry->localHost());
    // An unreadable ssh config or saved host is reported (and cleared once fixed), never fatal.
    showHostMessage(QString(), int(Banner::Kind::Warning), m_registry->errors().join(u'\n'));
    if (!selectHost(current) && m_model->rowCount() > 0)
        m_ui->hostView->setCurrentIndex(m_model->index(0, 0));
    onSelectionChanged();
}

QString HostsPage::currentAlias() const {
    return m_ui->hostView->currentIndex().data(HostListModel::AliasRole).toString();
}

QStringList HostsPage::selectedAliases() const {
    QList<int> rows;
    for (const QModelIndex &i : m_ui->hostView->selectionModel()->selectedRows(0))
        rows.append(i.row());
    std::sort(rows.begin(), rows.end());
    QStringList aliases;
    for (int r : rows)
        aliases.append(m_model->index(r, 0).data(HostListModel::AliasRole).toString());
    return aliases;
}

void HostsPage::diagnoseSelected() {
    const QStringList aliases = selectedAliases();
    if (aliases.size() >= 2)
        emit fleetDiagnoseRequested(aliases);
}

bool HostsPage::selectHost(const QString &alias) {
    const int row = m_model->rowOf(alias);
    if (row < 0)
        return false;
    m_ui->hostView->setCurrentIndex(m_model->index(row, 0));
    return true;
}

HostSession *HostsPage::connection(const QString &alias) const {
    return m_registry->connection(alias);
}

QString HostsPage::bannerText() const {
    return m_ui->hostBanner->isHidden() ? QString() : m_ui->hostBanner->text();
}

QString HostsPage::labelFor(const QString &alias) const {
    return m_registry->displayName(alias);
}

void HostsPage::wireConnection(const QString &alias, HostSession *c) {
    connect(c, &HostSession::stateChanged, this,
            [this, alias](Transport::State s, const QString &msg) { onStateChanged(alias, s, msg); });
    connect(c, &HostSession::hostKeyUnknown, this,
            [this, alias](const QString &type, const QString &fp) { onHostKeyUnknown(alias, type, fp); });
    connect(
        c, &HostSession::secretRequested, this,
        [this, alias](SshTransport::SecretKind kind, const QStringList &prompts, const QString &instruction) {
            onSecretRequested(alias, int(kind), prompts, instruction);
        });
    connect(c, &HostSession::keyringProblem, this, [this, alias](const QString &message) {
        showHostMessage(alias, int(Banner::Kind::Warning), message);
    });
    connect(c, &HostSession::jobStarted, this, [this, alias](JobId, HostSession::Flow flow) {
        if (flow != HostSession::Flow::Probe)
            return;
        m_model->setBusy(alias, true);
        showHostMessage(alias, int(Banner::Kind::Info), tr("Probing %1...").arg(labelFor(alias)));
    });
    connect(c, &HostSession::probed, this, [this, alias](JobId, const HostProbe &p) { onProbed(alias, p); });
    connect(c, &HostSession::jobFailed, this,
            [this, alias](JobId, HostSession::Flow flow, const QString &error) {
                if (flow == HostSession::Flow::Probe) {
                    m_model->setBusy(alias, connection(alias) && connection(alias)->isFetching());
                    showHostMessage(alias, int(Banner::Kind::Error), tr("Probe failed: %1").arg(error));
                } else if (flow == HostSession::Flow::FetchLog || flow == HostSession::Flow::DiagnoseHost) {
                    if (m_fetching != alias)
                        return; // not this page's (the Fleet view's diagnosis says so in its table)
                    m_fetching.clear();
                    m_model->setBusy(alias, connection(alias) && connection(alias)->isProbing());
                    showHostMessage(alias, int(Banner::Kind::Error), error);
                    updateActions();
                }
            });
    connect(c, &HostSession::jobProgress, this, [this, alias](JobId, qint64 done, qint64 total) {
        if (alias != currentAlias() || !connection(alias) || !connection(alias)->isFetching())
            return;
        m_ui->fetchProgress->setRange(0, 1000);
        m_ui->fetchProgress->setValue(total > 0 ? int(qBound(qint64(0), done * 1000 / total, qint64(1000)))
                                                : 0);
        m_ui->fetchLabel->setText(tr("Fetching the log: %1").arg(QLocale().formattedDataSize(done)));
    });
    // Only the fetch / diagnosis this page started goes to the Diagnose page: the Fleet view diagnoses
    // many hosts over these same sessions, and those stay in its table.
    connect(c, &HostSession::logFetched, this, [this, alias](JobId, const QString &path, const HostProbe &p) {
        if (m_fetching == alias)
            onLogFetched(alias, path, p);
    });
    connect(c, &HostSession::hostDiagnosed, this, [this, alias](JobId, const Diagnosis &d) {
        if (m_fetching != alias)
            return;
        // The facts merged into d: the session's fresh probe (empty ones, named, when it failed).
        const HostSession *s = connection(alias);
        HostProbe facts;
        if (s && s->lastProbe())
            facts = *s->lastProbe();
        else
            facts.hostName = labelFor(alias);
        onLogFetched(alias, m_fetchFile, facts, d);
    });
    connect(c, &HostSession::followLines, this, [this, alias](JobId, const QStringList &lines) {
        if (m_following != alias)
            return;
        // Batched: a chatty server would otherwise keep the Diagnose page's paste debounce from firing.
        m_followBuffer += lines;
        if (!m_followFlush.isActive())
            m_followFlush.start();
    });
    connect(c, &HostSession::followStopped, this, [this, alias](JobId, const QString &error) {
        if (m_following == alias) {
            flushFollowed();
            m_following.clear();
            emit followStopped(alias, error);
        }
        if (!error.isEmpty())
            showHostMessage(alias, int(Banner::Kind::Error), tr("Following the log stopped: %1").arg(error));
        updateActions();
    });
}

void HostsPage::flushFollowed() {
    if (m_followBuffer.isEmpty() || m_following.isEmpty()) {
        m_followFlush.stop();
        m_followBuffer.clear();
        return;
    }
    const QStringList lines = std::exchange(m_followBuffer, {});
    emit followLines(m_following, lines);
}

void HostsPage::onSelectionChanged() {
    const QString alias = currentAlias();
    const HostListModel::Entry *e = m_model->entry(alias);
    if (!e) {
        m_ui->hostTitle->setText(tr("No host selected"));
        m_ui->hostSubtitle->clear();
        m_ui->hostOverview->clear(tr("Add a host, or pick Local machine to try moetune on this computer."));
    } else {
        m_ui->hostTitle->setText(labelFor(alias));
        QStringList facts{HostListModel::address(e->host, e->origin)};
        facts.append(tr("python: %1").arg(e->host.python));
        facts.append(e->host.logSource.kind == LogSource::Kind::None
                         ? tr("log: not set (Edit... to add one)")
                         : tr("log: %1").arg(e->host.logSource.value));
        m_ui->hostSubtitle->setText(facts.join(u"   \u00b7   "_s));
        const HostSession *c = connection(alias);
        if (c && c->lastProbe())
            m_ui->hostOverview->setProbe(*c->lastProbe());
        else
            m_ui->hostOverview->clear(c && c->isProbing()
                                          ? tr("Probing %1...").arg(labelFor(alias))
                                          : tr("Connect to %1 and press Probe to see its GPUs, versions "
                                               "and config folders.")
                                                .arg(labelFor(alias)));
    }
    showCurrentMessage();
    updateActions();
}

void HostsPage::updateActions() {
    const QString alias = currentAlias();
    const HostListModel::Entry *e = m_model->entry(alias);
    const HostSession *c = connection(alias);
    const Transport::State state = c ? c->state() : Transport::State::Disconnected;
    const bool live = state != Transport::State::Disconnected && state != Transport::State::Failed;
    m_ui->editButton->setEnabled(e);
    m_ui->removeButton->setEnabled(e && e->origin == HostListModel::Origin::App);
    m_ui->removeButton->setToolTip(e && e->origin == HostListModel::Origin::SshConfig
                                       ? tr("Hosts of ~/.ssh/config are removed there")
                                       : QString());
    m_ui->connectButton->setEnabled(e && !live);
    m_ui->disconnectButton->setEnabled(e && live);
    m_ui->probeButton->setEnabled(e && !(c && c->isProbing()));
    const bool fetching = c && c->isFetching();
    m_ui->diagnoseHostButton->setEnabled(e && !fetching);
    {
        const QSignalBlocker block(m_ui->followButton);
        m_ui->followButton->setChecked(!m_following.isEmpty() && m_following == alias);
    }
    m_ui->followButton->setEnabled(e);
    const bool canTune = c && c->lastProbe() && c->lastProbe()->suggestedSpec;
    const QString ask = c && c->lastProbe() ? c->lastProbe()->serverQuestion(tr("in Server")) : QString();
    m_ui->tuneServedButton->setEnabled(canTune);
    m_ui->tuneServedButton->setToolTip(
        canTune
            ? tr("Tune %1 on this host (%2)")
                  .arg(c->lastProbe()->suggestedSpec->summaryText(), c->lastProbe()->servers.first().label())
        : !ask.isEmpty()      ? ask
        : c && c->lastProbe() ? tr("The probe saw no MoE model being served here: start the server, probe "
                                   "again, or tune by hand on the Tune page")
                              : tr("Probe the host first: the job comes from the served model's config"));
    m_ui->serverProfileButton->setEnabled(e);
    const qsizetype selected = m_ui->hostView->selectionModel()->selectedRows(0).size();
    m_diagnoseAllButton->setEnabled(selected >= 2);
    m_diagnoseAllButton->setText(selected >= 2 ? tr("Diagnose All (%1)").arg(selected) : tr("Diagnose All"));
    m_diagnoseAllButton->setToolTip(
        selected >= 2 ? tr("Diagnose the %1 selected hosts at once in the Fleet view, and group them by the "
                           "config file they want")
                            .arg(selected)
                      : tr("Select two or more hosts (Ctrl+click, Shift+click) to diagnose them at once in "
                           "the Fleet view"));
    const bool showProgress = fetching && m_fetching == alias;
    m_ui->fetchProgress->setVisible(showProgress);
    m_ui->fetchLabel->setVisible(showProgress);
    m_ui->cancelButton->setVisible(showProgress);
}

void HostsPage::showHostMessage(const QString &alias, int kind, const QString &text) {
    if (text.isEmpty())
        m_messages.remove(alias);
    else
        m_messages.insert(alias, {kind, text});
    if (alias.isEmpty() || alias == currentAlias())
        showCurrentMessage();
}

void HostsPage::showCurrentMessage() {
    // A problem of the host list itself (unreadable ssh config) shows until a host has news of its own.
    auto it = m_messages.constFind(currentAlias());
    if (it == m_messages.constEnd())
        it = m_messages.constFind(QString());
    if (it == m_messages.constEnd()) {
        m_ui->hostBanner->hide();
        return;
    }
    m_ui->hostBanner->showMessage(Banner::Kind(it->kind), it->text);
}

void HostsPage::onStateChanged(const QString &alias, Transport::State state, const QString &message) {
    m_model->setState(alias, state, message);
    switch (state) {
    case Transport::State::Failed:
        showHostMessage(alias, int(Banner::Kind::Error),
                        message.isEmpty() ? tr("Could not connect to %1.").arg(labelFor(alias)) : message);
        break;
    case Transport::State::Reconnecting:
        showHostMessage(alias, int(Banner::Kind::Warning),
                        message.isEmpty() ? tr("Connection to %1 lost; reconnecting...").arg(labelFor(alias))
                                          : message);
        break;
    case Transport::State::Connected: {
        // Work already under way keeps its own message ("Probing..."); otherwise say it worked.
        const HostSession *c = connection(alias);
        if (!c || (!c->isProbing() && !c->isFetching()))
            showHostMessage(alias, int(Banner::Kind::Success),
                            message.isEmpty() ? tr("Connected to %1.").arg(labelFor(alias)) : message);
        break;
    }
    case Transport::State::Connecting:
        showHostMessage(alias, int(Banner::Kind::Info), tr("Connecting to %1...").arg(labelFor(alias)));
        break;
    case Transport::State::AwaitingUser:
    case Transport::State::Disconnected:
        break;
    }
    if (alias == currentAlias())
        updateActions();
}

void HostsPage::onHostKeyUnknown(const QString &alias, const QString &keyType, const QString &fingerprint) {
    auto *dialog = new HostKeyDialog(labelFor(alias), keyType, fingerprint, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::finished, this, [this, alias](int result) {
        if (HostSession *c = connection(alias))
            c->answerHostKey(result == QDialog::Accepted);
        if (result != QDialog::Accepted)
            showHostMessage(alias, int(Banner::Kind::Warning),
                            tr("Not connected: the host key of %1 was not accepted.").arg(labelFor(alias)));
    });
    dialog->open(); // window-modal, never a nested event loop
}

void HostsPage::onSecretRequested(const QString &alias, int kind, const QStringList &prompts,
                                  const QString &instruction) {
    auto *dialog =
        new HostSecretDialog(labelFor(alias), SshTransport::SecretKind(kind), prompts, instruction, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::finished, this, [this, alias, dialog](int result) {
        HostSession *c = connection(alias);
        if (!c)
            return;
        if (result == QDialog::Accepted)
            c->provideSecret(dialog->answers(), dialog->remember());
        else
            c->cancelSecret();
    });
    dialog->open();
}

void HostsPage::onProbed(const QString &alias, const HostProbe &probe) {
    const HostSession *c = connection(alias);
    m_model->setBusy(alias, c && c->isFetching());
    QString note = tr("Probed %1").arg(labelFor(alias));
    if (probe.simulated)
        note += tr(" (simulated)");
    if (probe.framework == Framework::SGLang && probe.tritonVersion && !probe.installedTritonFolderExists)
        note += tr(": folder %1 for the installed Triton is MISSING").arg(probe.installedTritonFolder());
    showHostMessage(
        alias,
        probe.framework == Framework::SGLang && probe.tritonVersion && !probe.installedTritonFolderExists
            ? int(Banner::Kind::Warning)
            : int(Banner::Kind::Success),
        note + u'.' +
            (probe.servers.size() > 1 ? tr(" %n servers run here: choose in Server the one moetune acts on.",
                                           nullptr, int(probe.servers.size()))
             : !probe.serverChoiceProblem.isEmpty() ? u' ' + probe.serverChoiceProblem
                                                    : QString()));
    if (alias == currentAlias())
        m_ui->hostOverview->setProbe(probe);
    updateActions();
    emit hostProbed(alias, probe);
}

QString HostsPage::fetchFilePath(const QString &alias) const {
    // Kept in the cache (not a temp file) so the Diagnose page and its recent list can reopen it.
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + u"/host-logs"_s;
    QDir().mkpath(dir);
    // Named like the host everywhere else in the app ("Local machine", not "local").
    QString safe = m_registry->displayName(alias);
    for (QChar &ch : safe) {
        if (!ch.isLetterOrNumber() && ch != u'-' && ch != u'_' && ch != u'.')
            ch = u'_';
    }
    return dir + u'/' + safe + u'-' + QDateTime::currentDateTime().toString(u"yyyyMMdd-HHmmss"_s) + u".log"_s;
}

void HostsPage::diagnoseHost() {
    const QString alias = currentAlias();
    HostSession *c = m_registry->ensureConnection(alias);
    if (!c)
        return;
    QString error;
    m_fetchFile = fetchFilePath(alias);
    if (!c->diagnoseHost(qint64(m_ui->fetchSizeSpin->value()) << 20, m_fetchFile,
                         m_diagnoser ? m_diagnoser() : Diagnoser(), &error)) {
        showHostMessage(alias, int(Banner::Kind::Error), error);
        return;
    }
    m_fetching = alias;
    m_model->setBusy(alias, true);
    m_ui->fetchProgress->setRange(0, 0);
    m_ui->fetchLabel->setText(tr("Fetching the log..."));
    showHostMessage(
        alias, int(Banner::Kind::Info),
        tr("Fetching the last %1 MB of %2's log...").arg(m_ui->fetchSizeSpin->value()).arg(labelFor(alias)));
    updateActions();
}

void HostsPage::cancelFetch() {
    if (HostSession *c = connection(m_fetching.isEmpty() ? currentAlias() : m_fetching))
        c->cancelFetch();
}

void HostsPage::onLogFetched(const QString &alias, const QString &path, const HostProbe &probe,
                             const std::optional<Diagnosis> &diagnosis) {
    if (m_fetching == alias)
        m_fetching.clear();
    m_model->setBusy(alias, false);
    updateActions();
    showHostMessage(alias, int(Banner::Kind::Success),
                    tr("Fetched %1 of %2's log to %3; its diagnosis is in the Diagnose page.")
                        .arg(QLocale().formattedDataSize(QFileInfo(path).size()), labelFor(alias),
                             QDir::toNativeSeparators(path)));
    m_fetchedDiagnosis = diagnosis;
    emit logFetched(alias, path, probe);
    m_fetchedDiagnosis.reset();
}

void HostsPage::setFollowing(bool follow) {
    if (!follow) {
        stopFollowing();
        return;
    }
    const QString alias = currentAlias();
    HostSession *c = m_registry->ensureConnection(alias);
    if (!c) {
        updateActions();
        return;
    }
    if (!m_following.isEmpty() && m_following != alias)
        stopFollowing();
    QString error;
    if (!c->startFollow(&error)) {
        showHostMessage(alias, int(Banner::Kind::Error), error);
        updateActions();
        return;
    }
    m_following = alias;
    m_followBuffer.clear();
    if (!c->lastProbe())
        c->probe(); // facts arrive later (hostProbed); the log's pages merge them then
    showHostMessage(alias, int(Banner::Kind::Info),
                    tr("Following %1's log: new lines go to the Diagnose page.").arg(labelFor(alias)));
    updateActions();
    emit followStarted(alias);
}

void HostsPage::stopFollowing() {
    const QString alias = std::exchange(m_following, QString());
    if (alias.isEmpty()) {
        updateActions();
        return;
    }
    if (HostSession *c = connection(alias))
        c->stopFollow();
    m_followFlush.stop();
    m_followBuffer.clear();
    showHostMessage(alias, int(Banner::Kind::Info), tr("Stopped following %1's log.").arg(labelFor(alias)));
    updateActions();
    emit followStopped(alias, QString());
}

void HostsPage::addHost() {
    QStringList taken;
    for (int i = 0; i < m_model->rowCount(); ++i)
        taken.append(m_model->entry(i)->host.alias);
    auto *dialog = new HostDialog(HostDialog::Mode::Add, HostConfig{}, taken, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        const HostConfig h = dialog->host();
        saveHost(h);
        selectHost(h.alias);
    });
    dialog->open();
}

void HostsPage::editHost() {
    const HostListModel::Entry *e = m_model->entry(currentAlias());
    if (!e)
        return;
    QStringList taken;
    for (int i = 0; i < m_model->rowCount(); ++i)
        taken.append(m_model->entry(i)->host.alias);
    const auto mode = e->origin == HostListModel::Origin::App ? HostDialog::Mode::EditApp
                                                              : HostDialog::Mode::EditSettingsOnly;
    auto *dialog = new HostDialog(mode, e->host, taken, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    const QString previous = e->host.alias;
    connect(dialog, &QDialog::accepted, this, [this, dialog, previous] {
        const HostConfig h = dialog->host();
        saveHost(h, previous);
        selectHost(h.alias);
    });
    dialog->open();
}

void HostsPage::saveHost(const HostConfig &host, const QString &previousAlias) {
    if (!previousAlias.isEmpty() && previousAlias != host.alias)
        m_messages.remove(previousAlias);
    // A message about how the host was before (no log source, could not connect) is stale now.
    m_messages.remove(host.alias);
    m_registry->save(host, previousAlias);
}

bool HostsPage::addPracticeServer() {
    const PracticeServer practice;
    QString error;
    if (!practice.create(&error) || (!practice.isRunning() && !practice.startServer(&error))) {
        showHostMessage(currentAlias(), int(Banner::Kind::Error), error);
        return false;
    }
    saveHost(practice.host());
    selectHost(PracticeServer::alias());
    showHostMessage(
        PracticeServer::alias(), int(Banner::Kind::Success),
        tr("%1 is ready in %2: a stand-in SGLang server on this machine (a practice double: no GPU, no real "
           "model) whose log falls back to an older Triton's config on both ranks. Diagnose host, then Tune "
           "this with the synthetic backend, push, restart and prove, and undo; its numbers are SIMULATED.")
            .arg(PracticeServer::label(), practice.root()));
    return true;
}

void HostsPage::removeHost() {
    const QString alias = currentAlias();
    const HostListModel::Entry *e = m_model->entry(alias);
    if (!e || e->origin != HostListModel::Origin::App)
        return;
    auto *box = new QMessageBox(QMessageBox::Question, tr("Remove Host"),
                                tr("Remove %1 from moetune's hosts?").arg(labelFor(alias)),
                                QMessageBox::NoButton, this);
    box->setObjectName(u"removeHostConfirm"_s);
    box->setInformativeText(tr("Its connection settings and server log setting are forgotten; nothing on "
                               "the host changes."));
    QPushButton *yes = box->addButton(tr("Remove"), QMessageBox::DestructiveRole);
    yes->setObjectName(u"confirmRemoveButton"_s);
    box->addButton(QMessageBox::Cancel)->setObjectName(u"cancelRemoveButton"_s);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this, [this, alias, yes](QAbstractButton *clicked) {
        if (clicked == yes && currentAlias() == alias)
            removeHostNow();
    });
    box->open(); // window-modal, never a nested event loop
}

bool HostsPage::removeHostNow() {
    const QString alias = currentAlias();
    const HostListModel::Entry *e = m_model->entry(alias);
    if (!e || e->origin != HostListModel::Origin::App)
        return false;
    if (m_following == alias)
        stopFollowing();
    m_messages.remove(alias);
    return m_registry->remove(alias);
}

void HostsPage::connectHost() {
    const QString alias = currentAlias();
    if (HostSession *c = m_registry->ensureConnection(alias)) {
        c->connectToHost();
        updateActions();
    }
}

void HostsPage::disconnectHost() {
    const QString alias = currentAlias();
    if (HostSession *c = connection(alias)) {
        if (m_following == alias)
            stopFollowing();
        c->disconnectFromHost();
        showHostMessage(alias, int(Banner::Kind::Info), QString());
        updateActions();
    }
}

void HostsPage::probeHost() {
    if (HostSession *c = m_registry->ensureConnection(currentAlias())) {
        c->probe();
        m_ui->hostOverview->clear(tr("Probing %1...").arg(labelFor(currentAlias())));
        updateActions();
    }
}

void HostsPage::tuneServedModel() {
    const QString alias = currentAlias();
    const HostSession *c = connection(alias);
    if (!c || !c->lastProbe() || !c->lastProbe()->suggestedSpec) {
        showHostMessage(alias, int(Banner::Kind::Info), m_ui->tuneServedButton->toolTip() + u'.');
        return;
    }
    emit tuneSpecRequested(alias, *c->lastProbe()->suggestedSpec);
}

void HostsPage::editServerProfile() {
    const QString alias = currentAlias();
    const auto host = m_registry->host(alias);
    if (!host)
        return;
    std::optional<ServerProfile> suggestion;
    // From the server the flows act on; with several and none chosen, from none (the dialog asks nothing).
    if (const HostSession *c = connection(alias); c && c->lastProbe() && c->lastProbe()->servers.size() == 1)
        suggestion = suggestServerProfile(c->lastProbe()->servers.first());
    auto *dialog = new ServerProfileDialog(labelFor(alias), host->serverProfile, suggestion, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ServerProfileDialog::profileAccepted, this, [this, alias](const ServerProfile &p) {
        auto h = m_registry->host(alias);
        if (!h)
            return;
        const QString chosen = h->serverProfile.server;
        h->serverProfile = p;
        if (h->serverProfile.server.isEmpty()) // the dialog edits how it runs, not which server it is
            h->serverProfile.server = chosen;
        saveHost(*h);
        showHostMessage(alias, int(Banner::Kind::Success),
                        tr("Server profile of %1 saved: %2").arg(labelFor(alias), p.summary()));
    });
    dialog->open(); // window-modal, never a nested event loop
}

void HostsPage::chooseServer(const QString &alias, const QString &choice) {
    auto h = m_registry->host(alias);
    if (!h || !ServerChoice::parse(choice))
        return;
    h->serverProfile.server = choice;
    saveHost(*h); // the host's connection focuses its probe on it (HostSession::setHost)
    const HostSession *c = connection(alias);
    if (!c || !c->lastProbe())
        return;
    const HostProbe &p = *c->lastProbe();
    if (alias == currentAlias())
        m_ui->hostOverview->setProbe(p);
    showHostMessage(alias, int(Banner::Kind::Info),
                    p.servers.size() == 1
                        ? tr("%1: diagnose, tune, push, restart and the serving benchmark act on %2.")
                              .arg(labelFor(alias), p.servers.first().label())
                        : p.serverQuestion(tr("in Server")));
    updateActions();
    emit hostProbed(alias, p); // the pages that hold this host's facts take the chosen server's
}

} // namespace moetune
