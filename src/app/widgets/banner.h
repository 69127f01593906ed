// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
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
    // At most this many lines shown (0: no limit); a longer text gets "Show all" / "Show less".
    void setMaximumLines(int lines);
    bool isTruncated() const; // the text is longer than shown
    void setExpanded(bool expanded);
    // An optional button at the right (empty text hides it).
    void setAction(const QString &text);
    Kind kind() const { return m_kind; }
    QString text() const;

signals:
    void actionTriggered();
    void closed();

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void applyStyle();
    void updateCap();

    Kind m_kind = Kind::Info;
    QLabel *m_icon;
    QLabel *m_text;
    QPushButton *m_action;
    QToolButton *m_close;
    QToolButton *m_more;
    int m_maxLines = 0;
    bool m_expanded = false;
};

} // namespace moetune
