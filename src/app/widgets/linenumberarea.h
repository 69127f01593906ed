// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

namespace moetune {

class LogEdit;

// The gutter left of the log view; LogEdit paints it.
class LineNumberArea : public QWidget {
    Q_OBJECT
public:
    explicit LineNumberArea(LogEdit *editor);
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    LogEdit *m_editor;
};

} // namespace moetune
