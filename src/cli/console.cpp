// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/console.h"

#include <QString>

#include <cstdio>
#include <unistd.h>

namespace moetune::cli {

namespace {
void write(std::FILE *stream, QByteArrayView bytes) {
    if (!bytes.isEmpty())
        std::fwrite(bytes.data(), 1, static_cast<size_t>(bytes.size()), stream);
    std::fflush(stream);
}
} // namespace

void Console::out(const QString &text) {
    write(stdout, text.toUtf8());
}

void Console::outBytes(QByteArrayView bytes) {
    write(stdout, bytes);
}

void Console::err(const QString &text) {
    write(stderr, text.toUtf8());
}

bool Console::stdoutIsTerminal() {
    return isatty(STDOUT_FILENO) == 1;
}

bool Console::stderrIsTerminal() {
    return isatty(STDERR_FILENO) == 1;
}

bool Console::stdinIsTerminal() {
    return isatty(STDIN_FILENO) == 1;
}

} // namespace moetune::cli
