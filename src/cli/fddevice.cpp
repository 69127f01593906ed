// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/fddevice.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace moetune::cli {

FdDevice::FdDevice(int fd, bool owned, QObject *parent)
    : QIODevice(parent)
    , m_fd(fd)
    , m_owned(owned) {
    open(QIODevice::ReadOnly | QIODevice::Unbuffered);
}

FdDevice::~FdDevice() {
    if (m_owned && m_fd >= 0)
        ::close(m_fd);
}

QByteArray FdDevice::head(qint64 size) {
    while (!m_eof && m_head.size() < size) {
        const qsizetype before = m_head.size();
        m_head.resize(size);
        const qint64 n = readFd(m_head.data() + before, size - before);
        m_head.resize(before + qMax<qint64>(n, 0));
    }
    return m_head.mid(m_headPos);
}

bool FdDevice::atEnd() const {
    return m_eof && m_headPos >= m_head.size();
}

qint64 FdDevice::bytesAvailable() const {
    return (m_head.size() - m_headPos) + QIODevice::bytesAvailable();
}

qint64 FdDevice::readData(char *data, qint64 maxSize) {
    if (m_headPos < m_head.size()) {
        const qint64 n = qMin<qint64>(maxSize, m_head.size() - m_headPos);
        std::memcpy(data, m_head.constData() + m_headPos, static_cast<size_t>(n));
        m_headPos += n;
        if (m_headPos == m_head.size()) {
            m_head = QByteArray();
            m_headPos = 0;
        }
        return n;
    }
    // QIODevice convention: 0 at end of file, -1 only for a real read error.
    if (m_eof)
        return m_failed ? -1 : 0;
    // Fill the whole request, as a file read would: a pipe hands out whatever the writer last wrote, and
    // the diagnoser sees lines in context best in large blocks.
    qint64 total = 0;
    while (total < maxSize && !m_eof) {
        const qint64 n = readFd(data + total, maxSize - total);
        if (n > 0)
            total += n;
    }
    if (total == 0 && m_failed)
        return -1;
    return total;
}

qint64 FdDevice::writeData(const char *, qint64) {
    return -1;
}

qint64 FdDevice::readFd(char *data, qint64 maxSize) {
    for (;;) {
        const ssize_t n = ::read(m_fd, data, static_cast<size_t>(maxSize));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            setErrorString(QString::fromLocal8Bit(std::strerror(errno)));
            m_failed = true;
        }
        if (n <= 0)
            m_eof = true;
        return n;
    }
}

} // namespace moetune::cli
