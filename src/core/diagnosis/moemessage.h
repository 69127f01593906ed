// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <optional>

namespace moetune {

// One MoE-config line of an SGLang or vLLM log (docs/servers.md section 1), recognised in a cleaned line.
struct MoeMessage {
    enum class Kind {
        DefaultKernelConfig, // SGLang: "Using default MoE kernel config. ... Config file not found at P"
        DefaultConfig,       // older SGLang and vLLM: "Using default MoE config. ... not found at P[, P2]"
        Fallback,            // SGLang: "... not found at P. Fallback to triton version V and use ... from F"
        DownMissing,         // SGLang: "Using MoE kernel config with down_moe=False. ... not found at P"
        DownReusesUp,    // SGLang: "Down MoE config file not found at P; reusing the tuned up-projection ..."
        BlockFp8Default, // "Using default W8A8 Block FP8 kernel config. ... not found at P"
        Deterministic,   // SGLang: "Deterministic inference is enabled, using default MoE kernel config."
        ConfigUsed,      // SGLang: "Using MoE kernel config from P."
        ConfigUsedVllm,  // vLLM: "Using configuration from P for MoE layer."
        DefaultNoPath,   // "Using default MoE kernel config. Performance might be sub-optimal!" alone
    };
    Kind kind = Kind::DefaultKernelConfig;
    QString path;            // the file the server wanted (or used, for ConfigUsed*)
    QString path2;           // vLLM's second searched path, when two are printed
    QString fallbackVersion; // "3.4.0"
    QString fallbackPath;
    qsizetype matchStart = 0;
    qsizetype matchLength = 0;

    static std::optional<MoeMessage> parse(const QString &line);
    // Whether the message parsed from `text` (the cleaned line `bytes`) is the server's own log line: it
    // starts the message after the line's prefix (docs/servers.md section 6), with only the server's header
    // in between (level, date, time, "[file.py:123]", a syslog head), not text quoted inside another message
    // (a logged request: "Receive: obj=GenerateReqInput(text='Using default MoE config...").
    static bool isServerMessage(QByteArrayView bytes, const QString &text, const MoeMessage &msg);
    // The byte literals that every such line contains one of (the reader's prefilter).
    static const QList<QByteArray> &literals();
    // Whether a cleaned line stops inside one of these messages (a terminal wrapped it).
    static bool looksIncomplete(QByteArrayView cleaned);
    // Rejoins a line a terminal wrapped with its continuation, as the server printed it: no space
    // inside a path or a cut word, a space between two whole words whose separator a copy dropped.
    static QByteArray joinWrapped(QByteArrayView first, QByteArrayView next);
};

} // namespace moetune
