// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"

#include <QByteArrayView>
#include <QString>

namespace moetune::cli {

// stdout/stderr as UTF-8, unbuffered by Qt so output interleaves correctly with other processes.
// out() and err() show every control, bidirectional or other invisible character (an agent's or a log's
// ESC sequences, U+202E) as the visible escape \uXXXX, which is also what JSON writes for it: no host
// can clear, retitle or reorder the terminal. Only our own cursor sequences go through errControl().
class Console {
public:
    static void out(const QString &text);
    static void outBytes(QByteArrayView bytes); // already made safe (reports), or raw on purpose
    static void err(const QString &text);
    static void errControl(const QString &sequence); // "\r\x1b[K" of a progress line, nothing from a host
    static QString safe(QStringView text);
    // "moetune-cli <command>: <message>" on stderr; returns `code` (a usage error unless said otherwise).
    static int fail(const QString &command, const QString &message, int code = ExitUsage);
    static bool stdoutIsTerminal();
    static bool stderrIsTerminal();
    static bool stdinIsTerminal();
};

} // namespace moetune::cli
