// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

#include <memory>

namespace Ui {
class DiagnoseLogPane;
}

namespace moetune {

class LogEdit;

// The Diagnose page's log pane (ui/diagnoselogpane.ui): where the log came from, the diagnosis' progress
// with its Cancel, Diagnose, the log view (wrapped or not) and its find bar (Enter / Shift+Enter, Esc).
class DiagnoseLogPane : public QWidget {
    Q_OBJECT
public:
    explicit DiagnoseLogPane(QWidget *parent = nullptr);
    ~DiagnoseLogPane() override;

    LogEdit *edit() const;
    void setSource(const QString &text);
    // The progress bar and Cancel: shown (from 0), hidden, or moved (total 0: busy without a measure).
    void showProgress();
    void hideProgress();
    bool progressShown() const;
    void setProgress(qint64 done, qint64 total);
    void showFindBar(); // with the selected text, if one line

signals:
    void diagnoseClicked();
    void cancelClicked();

private:
    void runFind(bool backward);

    std::unique_ptr<Ui::DiagnoseLogPane> m_ui;
};

} // namespace moetune
