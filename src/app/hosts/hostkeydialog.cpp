// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/hosts/hostkeydialog.h"

#include "ui_hostkeydialog.h"

#include <QStyle>

using namespace Qt::StringLiterals;

namespace moetune {

HostKeyDialog::HostKeyDialog(const QString &host, const QString &keyType, const QString &fingerprint,
                             QWidget *parent)
    : QDialog(parent)
    , m_ui(std::make_unique<Ui::HostKeyDialog>()) {
    m_ui->setupUi(this);
    setObjectName(u"hostKeyDialog"_s);
    m_ui->iconLabel->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxQuestion).pixmap(48, 48));
    m_ui->hostKeyText->setText(
        tr("<p>moetune has not connected to <b>%1</b> before, and it is not in your known_hosts.</p>"
           "<p>It offers this %2 key:<br><tt>%3</tt></p>"
           "<p>Compare it with the host's own fingerprint (on the host: "
           "<tt>ssh-keygen -lf /etc/ssh/ssh_host_%4_key.pub</tt>). Accept only if they match: "
           "the key is then recorded in known_hosts and checked on every later connection.</p>")
            .arg(host.toHtmlEscaped(), keyType.toHtmlEscaped(), fingerprint.toHtmlEscaped(),
                 keyType.startsWith(u"ssh-"_s) ? keyType.mid(4).toHtmlEscaped() : u"ed25519"_s));
    m_ui->rejectButton->setFocus(); // the safe answer is the default one
    resize(520, sizeHint().height());
}

HostKeyDialog::~HostKeyDialog() = default;

QString HostKeyDialog::text() const {
    return m_ui->hostKeyText->text();
}

} // namespace moetune
