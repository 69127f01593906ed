#pragma once

#include "core/moe/framework.h"

#include <QByteArrayView>
#include <QString>

namespace moetune {

// What the start of a server log line says about who printed it (FORMATS.md 6).
struct LogPrefix {
    QString source;             // "TP3", "DP0 TP3", "EngineCore_DP0 pid=123", or "main" (parse() only)
    QByteArrayView sourceBytes; // the same, as bytes of the line; empty for "main"
    Framework framework = Framework::Unknown; // from the prefix's shape, when it tells
    qsizetype messageStart = 0;               // byte offset where the message starts after the prefix

    static LogPrefix parse(QByteArrayView line);
    // As parse(), without building the source string (hot path: the caller caches names).
    static LogPrefix scan(QByteArrayView line);
};

} // namespace moetune
