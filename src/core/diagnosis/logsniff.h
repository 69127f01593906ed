// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayView>
#include <QString>

namespace moetune {

// Whether the head of an input is a text log at all, before it is diagnosed: the app and the CLI
// refuse compressed and binary files with the same sentence.
struct LogSniff {
    enum class Kind { Text, Gzip, Zstd, Xz, Bzip2, Binary };
    Kind kind = Kind::Text;
    qsizetype nulOffset = -1; // first NUL byte, for Binary

    // Bytes of the head that check() needs: a text log has no NUL byte in them.
    static constexpr qint64 headBytes = qint64{64} * 1024;

    static LogSniff check(QByteArrayView head);
    bool isText() const { return kind == Kind::Text; }
    // A sentence naming label ("'server.log'", "stdin") and what to do; empty for text.
    QString problem(const QString &label) const;
};

} // namespace moetune
