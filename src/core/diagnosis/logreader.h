#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <functional>

class QIODevice;

namespace moetune {

// Streams a log in blocks and reports only the lines that contain one of a set of literals
// (the rules' prefilters), cleaned: ANSI escapes removed, CRLF and carriage-return progress bars
// reduced to their last segment, invalid UTF-8 replaced. Lines are numbered by '\n'.
// The hot loop is a multi-literal byte search plus a SIMD newline count: no per-line work
// for lines that match nothing.
class LogReader {
public:
    struct Hit {
        qint64 line = 0;       // 1-based line number of the first physical line
        QByteArray raw;        // cleaned bytes (still UTF-8); joined with continuation lines when wrapped
        int physicalLines = 1; // how many physical lines were joined
    };
    using HitHandler = std::function<void(const Hit &hit)>;
    using Progress = std::function<bool(qint64 done, qint64 total)>; // false = cancel

    // A hit line whose text ends inside an unfinished config path is joined with up to this many
    // following lines (terminal wrapping).
    static constexpr int maxJoinedLines = 4;
    // Longest line text handed to the rules; longer lines are cut around the literal found.
    static constexpr qsizetype maxLineBytes = 64 * 1024;
    // File windows mapped at once (keeps resident memory low whatever the file size).
    static constexpr qint64 windowBytes = 64 * 1024 * 1024;
    // Chunk read from a device.
    static constexpr qint64 chunkBytes = 4 * 1024 * 1024;

    explicit LogReader(QList<QByteArray> literals);

    // Each returns false on a read error (with a sentence in *error) and sets cancelled() when progress said
    // stop.
    bool readFile(const QString &path, const HitHandler &onHit, const Progress &progress = {},
                  QString *error = nullptr);
    bool readDevice(QIODevice *dev, const HitHandler &onHit, const Progress &progress = {},
                    QString *error = nullptr);
    void readBuffer(QByteArrayView text, const HitHandler &onHit, const Progress &progress = {});

    qint64 bytesRead() const { return m_bytesRead; }
    qint64 linesRead() const { return m_linesRead; }
    bool cancelled() const { return m_cancelled; }

    // Cleans one physical line: drops a trailing CR, keeps the text after the last CR (progress bars),
    // removes ANSI/VT100 escape sequences and other C0 control bytes except tab.
    static QByteArray cleanLine(QByteArrayView line);
    // Whether a cleaned line ends inside a config path that a terminal probably wrapped.
    static bool endsInsideConfigPath(QByteArrayView cleaned);
    // Counts '\n' bytes (vectorised where the CPU allows).
    static qint64 countNewlines(QByteArrayView data);

private:
    // Processes complete lines of block; returns how many bytes were consumed.
    qsizetype scanBlock(QByteArrayView block, bool final, const HitHandler &onHit);
    void reset();

    QList<QByteArray> m_literals;
    qint64 m_bytesRead = 0;
    qint64 m_linesRead = 0;
    qint64 m_lineBase = 0; // lines completed before the current block
    bool m_inLongLine = false;
    bool m_cancelled = false;
};

} // namespace moetune
