// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QMutex>
#include <QString>

namespace moetune {

class JobControl;

// A window of a log file: whole lines, the first one's 1-based number in the file.
struct LogWindow {
    QByteArray bytes;
    qint64 firstLine = 1;
    qint64 lines = 0;       // lines in bytes
    qint64 startOffset = 0; // of bytes in the file
    qint64 fileSize = 0;
    QString error; // a sentence; bytes empty
};

// Reads the window of a big log around any line, so the log view can show every line a finding points
// at without holding the file. Line starts are indexed while reading (every stride-th line: 8 bytes per
// 4096 lines, a few hundred KB for a multi-GB log), so the next jump reads from the nearest one.
// Thread-safe: the GUI asks, a worker reads.
class LogLineIndex {
public:
    static constexpr qint64 stride = 4096;
    static constexpr qint64 readChunk = qint64{1} << 20;

    explicit LogLineIndex(QString path);
    const QString &path() const { return m_path; }

    // About maxBytes of whole lines with line in the middle (or as near as the file allows; a line past
    // the end gives the file's last window). control: cancelled -> an empty window with no error.
    LogWindow window(qint64 line, qint64 maxBytes, const JobControl *control = nullptr);
    qint64 indexedLines() const; // how far the index reaches (tests)

private:
    QString m_path;
    mutable QMutex m_mutex;
    QList<qint64> m_starts{0}; // m_starts[i]: the offset of line i * stride + 1
};

} // namespace moetune
