// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/literalsearcher.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <functional>

class QIODevice;

namespace moetune {

// Streams a log in blocks and reports only the lines that contain one of a set of literals (the
// rules' prefilters). The hot loop is a multi-literal byte search plus a vectorised newline count:
// lines that match nothing cost no per-line work and no allocation. Lines are numbered by '\n'
// (CRLF counts once; a lone CR is a progress-bar redraw inside one line).
class LogReader {
public:
    struct Hit {
        qint64 line = 0;       // 1-based number of this physical line
        QByteArray text;       // the line cleaned (see cleanLine), cut around the literal when very long
        QByteArrayView before; // raw bytes preceding the line (up to contextBytes), valid during the callback
        QByteArrayView after;  // raw bytes following the line's '\n' (up to contextBytes), likewise
    };
    using HitHandler = std::function<void(const Hit &hit)>;
    using Progress = std::function<bool(qint64 done, qint64 total)>; // false = cancel

    // Longest line text handed on; longer lines are cut around the literal found.
    static constexpr qsizetype maxLineBytes = qsizetype{64} * 1024;
    // Raw context offered around a hit, for rejoining terminal-wrapped lines.
    static constexpr qsizetype contextBytes = qsizetype{8} * 1024;
    // File window read at once (pread into one buffer, never mmap: a mapped file that shrinks while it
    // is read raises SIGBUS): small enough to keep resident memory low whatever the file size.
    static constexpr qint64 windowBytes = qint64{4} * 1024 * 1024;
    // Chunk read from a device or handed out of a buffer between progress reports.
    static constexpr qint64 chunkBytes = qint64{4} * 1024 * 1024;

    explicit LogReader(const QList<QByteArray> &literals);

    // Each returns false on a read error (with a sentence in *error); cancelled() tells whether
    // progress asked to stop.
    bool readFile(const QString &path, const HitHandler &onHit, const Progress &progress = {},
                  QString *error = nullptr);
    // Reads bytes [begin, end) of a file; begin must be 0 or follow a '\n'. Lines count from there.
    // The bytes read are those the file had when reading began: one that grows meanwhile is read up to
    // its first size; one that shrinks (logrotate's copytruncate) is an error naming it, never a crash.
    bool readFileRange(const QString &path, qint64 begin, qint64 end, const HitHandler &onHit,
                       const Progress &progress = {}, QString *error = nullptr);
    // The same over an open regular file (name only for messages). It reads with pread, so several
    // readers may share one descriptor, which also keeps them on one file when the path is rotated.
    bool readOpenFileRange(int fd, const QString &name, qint64 begin, qint64 end, const HitHandler &onHit,
                           const Progress &progress = {}, QString *error = nullptr);
    bool readDevice(QIODevice *dev, const HitHandler &onHit, const Progress &progress = {},
                    QString *error = nullptr);
    void readBuffer(QByteArrayView text, const HitHandler &onHit, const Progress &progress = {});

    qint64 bytesRead() const { return m_bytesRead; }
    qint64 linesRead() const { return m_linesRead; }
    bool cancelled() const { return m_cancelled; }

    // Cleans one physical line: drops trailing CRs, keeps the text after the last CR (progress bars),
    // removes ANSI/VT100 escape sequences and other control bytes except tab.
    static QByteArray cleanLine(QByteArrayView line);
    // cleanLine applied to every line of a text, '\n' kept: what the log editor shows, so that the
    // editor, the evidence and the line numbers agree.
    static QString cleanText(QStringView text);
    // Counts '\n' bytes (vectorised where the CPU allows).
    static qint64 countNewlines(QByteArrayView data);

private:
    // Processes complete lines of data[from, scanEnd); returns the offset in data up to which it consumed.
    // Bytes of data outside that range are context only, so a hit sees the same raw context whatever
    // the read or window boundaries: up to contextBytes before from (already consumed), and after.
    // final: scan all of the range (its end is the end of the input or of a file range).
    // dataIsInputEnd: nothing follows data, so a short after-context is the true one.
    // Without final, only lines whose after-context data holds in full are taken; if none is complete,
    // a fragment of a huge line is taken only when mustConsume.
    qsizetype scanBlock(QByteArrayView data, qsizetype from, qsizetype scanEnd, bool final,
                        bool dataIsInputEnd, bool mustConsume, const HitHandler &onHit);
    bool streamDevice(QIODevice *dev, const HitHandler &onHit, const Progress &progress, QString *error);
    void reset();
    void finish();

    LiteralSearcher m_searcher;
    qint64 m_bytesRead = 0;
    qint64 m_linesRead = 0; // '\n' seen so far (+1 at the end for a last line without one)
    bool m_lastByteWasNewline = true;
    bool m_cancelled = false;
    bool m_adapted = false; // the searcher has seen a sample of this input
};

} // namespace moetune
