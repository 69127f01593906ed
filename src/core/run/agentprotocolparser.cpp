// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/agentprotocolparser.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QJsonParseError>

#include <utility>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {
constexpr qsizetype kShownLineBytes = 4096; // an error shows at most this much of the offending line
}

AgentProtocolParser::AgentProtocolParser(int protocolVersion)
    : m_protocol(protocolVersion) {}

QSet<QString> AgentProtocolParser::knownTypes() {
    static const QSet<QString> types{u"hello"_s,    u"done"_s,        u"error"_s,
                                     u"log"_s,      u"probe"_s,       u"run_started"_s,
                                     u"phase"_s,    u"measurement"_s, u"candidate_error"_s,
                                     u"progress"_s, u"best"_s,        u"result_written"_s,
                                     u"run"_s,      u"cancelled"_s,   u"result"_s,
                                     u"diff"_s,     u"installed"_s,   u"result_part"_s};
    // the headroom check (issue 19)
    static const QSet<QString> all =
        types + QSet<QString>{u"headroom_started"_s, u"headroom_size"_s, u"headroom"_s,
                              u"imported"_s}; // import-run (issue 46: a fleet's result made a run of a host)
    return all;
}

QList<AgentEvent> AgentProtocolParser::feed(QByteArrayView bytes) {
    QList<AgentEvent> out;
    while (!bytes.isEmpty()) {
        const qsizetype nl = bytes.indexOf('\n');
        const QByteArrayView piece = nl < 0 ? bytes : bytes.first(nl);
        if (m_overlong) {
            // keep only the head of an overlong line: enough to show it, bounded memory
        } else if (m_pending.size() + piece.size() > kMaxLineBytes) {
            m_overlong = true;
            m_pending.append(piece.first(qMin(piece.size(), kShownLineBytes)));
        } else {
            m_pending.append(piece);
        }
        if (nl < 0)
            break;
        parseLine(m_pending, out);
        m_pending.clear();
        m_overlong = false;
        bytes = bytes.sliced(nl + 1);
    }
    return out;
}

QList<AgentEvent> AgentProtocolParser::finish() {
    QList<AgentEvent> out;
    if (!m_pending.isEmpty() || m_overlong)
        parseLine(m_pending, out);
    m_pending.clear();
    m_overlong = false;
    return out;
}

void AgentProtocolParser::parseLine(QByteArrayView line, QList<AgentEvent> &out) {
    ++m_lineNumber;
    if (line.endsWith('\r'))
        line.chop(1);
    auto error = [&](AgentEvent::Kind kind, const QString &why) {
        AgentEvent e;
        e.kind = kind;
        e.lineNumber = m_lineNumber;
        e.rawLine = line.first(qMin(line.size(), kShownLineBytes)).toByteArray();
        e.error = why;
        out.append(e);
    };
    if (m_overlong) {
        error(
            AgentEvent::Kind::ParseError,
            u"Agent output line %1 is longer than %2 MB, more than moetune reads as one line: it was skipped."_s
                .arg(m_lineNumber)
                .arg(kMaxLineBytes >> 20));
        return;
    }
    if (line.trimmed().isEmpty()) {
        error(
            AgentEvent::Kind::ParseError,
            u"Agent output line %1 is empty; the protocol has one JSON object per line."_s.arg(m_lineNumber));
        return;
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(line.toByteArray(), &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
        error(AgentEvent::Kind::ParseError,
              u"Agent output line %1 is not a JSON object (%2): %3"_s.arg(m_lineNumber)
                  .arg(pe.error != QJsonParseError::NoError ? pe.errorString() : u"not an object"_s,
                       QString::fromUtf8(line.first(qMin(line.size(), qsizetype(200))))));
        return;
    }
    const QJsonObject o = doc.object();
    const QJsonValue type = o.value("type"_L1);
    if (!type.isString()) {
        error(AgentEvent::Kind::ParseError,
              u"Agent output line %1 has no string \"type\": %2"_s.arg(m_lineNumber)
                  .arg(QString::fromUtf8(line.first(qMin(line.size(), qsizetype(200))))));
        return;
    }
    AgentEvent e;
    e.type = type.toString();
    e.object = o;
    e.lineNumber = m_lineNumber;
    if (e.type == "hello"_L1) {
        const QJsonValue protocol = o.value("protocol"_L1);
        m_sawHello = true;
        m_agentProtocol = protocol.toInt();
        m_agentVersion = o.value("agent_version"_L1).toString();
        if (!protocol.isDouble()) {
            error(AgentEvent::Kind::VersionMismatch, u"The agent's hello line names no protocol version."_s);
            return;
        }
        if (m_agentProtocol != m_protocol) {
            error(
                AgentEvent::Kind::VersionMismatch,
                m_agentProtocol > m_protocol
                    ? u"The agent speaks protocol %1 but this moetune speaks %2: update moetune, or deploy the agent that came with it."_s
                          .arg(m_agentProtocol)
                          .arg(m_protocol)
                    : u"The agent speaks protocol %1 but this moetune speaks %2: deploy the agent that came with this moetune."_s
                          .arg(m_agentProtocol)
                          .arg(m_protocol));
            return;
        }
        e.kind = AgentEvent::Kind::Hello;
        out.append(e);
        return;
    }
    if (!knownTypes().contains(e.type)) {
        ++m_skipped; // a newer agent's event type: not an error (PROTOCOL.md versioning rules)
        return;
    }
    if (e.type == "result_part"_L1) {
        if (const QString why = takeResultPart(o); !why.isEmpty())
            error(AgentEvent::Kind::ParseError, u"Agent output line %1: %2"_s.arg(m_lineNumber).arg(why));
        return;
    }
    if (e.type == "result"_L1 && o.contains("parts"_L1)) {
        if (const QString why = joinResultParts(&e); !why.isEmpty()) {
            error(AgentEvent::Kind::ParseError, u"Agent output line %1: %2"_s.arg(m_lineNumber).arg(why));
            return;
        }
    }
    out.append(e);
}

QString AgentProtocolParser::takeResultPart(const QJsonObject &o) {
    const qint64 index = o.value("index"_L1).toInteger(-1);
    const QString run = o.value("run_id"_L1).toString();
    if (index != m_resultParts || (index > 0 && run != m_resultRun)) {
        m_resultText.clear();
        m_resultParts = 0;
        return u"result part %1 of run %2 came out of order (expected part %3)."_s.arg(index).arg(run).arg(
            m_resultParts);
    }
    const QByteArray data = o.value("data"_L1).toString().toLatin1();
    if (m_resultText.size() + data.size() > kMaxResultBytes) {
        m_resultText.clear();
        m_resultParts = 0;
        return u"the result of run %1 is larger than %2 MiB."_s.arg(run).arg(kMaxResultBytes >> 20);
    }
    m_resultRun = run;
    m_resultText.append(data);
    ++m_resultParts;
    return {};
}

QString AgentProtocolParser::joinResultParts(AgentEvent *e) {
    const QByteArray text = std::exchange(m_resultText, QByteArray());
    const qint64 parts = std::exchange(m_resultParts, 0);
    const QJsonObject &o = e->object;
    const QString run = o.value("run_id"_L1).toString();
    if (o.value("parts"_L1).toInteger(-1) != parts || (parts > 0 && run != m_resultRun) ||
        o.value("chars"_L1).toInteger(-1) != text.size())
        return u"the result of run %1 came incomplete: %2 of %3 parts, %4 of %5 characters."_s.arg(run)
            .arg(parts)
            .arg(o.value("parts"_L1).toInteger())
            .arg(text.size())
            .arg(o.value("chars"_L1).toInteger());
    if (QCryptographicHash::hash(text, QCryptographicHash::Sha256).toHex() !=
        o.value("sha256"_L1).toString().toLatin1())
        return u"the result of run %1 came damaged: its parts do not match their SHA-256."_s.arg(run);
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(text, &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject())
        return u"the result of run %1, put together from its parts, is not a JSON object (%2)."_s.arg(
            run, pe.errorString());
    e->object.insert("result"_L1, doc.object());
    return {};
}

} // namespace moetune
