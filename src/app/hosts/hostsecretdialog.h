// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/transport/sshtransport.h"

#include <QDialog>
#include <QList>

class QCheckBox;
class QLineEdit;

namespace moetune {

// Asks for what SSH authentication needs: a key's passphrase, a password, or the answers to a
// keyboard-interactive round (one field per prompt). Secrets stay in memory; "remember" exists only in
// builds with the desktop keyring (QtKeychain).
class HostSecretDialog : public QDialog {
    Q_OBJECT
public:
    HostSecretDialog(const QString &host, SshTransport::SecretKind kind, const QStringList &prompts,
                     const QString &instruction, QWidget *parent = nullptr);

    QStringList answers() const;
    bool remember() const;

private:
    QList<QLineEdit *> m_fields;
    QCheckBox *m_remember = nullptr;
};

} // namespace moetune
