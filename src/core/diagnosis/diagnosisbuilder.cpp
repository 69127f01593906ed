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

// "TP2" < "TP10": compare digit runs as numbers.
bool naturalLess(const QString &a, const QString &b) {
    qsizetype i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (a[i].isDigit() && b[j].isDigit()) {
            qsizetype ie = i, je = j;
            while (ie < a.size() && a[ie].isDigit())
                ++ie;
            while (je < b.size() && b[je].isDigit())
                ++je;
            const qulonglong na = QStringView(a).sliced(i, std::min<qsizetype>(ie - i, 18)).toULongLong();
            const qulonglong nb = QStringView(b).sliced(j, std::min<qsizetype>(je - j, 18)).toULongLong();
            if (na != nb)
                return na < nb;
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j])
            return a[i] < b[j];
        ++i;
        ++j;
    }
    return a.size() - i < b.size() - j;
}

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

Framework DiagnosisBuilder::frameworkFor(const MoeMessage &msg, Framework prefixFramework) const {
    switch (msg.kind) {
    case MoeMessage::Kind::DefaultKernelConfig:
    case MoeMessage::Kind::Fallback:
    case MoeMessage::Kind::DownMissing:
    case MoeMessage::Kind::DownReusesUp:
    case MoeMessage::Kind::Deterministic:
    case MoeMessage::Kind::ConfigUsed:
        return Framework::SGLang; // wordings only SGLang prints
    case MoeMessage::Kind::ConfigUsedVllm:
        return Framework::VLLM;
    case MoeMessage::Kind::DefaultConfig:
    case MoeMessage::Kind::BlockFp8Default:
    case MoeMessage::Kind::DefaultNoPath:
        break;
    }
    // Old SGLang and vLLM share the wording: the path, the prefix or the name's dialect tells them apart.
    const QString lower = msg.path.toLower();
    if (lower.contains(u"/sglang/"_s) || lower.contains(u"\\sglang\\"_s))
        return Framework::SGLang;
    if (lower.contains(u"/vllm/"_s) || lower.contains(u"\\vllm\\"_s) || !msg.path2.isEmpty())
        return Framework::VLLM;
    if (prefixFramework != Framework::Unknown)
        return prefixFramework;
    if (const auto name = ConfigName::parse(msg.path)) {
        if (name->down || name->perChannelQuant || msg.path.contains(u"[128, "_s) ||
            msg.path.contains(u", 128]"_s))
            return Framework::SGLang;
        if (name->blockShape)
            return Framework::VLLM;
    }
    return Framework::Unknown;
}

std::optional<TuningTarget> DiagnosisBuilder::denseTargetFor(const QString &path, Framework framework) {
    // "N=<n>,K=<k>,device_name=<dev>,dtype=fp8_w8a8,block_shape=[128, 128].json" (docs/servers.md section 1)
    static const QRegularExpression re = precompiledRegex(
        u"^N=(\\d+),K=(\\d+),device_name=(.*?)(?:,dtype=([A-Za-z0-9_]+))?(?:,block_shape=\\[(\\d+), ?(\\d+)\\])?\\.json$"_s);
    const QRegularExpressionMatch m = re.match(fileNameOf(path));
    if (!m.hasMatch())
        return std::nullopt;
    TuningTarget t;
    t.kernel = TuningTarget::Kernel::BlockFp8Gemm;
    t.framework = framework;
    t.name.n = m.captured(1).toInt();
    t.denseK = m.captured(2).toInt();
    t.name.deviceName = m.captured(3);
    t.name.dtype = m.captured(4);
    if (m.capturedLength(5) > 0)
        t.name.blockShape = std::array<int, 2>{m.captured(5).toInt(), m.captured(6).toInt()};
    t.configRoot = folderOf(path);
    return t;
}

std::optional<TuningTarget> DiagnosisBuilder::targetFor(const QString &path, Framework framework) const {
    // A name a paste shortened: a target only where every part of the name is printed (the folder may be
    // cut: then it is not known, never guessed); an unreadable GPU name is no target (docs/servers.md 1).
    const std::optional<PartialConfigName> partial = PartialConfigName::parse(path);
    std::optional<ConfigName> name = partial ? partial->whole() : ConfigName::parse(path);
    if (!name)
        return std::nullopt;
    TuningTarget t;
    t.framework = framework;
    t.name = *name;
    t.name.down = false;
    const QString dir = folderOf(path);
    static const QRegularExpression tritonFolderRe = precompiledRegex(u"^triton_\\d+_\\d+(?:_\\d+)?$"_s);
    const QString last = fileNameOf(dir);
    if (tritonFolderRe.match(last).hasMatch()) {
        t.tritonFolder = last;
        t.tritonVersion = TritonVersion::parse(last);
        t.configRoot = folderOf(dir);
    } else {
        t.configRoot = dir;
    }
    if (partial && partial->folderElided)
        t.configRoot.clear(); // "/.../configs": the paste cut where the server looks
    return t;
}

void DiagnosisBuilder::handleMoe(const MoeMessage &msg, const QString &text, QByteArrayView bytes,
                                 qint64 line) {
    const LogPrefix prefix = LogPrefix::parse(bytes);
    m_frameworkVotes[static_cast<size_t>(prefix.framework)]++;
    const Framework framework = frameworkFor(msg, prefix.framework);
    QString id;
    MoeRule rule = MoeRule::Untuned;
    std::optional<TuningTarget> target;
    switch (msg.kind) {
    case MoeMessage::Kind::Deterministic:
        rule = MoeRule::DeterministicDefault;
        id = MoeRules::id(rule);
        break;
    case MoeMessage::Kind::ConfigUsed:
    case MoeMessage::Kind::ConfigUsedVllm:
        // One finding per shape (up and down loads merged), with the ranks that loaded it.
        rule = MoeRule::ConfigUsed;
        target = targetFor(msg.path, framework);
        m_segments.back().loadedFolders.insert(folderOf(msg.path));
        break;
    case MoeMessage::Kind::DefaultNoPath:
        rule = MoeRule::UntunedNoPath;
        id = MoeRules::id(rule);
        break;
    case MoeMessage::Kind::BlockFp8Default:
        rule = MoeRule::BlockFp8Untuned;
        id = MoeRules::id(rule) + u':' + fileNameOf(msg.path);
        target = denseTargetFor(msg.path, framework);
        break;
    case MoeMessage::Kind::Fallback:
        rule = MoeRule::Fallback;
        target = targetFor(msg.path, framework);
        m_segments.back().loadedFolders.insert(folderOf(msg.fallbackPath));
        break;
    case MoeMessage::Kind::DownReusesUp:
        m_segments.back().loadedFolders.insert(
            folderOf(msg.path)); // the tuned up file of this folder was loaded
        [[fallthrough]];
    case MoeMessage::Kind::DownMissing:
        rule = MoeRule::DownMissing;
        target = targetFor(msg.path, framework);
        break;
    case MoeMessage::Kind::DefaultKernelConfig:
    case MoeMessage::Kind::DefaultConfig:
        // A default-config warning naming the _down file is a missing down config of that shape too.
        rule =
            ConfigName::parse(msg.path).value_or(ConfigName{}).down ? MoeRule::DownMissing : MoeRule::Untuned;
        target = targetFor(msg.path, framework);
        break;
    }
    const QString ruleId = MoeRules::id(rule);
    const Severity severity = MoeRules::row(rule).severity;
    if (id.isEmpty()) {
        // One finding per wanted file (and so per shape, up and down apart), whatever the rank.
        const std::optional<ConfigName> name = ConfigName::parse(msg.path);
        const Framework dialect = framework == Framework::VLLM ? Framework::VLLM : Framework::SGLang;
        ConfigName idName = name.value_or(ConfigName{});
        if (rule == MoeRule::ConfigUsed)
            idName.down = false; // up and down loads of one shape are one finding
        id = ruleId + u':' + (name ? idName.fileName(dialect) : fileNameOf(msg.path));
        if (target && !target->installFolder().isEmpty())
            id += u'@' + target->installFolder();
    }
    // One finding per file name, up to kMaxShapeFindings per start: beyond that the names are counted.
    const bool perName =
        msg.kind != MoeMessage::Kind::Deterministic && msg.kind != MoeMessage::Kind::DefaultNoPath;
    Segment &seg = m_segments.back();
    const int segment = int(m_segments.size()) - 1;
    if (perName && seg.moeEntries >= kMaxShapeFindings && !m_index.contains({id, segment})) {
        ++seg.omittedLines;
        if (seg.omittedEvidence.isEmpty()) {
            Entry first;
            addEvidence(first, line, text, msg.matchStart, msg.matchLength, prefix.source);
            seg.omittedEvidence = first.finding.evidence;
        }
        if (seg.omittedSources.size() < 64)
            seg.omittedSources.insert(prefix.source);
        if (seg.omittedNames.size() < kMaxOmittedNamesCounted)
            seg.omittedNames.insert(qHash(id));
        else if (!seg.omittedNames.contains(qHash(id)))
            seg.omittedNamesCapped = true;
        return;
    }
    bool created = false;
    Entry &e = entry(id, ruleId, severity, &created);
    if (created) {
        e.message = msg;
        e.finding.target = target;
        if (perName)
            ++seg.moeEntries;
    }
    if (target && e.finding.target) {
        // Every occurrence: one entry can see the up and the down file of its shape.
        const bool down = ConfigName::parse(msg.path).value_or(ConfigName{}).down;
        TuningTarget &t = *e.finding.target;
        switch (msg.kind) {
        case MoeMessage::Kind::ConfigUsed:
        case MoeMessage::Kind::ConfigUsedVllm:
            (down ? t.downLoaded : t.upLoaded) = true;
            break;
        case MoeMessage::Kind::Fallback:
            (down ? t.downFellBack : t.upFellBack) = true;
            t.fallbackFolder = fileNameOf(folderOf(msg.fallbackPath));
            break;
        case MoeMessage::Kind::DownReusesUp:
            t.downMissing = true;
            t.upLoaded = true; // "reusing the tuned up-projection config": the up file was found
            break;
        default:
            (down || msg.kind == MoeMessage::Kind::DownMissing ? t.downMissing : t.upMissing) = true;
            break;
        }
    }
    addEvidence(e, line, text, msg.matchStart, msg.matchLength, prefix.source);
}

void DiagnosisBuilder::absorb(Entry &mine, Entry &&later, qint64 servingLine) {
    Finding &f = mine.finding;
    const Finding &g = later.finding;
    if (f.occurrences == 0)
        mine.firstLine = later.firstLine;
    f.occurrences += g.occurrences;
    mine.sourceSet.unite(later.sourceSet);
    // Head and tail of both, in line order: what was left out lies between the first and latest lines.
    f.evidenceOmitted += g.evidenceOmitted;
    for (const Evidence &ev : g.evidence) {
        if (!f.evidence.isEmpty() && f.evidence.back().line == ev.line)
            continue;
        f.evidence.append(ev);
        if (f.evidence.size() > Finding::maxEvidence) {
            f.evidence.removeAt(Finding::headEvidence);
            ++f.evidenceOmitted;
        }
    }
    // A quote-last rule: the later quote, unless it comes after the server began serving.
    if (later.quoteLine > 0 && later.quoteLine > mine.quoteLine &&
        (servingLine == 0 || later.quoteLine < servingLine)) {
        mine.quoteLine = later.quoteLine;
        f.title = g.title;
        f.explanation = g.explanation;
        f.advice = g.advice;
    }
    if (!mine.message && later.message)
        mine.message = later.message;
    if (!f.target && g.target)
        f.target = g.target;
    else if (g.target && f.target) {
        TuningTarget &t = *f.target;
        const TuningTarget &u = *g.target;
        t.upMissing = t.upMissing || u.upMissing;
        t.downMissing = t.downMissing || u.downMissing;
        t.upFellBack = t.upFellBack || u.upFellBack;
        t.downFellBack = t.downFellBack || u.downFellBack;
        t.upLoaded = t.upLoaded || u.upLoaded;
        t.downLoaded = t.downLoaded || u.downLoaded;
        if (t.fallbackFolder.isEmpty())
            t.fallbackFolder = u.fallbackFolder;
    }
}

void DiagnosisBuilder::absorbSegment(Segment &mine, const Segment &later) {
    if (later.startLine > 0) { // the later start line names the start that the lines belong to
        mine.startLine = later.startLine;
        mine.startTime = later.startTime;
        mine.model = later.model;
    }
    if (mine.framework == Framework::Unknown || later.startLine > 0)
        mine.framework = later.framework != Framework::Unknown ? later.framework : mine.framework;
    if (mine.servingLine == 0)
        mine.servingLine = later.servingLine;
    if (later.readyStrength > mine.readyStrength) {
        mine.readyStrength = later.readyStrength;
        mine.readyLine = later.readyLine;
        mine.readyTime = later.readyTime;
        mine.readyTimeFromEarlierLine = later.readyTimeFromEarlierLine;
    }
    mine.loadedFolders.unite(later.loadedFolders);
    mine.moeEntries += later.moeEntries;
    mine.omittedLines += later.omittedLines;
    mine.omittedNamesCapped = mine.omittedNamesCapped || later.omittedNamesCapped;
    if (mine.omittedEvidence.isEmpty())
        mine.omittedEvidence = later.omittedEvidence;
    if (mine.omittedSources.size() < 64)
        mine.omittedSources.unite(later.omittedSources);
    for (const size_t h : later.omittedNames) {
        if (mine.omittedNames.size() >= kMaxOmittedNamesCounted) {
            mine.omittedNamesCapped = mine.omittedNamesCapped || !mine.omittedNames.contains(h);
            continue;
        }
        mine.omittedNames.insert(h);
    }
    for (const MoeKernelSighting &k : later.kernels)
        addKernel(mine, k);
}

void DiagnosisBuilder::addKernel(Segment &seg, const MoeKernelSighting &sighting) {
    for (MoeKernelSighting &k : seg.kernels) {
        if (k.sameFact(sighting)) {
            k.line = std::min(k.line, sighting.line);
            return;
        }
    }
    seg.kernels.append(sighting);
}

QList<QList<MoeKernelUse>> DiagnosisBuilder::judgeKernels(QList<Finding> &latestFolders) {
    QList<QList<Finding *>> bySegment(m_segments.size());
    for (Entry &e : m_entries)
        bySegment[e.segment].append(&e.finding);
    for (Finding &f : latestFolders)
        bySegment.back().append(&f);
    QList<QList<MoeKernelUse>> out;
    for (qsizetype s = 0; s < m_segments.size(); ++s)
        out.append(MoeKernelVerdict::judge(m_segments[s].kernels, m_rules.moeBackends(), bySegment[s]));
    return out;
}

void DiagnosisBuilder::merge(DiagnosisBuilder &&later, qint64 lineOffset) {
    auto shift = [lineOffset](qint64 line) { return line > 0 ? line + lineOffset : 0; };
    // The later part's first segment continues this part's last start; its others follow.
    const int base = int(m_segments.size()) - 1;
    for (qsizetype k = 0; k < later.m_segments.size(); ++k) {
        Segment seg = later.m_segments[k];
        seg.startLine = shift(seg.startLine);
        seg.servingLine = shift(seg.servingLine);
        seg.readyLine = shift(seg.readyLine);
        for (MoeKernelSighting &kernel : seg.kernels)
            kernel.line = shift(kernel.line);
        for (Evidence &ev : seg.omittedEvidence)
            ev.line += lineOffset;
        if (k == 0)
            absorbSegment(m_segments.back(), seg);
        else
            m_segments.append(std::move(seg));
    }
    for (Entry &e : later.m_entries) {
        for (Evidence &ev : e.finding.evidence)
            ev.line += lineOffset;
        e.firstLine += lineOffset;
        e.quoteLine = shift(e.quoteLine);
        e.segment += base;
        const auto it = m_index.constFind({e.finding.id, e.segment});
        if (it == m_index.constEnd()) {
            m_index.insert({e.finding.id, e.segment}, m_entries.size());
            m_entries.append(std::move(e));
            continue;
        }
        const qint64 serving = m_segments[e.segment].servingLine;
        absorb(m_entries[*it], std::move(e), serving);
    }
    for (size_t i = 0; i < m_frameworkVotes.size(); ++i)
        m_frameworkVotes[i] += later.m_frameworkVotes[i];
    m_startsOmitted += later.m_startsOmitted;
    later.m_entries.clear();
    later.m_index.clear();
}

void DiagnosisBuilder::foldSegments() {
    if (m_segments.size() < 2)
        return;
    // A start holds something of its own when it became ready or has an MoE line or a problem.
    QList<bool> holds(m_segments.size(), false);
    for (qsizetype k = 0; k < m_segments.size(); ++k)
        holds[k] = m_segments[k].servingLine > 0;
    for (const Entry &e : std::as_const(m_entries)) {
        if (e.message || e.finding.severity >= Severity::Warning)
            holds[e.segment] = true;
    }
    QList<int> into(m_segments.size(), 0);
    QList<Segment> folded{m_segments.front()};
    bool lastHolds = holds[0];
    for (qsizetype k = 1; k < m_segments.size(); ++k) {
        if (!lastHolds) {
            absorbSegment(folded.back(), m_segments[k]);
        } else {
            folded.append(m_segments[k]);
        }
        lastHolds = holds[k]; // a folded start holds what the later one holds
        into[k] = int(folded.size()) - 1;
    }
    if (folded.size() == m_segments.size())
        return;
    QList<Entry> entries;
    QHash<std::pair<QString, int>, qsizetype> index;
    for (Entry &e : m_entries) {
        e.segment = into[e.segment];
        const auto it = index.constFind({e.finding.id, e.segment});
        if (it == index.constEnd()) {
            index.insert({e.finding.id, e.segment}, entries.size());
            entries.append(std::move(e));
        } else {
            const qint64 serving = folded[e.segment].servingLine;
            absorb(entries[*it], std::move(e), serving);
        }
    }
    m_entries = std::move(entries);
    m_index = std::move(index);
    m_segments = std::move(folded);
}

void DiagnosisBuilder::pruneSegments(bool keepFirst) {
    foldSegments();
    const qsizetype from = keepFirst ? 1 : 0;
    const qsizetype drop = m_segments.size() - from - kMaxStartsKept;
    if (drop <= 0)
        return;
    QList<Entry> kept;
    for (Entry &e : m_entries) {
        if (e.segment >= from && e.segment < from + drop)
            continue;
        if (e.segment >= from + drop)
            e.segment -= int(drop);
        kept.append(std::move(e));
    }
    m_entries = std::move(kept);
    m_segments.remove(from, drop);
    m_startsOmitted += drop;
    m_index.clear();
    for (qsizetype i = 0; i < m_entries.size(); ++i)
        m_index.insert({m_entries[i].finding.id, m_entries[i].segment}, i);
}

void DiagnosisBuilder::addOmittedShapesFindings() {
    for (int s = 0; s < int(m_segments.size()); ++s) {
        const Segment &seg = m_segments[s];
        if (seg.omittedLines == 0)
            continue;
        Entry &e = m_entries.emplace_back();
        e.segment = s;
        e.firstLine = std::numeric_limits<qint64>::max(); // after the findings it stands for
        e.finding.id = MoeRules::id(MoeRule::ShapesNotListed);
        e.finding.rule = e.finding.id;
        e.finding.severity = Severity::Warning;
        e.finding.occurrences = int(std::min<qint64>(seg.omittedLines, std::numeric_limits<int>::max()));
        e.finding.evidence = seg.omittedEvidence;
        e.sourceSet = seg.omittedSources;
        const QString names = seg.omittedNamesCapped ? u"more than %1"_s.arg(kMaxOmittedNamesCounted)
                                                     : QString::number(seg.omittedNames.size());
        e.finding.title = u"…and %1 more MoE config file names, not listed one by one"_s.arg(names);
        e.finding.explanation =
            u"This start's log names more than %1 different MoE config files (distinct shapes or device "
            u"names); moetune lists the first %1 as findings and counts the rest: %2 more names in %3 "
            u"lines."_s.arg(kMaxShapeFindings)
                .arg(names)
                .arg(seg.omittedLines);
        e.finding.advice = u"So many distinct names rarely come from one server: check that the log is one "
                           u"server's, and tune the shapes listed first."_s;
        m_index.insert({e.finding.id, s}, m_entries.size() - 1);
    }
}

void DiagnosisBuilder::joinFindings() {
    // Per start: a rule whose finding joins another's (Rule::joins) adds its text to that title.
    QList<qsizetype> drop;
    for (qsizetype i = 0; i < m_entries.size(); ++i) {
        const Entry &e = m_entries[i];
        if (!e.rule || e.rule->joins.isEmpty())
            continue;
        const auto host = m_index.constFind({e.rule->joins, e.segment});
        if (host == m_index.constEnd() || *host == i)
            continue;
        Entry &h = m_entries[*host];
        const QRegularExpressionMatch m =
            e.rule->pattern.match(e.finding.evidence.isEmpty() ? QString() : e.finding.evidence.back().text);
        h.finding.title += m.hasMatch() ? Rule::expand(e.rule->joinText, m) : QString();
        if (!e.finding.explanation.isEmpty())
            h.finding.explanation += u' ' + e.finding.explanation;
        h.sourceSet.unite(e.sourceSet);
        // The joined lines are evidence of the one fact, in line order.
        QList<Evidence> all = h.finding.evidence + e.finding.evidence;
        std::stable_sort(all.begin(), all.end(),
                         [](const Evidence &a, const Evidence &b) { return a.line < b.line; });
        h.finding.evidenceOmitted += e.finding.evidenceOmitted;
        while (all.size() > Finding::maxEvidence) {
            all.removeAt(Finding::headEvidence);
            ++h.finding.evidenceOmitted;
        }
        h.finding.evidence = all;
        h.finding.occurrences += e.finding.occurrences;
        h.firstLine = std::min(h.firstLine, e.firstLine);
        drop.append(i);
    }
    for (qsizetype k = drop.size() - 1; k >= 0; --k)
        m_entries.removeAt(drop[k]);
    if (!drop.isEmpty()) {
        m_index.clear();
        for (qsizetype i = 0; i < m_entries.size(); ++i)
            m_index.insert({m_entries[i].finding.id, m_entries[i].segment}, i);
    }
}

Diagnosis DiagnosisBuilder::finish(qint64 bytesRead, qint64 linesRead, bool cancelled) {
    Diagnosis d;
    d.bytesRead = bytesRead;
    d.linesRead = linesRead;
    d.cancelled = cancelled;
    pruneSegments(false);
    addOmittedShapesFindings();
    joinFindings();
    const int latest = int(m_segments.size()) - 1;
    for (int s = 0; s <= latest; ++s) {
        const QList<TuningTarget> shapes = mergeTargets(s);
        describeEntries(s, shapes);
        if (s != latest)
            continue;
        // The tuning jobs of the server as it runs now (its latest start): shapes with a missing or
        // fallen-back file (a shape only loaded is none).
        for (const TuningTarget &t : shapes) {
            if (t.needsTuning() && t.kernel == TuningTarget::Kernel::FusedMoe)
                d.targets.append(t);
        }
    }
    QList<Finding> folders = folderFindings(d.targets);
    const QList<QList<MoeKernelUse>> kernels = judgeKernels(folders); // before earlier starts get titled
    describeStarts(d);
    for (qsizetype s = 0; s < kernels.size() && s < d.starts.size(); ++s)
        d.starts[s].moeKernels = kernels[s];
    d.findings = sortedFindings(std::move(folders));
    d.summary = FindingWording::summary(d);
    return d;
}

QList<TuningTarget> DiagnosisBuilder::mergeTargets(int segment) {
    // A shape whose framework nothing told: the log's other lines vote.
    const Framework majority = m_frameworkVotes[1] >= m_frameworkVotes[2]
                                   ? (m_frameworkVotes[1] > 0 ? Framework::SGLang : Framework::Unknown)
                                   : Framework::VLLM;
    QList<TuningTarget> targets;
    QHash<QString, qsizetype> byShape; // shapeKey -> index: linear in the number of shapes
    for (Entry &e : m_entries) {
        if (!e.finding.target || e.segment != segment)
            continue;
        TuningTarget &t = *e.finding.target;
        if (t.framework == Framework::Unknown)
            t.framework = majority;
        const QString key = t.shapeKey();
        const auto it = byShape.constFind(key);
        if (it == byShape.constEnd()) {
            byShape.insert(key, targets.size());
            targets.append(t);
            continue;
        }
        TuningTarget &merged = targets[*it];
        merged.upMissing = merged.upMissing || t.upMissing;
        merged.downMissing = merged.downMissing || t.downMissing;
        merged.upFellBack = merged.upFellBack || t.upFellBack;
        merged.downFellBack = merged.downFellBack || t.downFellBack;
        merged.upLoaded = merged.upLoaded || t.upLoaded;
        merged.downLoaded = merged.downLoaded || t.downLoaded;
        if (merged.fallbackFolder.isEmpty())
            merged.fallbackFolder = t.fallbackFolder;
    }
    for (TuningTarget &t : targets) {
        if (!t.tritonFolder.isEmpty())
            t.noConfigLoaded = !m_segments[segment].loadedFolders.contains(t.installFolder());
    }
    return targets;
}

void DiagnosisBuilder::describeEntries(int segment, const QList<TuningTarget> &targets) {
    QHash<QString, qsizetype> byShape;
    for (qsizetype i = 0; i < targets.size(); ++i)
        byShape.insert(targets[i].shapeKey(), i);
    for (Entry &e : m_entries) {
        if (e.segment != segment)
            continue;
        e.finding.start = segment + 1;
        QStringList sources(e.sourceSet.begin(), e.sourceSet.end());
        std::sort(sources.begin(), sources.end(), naturalLess);
        e.finding.sources = sources;
        if (!e.message)
            continue; // data rules were worded when created
        // The merged target (up + down of this shape) carries the folder facts.
        if (e.finding.target) {
            const auto it = byShape.constFind(e.finding.target->shapeKey());
            if (it != byShape.constEnd())
                e.finding.target = targets[*it];
        }
        FindingWording::describeMoe(e.finding, *e.message);
    }
}

void DiagnosisBuilder::describeStarts(Diagnosis &d) {
    const int omitted = int(std::min<qint64>(m_startsOmitted, std::numeric_limits<int>::max() / 2));
    const int total = int(m_segments.size()) + omitted;
    d.startsOmitted = omitted;
    for (const Segment &seg : std::as_const(m_segments)) {
        ServerStart start;
        start.line = seg.startLine;
        start.time = seg.startTime ? seg.startTime->text : QString();
        start.framework = seg.framework;
        start.model = seg.model;
        start.readyLine = seg.readyLine;
        start.readyTime = seg.readyTime ? seg.readyTime->text : QString();
        start.readyTimeFromEarlierLine = seg.readyTimeFromEarlierLine;
        start.secondsToReady =
            seg.startLine > 0 ? LogTime::secondsBetween(seg.startTime, seg.readyTime) : std::nullopt;
        d.starts.append(start);
    }
    for (Entry &e : m_entries) {
        const int number = omitted + e.segment + 1; // in the whole log, dropped starts counted
        if (e.serverStart)
            FindingWording::describeStart(e.finding, d.starts[e.segment], number, total);
        if (number < total) {
            // An earlier start's finding: its own id, and a title that says whose it is.
            e.finding.id += u"@start"_s + QString::number(number);
            e.finding.title += u" (earlier start %1 of %2)"_s.arg(number).arg(total);
        }
    }
}

QList<Finding> DiagnosisBuilder::folderFindings(const QList<TuningTarget> &targets) const {
    // One finding per missing triton_X_Y_Z folder, backed by the lookups that failed in it.
    struct Folder {
        FindingWording::FolderLookups lookups;
        Finding finding;
        QSet<QString> sources;
    };
    QList<Folder> folders;
    QHash<QString, qsizetype> byFolder;
    for (const TuningTarget &t : targets) {
        if (t.noConfigLoaded && !byFolder.contains(t.installFolder())) {
            byFolder.insert(t.installFolder(), folders.size());
            Folder &f = folders.emplace_back();
            f.lookups.target = t;
            f.finding.rule = MoeRules::id(MoeRule::FolderNoConfig);
            f.finding.id = f.finding.rule + u':' + t.installFolder();
            f.finding.severity = Severity::Warning;
            f.finding.target = t;
        }
    }
    if (folders.isEmpty())
        return {};
    QList<QSet<QString>> seenFiles(folders.size());
    const int latest = int(m_segments.size()) - 1;
    for (const Entry &e : m_entries) {
        if (!e.finding.target || !e.message || e.segment != latest)
            continue;
        const auto it = byFolder.constFind(e.finding.target->installFolder());
        if (it == byFolder.constEnd())
            continue;
        Folder &folder = folders[*it];
        Finding &f = folder.finding;
        f.occurrences += e.finding.occurrences;
        for (const QString &s : e.finding.sources)
            folder.sources.insert(s);
        const QString file = fileNameOf(e.message->path);
        if (!seenFiles[*it].contains(file)) {
            seenFiles[*it].insert(file);
            folder.lookups.files << file;
        }
        const QString &fallback = e.finding.target->fallbackFolder;
        if (!fallback.isEmpty() && !folder.lookups.fallbacks.contains(fallback))
            folder.lookups.fallbacks << fallback;
        f.evidence.append(e.finding.evidence);
        f.evidenceOmitted += e.finding.evidenceOmitted;
    }
    QList<Finding> out;
    for (Folder &folder : folders) {
        Finding &f = folder.finding;
        std::sort(f.evidence.begin(), f.evidence.end(),
                  [](const Evidence &a, const Evidence &b) { return a.line < b.line; });
        f.start = latest + 1;
        if (f.evidence.size() > Finding::maxEvidence) { // the first lines and the latest, cut in one go
            const qsizetype cut = f.evidence.size() - Finding::maxEvidence;
            f.evidence.erase(f.evidence.begin() + Finding::headEvidence,
                             f.evidence.begin() + Finding::headEvidence + cut);
            f.evidenceOmitted += cut;
        }
        f.sources = QStringList(folder.sources.begin(), folder.sources.end());
        std::sort(f.sources.begin(), f.sources.end(), naturalLess);
        FindingWording::describeFolder(f, folder.lookups);
        out.append(std::move(f));
    }
    return out;
}

QList<Finding> DiagnosisBuilder::sortedFindings(QList<Finding> extra) const {
    // Severity first, then where the finding first shows in the log.
    QList<std::pair<qint64, Finding>> all;
    all.reserve(m_entries.size() + extra.size());
    for (const Entry &e : m_entries)
        all.append({e.firstLine, e.finding});
    for (Finding &f : extra)
        all.append({f.evidence.isEmpty() ? 0 : f.evidence.front().line, std::move(f)});
    // Within a start and severity: the MoE tuning jobs first (what moetune can act on), each job's findings
    // together (up, _down, its folder), then other MoE findings, other findings, and the dense block-FP8
    // GEMM, which moetune does not tune, last.
    QList<Finding> plain;
    plain.reserve(all.size());
    for (const auto &p : all)
        plain.append(p.second);
    const QStringList jobs = findingJobKeys(plain);
    plain.clear();
    struct Key {
        int start;
        int severity;
        int rank;
        qint64 groupLine; // the job's first line (its own for a finding of no job)
        int member;       // within a job: up, _down, folder
        qint64 line;
        qsizetype index;
    };
    QHash<QString, qint64> jobLine;
    for (qsizetype i = 0; i < all.size(); ++i) {
        if (!jobs[i].isEmpty()) {
            const QString key = jobs[i] + u'\n' + QString::number(int(all[i].second.severity));
            const auto it = jobLine.find(key);
            if (it == jobLine.end())
                jobLine.insert(key, all[i].first);
            else
                *it = std::min(*it, all[i].first);
        }
    }
    QList<Key> keys;
    keys.reserve(all.size());
    for (qsizetype i = 0; i < all.size(); ++i) {
        const Finding &f = all[i].second;
        int rank = 2;
        if (!jobs[i].isEmpty())
            rank = 0;
        else if (f.target && !f.target->isTunable())
            rank = 3;
        else if (const MoeRuleRow *r = MoeRules::find(f.rule); r && r->family != MoeRuleFamily::DenseGemm)
            rank = 1;
        const qint64 groupLine =
            jobs[i].isEmpty()
                ? all[i].first
                : jobLine.value(jobs[i] + u'\n' + QString::number(int(f.severity)), all[i].first);
        const MoeRuleRow *row = MoeRules::find(f.rule);
        const int member = row ? row->jobOrder : 0;
        keys.append({f.start, int(f.severity), rank, groupLine, member, all[i].first, i});
    }
    // The latest start's findings first (the server as it runs now), then the earlier starts', newest first.
    std::stable_sort(keys.begin(), keys.end(), [](const Key &a, const Key &b) {
        if (a.start != b.start)
            return a.start > b.start;
        if (a.severity != b.severity)
            return a.severity > b.severity;
        if (a.rank != b.rank)
            return a.rank < b.rank;
        if (a.groupLine != b.groupLine)
            return a.groupLine < b.groupLine;
        if (a.member != b.member)
            return a.member < b.member;
        return a.line < b.line;
    });
    QList<Finding> out;
    out.reserve(all.size());
    for (const Key &k : keys)
        out.append(std::move(all[k.index].second));
    return out;
}

} // namespace moetune
