// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hostsecretdialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace moetune {

HostSecretDialog::HostSecretDialog(const QString &host, SshTransport::SecretKind kind,
                                   const QStringList &prompts, const QString &instruction, QWidget *parent)
    : QDialog(parent) {
    setObjectName(u"hostSecretDialog"_s);
    auto *layout = new QVBoxLayout(this);
    QString title;
    QString intro;
    switch (kind) {
    case SshTransport::SecretKind::Passphrase:
        title = tr("Key Passphrase");
        intro = tr("The private key for %1 is encrypted.").arg(host);
        break;
    case SshTransport::SecretKind::Password:
        title = tr("Password");
        intro = tr("%1 asks for a password.").arg(host);
        break;
    case SshTransport::SecretKind::KeyboardInteractive:
        title = tr("Login");
        intro = tr("%1 asks:").arg(host);
        break;
    }
    setWindowTitle(title);
    auto *label = new QLabel(instruction.isEmpty() ? intro : intro + u'\n' + instruction, this);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    layout->addWidget(label);
    auto *form = new QFormLayout;
    const QStringList shown = prompts.isEmpty() ? QStringList{tr("Password:")} : prompts;
    for (const QString &prompt : shown) {
        auto *edit = new QLineEdit(this);
        edit->setEchoMode(QLineEdit::Password);
        edit->setObjectName(u"secretField%1"_s.arg(m_fields.size()));
        form->addRow(prompt.trimmed(), edit);
        m_fields.append(edit);
    }
    layout->addLayout(form);
#ifdef MOETUNE_HAVE_KEYCHAIN
    if (kind != SshTransport::SecretKind::KeyboardInteractive) {
        m_remember = new QCheckBox(tr("Remember in the desktop keyring"), this);
        m_remember->setObjectName(u"rememberBox"_s);
        layout->addWidget(m_remember);
    }
#endif
    auto *note = new QLabel(tr("Kept in memory for this session only%1.")
                                .arg(m_remember ? tr(" unless you tick Remember") : QString()),
                            this);
    note->setEnabled(false);
    layout->addWidget(note);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    if (!m_fields.isEmpty())
        m_fields.first()->setFocus();
}

QStringList HostSecretDialog::answers() const {
    QStringList out;
    for (const QLineEdit *e : m_fields)
        out.append(e->text());
    return out;
}

bool HostSecretDialog::remember() const {
    return m_remember && m_remember->isChecked();
}

} // namespace moetune
