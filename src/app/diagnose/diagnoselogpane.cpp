// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/diagnose/diagnoselogpane.h"

#include "app/widgets/logedit.h"
#include "ui_diagnoselogpane.h"

#include <QAction>
#include <QGuiApplication>
#include <QTextBlock>

namespace moetune {

DiagnoseLogPane::DiagnoseLogPane(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::DiagnoseLogPane>()) {
    m_ui->setupUi(this);
    m_ui->progressBar->hide();
    m_ui->cancelButton->hide();
    connect(m_ui->cancelButton, &QPushButton::clicked, this, &DiagnoseLogPane::cancelClicked);
    connect(m_ui->diagnoseButton, &QPushButton::clicked, this, &DiagnoseLogPane::diagnoseClicked);
    // Long lines are cut at the pane's edge unless wrapped: a toggle, remembered with the page's state.
    connect(m_ui->wrapButton, &QToolButton::toggled, m_ui->logEdit, &LogEdit::setWrapLines);
    connect(m_ui->logEdit, &LogEdit::findRequested, this, &DiagnoseLogPane::showFindBar);

    // Find in the log: Enter / Shift+Enter, Esc closes.
    m_ui->findBar->hide();
    connect(m_ui->findEdit, &QLineEdit::returnPressed, this,
            [this] { runFind(QGuiApplication::keyboardModifiers().testFlag(Qt::ShiftModifier)); });
    connect(m_ui->findEdit, &QLineEdit::textEdited, this, [this] {
        // Searching as one types starts from the top of the current match.
        QTextCursor c = m_ui->logEdit->textCursor();
        c.setPosition(c.selectionStart());
        m_ui->logEdit->setTextCursor(c);
        runFind(false);
    });
    connect(m_ui->findNextButton, &QToolButton::clicked, this, [this] { runFind(false); });
    connect(m_ui->findPreviousButton, &QToolButton::clicked, this, [this] { runFind(true); });
    connect(m_ui->findCloseButton, &QToolButton::clicked, this, [this] {
        m_ui->findBar->hide();
        m_ui->logEdit->setFocus();
    });
    auto *closeFind = new QAction(m_ui->findBar);
    closeFind->setShortcut(QKeySequence(Qt::Key_Escape));
    closeFind->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(closeFind, &QAction::triggered, m_ui->findCloseButton, &QToolButton::click);
    m_ui->findBar->addAction(closeFind);
}

DiagnoseLogPane::~DiagnoseLogPane() = default;

LogEdit *DiagnoseLogPane::edit() const {
    return m_ui->logEdit;
}

void DiagnoseLogPane::setSource(const QString &text) {
    m_ui->sourceLabel->setText(text);
    m_ui->sourceLabel->setToolTip(text);
}

void DiagnoseLogPane::showProgress() {
    m_ui->progressBar->setRange(0, 1000);
    m_ui->progressBar->setValue(0);
    m_ui->progressBar->show();
    m_ui->cancelButton->show();
    m_ui->cancelButton->setEnabled(true);
}

void DiagnoseLogPane::hideProgress() {
    m_ui->progressBar->hide();
    m_ui->cancelButton->hide();
}

bool DiagnoseLogPane::progressShown() const {
    return m_ui->progressBar->isVisible();
}

void DiagnoseLogPane::setProgress(qint64 done, qint64 total) {
    if (total > 0)
        m_ui->progressBar->setValue(int(qBound(qint64(0), done * 1000 / total, qint64(1000))));
    else
        m_ui->progressBar->setRange(0, 0);
}

void DiagnoseLogPane::showFindBar() {
    m_ui->findBar->show();
    const QString selected = m_ui->logEdit->textCursor().selectedText();
    if (!selected.isEmpty() && !selected.contains(QChar::ParagraphSeparator))
        m_ui->findEdit->setText(selected);
    m_ui->findEdit->setFocus();
    m_ui->findEdit->selectAll();
}

void DiagnoseLogPane::runFind(bool backward) {
    const QString needle = m_ui->findEdit->text();
    LogEdit *edit = m_ui->logEdit;
    if (needle.isEmpty()) {
        m_ui->findStatus->clear();
        return;
    }
    const QTextDocument::FindFlags flags =
        backward ? QTextDocument::FindBackward : QTextDocument::FindFlags();
    bool found = edit->find(needle, flags);
    if (!found) {
        // Wrap around once, like every find bar.
        QTextCursor c = edit->textCursor();
        c.movePosition(backward ? QTextCursor::End : QTextCursor::Start);
        edit->setTextCursor(c);
        found = edit->find(needle, flags);
        m_ui->findStatus->setText(found ? tr("wrapped") : tr("not found"));
    } else {
        m_ui->findStatus->clear();
    }
    if (found)
        edit->setMarkedLine(edit->cursorLine());
}

} // namespace moetune
