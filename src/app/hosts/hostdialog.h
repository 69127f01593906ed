#pragma once

#include "remote/hostconfig.h"

#include <QDialog>
#include <QStringList>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace moetune {

// Add or edit a host. App hosts: everything. Hosts of ~/.ssh/config: only moetune's settings (python,
// log source, stop/start), since ~/.ssh/config is never written. Local machine: the same.
class HostDialog : public QDialog {
    Q_OBJECT
public:
    enum class Mode { Add, EditApp, EditSettingsOnly };

    // takenAliases: aliases already in use (Add refuses them).
    HostDialog(Mode mode, const HostConfig &host, const QStringList &takenAliases, QWidget *parent = nullptr);

    HostConfig host() const;
    // Empty when the form can be saved, else a sentence naming the field to fix.
    QString validationError() const;

    QLineEdit *aliasEdit() const { return m_alias; }
    QLineEdit *hostNameEdit() const { return m_hostName; }
    QLineEdit *userEdit() const { return m_user; }
    QSpinBox *portSpin() const { return m_port; }
    QLineEdit *identityEdit() const { return m_identity; }
    QLineEdit *proxyJumpEdit() const { return m_proxyJump; }
    QLineEdit *pythonEdit() const { return m_python; }
    QComboBox *logKindCombo() const { return m_logKind; }
    QLineEdit *logSourceEdit() const { return m_logSource; }
    QLineEdit *stopEdit() const { return m_stop; }
    QLineEdit *startEdit() const { return m_start; }
    QDialogButtonBox *buttons() const { return m_buttons; }
    QLabel *errorLabel() const { return m_error; }

    void accept() override;

private:
    void validate();
    void updateLogPlaceholder();

    Mode m_mode;
    HostConfig m_original;
    QStringList m_taken;
    QLineEdit *m_alias;
    QLineEdit *m_hostName;
    QLineEdit *m_user;
    QSpinBox *m_port;
    QLineEdit *m_identity;
    QLineEdit *m_proxyJump;
    QLineEdit *m_python;
    QComboBox *m_logKind;
    QLineEdit *m_logSource;
    QLineEdit *m_stop;
    QLineEdit *m_start;
    QLabel *m_error;
    QDialogButtonBox *m_buttons;
};

} // namespace moetune
