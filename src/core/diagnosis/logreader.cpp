// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/logreader.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QIODevice>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

qsizetype lastNewlineBefore(const char *data, qsizetype end) {
    const void *p = memrchr(data, '\n', static_cast<size_t>(end));
    return p ? static_cast<const char *>(p) - data : -1;
}

qsizetype nextNewline(const char *data, qsizetype from, qsizetype end) {
    if (from >= end)
        return -1;
    const void *p = std::memchr(data + from, '\n', static_cast<size_t>(end - from));
    return p ? static_cast<const char *>(p) - data : -1;
}

bool isDropped(unsigned char c) {
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

} // namespace

LogReader::LogReader(const QList<QByteArray> &literals)
    : m_searcher(literals) {}

void LogReader::reset() {
    m_bytesRead = 0;
    m_linesRead = 0;
    m_lastByteWasNewline = true;
    m_cancelled = false;
    m_adapted = false;
}

void LogReader::finish() {
    if (!m_lastByteWasNewline)
        ++m_linesRead;
    m_lastByteWasNewline = true;
}

qint64 LogReader::countNewlines(QByteArrayView data) {
    const char *p = data.data();
    const qsizetype n = data.size();
    qint64 count = 0;
    qsizetype i = 0;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    const __m128i zero = _mm_setzero_si128();
    while (i + 16 <= n) {
        // Byte counters overflow after 255 additions: fold them every 255 vectors.
        const qsizetype stop = std::min<qsizetype>(n - 16, i + qsizetype{254} * 16);
        __m128i acc = zero;
        for (; i <= stop; i += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + i));
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
        }
        const __m128i sums = _mm_sad_epu8(acc, zero);
        count += _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
    }
#endif
    for (; i < n; ++i)
        count += p[i] == '\n' ? 1 : 0;
    return count;
}

namespace {

unsigned codeOf(char c) {
    return static_cast<unsigned char>(c);
}

unsigned codeOf(QChar c) {
    return c.unicode();
}

bool isDroppedCode(unsigned c) {
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

// One cleaning for bytes (the reader, the evidence) and for UTF-16 (the editor): every code it looks at
// is ASCII, so both give the same text.
template <typename Char, typename Out>
void appendCleaned(const Char *line, qsizetype n, Out &out) {
    while (n > 0 && codeOf(line[n - 1]) == '\r')
        --n;
    // A progress bar redraws with CR: what a terminal finally shows is the last segment.
    qsizetype begin = n;
    while (begin > 0 && codeOf(line[begin - 1]) != '\r')
        --begin;
    const Char *u = line + begin;
    const qsizetype size = n - begin;
    qsizetype i = 0;
    while (i < size) {
        const unsigned c = codeOf(u[i]);
        if (c == 0x1b) {
            if (i + 1 >= size) {
                ++i;
                continue;
            }
            const unsigned next = codeOf(u[i + 1]);
            qsizetype j = i + 2;
            if (next == '[') { // CSI: parameters, intermediates, one final byte
                while (j < size && codeOf(u[j]) >= 0x30 && codeOf(u[j]) <= 0x3f)
                    ++j;
                while (j < size && codeOf(u[j]) >= 0x20 && codeOf(u[j]) <= 0x2f)
                    ++j;
                if (j < size && codeOf(u[j]) >= 0x40 && codeOf(u[j]) <= 0x7e)
                    ++j;
            } else if (next == ']') { // OSC (hyperlinks, titles): up to BEL or ESC '\'
                while (j < size && codeOf(u[j]) != 0x07 &&
                       !(codeOf(u[j]) == 0x1b && j + 1 < size && codeOf(u[j + 1]) == '\\'))
                    ++j;
                j = j < size && codeOf(u[j]) == 0x07 ? j + 1 : std::min(size, j + 2);
            } else if (next == '(' || next == ')' || next == '*' || next == '+') { // charset selection
                j = std::min(size, i + 3);
            }
            i = j;
            continue;
        }
        // Copy the run of kept characters at once.
        qsizetype k = i;
        while (k < size && codeOf(u[k]) != 0x1b && !isDroppedCode(codeOf(u[k])))
            ++k;
        if (k > i) {
            out.append(u + i, k - i);
            i = k;
        } else {
            ++i;
        }
    }
}

} // namespace

QByteArray LogReader::cleanLine(QByteArrayView line) {
    qsizetype n = line.size();
    while (n > 0 && line[n - 1] == '\r')
        --n;
    const QByteArrayView v = line.first(n);
    const auto *u = reinterpret_cast<const unsigned char *>(v.data());
    if (std::none_of(u, u + n, [](unsigned char c) { return isDropped(c); }))
        return v.toByteArray(); // the common line: nothing to clean
    QByteArray out;
    out.reserve(n);
    appendCleaned(line.data(), line.size(), out);
    return out;
}

QString LogReader::cleanText(QStringView text) {
    const bool clean = std::none_of(text.begin(), text.end(),
                                    [](QChar c) { return c != u'\n' && isDroppedCode(c.unicode()); });
    if (clean)
        return text.toString();
    QString out;
    out.reserve(text.size());
    qsizetype pos = 0;
    while (pos <= text.size()) {
        qsizetype nl = text.indexOf(u'\n', pos);
        if (nl < 0)
            nl = text.size();
        appendCleaned(text.data() + pos, nl - pos, out);
        if (nl < text.size())
            out += u'\n';
        pos = nl + 1;
    }
    return out;
}

qsizetype LogReader::scanBlock(QByteArrayView data, qsizetype from, qsizetype scanEnd, bool final,
                               bool dataIsInputEnd, bool mustConsume, const HitHandler &onHit) {
    const char *d = data.data();
    const qsizetype n = data.size();
    qsizetype end = scanEnd;
    if (!final) {
        // A line is taken once the bytes after it that a hit may look at are all here.
        const qsizetype cut = std::min(scanEnd, dataIsInputEnd ? n : n - contextBytes);
        const qsizetype lastNl = cut > from ? lastNewlineBefore(d + from, cut - from) : -1;
        if (lastNl >= 0)
            end = from + lastNl + 1;
        else if (mustConsume && cut > from)
            end = cut;
        else
            return from;
    }
    if (!m_adapted) {
        m_searcher.adapt(QByteArrayView(d + from, std::min<qsizetype>(end - from, 1 << 20)));
        m_adapted = true;
    }
    const QByteArrayView scan(d, end);
    qint64 lines = m_linesRead;
    qsizetype counted = from;
    qsizetype pos = from;
    while (pos < end) {
        const qsizetype hit = m_searcher.findNext(scan, pos);
        if (hit < 0)
            break;
        lines += countNewlines(QByteArrayView(d + counted, hit - counted));
        counted = hit;
        // The line starts after the previous '\n' of the scanned range (from follows one, or a fragment).
        const qsizetype lineStart = from + lastNewlineBefore(d + from, hit - from) + 1;
        qsizetype lineEnd = nextNewline(d, hit, end);
        if (lineEnd < 0)
            lineEnd = end;
        qsizetype ts = lineStart;
        qsizetype te = lineEnd;
        if (te - ts > maxLineBytes) { // keep a window around the literal; the rest is still counted
            ts = std::max(lineStart, hit - maxLineBytes / 4);
            te = std::min(lineEnd, ts + maxLineBytes);
        }
        Hit h;
        h.line = lines + 1;
        h.text = cleanLine(QByteArrayView(d + ts, te - ts));
        const qsizetype beforeStart = std::max<qsizetype>(0, lineStart - contextBytes);
        h.before = QByteArrayView(d + beforeStart, lineStart - beforeStart);
        const qsizetype afterStart = std::min(n, lineEnd + 1);
        h.after = QByteArrayView(d + afterStart, std::min(n, afterStart + contextBytes) - afterStart);
        onHit(h);
        pos = te < lineEnd ? te : lineEnd + 1;
    }
    lines += countNewlines(QByteArrayView(d + counted, end - counted));
    m_linesRead = lines;
    m_bytesRead += end - from;
    if (end > from)
        m_lastByteWasNewline = d[end - 1] == '\n';
    return end;
}

void LogReader::readBuffer(QByteArrayView text, const HitHandler &onHit, const Progress &progress) {
    reset();
    const qsizetype total = text.size();
    qsizetype pos = 0;
    while (pos < total) {
        const qsizetype scanEnd = std::min<qsizetype>(pos + chunkBytes, total);
        pos = scanBlock(text, pos, scanEnd, scanEnd == total, true, true, onHit);
        if (progress && !progress(pos, total)) {
            m_cancelled = true;
            break;
        }
    }
    finish();
}

bool LogReader::readFile(const QString &path, const HitHandler &onHit, const Progress &progress,
                         QString *error) {
    return readFileRange(path, 0, -1, onHit, progress, error);
}

bool LogReader::readFileRange(const QString &path, qint64 begin, qint64 end, const HitHandler &onHit,
                              const Progress &progress, QString *error) {
    reset();
    const QFileInfo info(path);
    if (info.isDir()) {
        if (error)
            *error = u"%1 is a folder, not a log file."_s.arg(path);
        return false;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = u"Cannot open %1: %2."_s.arg(path, file.errorString());
        return false;
    }
    struct stat st {};
    if (file.isSequential() || ::fstat(file.handle(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return streamDevice(&file, onHit, progress, error); // FIFOs, /dev/stdin, /proc files: stream them
    return readOpenFileRange(file.handle(), path, begin, end, onHit, progress, error);
}

bool LogReader::readOpenFileRange(int fd, const QString &name, qint64 begin, qint64 end,
                                  const HitHandler &onHit, const Progress &progress, QString *error) {
    reset();
    auto fail = [&](const QString &sentence) {
        if (error)
            *error = sentence;
        return false;
    };
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return fail(u"Cannot read %1: %2."_s.arg(name, QString::fromLocal8Bit(std::strerror(errno))));
    if (!S_ISREG(st.st_mode))
        return fail(u"%1 is not a regular file."_s.arg(name));
    const qint64 fileSize = st.st_size;
    // A range planned on the file's earlier size (a part of a parallel read that starts late): a file
    // shorter now shrank before this part read a byte, and reading what is left would claim a whole log.
    if (end > fileSize)
        return fail(u"%1 shrank while it was read: it had at least %2 bytes when reading began and has %3 "
                    u"now (logrotate's copytruncate does this). The diagnosis would be incomplete; read the "
                    u"file again, or the rotated copy."_s.arg(name)
                        .arg(end)
                        .arg(fileSize));
    const qint64 size = end < 0 ? fileSize : end;
    qint64 pos = std::clamp<qint64>(begin, 0, size);
    // One buffer for the whole read: the window plus the context on both sides.
    QByteArray buf;
    while (pos < size) {
        // Each window also reads the context around it, even outside [begin, end), so a hit sees the same
        // neighbouring lines as a single pass over the whole file.
        const qint64 scanEnd = std::min(size, pos + windowBytes);
        const qint64 readStart = std::max<qint64>(0, pos - contextBytes);
        const qint64 readEnd = std::min(fileSize, scanEnd + contextBytes);
        const qsizetype want = static_cast<qsizetype>(readEnd - readStart);
        if (buf.size() < want)
            buf.resize(want);
        qsizetype got = 0;
        while (got < want) {
            const ssize_t n = ::pread(fd, buf.data() + got, static_cast<size_t>(want - got), readStart + got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return fail(u"Reading %1 failed at byte %2: %3."_s.arg(name)
                                .arg(readStart + got)
                                .arg(QString::fromLocal8Bit(std::strerror(errno))));
            if (n == 0)
                break;
            got += n;
        }
        if (got < want) {
            // The file is shorter than when reading began: rotated by truncation, or cut by someone.
            struct stat now {};
            const qint64 nowSize = ::fstat(fd, &now) == 0 ? qint64(now.st_size) : readStart + got;
            return fail(
                u"%1 shrank while it was read: it had %2 bytes when reading began and has %3 now "
                u"(logrotate's copytruncate does this). Nothing after byte %4 was read, so the "
                u"diagnosis would be incomplete; read the file again, or the rotated copy."_s.arg(name)
                    .arg(fileSize)
                    .arg(nowSize)
                    .arg(readStart + got));
        }
        const QByteArrayView data(buf.constData(), want);
        const qsizetype consumed = scanBlock(data, pos - readStart, scanEnd - readStart, scanEnd == size,
                                             readEnd == fileSize, true, onHit);
        pos = readStart + consumed;
        if (progress && !progress(pos - begin, size - begin)) {
            m_cancelled = true;
            break;
        }
    }
    finish();
    return true;
}

bool LogReader::readDevice(QIODevice *dev, const HitHandler &onHit, const Progress &progress,
                           QString *error) {
    reset();
    return streamDevice(dev, onHit, progress, error);
}

bool LogReader::streamDevice(QIODevice *dev, const HitHandler &onHit, const Progress &progress,
                             QString *error) {
    const qint64 startBytes = m_bytesRead;
    if (!dev || !dev->isReadable()) {
        if (error)
            *error = u"The input is not open for reading."_s;
        return false;
    }
    const qint64 total = dev->isSequential() ? -1 : dev->size() - dev->pos();
    // buf holds [kept context | unscanned bytes]: the context before `from` and the lookahead after a
    // line are kept across reads, so the diagnosis does not depend on how the input arrives.
    QByteArray buf(chunkBytes + 2 * contextBytes, Qt::Uninitialized);
    qsizetype from = 0;
    qsizetype have = 0;
    bool ok = true;
    auto scan = [&](bool final) {
        const qsizetype end = scanBlock(QByteArrayView(buf.constData(), have), from, have, final, final,
                                        have == buf.size(), onHit);
        if (end == from)
            return;
        const qsizetype keepFrom = std::max<qsizetype>(0, end - contextBytes);
        std::memmove(buf.data(), buf.constData() + keepFrom, static_cast<size_t>(have - keepFrom));
        have -= keepFrom;
        from = end - keepFrom;
    };
    for (;;) {
        const qint64 n = dev->read(buf.data() + have, buf.size() - have);
        if (n < 0) {
            if (error)
                *error = u"Reading the input failed after %1 bytes: %2."_s.arg(m_bytesRead + have - from)
                             .arg(dev->errorString());
            ok = false;
            break;
        }
        if (n == 0) {
            if (!dev->isSequential())
                break;
            QElapsedTimer waited;
            waited.start();
            if (dev->waitForReadyRead(250))
                continue;
            if (waited.elapsed() < 200) // returned at once: closed or at end
                break;
            if (progress && !progress(m_bytesRead - startBytes, total)) {
                m_cancelled = true;
                break;
            }
            continue;
        }
        have += n;
        // Tiny reads (a pipe, a terminal) are gathered first: scanning is cheaper in bigger steps.
        if (have == buf.size() || have - from >= 2 * contextBytes + qsizetype{64} * 1024)
            scan(false);
        if (progress && !progress(m_bytesRead - startBytes, total)) {
            m_cancelled = true;
            break;
        }
    }
    if (!m_cancelled && have > from)
        scan(true);
    finish();
    return ok;
}

} // namespace moetune
