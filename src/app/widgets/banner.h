#pragma once

#include <QFrame>

class QLabel;
class QToolButton;
class QPushButton;

namespace moetune {

// An inline message strip (errors, the diagnosis summary, notes) instead of modal boxes.
class Banner : public QFrame {
    Q_OBJECT
public:
    enum class Kind { Info, Success, Warning, Error };

    explicit Banner(QWidget *parent = nullptr);

    void showMessage(Kind kind, const QString &text);
    void setClosable(bool closable);
    // An optional button at the right (empty text hides it).
    void setAction(const QString &text);
    Kind kind() const { return m_kind; }
    QString text() const;

signals:
    void actionTriggered();
    void closed();

private:
    void applyStyle();

    Kind m_kind = Kind::Info;
    QLabel *m_icon;
    QLabel *m_text;
    QPushButton *m_action;
    QToolButton *m_close;
};

} // namespace moetune
