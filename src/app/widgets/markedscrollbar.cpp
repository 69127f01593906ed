// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/markedscrollbar.h"

#include <QPainter>
#include <QStyleOptionSlider>

namespace moetune {

MarkedScrollBar::MarkedScrollBar(QWidget *parent)
    : QScrollBar(Qt::Vertical, parent) {
    setObjectName(QStringLiteral("markedScrollBar"));
}

void MarkedScrollBar::setMarks(const QList<Mark> &marks) {
    m_marks = marks;
    update();
}

void MarkedScrollBar::paintEvent(QPaintEvent *event) {
    QScrollBar::paintEvent(event);
    if (m_marks.isEmpty())
        return;
    QStyleOptionSlider option;
    initStyleOption(&option);
    const QRect groove =
        style()->subControlRect(QStyle::CC_ScrollBar, &option, QStyle::SC_ScrollBarGroove, this);
    QPainter painter(this);
    for (const Mark &mark : std::as_const(m_marks)) {
        const int y = groove.top() + int(mark.position * (groove.height() - 3));
        painter.fillRect(QRect(groove.left() + 2, y, groove.width() - 4, 3), mark.color);
    }
}

} // namespace moetune
