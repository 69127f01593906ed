// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/loglineindex.h"

#include "core/util/jobcontrol.h"

#include <QFile>

#include <cstring>
#include <utility>

using namespace Qt::StringLiterals;

namespace moetune {

LogLineIndex::LogLineIndex(QString path)
    : m_path(std::move(path)) {}

qint64 LogLineIndex::indexedLines() const {
    const QMutexLocker lock(&m_mutex);
    return (qint64(m_starts.size()) - 1) * stride + 1;
}

LogWindow LogLineIndex::window(qint64 line, qint64 maxBytes, const JobControl *control) {
    LogWindow w;
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly)) {
        w.error = u"Cannot read %1: %2."_s.arg(m_path, file.errorString());
        return w;
    }
    w.fileSize = file.size();
    line = qMax<qint64>(1, line);
    maxBytes = qMax<qint64>(4096, maxBytes);

    // From the nearest indexed line start at or before the line, count lines forward to it.
    qint64 at = 0;
    qint64 atLine = 1;
    {
        const QMutexLocker lock(&m_mutex);
        const qsizetype i = qMin<qsizetype>(qsizetype((line - 1) / stride), m_starts.size() - 1);
        at = m_starts.at(i);
        atLine = qint64(i) * stride + 1;
    }
    QByteArray chunk;
    qint64 lastStart = at, lastStartLine = atLine; // the last line start seen (for a line past the end)
    while (atLine < line) {
        if (control && control->isCancelled())
            return LogWindow{};
        if (!file.seek(at)) {
            w.error = u"Cannot read %1: %2."_s.arg(m_path, file.errorString());
            return w;
        }
        chunk = file.read(readChunk);
        if (chunk.isEmpty())
            break; // the file ends before the line: show its end
        const char *d = chunk.constData();
        const qint64 n = chunk.size();
        qint64 pos = 0;
        QList<qint64> found; // index entries of this chunk, added under the lock at once
        while (atLine < line && pos < n) {
            const void *nl = std::memchr(d + pos, '\n', size_t(n - pos));
            if (!nl) {
                pos = n;
                break;
            }
            pos = static_cast<const char *>(nl) - d + 1;
            ++atLine;
            if ((atLine - 1) % stride == 0)
                found.append(at + pos);
            lastStart = at + pos;
            lastStartLine = atLine;
        }
        {
            const QMutexLocker lock(&m_mutex);
            for (qint64 start : std::as_const(found))
                if (start > m_starts.last()) // entries before the last one are known already
                    m_starts.append(start);
        }
        if (atLine == line) {
            at = lastStart;
            break;
        }
        at += pos;
    }
    if (atLine < line) { // past the end: centre on the last line start seen
        line = lastStartLine;
        at = lastStart;
    }
    // The window starts about half of it before the line, at a line start, its number counted back.
    qint64 start = 0;
    qint64 firstLine = 1;
    const qint64 from = at - maxBytes / 2;
    if (from > 0) {
        file.seek(from - 1);
        const QByteArray before = file.read(at - from + 1);
        const qsizetype nl = before.indexOf('\n');
        const qsizetype lineStart = nl < 0 ? before.size() : nl + 1; // in before; at itself if none
        start = from - 1 + lineStart;
        firstLine = line - qint64(before.mid(lineStart).count('\n'));
    } else {
        file.seek(0);
        const QByteArray before = file.read(at);
        firstLine = line - qint64(before.count('\n'));
    }
    if (control && control->isCancelled())
        return LogWindow{};
    file.seek(start);
    w.bytes = file.read(maxBytes);
    if (start + w.bytes.size() < w.fileSize) {
        const qsizetype lastNl = w.bytes.lastIndexOf('\n');
        if (lastNl > at - start)
            w.bytes.truncate(lastNl + 1);
    }
    w.startOffset = start;
    w.firstLine = firstLine;
    w.lines = w.bytes.count('\n') + (w.bytes.endsWith('\n') || w.bytes.isEmpty() ? 0 : 1);
    return w;
}

} // namespace moetune
