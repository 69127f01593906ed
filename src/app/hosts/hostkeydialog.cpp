#include "app/hosts/hostkeydialog.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace moetune {

HostKeyDialog::HostKeyDialog(const QString &host, const QString &keyType, const QString &fingerprint,
                             QWidget *parent)
    : QDialog(parent)
    , m_text(new QLabel(this)) {
    setObjectName(u"hostKeyDialog"_s);
    setWindowTitle(tr("Unknown Host Key"));
    auto *layout = new QVBoxLayout(this);
    auto *row = new QHBoxLayout;
    auto *icon = new QLabel(this);
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxQuestion).pixmap(48, 48));
    icon->setAlignment(Qt::AlignTop);
    row->addWidget(icon);
    m_text->setObjectName(u"hostKeyText"_s);
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setText(
        tr("<p>moetune has not connected to <b>%1</b> before, and it is not in your known_hosts.</p>"
           "<p>It offers this %2 key:<br><tt>%3</tt></p>"
           "<p>Compare it with the host's own fingerprint (on the host: "
           "<tt>ssh-keygen -lf /etc/ssh/ssh_host_%4_key.pub</tt>). Accept only if they match: "
           "the key is then recorded in known_hosts and checked on every later connection.</p>")
            .arg(host.toHtmlEscaped(), keyType.toHtmlEscaped(), fingerprint.toHtmlEscaped(),
                 keyType.startsWith(u"ssh-"_s) ? keyType.mid(4).toHtmlEscaped() : u"ed25519"_s));
    row->addWidget(m_text, 1);
    layout->addLayout(row);
    auto *buttons = new QDialogButtonBox(this);
    QPushButton *accept = buttons->addButton(tr("Accept and Connect"), QDialogButtonBox::AcceptRole);
    accept->setObjectName(u"acceptButton"_s);
    QPushButton *reject = buttons->addButton(tr("Don't Connect"), QDialogButtonBox::RejectRole);
    reject->setObjectName(u"rejectButton"_s);
    reject->setDefault(true); // the safe answer is the default one
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(520, sizeHint().height());
}

QString HostKeyDialog::text() const {
    return m_text->text();
}

} // namespace moetune
