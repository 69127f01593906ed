#include "app/widgets/logedit.h"

#include "app/widgets/linenumberarea.h"
#include "app/widgets/logtext.h"

#include <QDragEnterEvent>
#include <QDragMoveEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QFontDatabase>
#include <QMetaMethod>
#include <QMimeData>
#include <QPaintEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QTextBlock>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace moetune {

LogEdit::LogEdit(QWidget *parent)
    : QPlainTextEdit(parent)
    , m_lineNumberArea(new LineNumberArea(this)) {
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    font.setPointSizeF(font.pointSizeF() * 0.95);
    setFont(font);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setTabStopDistance(fontMetrics().horizontalAdvance(u' ') * 8);
    setAcceptDrops(true);
    setPlaceholderText(tr("Paste an SGLang or vLLM server log here, drop a log file, or use File > Open.\n"
                          "moetune diagnoses it as you paste."));
    connect(this, &QPlainTextEdit::blockCountChanged, this, &LogEdit::updateLineNumberAreaWidth);
    connect(this, &QPlainTextEdit::updateRequest, this, &LogEdit::updateLineNumberArea);
    connect(this, &QPlainTextEdit::cursorPositionChanged, this, &LogEdit::updateExtraSelections);
    updateLineNumberAreaWidth();
}

int LogEdit::lineNumberAreaWidth() const {
    int digits = 1;
    for (int max = qMax(1, blockCount()); max >= 10; max /= 10)
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
            const bool marked = number + 1 == m_markedLine;
            QFont f = font();
            f.setBold(marked || number == current);
            painter.setFont(f);
            painter.setPen(marked ? pal.color(QPalette::Highlight) : pal.color(QPalette::PlaceholderText));
            painter.drawText(0, int(top), m_lineNumberArea->width() - 6, fontMetrics().height(),
                             Qt::AlignRight, QString::number(number + 1));
        }
        block = block.next();
        top = bottom;
        bottom = top + blockBoundingRect(block).height();
        ++number;
    }
}

qint64 LogEdit::cursorLine() const {
    return textCursor().blockNumber() + 1;
}

bool LogEdit::jumpToLine(qint64 line) {
    if (line < 1 || line > blockCount())
        return false;
    const QTextBlock block = document()->findBlockByNumber(int(line - 1));
    if (!block.isValid())
        return false;
    QTextCursor cursor(block);
    cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    setMarkedLine(line);
    setTextCursor(cursor);
    centerCursor();
    return true;
}

void LogEdit::setMarkedLine(qint64 line) {
    m_markedLine = line;
    updateExtraSelections();
    m_lineNumberArea->update();
}

void LogEdit::updateExtraSelections() {
    QList<QTextEdit::ExtraSelection> selections;
    if (m_markedLine > 0 && m_markedLine <= blockCount()) {
        QTextEdit::ExtraSelection mark;
        QColor color = palette().color(QPalette::Highlight);
        color.setAlpha(40);
        mark.format.setBackground(color);
        mark.format.setProperty(QTextFormat::FullWidthSelection, true);
        mark.cursor = QTextCursor(document()->findBlockByNumber(int(m_markedLine - 1)));
        selections.append(mark);
    }
    setExtraSelections(selections);
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
    return !localFile(source).isEmpty() || QPlainTextEdit::canInsertFromMimeData(source);
}

void LogEdit::insertFromMimeData(const QMimeData *source) {
    // A copied file (file manager Ctrl+C) arrives as a URL: open the file rather than pasting its path.
    const QString file = localFile(source);
    if (!file.isEmpty()) {
        emit fileDropped(file);
        return;
    }
    if (isReadOnly())
        return;
    // Terminal output pasted with its colour codes and progress bars shows as the terminal showed it.
    if (source->hasText()) {
        const QString text = source->text();
        if (text.size() > largePasteChars &&
            isSignalConnected(QMetaMethod::fromSignal(&LogEdit::largePaste))) {
            emit largePaste(text);
            return;
        }
        const QString shown = displayLogText(text);
        if (shown.size() != text.size() || shown != text) {
            insertPlainText(shown);
            ensureCursorVisible();
            emit pasted();
            return;
        }
    }
    QPlainTextEdit::insertFromMimeData(source);
    emit pasted();
}

void LogEdit::dragEnterEvent(QDragEnterEvent *event) {
    if (!localFile(event->mimeData()).isEmpty()) {
        event->acceptProposedAction();
        return;
    }
    QPlainTextEdit::dragEnterEvent(event);
}

void LogEdit::dragMoveEvent(QDragMoveEvent *event) {
    if (!localFile(event->mimeData()).isEmpty()) {
        event->acceptProposedAction();
        return;
    }
    QPlainTextEdit::dragMoveEvent(event);
}

void LogEdit::dropEvent(QDropEvent *event) {
    const QString file = localFile(event->mimeData());
    if (!file.isEmpty()) {
        event->acceptProposedAction();
        emit fileDropped(file);
        return;
    }
    QPlainTextEdit::dropEvent(event);
}

} // namespace moetune
