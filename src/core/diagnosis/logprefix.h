// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/framework.h"

#include <QByteArrayView>
#include <QList>
#include <QString>

namespace moetune {

// What the start of a server log line says about who printed it and when (docs/servers.md section 6):
// SGLang's "[date time TPn]", vLLM's "(Proc pid=N) LEVEL MM-DD time" (nested process prefixes: the innermost
// names the rank) and its older "LEVEL MM-DD time file:line]", wrapper tags ("[Stage-1]"), bare rank
// tags ("[TP7]", "TP7[]"), Python logging ("WARNING:sglang.x:"), Rust tracing ("<iso> WARN target:"),
// container runtimes ("<iso> stdout F ", "docker logs -t") and a progress bar glued in front.
struct LogPrefix {
    QString source;             // "TP3", "DP0 TP3", "EngineCore_DP0 pid=123", or "main" (parse() only)
    QByteArrayView sourceBytes; // the same, as bytes of the line; empty for "main"
    QByteArrayView time;        // "2026-03-14 09:12:50", "03-14 09:12:50", ISO 8601; empty if none
    Framework framework = Framework::Unknown; // from the prefix's shape, when it tells
    qsizetype messageStart = 0;               // byte offset where the message starts after the prefix
    bool recognised = false;                  // some prefix form was read

    static LogPrefix parse(QByteArrayView line);
    // As parse(), without building the source string (hot path: the caller caches names).
    static LogPrefix scan(QByteArrayView line);
    // The line begins with a prefix of its own (so it is no terminal-wrapped continuation).
    static bool startsRecord(QByteArrayView line);
    // Where further records start inside one line whose newlines a paste lost, in order (never 0). A
    // record is told from a quote by its shape, not its column: vLLM's "(Proc pid=N) LEVEL MM-DD HH:MM:SS
    // [file.py:N]" or "LEVEL MM-DD HH:MM:SS [file.py:N]" after a blank, SGLang's "[YYYY-MM-DD HH:MM:SS
    // ...]", outside any quote or parenthesis that the text since the previous record opened.
    static QList<qsizetype> recordStartsWithin(QByteArrayView line);
    // A continuation line without the container runtime's prefix ("<iso> stdout P ") in front.
    static QByteArrayView continuation(QByteArrayView line);
};

} // namespace moetune
