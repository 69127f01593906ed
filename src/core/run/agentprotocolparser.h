// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/agentevent.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QSet>
#include <QString>

namespace moetune {

// Turns the agent's stdout bytes into events. Bytes may arrive split anywhere (partial lines across
// reads); only complete lines become events. Unknown "type"s are skipped (counted in skipped()), so a
// newer agent's additions do not break an older app; a malformed line becomes a ParseError event
// carrying the line. The protocol version is checked on the hello line. A result larger than a line
// (PROTOCOL.md "result_part") arrives as result_part lines and a result line with "result": null; the
// parser puts the parts back together and hands on that result event with its "result" filled in.
class AgentProtocolParser {
public:
    static constexpr int kProtocolVersion = 1;
    static constexpr qsizetype kMaxLineBytes =
        qsizetype{16} * 1024 * 1024; // a longer line is an error, not OOM
    static constexpr qsizetype kMaxResultBytes =
        qsizetype{64} * 1024 * 1024; // a result sent in parts: the agent's own result.json limit

    explicit AgentProtocolParser(int protocolVersion = kProtocolVersion);

    QList<AgentEvent> feed(QByteArrayView bytes);
    QList<AgentEvent> finish(); // end of stream: a trailing line without '\n' is parsed too

    static QSet<QString> knownTypes();
    bool sawHello() const { return m_sawHello; }
    int agentProtocol() const { return m_agentProtocol; }
    QString agentVersion() const { return m_agentVersion; }
    int skipped() const { return m_skipped; }

private:
    void parseLine(QByteArrayView line, QList<AgentEvent> &out);
    // A result_part line (appended; "" = taken) or a result line naming parts (*e gets the result); else
    // the sentence of what is wrong with them.
    QString takeResultPart(const QJsonObject &o);
    QString joinResultParts(AgentEvent *e);

    int m_protocol;
    QByteArray m_pending;
    bool m_overlong = false;
    qint64 m_lineNumber = 0;
    bool m_sawHello = false;
    int m_agentProtocol = 0;
    QString m_agentVersion;
    int m_skipped = 0;
    QByteArray m_resultText; // the result_part data so far
    QString m_resultRun;
    qint64 m_resultParts = 0;
};

} // namespace moetune
