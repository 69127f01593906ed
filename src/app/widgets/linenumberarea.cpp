// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/linenumberarea.h"

#include "app/widgets/logedit.h"

namespace moetune {

LineNumberArea::LineNumberArea(LogEdit *editor)
    : QWidget(editor)
    , m_editor(editor) {}

QSize LineNumberArea::sizeHint() const {
    return {m_editor->lineNumberAreaWidth(), 0};
}

void LineNumberArea::paintEvent(QPaintEvent *event) {
    m_editor->paintLineNumbers(event);
}

} // namespace moetune
