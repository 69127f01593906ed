// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace moetune {

// One line of the agent's stdout, parsed (remote_agent/PROTOCOL.md). Malformed lines and protocol
// mismatches are events too (kind ParseError / VersionMismatch) so that nothing is dropped silently.
struct AgentEvent {
    enum class Kind {
        Hello,           // first line: protocol version, agent version, capabilities
        Message,         // any known type other than hello; see type
        ParseError,      // the line is not a JSON object with a string "type": error + rawLine
        VersionMismatch, // hello with a protocol this build does not speak: error + rawLine
    };
    Kind kind = Kind::Message;
    QString type;          // the "type" field ("probe", "progress", "measurement", "result", "error", ...)
    QJsonObject object;    // the whole line
    qint64 lineNumber = 0; // 1-based line on the stream
    QByteArray rawLine;    // the offending line (ParseError / VersionMismatch), capped
    QString error;         // a sentence for ParseError / VersionMismatch

    bool isError() const { return kind == Kind::ParseError || kind == Kind::VersionMismatch; }
    qint64 seq() const; // the event's "seq" (journal position, for attach --from), -1 if absent
};

} // namespace moetune
