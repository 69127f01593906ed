// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QTextBrowser>

namespace moetune {

// A text browser as tall as its text at its width, so that a scroll area around it (and not the
// browser itself) scrolls: stacked panes never each need their own scrollbar.
class FitTextBrowser : public QTextBrowser {
    Q_OBJECT
public:
    explicit FitTextBrowser(QWidget *parent = nullptr);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void fit();
};

} // namespace moetune
