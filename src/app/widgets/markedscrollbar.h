// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QColor>
#include <QList>
#include <QScrollBar>

namespace moetune {

// A vertical scrollbar with marks where something is (the log lines that produced findings), so a long
// log shows at a glance where to look.
class MarkedScrollBar : public QScrollBar {
    Q_OBJECT
public:
    struct Mark {
        double position = 0; // 0..1 of the document
        QColor color;
    };

    explicit MarkedScrollBar(QWidget *parent = nullptr);

    void setMarks(const QList<Mark> &marks);
    QList<Mark> marks() const { return m_marks; }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QList<Mark> m_marks;
};

} // namespace moetune
