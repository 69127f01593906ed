// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hostoverview.h"

#include "app/hosts/hostfoldermodel.h"
#include "app/hosts/hostgpumodel.h"
#include "app/hosts/hostmemorydelegate.h"
#include "core/host/hosttext.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QJsonObject>
#include <QLabel>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QTableView *makeTable(QAbstractItemModel *model, QWidget *parent) {
    auto *view = new QTableView(parent);
    view->setModel(model);
    view->setSelectionMode(QAbstractItemView::NoSelection);
    view->setFocusPolicy(Qt::NoFocus);
    view->verticalHeader()->hide();
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() +
                                                  12); // room for the memory bar
    view->horizontalHeader()->setStretchLastSection(true);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->setShowGrid(false);
    view->setAlternatingRowColors(true);
    view->setWordWrap(false);
    view->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    view->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    view->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Maximum);
    return view;
}

// A table exactly as tall as its rows: the overview scrolls as a whole, tables never scroll inside it.
void fitToRows(QTableView *view) {
    int height = view->horizontalHeader()->sizeHint().height() + 2 * view->frameWidth();
    for (int r = 0; r < view->model()->rowCount(); ++r)
        height += view->rowHeight(r);
    view->setFixedHeight(height);
}

QString orDash(const QString &s) {
    return s.isEmpty() ? u"-"_s : s;
}

} // namespace

HostOverview::HostOverview(QWidget *parent)
    : QWidget(parent)
    , m_hint(new QLabel(this))
    , m_content(new QWidget(this))
    , m_gpuModel(new HostGpuModel(this))
    , m_folderModel(new HostFolderModel(this)) {
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_hint->setObjectName(u"overviewHint"_s);
    m_hint->setWordWrap(true);
    m_hint->setAlignment(Qt::AlignCenter);
    m_hint->setMargin(24);
    m_hint->setEnabled(false);
    layout->addWidget(m_hint);
    layout->addWidget(m_content, 1);

    auto *content = new QVBoxLayout(m_content);
    content->setContentsMargins(0, 0, 0, 0);

    auto *system = new QGroupBox(tr("Host"), m_content);
    auto *systemForm = new QFormLayout(system);
    addField(systemForm, u"host"_s, tr("Machine"));
    addField(systemForm, u"python"_s, tr("Python"));
    addField(systemForm, u"torch"_s, tr("torch"));
    addField(systemForm, u"triton"_s, tr("Triton"));
    addField(systemForm, u"nvcc"_s, tr("nvcc"));
    content->addWidget(system);

    auto *gpus = new QGroupBox(tr("GPUs"), m_content);
    auto *gpuLayout = new QVBoxLayout(gpus);
    m_gpuView = makeTable(m_gpuModel, gpus);
    m_gpuView->setObjectName(u"gpuView"_s);
    m_gpuView->setItemDelegateForColumn(HostGpuModel::MemoryColumn, new HostMemoryDelegate(m_gpuView));
    gpuLayout->addWidget(m_gpuView);
    auto *gpuNote = new QLabel(gpus);
    gpuNote->setTextFormat(Qt::PlainText); // the host's error text: never rich text
    gpuNote->setWordWrap(true);
    gpuNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fields.insert(u"gpuNote"_s, gpuNote);
    gpuLayout->addWidget(gpuNote);
    content->addWidget(gpus);

    auto *server = new QGroupBox(tr("Inference server"), m_content);
    auto *serverLayout = new QVBoxLayout(server);
    auto *serverForm = new QFormLayout;
    addField(serverForm, u"framework"_s, tr("Framework"));
    addField(serverForm, u"configRoot"_s, tr("Config root"));
    serverLayout->addLayout(serverForm);
    m_folderView = makeTable(m_folderModel, server);
    m_folderView->setObjectName(u"folderView"_s);
    serverLayout->addWidget(m_folderView);
    auto *modelForm = new QFormLayout;
    m_serverChoice = new QComboBox(server);
    m_serverChoice->setObjectName(u"serverChoice"_s);
    m_serverChoice->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    auto *serverLabel = new QLabel(tr("&Server"), server);
    serverLabel->setBuddy(m_serverChoice);
    modelForm->addRow(serverLabel, m_serverChoice);
    connect(m_serverChoice, &QComboBox::activated, this, [this](int index) {
        const QString choice = m_serverChoice->itemData(index).toString();
        if (!choice.isEmpty())
            emit serverChosen(choice);
    });
    addField(modelForm, u"model"_s, tr("Served model"));
    addField(modelForm, u"moeShape"_s, tr("MoE shape"));
    addField(modelForm, u"suggestedSpec"_s, tr("Tuning job"));
    serverLayout->addLayout(modelForm);
    content->addWidget(server);
    content->addStretch(1);

    clear(tr("Connect to the host and probe it to see its GPUs, versions and config folders."));
}

QLabel *HostOverview::addField(QFormLayout *form, const QString &key, const QString &label) {
    auto *value = new QLabel(form->parentWidget());
    value->setObjectName(key + u"Field"_s);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setWordWrap(true);
    value->setTextFormat(Qt::PlainText);
    form->addRow(label + u':', value);
    m_fields.insert(key, value);
    return value;
}

void HostOverview::setField(const QString &key, const QString &text) {
    if (QLabel *l = m_fields.value(key))
        l->setText(text);
}

QString HostOverview::field(const QString &key) const {
    const QLabel *l = m_fields.value(key);
    return l ? l->text() : QString();
}

void HostOverview::fillServerChoice(const HostProbe &p) {
    const QSignalBlocker block(m_serverChoice);
    m_serverChoice->clear();
    m_serverChoice->setToolTip(tr("The server that diagnose, tune, push, restart and the serving benchmark "
                                  "act on when the host runs several"));
    auto *model = qobject_cast<QStandardItemModel *>(m_serverChoice->model());
    auto add = [&](const ServerProcess &s, const QString &note, bool usable) {
        const QString choice = s.port > 0 && usable ? u"port %1"_s.arg(s.port) : u"pid %1"_s.arg(s.pid);
        m_serverChoice->addItem(note.isEmpty() ? s.label() : u"%1 - %2"_s.arg(s.label(), note),
                                usable ? choice : QString());
        if (!usable && model)
            model->item(m_serverChoice->count() - 1)->setEnabled(false);
    };
    if (p.servers.size() > 1 || !p.serverChoiceProblem.isEmpty() ||
        (p.servers.isEmpty() && !p.otherServers.isEmpty()))
        m_serverChoice->addItem(tr("Choose the server moetune acts on..."), QString());
    for (const ServerProcess &s : p.servers)
        add(s, {}, true);
    for (const ServerProcess &s : p.otherServers)
        add(s, {}, true);
    for (const ServerProcess &s : p.otherUsersServers)
        add(s, tr("%1's process, not used").arg(s.user.isEmpty() ? tr("another user") : s.user), false);
    if (m_serverChoice->count() == 0)
        m_serverChoice->addItem(tr("no running server found"), QString());
    m_serverChoice->setCurrentIndex(0);
    m_serverChoice->setEnabled(p.servers.size() + p.otherServers.size() > 1 ||
                               !p.serverChoiceProblem.isEmpty());
}

void HostOverview::clear(const QString &hint) {
    m_hasProbe = false;
    m_hint->setText(hint);
    m_hint->show();
    m_content->hide();
    m_gpuModel->setGpus({});
    m_folderModel->clear();
    for (QLabel *l : std::as_const(m_fields))
        l->clear();
}

void HostOverview::setProbe(const HostProbe &probe) {
    // Everything shown comes from the host: cleaned (no escape sequences, controls, bidi overrides, floods).
    const HostProbe p = hostProbeForDisplay(probe);
    m_hasProbe = true;
    m_hint->hide();
    m_content->show();
    const QJsonObject host = p.raw.value("host"_L1).toObject();
    QString machine = orDash(p.hostName);
    const QString os = host.value("os"_L1).toString();
    if (!os.isEmpty())
        machine += u", "_s + os;
    const int cpus = host.value("cpu_count"_L1).toInt();
    if (cpus > 0)
        machine += tr(", %n CPU core(s)", nullptr, cpus);
    if (p.simulated)
        machine += tr(" (simulated)");
    setField(u"host"_s, machine);
    setField(u"python"_s, p.pythonVersion.isEmpty() ? tr("not found")
                                                    : u"%1 (%2)"_s.arg(p.pythonVersion, p.pythonExecutable));
    setField(u"torch"_s, p.torchVersion.isEmpty() ? tr("not installed") : p.torchVersion);
    setField(u"triton"_s,
             p.tritonVersion
                 ? tr("%1 (config folder %2)").arg(p.tritonVersion->toString(), p.tritonVersion->folderName())
                 : tr("not installed"));
    setField(u"nvcc"_s, p.nvccVersion.isEmpty() ? tr("not found") : p.nvccVersion);

    m_gpuModel->setGpus(p.gpus);
    m_gpuView->setVisible(!p.gpus.isEmpty());
    const QString gpuError = p.raw.value("gpu_error"_L1).toString();
    setField(u"gpuNote"_s,
             p.gpus.isEmpty() ? tr("No GPU found%1.").arg(gpuError.isEmpty() ? QString() : u": "_s + gpuError)
                              : QString());
    m_fields.value(u"gpuNote"_s)->setVisible(p.gpus.isEmpty());

    if (p.framework == Framework::Unknown) {
        setField(u"framework"_s,
                 tr("neither SGLang nor vLLM is importable by %1").arg(orDash(p.pythonExecutable)));
        setField(u"configRoot"_s, u"-"_s);
    } else {
        setField(u"framework"_s, u"%1 %2"_s.arg(frameworkName(p.framework), p.frameworkVersion).trimmed());
        QString root = orDash(p.configRoot);
        if (!p.userConfigFolder.isEmpty())
            root += tr("\nuser folder: %1").arg(p.userConfigFolder);
        // The chosen server's own view (its interpreter, its SGLANG_MOE_CONFIG_DIR) when it differs.
        if (p.servers.size() == 1 && !p.servers.first().launch.serverConfigRoot.isEmpty() &&
            p.servers.first().launch.serverConfigRoot != p.configRoot)
            root += tr("\nthe chosen server reads: %1").arg(p.servers.first().launch.serverConfigRoot);
        setField(u"configRoot"_s, root);
    }
    m_folderModel->setProbe(p);
    m_folderView->setVisible(m_folderModel->rowCount() > 0);

    fillServerChoice(p);
    if (p.servers.size() == 1) {
        const ServerProcess &s = p.servers.first();
        setField(u"model"_s,
                 tr("%1 (%2, pid %3)").arg(orDash(s.modelPath), frameworkName(s.framework)).arg(s.pid));
        setField(u"moeShape"_s, s.shapeText());
    } else if (p.servers.size() > 1) {
        // The whole question (every pid) is the tooltip of Server; the field says what to do.
        setField(u"model"_s, tr("%n servers run here: choose in Server the one moetune acts on", nullptr,
                                int(p.servers.size())));
        m_serverChoice->setToolTip(p.serverQuestion(tr("in Server")));
        setField(u"moeShape"_s, u"-"_s);
    } else {
        setField(u"model"_s,
                 !p.serverChoiceProblem.isEmpty() ? p.serverChoiceProblem : tr("no running server found"));
        setField(u"moeShape"_s, u"-"_s);
    }
    setField(u"suggestedSpec"_s, p.suggestedSpec        ? p.suggestedSpec->summaryText()
                                 : p.servers.size() > 1 ? tr("none until a server is chosen")
                                                        : tr("none (no MoE model served)"));
    fitToRows(m_gpuView);
    fitToRows(m_folderView);
}

} // namespace moetune
