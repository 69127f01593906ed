#include "app/hosts/hostspage.h"

#include "app/diagnose/diagnosepage.h"
#include "app/hosts/hostdialog.h"
#include "app/hosts/hostkeydialog.h"
#include "app/hosts/hostlistmodel.h"
#include "app/hosts/hostoverview.h"
#include "app/hosts/hostsecretdialog.h"
#include "app/widgets/banner.h"
#include "app/widgets/logedit.h"
#include "remote/agentclient.h"

#include "remote/hostsession.h"
#include "remote/hoststore.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTreeView>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QPushButton *button(const QString &text, const QString &name, QWidget *parent) {
    auto *b = new QPushButton(text, parent);
    b->setObjectName(name);
    return b;
}

} // namespace

HostsPage::HostsPage(DiagnosePage *diagnosePage, QWidget *parent)
    : QWidget(parent)
    , m_diagnose(diagnosePage)
    , m_sshConfigPath(HostStore::defaultSshConfigPath())
    , m_agentPath(AgentClient::defaultLocalAgentPath())
    , m_model(new HostListModel(this)) {
    setObjectName(u"hostsPage"_s);
    auto *outer = new QVBoxLayout(this);
    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setChildrenCollapsible(false);
    outer->addWidget(splitter);

    // Left: the host list and what can be done to the list.
    auto *left = new QWidget(splitter);
    auto *leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    auto *listTitle = new QLabel(tr("Hosts"), left);
    QFont titleFont = listTitle->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
    listTitle->setFont(titleFont);
    leftLayout->addWidget(listTitle);
    m_view = new QTreeView(left);
    m_view->setObjectName(u"hostView"_s);
    m_view->setModel(m_model);
    m_view->setRootIsDecorated(false);
    m_view->setUniformRowHeights(true);
    m_view->setAllColumnsShowFocus(true);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->header()->setStretchLastSection(true);
    m_view->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    leftLayout->addWidget(m_view, 1);
    auto *listButtons = new QHBoxLayout;
    m_add = button(tr("Add..."), u"addButton"_s, left);
    m_edit = button(tr("Edit..."), u"editButton"_s, left);
    m_remove = button(tr("Remove"), u"removeButton"_s, left);
    listButtons->addWidget(m_add);
    listButtons->addWidget(m_edit);
    listButtons->addWidget(m_remove);
    listButtons->addStretch(1);
    leftLayout->addLayout(listButtons);
    auto *connButtons = new QHBoxLayout;
    m_connect = button(tr("Connect"), u"connectButton"_s, left);
    m_disconnect = button(tr("Disconnect"), u"disconnectButton"_s, left);
    connButtons->addWidget(m_connect);
    connButtons->addWidget(m_disconnect);
    connButtons->addStretch(1);
    leftLayout->addLayout(connButtons);

    // Right: the selected host.
    auto *right = new QWidget(splitter);
    auto *rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(6, 0, 0, 0);
    m_title = new QLabel(right);
    m_title->setObjectName(u"hostTitle"_s);
    m_title->setFont(titleFont);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    rightLayout->addWidget(m_title);
    m_subtitle = new QLabel(right);
    m_subtitle->setObjectName(u"hostSubtitle"_s);
    m_subtitle->setWordWrap(true);
    m_subtitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    rightLayout->addWidget(m_subtitle);
    m_banner = new Banner(right);
    m_banner->setObjectName(u"hostBanner"_s);
    m_banner->hide();
    rightLayout->addWidget(m_banner);

    auto *actions = new QHBoxLayout;
    m_probe = button(tr("Probe"), u"probeButton"_s, right);
    m_probe->setToolTip(tr("Run moetune's agent on the host: GPUs, versions, config folders, served model"));
    m_diagnoseButton = button(tr("Diagnose Host"), u"diagnoseHostButton"_s, right);
    m_diagnoseButton->setToolTip(
        tr("Fetch the end of the server's log and diagnose it with the host's facts in the Diagnose page"));
    m_fetchMiB = new QSpinBox(right);
    m_fetchMiB->setObjectName(u"fetchSizeSpin"_s);
    m_fetchMiB->setRange(1, 4096);
    m_fetchMiB->setValue(defaultFetchMiB);
    m_fetchMiB->setPrefix(tr("last "));
    m_fetchMiB->setSuffix(tr(" MB"));
    m_fetchMiB->setToolTip(tr("How much of the end of the log to fetch"));
    m_follow = button(tr("Follow Live"), u"followButton"_s, right);
    m_follow->setCheckable(true);
    m_follow->setToolTip(tr("Stream new log lines into the Diagnose page as the server writes them"));
    actions->addWidget(m_probe);
    actions->addWidget(m_diagnoseButton);
    actions->addWidget(m_fetchMiB);
    actions->addWidget(m_follow);
    actions->addStretch(1);
    rightLayout->addLayout(actions);

    auto *progressRow = new QHBoxLayout;
    m_progressLabel = new QLabel(right);
    m_progress = new QProgressBar(right);
    m_progress->setObjectName(u"fetchProgress"_s);
    m_cancel = button(tr("Cancel"), u"cancelButton"_s, right);
    progressRow->addWidget(m_progressLabel);
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_cancel);
    rightLayout->addLayout(progressRow);
    m_progressLabel->hide();
    m_progress->hide();
    m_cancel->hide();

    auto *scroll = new QScrollArea(right);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_overview = new HostOverview(scroll);
    m_overview->setObjectName(u"hostOverview"_s);
    scroll->setWidget(m_overview);
    rightLayout->addWidget(scroll, 1);

    splitter->addWidget(left);
    splitter->addWidget(right);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 5);
    splitter->setSizes({420, 1000});

    connect(m_add, &QPushButton::clicked, this, &HostsPage::addHost);
    connect(m_edit, &QPushButton::clicked, this, &HostsPage::editHost);
    connect(m_remove, &QPushButton::clicked, this, &HostsPage::removeHost);
    connect(m_connect, &QPushButton::clicked, this, &HostsPage::connectHost);
    connect(m_disconnect, &QPushButton::clicked, this, &HostsPage::disconnectHost);
    connect(m_probe, &QPushButton::clicked, this, &HostsPage::probeHost);
    connect(m_diagnoseButton, &QPushButton::clicked, this, &HostsPage::diagnoseHost);
    connect(m_follow, &QPushButton::toggled, this, &HostsPage::setFollowing);
    connect(m_cancel, &QPushButton::clicked, this, &HostsPage::cancelFetch);
    connect(m_view, &QTreeView::doubleClicked, this, [this] {
        const HostSession *c = connection(currentAlias());
        if (!c || c->state() != Transport::State::Connected)
            connectHost();
    });

    m_sshTemplate = HostStore::userSshOptions(m_sshConfigPath);
    setSources(nullptr, m_sshConfigPath);

    m_followFlush.setInterval(followFlushMs);
    connect(&m_followFlush, &QTimer::timeout, this, [this] {
        if (m_followBuffer.isEmpty() || !m_diagnose) {
            m_followFlush.stop();
            return;
        }
        m_diagnose->logEdit()->appendPlainText(m_followBuffer.join(u'\n'));
        m_followBuffer.clear();
    });
}

HostsPage::~HostsPage() {
    // Connections end before the settings and the store they may still read.
    qDeleteAll(m_connections);
    m_connections.clear();
}

void HostsPage::setSources(QSettings *settings, const QString &sshConfigPath) {
    if (settings) {
        m_settings = settings;
        m_ownSettings.reset();
    } else {
        m_ownSettings = std::make_unique<QSettings>();
        m_settings = m_ownSettings.get();
    }
    m_sshConfigPath = sshConfigPath;
    m_store = std::make_unique<HostStore>(m_settings, m_sshConfigPath);
    reload();
}

void HostsPage::setSshTemplate(const SshOptions &options) {
    m_sshTemplate = options;
}

void HostsPage::setLocalHome(const QString &home) {
    m_localHome = home;
}

void HostsPage::setAgentPath(const QString &path) {
    m_agentPath = path;
}

HostConfig HostsPage::localHost() const {
    return m_store->localHost();
}

void HostsPage::reload() {
    const QString current = currentAlias();
    const QList<HostConfig> hosts = m_store->hosts();
    m_model->setHosts(hosts, localHost());
    // An unreadable ssh config or saved host is reported (and cleared once fixed), never fatal.
    const QStringList errors = m_store->errors();
    showHostMessage(QString(), int(Banner::Kind::Warning), errors.join(u'\n'));
    // Connections follow their host's new settings; removed hosts lose theirs.
    for (auto it = m_connections.begin(); it != m_connections.end();) {
        if (const auto h = hostConfig(it.key())) {
            it.value()->setHost(*h);
            ++it;
        } else {
            it.value()->deleteLater();
            it = m_connections.erase(it);
        }
    }
    if (!selectHost(current) && m_model->rowCount() > 0)
        m_view->setCurrentIndex(m_model->index(0, 0));
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &HostsPage::onSelectionChanged, Qt::UniqueConnection);
    onSelectionChanged();
}

std::optional<HostConfig> HostsPage::hostConfig(const QString &alias) const {
    if (const HostListModel::Entry *e = m_model->entry(alias))
        return e->host;
    return std::nullopt;
}

QString HostsPage::currentAlias() const {
    return m_view->currentIndex().data(HostListModel::AliasRole).toString();
}

bool HostsPage::selectHost(const QString &alias) {
    const int row = m_model->rowOf(alias);
    if (row < 0)
        return false;
    m_view->setCurrentIndex(m_model->index(row, 0));
    return true;
}

HostSession *HostsPage::connection(const QString &alias) const {
    return m_connections.value(alias);
}

QString HostsPage::bannerText() const {
    return m_banner->isHidden() ? QString() : m_banner->text();
}

QString HostsPage::labelFor(const QString &alias) const {
    const auto host = hostConfig(alias);
    return host ? host->label() : alias;
}

HostSession *HostsPage::ensureConnection(const QString &alias) {
    if (HostSession *c = m_connections.value(alias))
        return c;
    const auto host = hostConfig(alias);
    if (!host)
        return nullptr;
    auto *c = new HostSession(*host, HostSession::Environment{m_sshTemplate, m_localHome, m_agentPath}, this);
    m_connections.insert(alias, c);
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
                } else if (flow == HostSession::Flow::FetchLog) {
                    if (m_fetching == alias)
                        m_fetching.clear();
                    m_model->setBusy(alias, connection(alias) && connection(alias)->isProbing());
                    showHostMessage(alias, int(Banner::Kind::Error), error);
                    updateActions();
                }
            });
    connect(c, &HostSession::jobProgress, this, [this, alias](JobId, qint64 done, qint64 total) {
        if (alias != currentAlias() || !connection(alias) || !connection(alias)->isFetching())
            return;
        m_progress->setRange(0, 1000);
        m_progress->setValue(total > 0 ? int(qBound(qint64(0), done * 1000 / total, qint64(1000))) : 0);
        m_progressLabel->setText(tr("Fetching the log: %1").arg(QLocale().formattedDataSize(done)));
    });
    connect(c, &HostSession::logFetched, this,
            [this, alias](JobId, const QString &path, const HostProbe &p) { onLogFetched(alias, path, p); });
    connect(c, &HostSession::followLines, this, [this, alias](JobId, const QStringList &lines) {
        if (m_following != alias || !m_diagnose)
            return;
        // Batched: a chatty server would otherwise keep the Diagnose page's paste debounce from firing.
        m_followBuffer += lines;
        if (!m_followFlush.isActive())
            m_followFlush.start();
    });
    connect(c, &HostSession::followStopped, this, [this, alias](JobId, const QString &error) {
        if (m_following == alias)
            m_following.clear();
        if (!error.isEmpty())
            showHostMessage(alias, int(Banner::Kind::Error), tr("Following the log stopped: %1").arg(error));
        updateActions();
    });
    return c;
}

void HostsPage::onSelectionChanged() {
    const QString alias = currentAlias();
    const HostListModel::Entry *e = m_model->entry(alias);
    if (!e) {
        m_title->setText(tr("No host selected"));
        m_subtitle->clear();
        m_overview->clear(tr("Add a host, or pick Local machine to try moetune on this computer."));
    } else {
        m_title->setText(e->host.label());
        QStringList facts{HostListModel::address(e->host, e->origin)};
        facts.append(tr("python: %1").arg(e->host.python));
        facts.append(e->host.logSource.kind == LogSource::Kind::None
                         ? tr("log: not set (Edit... to add one)")
                         : tr("log: %1").arg(e->host.logSource.value));
        m_subtitle->setText(facts.join(u"   \u00b7   "_s));
        const HostSession *c = connection(alias);
        if (c && c->lastProbe())
            m_overview->setProbe(*c->lastProbe());
        else
            m_overview->clear(c && c->isProbing()
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
    m_edit->setEnabled(e);
    m_remove->setEnabled(e && e->origin == HostListModel::Origin::App);
    m_remove->setToolTip(e && e->origin == HostListModel::Origin::SshConfig
                             ? tr("Hosts of ~/.ssh/config are removed there")
                             : QString());
    m_connect->setEnabled(e && !live);
    m_disconnect->setEnabled(e && live);
    m_probe->setEnabled(e && !(c && c->isProbing()));
    const bool fetching = c && c->isFetching();
    m_diagnoseButton->setEnabled(e && !fetching);
    {
        const QSignalBlocker block(m_follow);
        m_follow->setChecked(!m_following.isEmpty() && m_following == alias);
    }
    m_follow->setEnabled(e);
    const bool showProgress = fetching && m_fetching == alias;
    m_progress->setVisible(showProgress);
    m_progressLabel->setVisible(showProgress);
    m_cancel->setVisible(showProgress);
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
        m_banner->hide();
        return;
    }
    m_banner->showMessage(Banner::Kind(it->kind), it->text);
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
    showHostMessage(alias,
                    probe.framework == Framework::SGLang && probe.tritonVersion &&
                            !probe.installedTritonFolderExists
                        ? int(Banner::Kind::Warning)
                        : int(Banner::Kind::Success),
                    note + u'.');
    if (alias == currentAlias())
        m_overview->setProbe(probe);
    updateActions();
}

QString HostsPage::fetchFilePath(const QString &alias) const {
    // Kept in the cache (not a temp file) so the Diagnose page and its recent list can reopen it.
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + u"/host-logs"_s;
    QDir().mkpath(dir);
    QString safe = alias;
    for (QChar &ch : safe) {
        if (!ch.isLetterOrNumber() && ch != u'-' && ch != u'_' && ch != u'.')
            ch = u'_';
    }
    return dir + u'/' + safe + u'-' + QDateTime::currentDateTime().toString(u"yyyyMMdd-HHmmss"_s) + u".log"_s;
}

void HostsPage::diagnoseHost() {
    const QString alias = currentAlias();
    HostSession *c = ensureConnection(alias);
    if (!c)
        return;
    QString error;
    if (!c->fetchLog(qint64(m_fetchMiB->value()) << 20, fetchFilePath(alias), &error)) {
        showHostMessage(alias, int(Banner::Kind::Error), error);
        return;
    }
    m_fetching = alias;
    m_model->setBusy(alias, true);
    m_progress->setRange(0, 0);
    m_progressLabel->setText(tr("Fetching the log..."));
    showHostMessage(
        alias, int(Banner::Kind::Info),
        tr("Fetching the last %1 MB of %2's log...").arg(m_fetchMiB->value()).arg(labelFor(alias)));
    updateActions();
}

void HostsPage::cancelFetch() {
    if (HostSession *c = connection(m_fetching.isEmpty() ? currentAlias() : m_fetching))
        c->cancelFetch();
}

void HostsPage::onLogFetched(const QString &alias, const QString &path, const HostProbe &probe) {
    if (m_fetching == alias)
        m_fetching.clear();
    m_model->setBusy(alias, false);
    updateActions();
    if (!m_diagnose)
        return;
    const qint64 size = QFileInfo(path).size();
    if (!m_diagnose->openFetchedLog(path, labelFor(alias), probe)) {
        showHostMessage(alias, int(Banner::Kind::Error),
                        tr("The log of %1 was fetched to %2 but could not be opened: %3")
                            .arg(labelFor(alias), path, m_diagnose->errorText()));
        return;
    }
    showHostMessage(alias, int(Banner::Kind::Success),
                    tr("Fetched %1 of %2's log; its diagnosis is in the Diagnose page.")
                        .arg(QLocale().formattedDataSize(size), labelFor(alias)));
    emit diagnosisOpened();
}

void HostsPage::setFollowing(bool follow) {
    const QString alias = currentAlias();
    if (!follow) {
        if (HostSession *c = connection(m_following))
            c->stopFollow();
        m_following.clear();
        updateActions();
        return;
    }
    HostSession *c = ensureConnection(alias);
    if (!c || !m_diagnose)
        return;
    if (!m_following.isEmpty() && m_following != alias) {
        if (HostSession *old = connection(m_following))
            old->stopFollow();
    }
    QString error;
    if (!c->startFollow(&error)) {
        showHostMessage(alias, int(Banner::Kind::Error), error);
        updateActions();
        return;
    }
    m_following = alias;
    m_followBuffer.clear();
    std::optional<HostProbe> probe = c->lastProbe();
    if (!probe)
        c->probe(); // facts arrive later; the page merges them from the next diagnosis on
    m_diagnose->setHostContext(labelFor(alias), probe);
    m_diagnose->setLogText(QString());
    showHostMessage(alias, int(Banner::Kind::Info),
                    tr("Following %1's log: new lines go to the Diagnose page.").arg(labelFor(alias)));
    updateActions();
    emit diagnosisOpened();
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
    if (host.local || host.alias == HostListModel::localAlias()) {
        m_store->save(host); // the Local machine's settings, where the CLI reads them too
    } else {
        if (!previousAlias.isEmpty() && previousAlias != host.alias) {
            m_store->remove(previousAlias);
            if (HostSession *c = m_connections.take(previousAlias))
                c->deleteLater();
            m_messages.remove(previousAlias);
        }
        m_store->save(host);
    }
    reload();
}

bool HostsPage::removeHost() {
    const QString alias = currentAlias();
    const HostListModel::Entry *e = m_model->entry(alias);
    if (!e || e->origin != HostListModel::Origin::App)
        return false;
    if (HostSession *c = m_connections.take(alias)) {
        c->disconnectFromHost();
        c->deleteLater();
    }
    m_messages.remove(alias);
    const bool ok = m_store->remove(alias);
    reload();
    return ok;
}

void HostsPage::connectHost() {
    const QString alias = currentAlias();
    if (HostSession *c = ensureConnection(alias)) {
        c->connectToHost();
        updateActions();
    }
}

void HostsPage::disconnectHost() {
    const QString alias = currentAlias();
    if (HostSession *c = connection(alias)) {
        if (m_following == alias)
            m_following.clear();
        c->disconnectFromHost();
        showHostMessage(alias, int(Banner::Kind::Info), QString());
        updateActions();
    }
}

void HostsPage::probeHost() {
    if (HostSession *c = ensureConnection(currentAlias())) {
        c->probe();
        m_overview->clear(tr("Probing %1...").arg(labelFor(currentAlias())));
        updateActions();
    }
}

} // namespace moetune
