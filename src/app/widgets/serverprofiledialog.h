// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/server/serverprofile.h"

#include <QDialog>

#include <memory>
#include <optional>

namespace Ui {
class ServerProfileDialog;
}

namespace moetune {

// Edits how one host's server runs (kind, stop/start, log, readiness, timeout, persistent config
// folder). Prefilled with the saved profile, else the probe's suggestion (from the running server's
// cgroup, supervisor and log file); ServerProfile::validate()'s sentence is shown as the user types.
// Save is refused (with that sentence) for a stop/start profile that could not restart the server;
// "I manage it myself" and "not set up" are always saved. Nothing runs on the host from here.
class ServerProfileDialog : public QDialog {
    Q_OBJECT
public:
    ServerProfileDialog(const QString &hostLabel, const ServerProfile &current,
                        const std::optional<ServerProfile> &suggestion, QWidget *parent = nullptr);
    ~ServerProfileDialog() override;

    ServerProfile profile() const; // as the fields say now
    void setProfile(const ServerProfile &p);
    QString problem() const; // the sentence shown ("" = usable for restart)
    void accept() override;  // refused with the sentence for a stop/start profile that cannot restart

signals:
    void profileAccepted(const moetune::ServerProfile &profile);

private:
    void updateState();

    std::unique_ptr<Ui::ServerProfileDialog> m_ui;
    std::optional<ServerProfile> m_suggestion;
    QString m_note;
};

} // namespace moetune
