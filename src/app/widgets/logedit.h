// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QHash>
#include <QPlainTextEdit>
#include <QTimer>

namespace moetune {

class MarkedScrollBar;

// The log view. The log is the input, not a document to edit: the view is read-only, and a paste or a
// drop replaces the whole log (textPasted / fileDropped; the page decides what to do). Monospace, line
// numbers, the lines that produced findings marked in the gutter and on the scrollbar, and big texts
// loaded by chunks so the window never freezes on a paste of megabytes.
class LogEdit : public QPlainTextEdit {
    Q_OBJECT
public:
    // Text goes into the view in chunks of this many characters, one per event-loop turn.
    static constexpr qsizetype loadChunkChars = qsizetype{256} * 1024;

    explicit LogEdit(QWidget *parent = nullptr);

    // Replaces the text (no undo entry). A text above loadChunkChars goes in by chunks between events;
    // holdRest: only the first chunk now, the rest after resumeLoading() (the page lets the findings
    // come first). loaded() once all of it is in.
    // firstLine: the file's number of the text's first line (a window of a big file; 1 otherwise). Every
    // line number this view takes or gives is the file's.
    void loadText(const QString &text, bool holdRest = false, qint64 firstLine = 1);
    void resumeLoading();
    bool isLoading() const { return !m_pendingText.isEmpty(); }
    qint64 firstLineNumber() const { return m_firstLine; }
    qint64 lastLineNumber() const { return m_firstLine + blockCount() - 1; }
    bool hasLine(qint64 line) const { return line >= m_firstLine && line <= lastLineNumber(); }
    // The text of the file's line, "" when the view does not hold it.
    QString lineText(qint64 line) const;
    // Long lines wrapped at the view's width, or cut (scrolled sideways).
    void setWrapLines(bool wrap);
    bool wrapsLines() const { return lineWrapMode() != QPlainTextEdit::NoWrap; }
    // Lines that arrived later (Follow Live): appended; the view follows the end only if it was there.
    void appendLines(const QStringList &lines);

    // Shows line (1-based) from its start (never scrolled sideways), centred, and highlights the match
    // [matchStart, matchStart + matchLength) in it; false when the view has no such line.
    bool jumpToLine(qint64 line, int matchStart = -1, int matchLength = 0);
    // Marks the line (1-based) with a background; 0 clears the mark.
    void setMarkedLine(qint64 line);
    qint64 markedLine() const { return m_markedLine; }
    // The highlighted match of the last jump, as text ("" when none).
    QString highlightedText() const;
    // The 1-based line the cursor is on.
    qint64 cursorLine() const;
    // Lines (1-based) that produced findings, with the colour to mark them in (gutter and scrollbar).
    void setFindingLines(const QHash<qint64, QColor> &lines);
    QHash<qint64, QColor> findingLines() const { return m_findingLines; }

    int lineNumberAreaWidth() const;
    void paintLineNumbers(QPaintEvent *event);

signals:
    // Pasted or dropped text (as given, colour codes and all): the new log.
    void textPasted(const QString &text);
    void fileDropped(const QString &path);
    void loaded(); // a text loaded by chunks is all in the view
    void findRequested();
    void clearRequested();

protected:
    void resizeEvent(QResizeEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    void insertFromMimeData(const QMimeData *source) override;
    bool canInsertFromMimeData(const QMimeData *source) const override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dragMoveEvent(QDragMoveEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void updateLineNumberAreaWidth();
    void updateLineNumberArea(const QRect &rect, int dy);
    void updateExtraSelections();
    void loadNextChunk();
    void pasteClipboard();
    static qsizetype chunkEnd(const QString &text, qsizetype from);
    static QString localFile(const QMimeData *source);

    QWidget *m_lineNumberArea = nullptr;
    MarkedScrollBar *m_scrollBar = nullptr;
    qint64 m_markedLine = 0;
    qint64 m_firstLine = 1;
    int m_matchStart = -1;
    int m_matchLength = 0;
    QHash<qint64, QColor> m_findingLines;
    QTimer m_loadTimer;
    QString m_pendingText; // the rest of a text being loaded by chunks
    qsizetype m_pendingPos = 0;
};

} // namespace moetune
