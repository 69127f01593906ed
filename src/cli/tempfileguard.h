// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>

namespace moetune::cli {

// A temporary file of the CLI (e.g. a fetched server log) that is removed on every way out: the
// destructor, and SIGINT / SIGTERM / SIGHUP / SIGPIPE (`moetune-cli ... | head`), whose handler unlinks
// every live guard's file and then dies of the same signal as before. A SIGKILL cannot be caught, so where
// /proc/self/fd exists (Linux) the file has no name at all: it is unlinked as soon as it is created and
// reached as /proc/self/fd/N while the guard holds N open; when the process ends, however it ends, the
// kernel frees it and nothing is left in TMPDIR.
class TempFileGuard {
public:
    // pattern: a path whose name holds XXXXXX, optionally followed by a suffix ("/tmp/log-XXXXXX.log").
    explicit TempFileGuard(QString pattern);
    ~TempFileGuard();
    TempFileGuard(const TempFileGuard &) = delete;
    TempFileGuard &operator=(const TempFileGuard &) = delete;

    // Creates the file (exclusively, mode 0600); false with *error set.
    bool create(QString *error);
    QString path() const { return m_path; }

private:
    QString m_pattern;
    QString m_path;
    int m_slot = -1;
    int m_fd = -1; // held open: the only way to the unlinked file
};

} // namespace moetune::cli
