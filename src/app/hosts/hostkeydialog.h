#pragma once

#include <QDialog>

class QLabel;

namespace moetune {

// "The authenticity of host ... can't be established": shows the key type and SHA256 fingerprint so the
// user can compare it with the host's own (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub). Accept
// records it in known_hosts; nothing is recorded otherwise.
class HostKeyDialog : public QDialog {
    Q_OBJECT
public:
    HostKeyDialog(const QString &host, const QString &keyType, const QString &fingerprint,
                  QWidget *parent = nullptr);
    QString text() const;

private:
    QLabel *m_text;
};

} // namespace moetune
