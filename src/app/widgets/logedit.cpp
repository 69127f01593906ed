// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/logedit.h"

#include "app/widgets/linenumberarea.h"
#include "app/widgets/markedscrollbar.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QDragEnterEvent>
#include <QDragMoveEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QFontDatabase>
#include <QMenu>
#include <QMimeData>
#include <QPaintEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QScrollBar>
#include <QTextBlock>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace moetune {

LogEdit::LogEdit(QWidget *parent)
    : QPlainTextEdit(parent)
    , m_lineNumberArea(new LineNumberArea(this))
    , m_scrollBar(new MarkedScrollBar(this)) {
    setVerticalScrollBar(m_scrollBar);
    // Read-only but navigable: arrows, Page Up/Down and selection work; nothing types into the log.
    setReadOnly(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    setTabChangesFocus(true);
    setUndoRedoEnabled(false);
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    font.setPointSizeF(font.pointSizeF() * 0.95);
    setFont(font);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setTabStopDistance(fontMetrics().horizontalAdvance(u' ') * 8);
    setAcceptDrops(true);
    viewport()->setAcceptDrops(true);
    setPlaceholderText(tr("Paste an SGLang or vLLM server log here (Ctrl+V), drop a log file, or use "
                          "File > Open.\nmoetune diagnoses it as you paste."));
    m_loadTimer.setInterval(0);
    connect(&m_loadTimer, &QTimer::timeout, this, &LogEdit::loadNextChunk);
    connect(this, &QPlainTextEdit::blockCountChanged, this, &LogEdit::updateLineNumberAreaWidth);
    connect(this, &QPlainTextEdit::updateRequest, this, &LogEdit::updateLineNumberArea);
    connect(this, &QPlainTextEdit::cursorPositionChanged, this, &LogEdit::updateExtraSelections);
    updateLineNumberAreaWidth();
}

int LogEdit::lineNumberAreaWidth() const {
    int digits = 1;
    for (qint64 max = qMax<qint64>(1, lastLineNumber()); max >= 10; max /= 10)
        ++digits;
    digits = qMax(digits, 4);
    return 12 + fontMetrics().horizontalAdvance(u'9') * digits;
}

void LogEdit::updateLineNumberAreaWidth() {
    setViewportMargins(lineNumberAreaWidth(), 0, 0, 0);
}

void LogEdit::updateLineNumberArea(const QRect &rect, int dy) {
    if (dy != 0)
        m_lineNumberArea->scroll(0, dy);
    else
        m_lineNumberArea->update(0, rect.y(), m_lineNumberArea->width(), rect.height());
    if (rect.contains(viewport()->rect()))
        updateLineNumberAreaWidth();
}

void LogEdit::resizeEvent(QResizeEvent *event) {
    QPlainTextEdit::resizeEvent(event);
    const QRect cr = contentsRect();
    m_lineNumberArea->setGeometry(QRect(cr.left(), cr.top(), lineNumberAreaWidth(), cr.height()));
}

void LogEdit::paintLineNumbers(QPaintEvent *event) {
    QPainter painter(m_lineNumberArea);
    const QPalette pal = palette();
    painter.fillRect(event->rect(), pal.color(QPalette::AlternateBase));
    QTextBlock block = firstVisibleBlock();
    int number = block.blockNumber();
    qreal top = blockBoundingGeometry(block).translated(contentOffset()).top();
    qreal bottom = top + blockBoundingRect(block).height();
    const int current = textCursor().blockNumber();
    while (block.isValid() && top <= event->rect().bottom()) {
        if (block.isVisible() && bottom >= event->rect().top()) {
            const qint64 fileLine = m_firstLine + number;
            const bool marked = fileLine == m_markedLine;
            if (const auto it = m_findingLines.constFind(fileLine); it != m_findingLines.constEnd())
                painter.fillRect(0, int(top), 4, int(bottom - top), *it);
            QFont f = font();
            f.setBold(marked || number == current);
            painter.setFont(f);
            painter.setPen(marked ? pal.color(QPalette::Highlight) : pal.color(QPalette::PlaceholderText));
            painter.drawText(0, int(top), m_lineNumberArea->width() - 6, fontMetrics().height(),
                             Qt::AlignRight, QString::number(fileLine));
        }
        block = block.next();
        top = bottom;
        bottom = top + blockBoundingRect(block).height();
        ++number;
    }
}

qint64 LogEdit::cursorLine() const {
    return m_firstLine + textCursor().blockNumber();
}

QString LogEdit::lineText(qint64 line) const {
    return hasLine(line) ? document()->findBlockByNumber(int(line - m_firstLine)).text() : QString();
}

void LogEdit::setWrapLines(bool wrap) {
    setLineWrapMode(wrap ? QPlainTextEdit::WidgetWidth : QPlainTextEdit::NoWrap);
    setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere); // paths have no spaces to break at
}

bool LogEdit::jumpToLine(qint64 line, int matchStart, int matchLength) {
    if (!hasLine(line))
        return false;
    const QTextBlock block = document()->findBlockByNumber(int(line - m_firstLine));
    if (!block.isValid())
        return false;
    m_matchStart = matchStart >= 0 && matchStart < block.length() ? matchStart : -1;
    m_matchLength = m_matchStart >= 0 ? qMin(matchLength, block.length() - 1 - m_matchStart) : 0;
    setMarkedLine(line);
    // The cursor at the line's start: the view shows the line from its beginning, not scrolled to its end.
    setTextCursor(QTextCursor(block));
    centerCursor();
    horizontalScrollBar()->setValue(0);
    return true;
}

QString LogEdit::highlightedText() const {
    if (!hasLine(m_markedLine) || m_matchStart < 0)
        return {};
    return lineText(m_markedLine).mid(m_matchStart, m_matchLength);
}

void LogEdit::setMarkedLine(qint64 line) {
    if (line != m_markedLine && line == 0)
        m_matchStart = -1;
    m_markedLine = line;
    updateExtraSelections();
    m_lineNumberArea->update();
}

void LogEdit::setFindingLines(const QHash<qint64, QColor> &lines) {
    m_findingLines = lines;
    QList<MarkedScrollBar::Mark> marks;
    const double total = qMax(1, blockCount());
    for (auto it = lines.cbegin(); it != lines.cend(); ++it)
        if (hasLine(it.key())) // a window of a big file marks the lines it holds
            marks.append({qBound(0.0, double(it.key() - m_firstLine) / total, 1.0), it.value()});
    m_scrollBar->setMarks(marks);
    m_lineNumberArea->update();
}

void LogEdit::updateExtraSelections() {
    QList<QTextEdit::ExtraSelection> selections;
    if (m_markedLine > 0 && hasLine(m_markedLine)) {
        const QTextBlock block = document()->findBlockByNumber(int(m_markedLine - m_firstLine));
        QTextEdit::ExtraSelection mark;
        QColor color = palette().color(QPalette::Highlight);
        color.setAlpha(40);
        mark.format.setBackground(color);
        mark.format.setProperty(QTextFormat::FullWidthSelection, true);
        mark.cursor = QTextCursor(block);
        selections.append(mark);
        if (m_matchStart >= 0 && m_matchLength > 0) {
            QTextEdit::ExtraSelection match;
            match.format.setBackground(QColor(0xff, 0xd5, 0x4f));
            match.format.setForeground(QColor(Qt::black));
            match.cursor = QTextCursor(block);
            match.cursor.setPosition(block.position() + m_matchStart);
            match.cursor.setPosition(block.position() + m_matchStart + m_matchLength,
                                     QTextCursor::KeepAnchor);
            selections.append(match);
        }
    }
    setExtraSelections(selections);
}

void LogEdit::loadText(const QString &text, bool holdRest, qint64 firstLine) {
    m_loadTimer.stop();
    m_firstLine = qMax<qint64>(1, firstLine);
    m_pendingText.clear();
    m_pendingPos = 0;
    m_markedLine = 0;
    m_matchStart = -1;
    m_findingLines.clear();
    m_scrollBar->setMarks({});
    // Big texts go in by chunks between events: laying out megabytes at once would freeze the window.
    const qsizetype first = text.size() <= loadChunkChars ? text.size() : chunkEnd(text, 0);
    setPlainText(first == text.size() ? text : text.left(first));
    if (first == text.size()) {
        emit loaded();
        return;
    }
    m_pendingText = text;
    m_pendingPos = first;
    if (!holdRest)
        m_loadTimer.start();
}

void LogEdit::resumeLoading() {
    if (!m_pendingText.isEmpty() && !m_loadTimer.isActive())
        m_loadTimer.start();
}

qsizetype LogEdit::chunkEnd(const QString &text, qsizetype from) {
    const qsizetype limit = from + loadChunkChars;
    if (limit >= text.size())
        return text.size();
    const qsizetype lineEnd = text.lastIndexOf(u'\n', limit);
    return lineEnd > from ? lineEnd + 1 : limit;
}

void LogEdit::loadNextChunk() {
    if (m_pendingPos >= m_pendingText.size()) {
        m_loadTimer.stop();
        return;
    }
    const qsizetype end = chunkEnd(m_pendingText, m_pendingPos);
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(QStringView(m_pendingText).mid(m_pendingPos, end - m_pendingPos).toString());
    m_pendingPos = end;
    if (m_pendingPos >= m_pendingText.size()) {
        m_loadTimer.stop();
        m_pendingText.clear();
        m_pendingPos = 0;
        setFindingLines(m_findingLines); // the marks' positions follow the whole document now
        emit loaded();
    }
}

void LogEdit::appendLines(const QStringList &lines) {
    if (lines.isEmpty())
        return;
    QScrollBar *bar = verticalScrollBar();
    const bool atEnd = bar->value() >= bar->maximum();
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    const bool empty = document()->isEmpty();
    cursor.insertText((empty ? QString() : u"\n"_s) + lines.join(u'\n'));
    if (atEnd)
        bar->setValue(bar->maximum());
}

void LogEdit::keyPressEvent(QKeyEvent *event) {
    // Read-only views ignore the paste keys; here a paste is how a new log arrives.
    if (event->matches(QKeySequence::Paste)) {
        pasteClipboard();
        event->accept();
        return;
    }
    if (event->matches(QKeySequence::Find)) {
        emit findRequested();
        event->accept();
        return;
    }
    QPlainTextEdit::keyPressEvent(event);
}

void LogEdit::pasteClipboard() {
    if (const QMimeData *mime = QGuiApplication::clipboard()->mimeData())
        insertFromMimeData(mime);
}

void LogEdit::contextMenuEvent(QContextMenuEvent *event) {
    QMenu *menu = createStandardContextMenu(event->pos());
    menu->setObjectName(u"logContextMenu"_s);
    QAction *first = menu->actions().value(0);
    QAction *paste = new QAction(tr("&Paste Log (replaces this one)"), menu);
    paste->setShortcut(QKeySequence::Paste);
    paste->setEnabled(canInsertFromMimeData(QGuiApplication::clipboard()->mimeData()));
    connect(paste, &QAction::triggered, this, &LogEdit::pasteClipboard);
    menu->insertAction(first, paste);
    QAction *find = new QAction(tr("&Find in Log..."), menu);
    find->setShortcut(QKeySequence::Find);
    connect(find, &QAction::triggered, this, &LogEdit::findRequested);
    menu->insertAction(first, find);
    menu->insertSeparator(first);
    menu->addSeparator();
    QAction *clear = menu->addAction(tr("C&lear Log"));
    clear->setEnabled(!document()->isEmpty());
    connect(clear, &QAction::triggered, this, &LogEdit::clearRequested);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(event->globalPos());
}

QString LogEdit::localFile(const QMimeData *source) {
    if (!source || !source->hasUrls())
        return {};
    for (const QUrl &url : source->urls()) {
        if (url.isLocalFile() && QFileInfo(url.toLocalFile()).isFile())
            return url.toLocalFile();
    }
    return {};
}

bool LogEdit::canInsertFromMimeData(const QMimeData *source) const {
    return source && (!localFile(source).isEmpty() || source->hasText());
}

void LogEdit::insertFromMimeData(const QMimeData *source) {
    // A copied file (file manager Ctrl+C) arrives as a URL: open the file rather than pasting its path.
    const QString file = localFile(source);
    if (!file.isEmpty()) {
        emit fileDropped(file);
        return;
    }
    if (source && source->hasText())
        emit textPasted(source->text());
}

void LogEdit::dragEnterEvent(QDragEnterEvent *event) {
    if (canInsertFromMimeData(event->mimeData())) {
        event->acceptProposedAction();
        return;
    }
    QPlainTextEdit::dragEnterEvent(event);
}

void LogEdit::dragMoveEvent(QDragMoveEvent *event) {
    if (canInsertFromMimeData(event->mimeData())) {
        event->acceptProposedAction();
        return;
    }
    QPlainTextEdit::dragMoveEvent(event);
}

void LogEdit::dropEvent(QDropEvent *event) {
    if (canInsertFromMimeData(event->mimeData())) {
        event->acceptProposedAction();
        insertFromMimeData(event->mimeData());
        return;
    }
    QPlainTextEdit::dropEvent(event);
}

} // namespace moetune
