// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QIODevice>

namespace moetune::cli {

// A file descriptor (stdin, a pipe, a FIFO) as a sequential QIODevice that reads until end of file (a
// pipe that is momentarily empty is not the end) and can look at the head of the stream before the
// diagnoser consumes it.
class FdDevice : public QIODevice {
    Q_OBJECT
public:
    // Takes ownership of `fd` (closes it) when `owned`.
    explicit FdDevice(int fd, bool owned, QObject *parent = nullptr);
    ~FdDevice() override;

    // Reads until `size` bytes or end of file, and keeps them for the next reads.
    QByteArray head(qint64 size);

    bool isSequential() const override { return true; }
    bool atEnd() const override;
    qint64 bytesAvailable() const override;

protected:
    qint64 readData(char *data, qint64 maxSize) override;
    qint64 writeData(const char *data, qint64 maxSize) override;

private:
    qint64 readFd(char *data, qint64 maxSize);

    QByteArray m_head;
    qint64 m_headPos = 0;
    bool m_eof = false;
    bool m_failed = false;
    int m_fd;
    bool m_owned;
};

} // namespace moetune::cli
