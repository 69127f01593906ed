// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/serverprofiledialog.h"

#include "ui_serverprofiledialog.h"

#include <QPushButton>

using namespace Qt::StringLiterals;

namespace moetune {

ServerProfileDialog::ServerProfileDialog(const QString &hostLabel, const ServerProfile &current,
                                         const std::optional<ServerProfile> &suggestion, QWidget *parent)
    : QDialog(parent)
    , m_ui(std::make_unique<Ui::ServerProfileDialog>())
    , m_suggestion(suggestion) {
    m_ui->setupUi(this);
    setWindowTitle(tr("Server Profile of %1").arg(hostLabel));
    setWindowModality(Qt::WindowModal);
    using K = ServerProfile::Kind;
    for (K k : {K::Systemd, K::Docker, K::Command, K::Manual, K::None})
        m_ui->kindCombo->addItem(k == K::Manual ? tr("I manage it myself (moetune only reads the log)")
                                 : k == K::None ? tr("not set up")
                                                : ServerProfile::kindName(k),
                                 ServerProfile::kindId(k));
    m_ui->readinessCombo->addItem(tr("a log line appears"), int(ServerProfile::Readiness::LogLine));
    m_ui->readinessCombo->addItem(tr("a health URL answers 200"), int(ServerProfile::Readiness::HealthUrl));
    m_ui->introLabel->setText(
        tr("How the inference server of %1 runs, so moetune can stop it before tuning, restart it after a "
           "push and read what it printed. Nothing runs on the host until you click Stop server or "
           "Restart and prove, and every command's output is shown.")
            .arg(hostLabel));
    if (suggestion) {
        m_ui->suggestionLabel->setText(tr("The probe suggests: %1.%2")
                                           .arg(suggestion->summary(), suggestion->note.isEmpty()
                                                                           ? QString()
                                                                           : u" "_s + suggestion->note));
    } else {
        m_ui->suggestionLabel->setText(
            tr("No suggestion: probe the host while its server runs and moetune suggests a profile from "
               "the server process (its systemd unit or container, its supervisor and log file)."));
    }
    m_ui->suggestionButton->setVisible(suggestion.has_value());
    connect(m_ui->suggestionButton, &QPushButton::clicked, this, [this] {
        if (m_suggestion)
            setProfile(*m_suggestion);
    });
    connect(m_ui->buttonBox, &QDialogButtonBox::accepted, this, &ServerProfileDialog::accept);
    connect(m_ui->buttonBox, &QDialogButtonBox::rejected, this, &ServerProfileDialog::reject);
    for (QLineEdit *e :
         {m_ui->unitEdit, m_ui->stopEdit, m_ui->startEdit, m_ui->logFileEdit, m_ui->logCommandEdit,
          m_ui->readyLineEdit, m_ui->healthUrlEdit, m_ui->persistentEdit})
        connect(e, &QLineEdit::textChanged, this, &ServerProfileDialog::updateState);
    connect(m_ui->kindCombo, &QComboBox::currentIndexChanged, this, &ServerProfileDialog::updateState);
    connect(m_ui->readinessCombo, &QComboBox::currentIndexChanged, this, &ServerProfileDialog::updateState);
    connect(m_ui->timeoutSpin, &QSpinBox::valueChanged, this, &ServerProfileDialog::updateState);
    connect(m_ui->userUnitCheck, &QCheckBox::toggled, this, &ServerProfileDialog::updateState);
    // A host without a profile starts from what the probe saw; a saved profile is never overwritten.
    setProfile(current.isSet() || !suggestion ? current : *suggestion);
}

ServerProfileDialog::~ServerProfileDialog() = default;

void ServerProfileDialog::setProfile(const ServerProfile &p) {
    m_ui->kindCombo->setCurrentIndex(qMax(0, m_ui->kindCombo->findData(ServerProfile::kindId(p.kind))));
    m_ui->unitEdit->setText(p.unit);
    m_ui->userUnitCheck->setChecked(p.userUnit);
    m_ui->stopEdit->setText(p.stopCommand);
    m_ui->startEdit->setText(p.startCommand);
    m_ui->logFileEdit->setText(p.logFile);
    m_ui->logCommandEdit->setText(p.logCommand);
    m_ui->readinessCombo->setCurrentIndex(qMax(0, m_ui->readinessCombo->findData(int(p.readiness))));
    m_ui->readyLineEdit->setText(p.readyLine);
    m_ui->healthUrlEdit->setText(p.healthUrl);
    m_ui->timeoutSpin->setValue(p.readyTimeoutS);
    m_ui->persistentEdit->setText(p.persistentConfigDir);
    m_note = p.note;
    updateState();
}

ServerProfile ServerProfileDialog::profile() const {
    ServerProfile p;
    p.kind = ServerProfile::kindFromId(m_ui->kindCombo->currentData().toString());
    p.unit = m_ui->unitEdit->text().trimmed();
    p.userUnit = m_ui->userUnitCheck->isChecked();
    p.stopCommand = m_ui->stopEdit->text().trimmed();
    p.startCommand = m_ui->startEdit->text().trimmed();
    p.logFile = m_ui->logFileEdit->text().trimmed();
    p.logCommand = m_ui->logCommandEdit->text().trimmed();
    p.readiness = ServerProfile::Readiness(m_ui->readinessCombo->currentData().toInt());
    p.readyLine = m_ui->readyLineEdit->text();
    p.healthUrl = m_ui->healthUrlEdit->text().trimmed();
    p.readyTimeoutS = m_ui->timeoutSpin->value();
    p.persistentConfigDir = m_ui->persistentEdit->text().trimmed();
    p.note = m_note;
    return p;
}

QString ServerProfileDialog::problem() const {
    return m_ui->validationLabel->text();
}

void ServerProfileDialog::updateState() {
    const ServerProfile p = profile();
    const bool stopStart = p.canStopStart();
    for (QWidget *w :
         {static_cast<QWidget *>(m_ui->stopEdit), static_cast<QWidget *>(m_ui->startEdit),
          static_cast<QWidget *>(m_ui->readinessCombo), static_cast<QWidget *>(m_ui->readyLineEdit),
          static_cast<QWidget *>(m_ui->healthUrlEdit), static_cast<QWidget *>(m_ui->timeoutSpin)})
        w->setEnabled(stopStart); // a manual server is never stopped or started by moetune
    m_ui->userUnitCheck->setEnabled(p.kind == ServerProfile::Kind::Systemd);
    m_ui->readyLineEdit->setEnabled(stopStart && p.readiness == ServerProfile::Readiness::LogLine);
    m_ui->healthUrlEdit->setEnabled(stopStart && p.readiness == ServerProfile::Readiness::HealthUrl);
    const QString problem = p.validate();
    m_ui->validationLabel->setText(problem);
    // Manual / not set up: the sentence informs (restart is by hand); for stop/start kinds it is an error.
    m_ui->validationLabel->setStyleSheet(stopStart && !problem.isEmpty() ? u"color: #b03030;"_s : QString());
    if (QPushButton *save = m_ui->buttonBox->button(QDialogButtonBox::Save)) {
        // A profile that cannot stop or start the server it names is not saved: Save waits for the fix.
        save->setEnabled(!stopStart || problem.isEmpty());
        save->setToolTip(stopStart && !problem.isEmpty() ? problem : QString());
    }
}

void ServerProfileDialog::accept() {
    const ServerProfile p = profile();
    if (p.canStopStart() && !p.validate().isEmpty()) {
        // Refused, and nothing typed is lost: the sentence says what to fix.
        updateState();
        m_ui->validationLabel->setFocus();
        return;
    }
    emit profileAccepted(p);
    QDialog::accept();
}

} // namespace moetune
