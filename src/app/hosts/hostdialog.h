// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/hosts/hostconfig.h"

#include <QDialog>
#include <QStringList>

#include <memory>

namespace Ui {
class HostDialog;
}

namespace moetune {

// Add or edit a host. App hosts: everything. Hosts of ~/.ssh/config: only moetune's settings (python,
// log source, stop/start), since ~/.ssh/config is never written. Local machine: the same.
class HostDialog : public QDialog {
    Q_OBJECT
public:
    enum class Mode { Add, EditApp, EditSettingsOnly };

    // takenAliases: aliases already in use (Add refuses them).
    HostDialog(Mode mode, const HostConfig &host, const QStringList &takenAliases, QWidget *parent = nullptr);
    ~HostDialog() override;

    HostConfig host() const;
    // Empty when the form can be saved, else a sentence naming the field to fix.
    QString validationError() const;

    // What ssh itself refuses in a host name / remote user name (a leading '-' would be read as an
    // option; quotes, ';', '$', '`', '|', '&', '<', '>', parentheses and braces would reach a shell
    // through ProxyCommand expansion): empty when acceptable, else why not.
    static QString hostNameProblem(const QString &hostName);
    static QString userProblem(const QString &user);

    void accept() override;

private:
    void validate();
    void updateLogPlaceholder();

    std::unique_ptr<Ui::HostDialog> m_ui;
    Mode m_mode;
    HostConfig m_original;
    QStringList m_taken;
};

} // namespace moetune
