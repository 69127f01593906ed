// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/diagnosisbuilder.h"
#include "core/moe/precompiledregex.h"

#include "core/diagnosis/findingwording.h"
#include "core/diagnosis/logpath.h"
#include "core/diagnosis/logprefix.h"
#include "core/diagnosis/moekernelverdict.h"
#include "core/diagnosis/moerule.h"
#include "core/diagnosis/serverevent.h"

#include <QRegularExpression>

#include <algorithm>
#include <limits>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// Evidence text is cut to this many characters around the match.
constexpr qsizetype maxEvidenceChars = 2000;

// The last up-to-n lines of raw text, cleaned, oldest first.
QList<QByteArray> lastLines(QByteArrayView before, int n) {
    QList<QByteArray> out;
    if (before.endsWith('\n'))
        before.chop(1);
    while (n-- > 0 && !before.isEmpty()) {
        const qsizetype nl = before.lastIndexOf('\n');
        out.prepend(LogReader::cleanLine(before.sliced(nl + 1)));
        if (nl < 0)
            break;
        before.truncate(nl);
    }
    return out;
}

} // namespace

DiagnosisBuilder::DiagnosisBuilder(const RuleSet &rules)
    : m_rules(rules)
    , m_lineSearcher(literals()) {
    const QList<QByteArray> &unique = m_lineSearcher.literals();
    m_rulesByLiteral.resize(unique.size());
    for (qsizetype i = 0; i < unique.size(); ++i) {
        const int bit = static_cast<int>(std::min<qsizetype>(i, 63));
        if (MoeMessage::literals().contains(unique[i]))
            m_moeBits |= quint64(1) << bit;
        if (ServerEvent::literals().contains(unique[i]))
            m_serverBits |= quint64(1) << bit;
        for (const Rule &r : m_rules.rules()) {
            if (r.prefilter == unique[i])
                m_rulesByLiteral[i].append(&r);
        }
    }
}

QList<QByteArray> DiagnosisBuilder::literals() const {
    QList<QByteArray> out = MoeMessage::literals();
    out.append(ServerEvent::literals());
    for (const Rule &r : m_rules.rules())
        out.append(r.prefilter);
    return out;
}

void DiagnosisBuilder::addRecords(const LogReader::Hit &hit, const QList<qsizetype> &starts) {
    for (qsizetype k = 0; k <= starts.size(); ++k) {
        const qsizetype from = k == 0 ? 0 : starts[k - 1];
        const qsizetype to = k == starts.size() ? hit.text.size() : starts[k];
        LogReader::Hit record = hit;
        record.text = hit.text.sliced(from, to - from).trimmed();
        const quint64 present = m_lineSearcher.presentIn(record.text);
        if (present & m_moeBits) {
            const QString text = QString::fromUtf8(record.text);
            std::optional<MoeMessage> msg = MoeMessage::parse(text);
            if (msg && MoeMessage::isServerMessage(record.text, text, *msg))
                handleMoe(*msg, text, record.text, hit.line);
        }
        finishHit(record, present);
    }
}

void DiagnosisBuilder::addHit(const LogReader::Hit &hit) {
    if (hit.line <= m_consumedThrough)
        return; // already read as the continuation of a wrapped line
    // A paste that lost its newlines: every record of the line on its own, as the server printed it.
    if (const QList<qsizetype> starts = LogPrefix::recordStartsWithin(hit.text); !starts.isEmpty()) {
        addRecords(hit, starts);
        return;
    }
    const quint64 present = m_lineSearcher.presentIn(hit.text);
    if (present & m_moeBits) {
        QByteArray joined = hit.text;
        int extra = 0;
        QByteArrayView after = hit.after;
        while (extra < 4 && !after.isEmpty() && MoeMessage::looksIncomplete(joined)) {
            const qsizetype nl = after.indexOf('\n');
            const QByteArray next = LogReader::cleanLine(nl < 0 ? after : after.first(nl));
            if (LogPrefix::startsRecord(next))
                break; // the next line is a record of its own, not the rest of this one
            joined = MoeMessage::joinWrapped(joined, LogPrefix::continuation(next));
            ++extra;
            if (nl < 0)
                break;
            after = after.sliced(nl + 1);
        }
        QString text = QString::fromUtf8(joined);
        // Only the server's own line counts, not the same words quoted inside another message.
        auto ownMessage = [](const QByteArray &bytes, const QString &str) {
            std::optional<MoeMessage> m = MoeMessage::parse(str);
            if (m && !MoeMessage::isServerMessage(bytes, str, *m))
                m.reset();
            return m;
        };
        std::optional<MoeMessage> msg = ownMessage(joined, text);
        qint64 line = hit.line;
        if (!msg) { // the message may have started on a line the terminal wrapped before this one
            const QList<QByteArray> previous = lastLines(hit.before, 3);
            QByteArray prefix;
            for (qsizetype k = previous.size() - 1; k >= 0 && !msg && !LogPrefix::startsRecord(joined); --k) {
                prefix = prefix.isNull() ? previous[k] : MoeMessage::joinWrapped(previous[k], prefix);
                const QByteArray candidate = MoeMessage::joinWrapped(prefix, LogPrefix::continuation(joined));
                const QString candidateText = QString::fromUtf8(candidate);
                msg = ownMessage(candidate, candidateText);
                if (msg) {
                    line = hit.line - (previous.size() - k);
                    joined = candidate;
                    text = candidateText;
                }
            }
        }
        if (msg) {
            m_consumedThrough = hit.line + extra;
            handleMoe(*msg, text, joined, line);
        }
    }
    finishHit(hit, present);
}

void DiagnosisBuilder::finishHit(const LogReader::Hit &hit, quint64 present) {
    if (present & m_serverBits) {
        if (const std::optional<ServerEvent> event = ServerEvent::parse(hit.text))
            handleServerEvent(*event, hit);
    }
    applyRules(hit.text, hit.line, present & ~(m_moeBits | m_serverBits));
}

void DiagnosisBuilder::handleServerEvent(const ServerEvent &event, const LogReader::Hit &hit) {
    const LogPrefix prefix = LogPrefix::parse(hit.text);
    std::optional<LogTime> time = LogTime::parse(prefix.time);
    bool fromEarlierLine = false;
    if (!time) { // uvicorn's line has no time of its own: the nearest line before it that has one
        const QList<QByteArray> previous = lastLines(hit.before, 5);
        for (qsizetype k = previous.size() - 1; k >= 0 && !time; --k)
            time = LogTime::parse(LogPrefix::scan(previous[k]).time);
        fromEarlierLine = time.has_value();
    }
    if (event.kind == ServerEvent::Kind::Start) {
        if (m_segments.size() > 2 * kMaxStartsKept + 1)
            pruneSegments(true); // memory follows the starts shown, not the restarts read
        Segment &seg = m_segments.emplace_back();
        seg.startLine = hit.line;
        seg.startTime = time;
        seg.framework = event.framework;
        // SGLang's server_args names the model: model_path='Qwen/Qwen3-30B-A3B' (K and top-k come from it).
        static const QRegularExpression modelPath(u"\\bmodel_path='([^']{1,512})'"_s);
        if (const auto m = modelPath.match(QString::fromUtf8(hit.text)); m.hasMatch())
            seg.model = m.captured(1);
    } else {
        Segment &seg = m_segments.back();
        if (seg.servingLine == 0)
            seg.servingLine = hit.line;
        if (event.strength > seg.readyStrength) {
            seg.readyStrength = event.strength;
            seg.readyLine = hit.line;
            seg.readyTime = time;
            seg.readyTimeFromEarlierLine = fromEarlierLine;
        }
        if (seg.framework == Framework::Unknown)
            seg.framework = event.framework;
    }
    if (m_segments.back().framework == Framework::Unknown && prefix.framework != Framework::Unknown)
        m_segments.back().framework = prefix.framework;
    bool created = false;
    Entry &e = entry(u"server-start"_s, u"server-start"_s, Severity::Info, &created);
    e.serverStart = true;
    const QString text = QString::fromUtf8(hit.text);
    // Evidence offsets count UTF-16 units; the event's count bytes.
    const qsizetype start = QString::fromUtf8(QByteArrayView(hit.text).first(event.matchStart)).size();
    const qsizetype length =
        QString::fromUtf8(QByteArrayView(hit.text).sliced(event.matchStart, event.matchLength)).size();
    addEvidence(e, hit.line, text, start, length, prefix.source);
}

void DiagnosisBuilder::applyRules(const QByteArray &text, qint64 line, quint64 present) {
    QString str;
    std::optional<LogPrefix> prefix;
    for (qsizetype i = 0; i < m_rulesByLiteral.size() && present != 0; ++i) {
        const quint64 bit = quint64(1) << std::min<qsizetype>(i, 63);
        if (!(present & bit))
            continue;
        if (i < 63)
            present &= ~bit;
        for (const Rule *rule : m_rulesByLiteral[i]) {
            if (i >= 63 && !text.contains(rule->prefilter))
                continue;
            if (!m_outOfBudget.isEmpty() && m_outOfBudget.contains(rule))
                continue;
            if (str.isNull())
                str = QString::fromUtf8(text);
            const QRegularExpressionMatch m = rule->pattern.match(str);
            if (!m.isValid()) { // out of its match budget (Rule::kMatchBudget): named, then left out
                m_outOfBudget.insert(rule);
                bool made = false;
                Entry &b = entry(u"rule-budget-"_s + rule->id, u"rule-budget"_s, Severity::Warning, &made);
                b.finding.title = rule->budgetTitle();
                b.finding.explanation = rule->budgetExplanation();
                addEvidence(b, line, str, 0, 0, QString());
                continue;
            }
            if (!m.hasMatch())
                continue;
            if (!prefix) {
                prefix = LogPrefix::scan(text);
                m_frameworkVotes[static_cast<size_t>(prefix->framework)]++;
            }
            bool created = false;
            if (!rule->moeKernel.isEmpty()) { // one finding per start, whichever line names the kernel
                const MoeRuleRow &kernel = MoeRules::row(MoeRule::Kernel);
                Entry &k = entry(kernel.id, kernel.id, kernel.severity, &created);
                addKernel(m_segments.back(),
                          {Rule::expand(rule->moeKernel, m), Rule::expand(rule->moeScheme, m),
                           Rule::expand(rule->moeLayers, m), Rule::expand(rule->moeN, m).toInt(),
                           Rule::expand(rule->explanation, m), line});
                if (k.finding.evidence.isEmpty() ||
                    k.finding.evidence.back().line != line) // one line, 2 rules
                    addEvidence(k, line, str, m.capturedStart(0), m.capturedLength(0),
                                sourceName(prefix->sourceBytes));
                continue;
            }
            Entry &e = entry(rule->id, rule->id, rule->severity, &created);
            if (created)
                e.rule = rule;
            // A quote-last rule quotes each match until the server serves (its startup figure settles).
            if (created || (rule->quoteLast && m_segments.back().servingLine == 0)) {
                e.quoteLine = line;
                e.finding.title = Rule::expand(rule->title, m);
                e.finding.explanation = Rule::expand(rule->explanation, m);
                e.finding.advice = Rule::expand(rule->advice, m);
            }
            addEvidence(e, line, str, m.capturedStart(0), m.capturedLength(0),
                        sourceName(prefix->sourceBytes));
        }
    }
}

const QString &DiagnosisBuilder::sourceName(QByteArrayView bytes) {
    for (const auto &[key, name] : std::as_const(m_sourceNames)) {
        if (key == bytes)
            return name;
    }
    if (m_sourceNames.size() >= 64)
        m_sourceNames.removeFirst();
    const QString name = bytes.isEmpty() ? u"main"_s : QString::fromUtf8(bytes).simplified();
    m_sourceNames.append({bytes.toByteArray(), name});
    return m_sourceNames.back().second;
}

DiagnosisBuilder::Entry &DiagnosisBuilder::entry(const QString &id, const QString &ruleId, Severity severity,
                                                 bool *created) {
    const int segment = int(m_segments.size()) - 1;
    const auto it = m_index.constFind({id, segment});
    if (it != m_index.constEnd()) {
        *created = false;
        return m_entries[*it];
    }
    *created = true;
    m_index.insert({id, segment}, m_entries.size());
    Entry &e = m_entries.emplace_back();
    e.segment = segment;
    e.finding.id = id;
    e.finding.rule = ruleId;
    e.finding.severity = severity;
    return e;
}

void DiagnosisBuilder::addEvidence(Entry &e, qint64 line, const QString &text, qsizetype start,
                                   qsizetype length, const QString &source) {
    if (e.finding.occurrences == 0)
        e.firstLine = line;
    ++e.finding.occurrences;
    if (!source.isEmpty() && !e.sourceSet.contains(source))
        e.sourceSet.insert(source);
    if (!e.finding.evidence.isEmpty() && e.finding.evidence.back().line == line)
        return;
    // The first lines and the latest ones: the one in the middle makes room (and is counted).
    if (e.finding.evidence.size() >= Finding::maxEvidence) {
        e.finding.evidence.removeAt(Finding::headEvidence);
        ++e.finding.evidenceOmitted;
    }
    Evidence ev;
    ev.line = line;
    ev.matchStart = start;
    ev.matchLength = length;
    if (text.size() > maxEvidenceChars) { // keep a window around the match of a huge line
        const qsizetype from = std::clamp<qsizetype>(start - maxEvidenceChars / 4, 0, text.size());
        ev.text = text.mid(from, maxEvidenceChars);
        ev.matchStart = start - from;
        ev.matchLength = std::min(length, ev.text.size() - ev.matchStart);
    } else {
        ev.text = text;
    }
    e.finding.evidence.append(ev);
}

} // namespace moetune
