// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hostdialog.h"

#include "ui_hostdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>

using namespace Qt::StringLiterals;

namespace moetune {

HostDialog::HostDialog(Mode mode, const HostConfig &host, const QStringList &takenAliases, QWidget *parent)
    : QDialog(parent)
    , m_ui(std::make_unique<Ui::HostDialog>())
    , m_mode(mode)
    , m_original(host)
    , m_taken(takenAliases) {
    m_ui->setupUi(this);
    setObjectName(u"hostDialog"_s);
    setWindowTitle(mode == Mode::Add ? tr("Add Host") : tr("Edit %1").arg(host.alias));
    m_ui->aliasEdit->setText(host.alias);
    m_ui->hostNameEdit->setText(host.hostName);
    m_ui->userEdit->setText(host.user);
    m_ui->portSpin->setValue(host.port);
    m_ui->identityEdit->setText(host.identityFiles.value(0));
    m_ui->proxyJumpEdit->setText(host.proxyJump);
    connect(m_ui->browseButton, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Private Key"), QDir::homePath() + u"/.ssh"_s);
        if (!path.isEmpty())
            m_ui->identityEdit->setText(path);
    });

    if (mode == Mode::EditSettingsOnly) {
        // ~/.ssh/config stays the source of truth for how to reach the host; it is never written.
        for (QWidget *w : m_ui->connectionBox->findChildren<QWidget *>())
            w->setEnabled(false);
        m_ui->connectionBox->setTitle(
            host.fromSshConfig ? tr("Connection (from ~/.ssh/config, edit it there)") : tr("Connection"));
        if (!host.fromSshConfig)
            m_ui->connectionBox->hide();
    }

    m_ui->pythonEdit->setText(host.python);
    m_ui->logKindCombo->addItem(tr("None"), int(LogSource::Kind::None));
    m_ui->logKindCombo->addItem(tr("Log file"), int(LogSource::Kind::File));
    m_ui->logKindCombo->addItem(tr("Command"), int(LogSource::Kind::Command));
    m_ui->logKindCombo->setCurrentIndex(m_ui->logKindCombo->findData(int(host.logSource.kind)));
    m_ui->logSourceEdit->setText(host.logSource.value);
    // The log of a host on this machine can be picked here; a remote host's path is typed (it is there).
    m_ui->logBrowseButton->setVisible(host.local || host.isPractice());
    connect(m_ui->logBrowseButton, &QPushButton::clicked, this, [this] {
        const QString start = m_ui->logSourceEdit->text().trimmed();
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Server Log"), start.isEmpty() ? QDir::homePath() : QFileInfo(start).absolutePath(),
            tr("Logs (*.log *.txt *.out);;All files (*)"));
        if (path.isEmpty())
            return;
        m_ui->logKindCombo->setCurrentIndex(m_ui->logKindCombo->findData(int(LogSource::Kind::File)));
        m_ui->logSourceEdit->setText(path);
    });
    m_ui->stopEdit->setText(host.stopCommand);
    m_ui->startEdit->setText(host.startCommand);

    connect(m_ui->buttons, &QDialogButtonBox::accepted, this, &HostDialog::accept);
    connect(m_ui->buttons, &QDialogButtonBox::rejected, this, &HostDialog::reject);
    for (QLineEdit *e : {m_ui->aliasEdit, m_ui->hostNameEdit, m_ui->userEdit, m_ui->identityEdit,
                         m_ui->proxyJumpEdit, m_ui->pythonEdit, m_ui->logSourceEdit})
        connect(e, &QLineEdit::textChanged, this, &HostDialog::validate);
    connect(m_ui->portSpin, &QSpinBox::valueChanged, this, &HostDialog::validate);
    connect(m_ui->logKindCombo, &QComboBox::currentIndexChanged, this, [this] {
        updateLogPlaceholder();
        validate();
    });
    updateLogPlaceholder();
    // The sentence line keeps its room (two lines) whether it says something or not: the fields and the
    // buttons never move while one types (they jumped under the cursor as the sentence came and went).
    m_ui->errorLabel->setMinimumHeight(2 * m_ui->errorLabel->fontMetrics().lineSpacing() + 4);
    m_ui->errorLabel->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    validate();
    resize(560, sizeHint().height());
}

HostDialog::~HostDialog() = default;

void HostDialog::updateLogPlaceholder() {
    const auto kind = LogSource::Kind(m_ui->logKindCombo->currentData().toInt());
    m_ui->logSourceEdit->setEnabled(kind != LogSource::Kind::None);
    m_ui->logBrowseButton->setEnabled(kind != LogSource::Kind::Command);
    m_ui->logSourceEdit->setPlaceholderText(
        kind == LogSource::Kind::File      ? tr("/var/log/sglang.log or ~/sglang.log")
        : kind == LogSource::Kind::Command ? tr("journalctl -u sglang -n 20000, "
                                                "docker logs --tail 20000 NAME")
                                           : QString());
}

HostConfig HostDialog::host() const {
    HostConfig h = m_original;
    if (m_mode != Mode::EditSettingsOnly) {
        h.alias = m_ui->aliasEdit->text().trimmed();
        h.hostName = m_ui->hostNameEdit->text().trimmed();
        h.user = m_ui->userEdit->text().trimmed();
        h.port = m_ui->portSpin->value();
        const QString id = m_ui->identityEdit->text().trimmed();
        h.identityFiles = id.isEmpty() ? QStringList() : QStringList{id};
        h.proxyJump = m_ui->proxyJumpEdit->text().trimmed();
        h.fromSshConfig = false;
    }
    h.python = m_ui->pythonEdit->text().trimmed();
    if (h.python.isEmpty())
        h.python = u"python3"_s;
    h.logSource.kind = LogSource::Kind(m_ui->logKindCombo->currentData().toInt());
    h.logSource.value =
        h.logSource.kind == LogSource::Kind::None ? QString() : m_ui->logSourceEdit->text().trimmed();
    h.stopCommand = m_ui->stopEdit->text().trimmed();
    h.startCommand = m_ui->startEdit->text().trimmed();
    return h;
}

QString HostDialog::validationError() const {
    const HostConfig h = host();
    if (m_mode != Mode::EditSettingsOnly) {
        static const QRegularExpression aliasRe(u"^[A-Za-z0-9._@:+-]+$"_s);
        if (h.alias.isEmpty())
            return tr("Give the host a name (e.g. gpu-7).");
        if (!aliasRe.match(h.alias).hasMatch())
            return tr("The name may hold letters, digits and . _ - @ : + only (no spaces or slashes).");
        if (h.alias != m_original.alias && m_taken.contains(h.alias))
            return tr("There is already a host named %1; pick another name.").arg(h.alias);
        if (const QString why = hostNameProblem(h.hostName); !why.isEmpty())
            return tr("HostName %1").arg(why);
        if (const QString why = userProblem(h.user); !why.isEmpty())
            return tr("User %1").arg(why);
        if (!h.proxyJump.isEmpty()) {
            // [user@]host[:port], comma-separated: each part is checked like HostName and User.
            for (const QString &hop : h.proxyJump.split(u',')) {
                const qsizetype at = hop.lastIndexOf(u'@');
                const QString user = at >= 0 ? hop.left(at) : QString();
                QString hostPort = at >= 0 ? hop.mid(at + 1) : hop;
                const QString hostOnly = hostPort.section(u':', 0, 0);
                if (hostOnly.isEmpty())
                    return tr("ProxyJump wants [user@]host[:port], comma-separated (e.g. jump@bastion:22).");
                if (const QString why = hostNameProblem(hostOnly); !why.isEmpty())
                    return tr("ProxyJump host %1").arg(why);
                if (const QString why = userProblem(user); !why.isEmpty())
                    return tr("ProxyJump user %1").arg(why);
            }
        }
    }
    if (h.logSource.kind != LogSource::Kind::None && h.logSource.value.isEmpty())
        return h.logSource.kind == LogSource::Kind::File
                   ? tr("Give the path of the server's log file, or pick None.")
                   : tr("Give the command that prints the log, or pick None.");
    if (h.logSource.kind == LogSource::Kind::File && !h.logSource.value.startsWith(u'/') &&
        !h.logSource.value.startsWith(u"~/"))
        return tr("The log file path must be absolute (/...) or start with ~/.");
    return {};
}

namespace {

// Characters that ssh refuses in a host or user name given on its command line.
constexpr QStringView shellSpecials = u"'`\"$\\;&<>|(){}";

} // namespace

QString HostDialog::hostNameProblem(const QString &hostName) {
    if (hostName.isEmpty())
        return {};
    if (hostName.startsWith(u'-'))
        return tr("cannot start with '-' (ssh would read it as an option).");
    for (const QChar c : hostName) {
        if (c.isSpace() || c.category() == QChar::Other_Control)
            return tr("cannot contain spaces or control characters.");
        if (shellSpecials.contains(c))
            return tr("cannot contain %1: give the name or address of the host only.").arg(c);
    }
    return {};
}

QString HostDialog::userProblem(const QString &user) {
    // The same rules as a host name: ssh refuses a leading '-' and shell characters in either.
    return hostNameProblem(user);
}

void HostDialog::validate() {
    const QString error = validationError();
    m_ui->errorLabel->setText(error);
    m_ui->buttons->button(QDialogButtonBox::Ok)->setEnabled(error.isEmpty());
}

void HostDialog::accept() {
    validate();
    if (!validationError().isEmpty())
        return;
    QDialog::accept();
}

} // namespace moetune
