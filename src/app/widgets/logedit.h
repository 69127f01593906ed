#pragma once

#include <QPlainTextEdit>

namespace moetune {

// The log view and paste area: monospace, line numbers, accepts dropped files, reports pastes so the
// page can diagnose at once instead of waiting for the typing debounce.
class LogEdit : public QPlainTextEdit {
    Q_OBJECT
public:
    static constexpr qsizetype largePasteChars = 512 * 1024;

    explicit LogEdit(QWidget *parent = nullptr);

    // Selects line (1-based) and centres it; false when the document has no such line.
    bool jumpToLine(qint64 line);
    // Marks the line (1-based) with a background; 0 clears the mark.
    void setMarkedLine(qint64 line);
    qint64 markedLine() const { return m_markedLine; }
    // The 1-based line the cursor is on.
    qint64 cursorLine() const;

    int lineNumberAreaWidth() const;
    void paintLineNumbers(QPaintEvent *event);

signals:
    void pasted();
    // A paste above largePasteChars is not inserted here: the page loads it without freezing.
    void largePaste(const QString &text);
    void fileDropped(const QString &path);

protected:
    void resizeEvent(QResizeEvent *event) override;
    void insertFromMimeData(const QMimeData *source) override;
    bool canInsertFromMimeData(const QMimeData *source) const override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dragMoveEvent(QDragMoveEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void updateLineNumberAreaWidth();
    void updateLineNumberArea(const QRect &rect, int dy);
    void updateExtraSelections();
    static QString localFile(const QMimeData *source);

    QWidget *m_lineNumberArea = nullptr;
    qint64 m_markedLine = 0;
};

} // namespace moetune
