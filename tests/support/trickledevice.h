// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QIODevice>

#include <cstring>

namespace moetune::test {

// A sequential device that hands out at most `chunk` bytes per read, so stream reading is exercised at
// every possible chunk boundary (a CRLF, a UTF-8 sequence or an ANSI escape split in two).
class TrickleDevice : public QIODevice {
public:
    TrickleDevice(QByteArray data, qint64 chunk)
        : m_data(std::move(data))
        , m_chunk(chunk) {
        open(QIODevice::ReadOnly | QIODevice::Unbuffered);
    }
    bool isSequential() const override { return true; }
    bool atEnd() const override { return m_pos >= m_data.size(); }
    qint64 bytesAvailable() const override { return m_data.size() - m_pos; }

protected:
    qint64 readData(char *out, qint64 maxSize) override {
        if (m_pos >= m_data.size())
            return 0; // end of data (-1 would mean a read error)
        const qint64 n = qMin(qMin(maxSize, m_chunk), m_data.size() - m_pos);
        std::memcpy(out, m_data.constData() + m_pos, static_cast<size_t>(n));
        m_pos += n;
        return n;
    }
    qint64 writeData(const char *, qint64) override { return -1; }

private:
    QByteArray m_data;
    qint64 m_chunk;
    qint64 m_pos = 0;
};

} // namespace moetune::test
