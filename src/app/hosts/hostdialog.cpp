#include "app/hosts/hostdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace moetune {

HostDialog::HostDialog(Mode mode, const HostConfig &host, const QStringList &takenAliases, QWidget *parent)
    : QDialog(parent)
    , m_mode(mode)
    , m_original(host)
    , m_taken(takenAliases)
    , m_alias(new QLineEdit(this))
    , m_hostName(new QLineEdit(this))
    , m_user(new QLineEdit(this))
    , m_port(new QSpinBox(this))
    , m_identity(new QLineEdit(this))
    , m_proxyJump(new QLineEdit(this))
    , m_python(new QLineEdit(this))
    , m_logKind(new QComboBox(this))
    , m_logSource(new QLineEdit(this))
    , m_stop(new QLineEdit(this))
    , m_start(new QLineEdit(this))
    , m_error(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)) {
    setObjectName(u"hostDialog"_s);
    setWindowTitle(mode == Mode::Add ? tr("Add Host") : tr("Edit %1").arg(host.alias));
    auto *layout = new QVBoxLayout(this);

    auto *connection = new QGroupBox(tr("Connection"), this);
    auto *cf = new QFormLayout(connection);
    m_alias->setObjectName(u"aliasEdit"_s);
    m_alias->setPlaceholderText(tr("gpu-7"));
    m_alias->setText(host.alias);
    cf->addRow(tr("&Name:"), m_alias);
    m_hostName->setObjectName(u"hostNameEdit"_s);
    m_hostName->setPlaceholderText(tr("gpu-7.example.com or 10.0.0.7 (default: the name)"));
    m_hostName->setText(host.hostName);
    cf->addRow(tr("Host&Name:"), m_hostName);
    m_user->setObjectName(u"userEdit"_s);
    m_user->setPlaceholderText(tr("default: your user name"));
    m_user->setText(host.user);
    cf->addRow(tr("&User:"), m_user);
    m_port->setObjectName(u"portSpin"_s);
    m_port->setRange(0, 65535);
    m_port->setSpecialValueText(tr("22 (default)"));
    m_port->setValue(host.port);
    cf->addRow(tr("&Port:"), m_port);
    m_identity->setObjectName(u"identityEdit"_s);
    m_identity->setPlaceholderText(tr("default: the ssh agent and ~/.ssh/id_*"));
    m_identity->setText(host.identityFiles.value(0));
    auto *identityRow = new QHBoxLayout;
    identityRow->addWidget(m_identity, 1);
    auto *browse = new QPushButton(tr("Browse..."), this);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Private Key"), QDir::homePath() + u"/.ssh"_s);
        if (!path.isEmpty())
            m_identity->setText(path);
    });
    identityRow->addWidget(browse);
    cf->addRow(tr("&Identity file:"), identityRow);
    m_proxyJump->setObjectName(u"proxyJumpEdit"_s);
    m_proxyJump->setPlaceholderText(tr("user@bastion:22 (optional)"));
    m_proxyJump->setText(host.proxyJump);
    cf->addRow(tr("Pro&xyJump:"), m_proxyJump);
    layout->addWidget(connection);

    if (mode == Mode::EditSettingsOnly) {
        // ~/.ssh/config stays the source of truth for how to reach the host; it is never written.
        for (QWidget *w : {static_cast<QWidget *>(m_alias), static_cast<QWidget *>(m_hostName),
                           static_cast<QWidget *>(m_user), static_cast<QWidget *>(m_port),
                           static_cast<QWidget *>(m_identity), static_cast<QWidget *>(m_proxyJump),
                           static_cast<QWidget *>(browse)})
            w->setEnabled(false);
        connection->setTitle(host.fromSshConfig ? tr("Connection (from ~/.ssh/config, edit it there)")
                                                : tr("Connection"));
        if (!host.fromSshConfig)
            connection->hide();
    }

    auto *server = new QGroupBox(tr("Inference server on this host"), this);
    auto *sf = new QFormLayout(server);
    m_python->setObjectName(u"pythonEdit"_s);
    m_python->setPlaceholderText(tr("python3, or a venv's /opt/venv/bin/python"));
    m_python->setText(host.python);
    sf->addRow(tr("P&ython:"), m_python);
    m_logKind->setObjectName(u"logKindCombo"_s);
    m_logKind->addItem(tr("None"), int(LogSource::Kind::None));
    m_logKind->addItem(tr("Log file"), int(LogSource::Kind::File));
    m_logKind->addItem(tr("Command"), int(LogSource::Kind::Command));
    m_logKind->setCurrentIndex(m_logKind->findData(int(host.logSource.kind)));
    m_logSource->setObjectName(u"logSourceEdit"_s);
    m_logSource->setText(host.logSource.value);
    auto *logRow = new QHBoxLayout;
    logRow->addWidget(m_logKind);
    logRow->addWidget(m_logSource, 1);
    sf->addRow(tr("Server &log:"), logRow);
    m_stop->setObjectName(u"stopEdit"_s);
    m_stop->setPlaceholderText(tr("optional, e.g. systemctl --user stop sglang"));
    m_stop->setText(host.stopCommand);
    sf->addRow(tr("S&top command:"), m_stop);
    m_start->setObjectName(u"startEdit"_s);
    m_start->setPlaceholderText(tr("optional, e.g. systemctl --user start sglang"));
    m_start->setText(host.startCommand);
    sf->addRow(tr("St&art command:"), m_start);
    layout->addWidget(server);

    m_error->setObjectName(u"errorLabel"_s);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(u"color: #c62828;"_s);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &HostDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &HostDialog::reject);

    for (QLineEdit *e : {m_alias, m_hostName, m_user, m_identity, m_proxyJump, m_python, m_logSource})
        connect(e, &QLineEdit::textChanged, this, &HostDialog::validate);
    connect(m_port, &QSpinBox::valueChanged, this, &HostDialog::validate);
    connect(m_logKind, &QComboBox::currentIndexChanged, this, [this] {
        updateLogPlaceholder();
        validate();
    });
    updateLogPlaceholder();
    validate();
    resize(560, sizeHint().height());
}

void HostDialog::updateLogPlaceholder() {
    const auto kind = LogSource::Kind(m_logKind->currentData().toInt());
    m_logSource->setEnabled(kind != LogSource::Kind::None);
    m_logSource->setPlaceholderText(kind == LogSource::Kind::File ? tr("/var/log/sglang.log or ~/sglang.log")
                                    : kind == LogSource::Kind::Command ? tr("journalctl -u sglang -n 20000, "
                                                                            "docker logs --tail 20000 NAME")
                                                                       : QString());
}

HostConfig HostDialog::host() const {
    HostConfig h = m_original;
    if (m_mode != Mode::EditSettingsOnly) {
        h.alias = m_alias->text().trimmed();
        h.hostName = m_hostName->text().trimmed();
        h.user = m_user->text().trimmed();
        h.port = m_port->value();
        const QString id = m_identity->text().trimmed();
        h.identityFiles = id.isEmpty() ? QStringList() : QStringList{id};
        h.proxyJump = m_proxyJump->text().trimmed();
        h.fromSshConfig = false;
    }
    h.python = m_python->text().trimmed();
    if (h.python.isEmpty())
        h.python = u"python3"_s;
    h.logSource.kind = LogSource::Kind(m_logKind->currentData().toInt());
    h.logSource.value = h.logSource.kind == LogSource::Kind::None ? QString() : m_logSource->text().trimmed();
    h.stopCommand = m_stop->text().trimmed();
    h.startCommand = m_start->text().trimmed();
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
        if (h.hostName.contains(u' '))
            return tr("HostName cannot contain spaces.");
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

void HostDialog::validate() {
    const QString error = validationError();
    m_error->setText(error);
    m_error->setVisible(!error.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(error.isEmpty());
}

void HostDialog::accept() {
    validate();
    if (!validationError().isEmpty())
        return;
    QDialog::accept();
}

} // namespace moetune
