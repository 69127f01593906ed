// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>

#include <memory>

namespace Ui {
class HostKeyDialog;
}

namespace moetune {

// "The authenticity of host ... can't be established": shows the key type and SHA256 fingerprint so the
// user can compare it with the host's own (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub). Accept
// records it in known_hosts; nothing is recorded otherwise.
class HostKeyDialog : public QDialog {
    Q_OBJECT
public:
    HostKeyDialog(const QString &host, const QString &keyType, const QString &fingerprint,
                  QWidget *parent = nullptr);
    ~HostKeyDialog() override;
    QString text() const;

private:
    std::unique_ptr<Ui::HostKeyDialog> m_ui;
};

} // namespace moetune
