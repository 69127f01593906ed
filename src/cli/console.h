// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayView>
#include <QString>

namespace moetune::cli {

// stdout/stderr as UTF-8, unbuffered by Qt so output interleaves correctly with other processes.
class Console {
public:
    static void out(const QString &text);
    static void outBytes(QByteArrayView bytes);
    static void err(const QString &text);
    static bool stdoutIsTerminal();
    static bool stderrIsTerminal();
    static bool stdinIsTerminal();
};

} // namespace moetune::cli
