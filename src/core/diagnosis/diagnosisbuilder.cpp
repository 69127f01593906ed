#include "core/diagnosis/diagnosisbuilder.h"
#include "core/moe/precompiledregex.h"

#include "core/diagnosis/findingwording.h"
#include "core/diagnosis/logpath.h"
#include "core/diagnosis/logprefix.h"

#include <QRegularExpression>

#include <algorithm>

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
        for (const Rule &r : m_rules.rules()) {
            if (r.prefilter == unique[i])
                m_rulesByLiteral[i].append(&r);
        }
    }
}

QList<QByteArray> DiagnosisBuilder::literals() const {
    QList<QByteArray> out = MoeMessage::literals();
    for (const Rule &r : m_rules.rules())
        out.append(r.prefilter);
    return out;
}

void DiagnosisBuilder::addHit(const LogReader::Hit &hit) {
    if (hit.line <= m_consumedThrough)
        return; // already read as the continuation of a wrapped line
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
        std::optional<MoeMessage> msg = MoeMessage::parse(text);
        qint64 line = hit.line;
        if (!msg) { // the message may have started on a line the terminal wrapped before this one
            const QList<QByteArray> previous = lastLines(hit.before, 3);
            QByteArray prefix;
            for (qsizetype k = previous.size() - 1; k >= 0 && !msg && !LogPrefix::startsRecord(joined); --k) {
                prefix = prefix.isNull() ? previous[k] : MoeMessage::joinWrapped(previous[k], prefix);
                const QByteArray candidate = MoeMessage::joinWrapped(prefix, LogPrefix::continuation(joined));
                const QString candidateText = QString::fromUtf8(candidate);
                msg = MoeMessage::parse(candidateText);
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
    applyRules(hit.text, hit.line, present & ~m_moeBits);
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
            if (str.isNull())
                str = QString::fromUtf8(text);
            const QRegularExpressionMatch m = rule->pattern.match(str);
            if (!m.hasMatch())
                continue;
            if (!prefix) {
                prefix = LogPrefix::scan(text);
                m_frameworkVotes[static_cast<size_t>(prefix->framework)]++;
            }
            bool created = false;
            Entry &e = entry(rule->id, rule->id, rule->severity, &created);
            if (created) {
                e.rule = rule;
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
    const auto it = m_index.constFind(id);
    if (it != m_index.constEnd()) {
        *created = false;
        return m_entries[*it];
    }
    *created = true;
    m_index.insert(id, m_entries.size());
    Entry &e = m_entries.emplace_back();
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
    if (e.finding.evidence.size() >= Finding::maxEvidence)
        return;
    if (!e.finding.evidence.isEmpty() && e.finding.evidence.back().line == line)
        return;
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

std::optional<TuningTarget> DiagnosisBuilder::targetFor(const QString &path, Framework framework) const {
    std::optional<ConfigName> name = ConfigName::parse(path);
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
    return t;
}

void DiagnosisBuilder::handleMoe(const MoeMessage &msg, const QString &text, QByteArrayView bytes,
                                 qint64 line) {
    const LogPrefix prefix = LogPrefix::parse(bytes);
    m_frameworkVotes[static_cast<size_t>(prefix.framework)]++;
    const Framework framework = frameworkFor(msg, prefix.framework);
    QString id;
    QString ruleId;
    Severity severity = Severity::Warning;
    std::optional<TuningTarget> target;
    switch (msg.kind) {
    case MoeMessage::Kind::Deterministic:
        ruleId = id = u"deterministic-default-config"_s;
        severity = Severity::Info;
        break;
    case MoeMessage::Kind::ConfigUsed:
    case MoeMessage::Kind::ConfigUsedVllm:
        // One finding per shape (up and down loads merged), with the ranks that loaded it.
        ruleId = u"moe-config-used"_s;
        severity = Severity::Info;
        target = targetFor(msg.path, framework);
        m_loadedFolders.insert(folderOf(msg.path));
        break;
    case MoeMessage::Kind::DefaultNoPath:
        ruleId = id = u"moe-untuned-no-path"_s;
        break;
    case MoeMessage::Kind::BlockFp8Default:
        ruleId = u"w8a8-block-fp8-untuned"_s;
        id = ruleId + u':' + fileNameOf(msg.path);
        break;
    case MoeMessage::Kind::Fallback:
        ruleId = u"moe-fallback"_s;
        target = targetFor(msg.path, framework);
        m_loadedFolders.insert(folderOf(msg.fallbackPath));
        break;
    case MoeMessage::Kind::DownReusesUp:
        m_loadedFolders.insert(folderOf(msg.path)); // the tuned up file of this folder was loaded
        [[fallthrough]];
    case MoeMessage::Kind::DownMissing:
        ruleId = u"moe-down-missing"_s;
        target = targetFor(msg.path, framework);
        break;
    case MoeMessage::Kind::DefaultKernelConfig:
    case MoeMessage::Kind::DefaultConfig:
        // A default-config warning naming the _down file is a missing down config of that shape too.
        ruleId = ConfigName::parse(msg.path).value_or(ConfigName{}).down ? u"moe-down-missing"_s
                                                                         : u"moe-untuned"_s;
        target = targetFor(msg.path, framework);
        break;
    }
    if (id.isEmpty()) {
        // One finding per wanted file (and so per shape, up and down apart), whatever the rank.
        const std::optional<ConfigName> name = ConfigName::parse(msg.path);
        const Framework dialect = framework == Framework::VLLM ? Framework::VLLM : Framework::SGLang;
        ConfigName idName = name.value_or(ConfigName{});
        if (ruleId == u"moe-config-used"_s)
            idName.down = false; // up and down loads of one shape are one finding
        id = ruleId + u':' + (name ? idName.fileName(dialect) : fileNameOf(msg.path));
        if (target && !target->installFolder().isEmpty())
            id += u'@' + target->installFolder();
    }
    bool created = false;
    Entry &e = entry(id, ruleId, severity, &created);
    if (created) {
        e.message = msg;
        e.finding.target = target;
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

void DiagnosisBuilder::merge(DiagnosisBuilder &&later, qint64 lineOffset) {
    for (Entry &e : later.m_entries) {
        for (Evidence &ev : e.finding.evidence)
            ev.line += lineOffset;
        const auto it = m_index.constFind(e.finding.id);
        if (it == m_index.constEnd()) {
            e.firstLine += lineOffset;
            m_index.insert(e.finding.id, m_entries.size());
            m_entries.append(std::move(e));
            continue;
        }
        Entry &mine = m_entries[*it];
        if (mine.finding.occurrences == 0)
            mine.firstLine = e.firstLine + lineOffset;
        mine.finding.occurrences += e.finding.occurrences;
        mine.sourceSet.unite(e.sourceSet);
        for (const Evidence &ev : std::as_const(e.finding.evidence)) {
            if (mine.finding.evidence.size() >= Finding::maxEvidence)
                break;
            mine.finding.evidence.append(ev);
        }
        if (e.finding.target && mine.finding.target) {
            TuningTarget &t = *mine.finding.target;
            t.upMissing = t.upMissing || e.finding.target->upMissing;
            t.downMissing = t.downMissing || e.finding.target->downMissing;
            t.upFellBack = t.upFellBack || e.finding.target->upFellBack;
            t.downFellBack = t.downFellBack || e.finding.target->downFellBack;
            t.upLoaded = t.upLoaded || e.finding.target->upLoaded;
            t.downLoaded = t.downLoaded || e.finding.target->downLoaded;
        }
    }
    m_loadedFolders.unite(later.m_loadedFolders);
    for (size_t i = 0; i < m_frameworkVotes.size(); ++i)
        m_frameworkVotes[i] += later.m_frameworkVotes[i];
    later.m_entries.clear();
    later.m_index.clear();
}

Diagnosis DiagnosisBuilder::finish(qint64 bytesRead, qint64 linesRead, bool cancelled) {
    Diagnosis d;
    d.bytesRead = bytesRead;
    d.linesRead = linesRead;
    d.cancelled = cancelled;
    const QList<TuningTarget> shapes = mergeTargets();
    describeEntries(shapes);
    // The tuning jobs: shapes with a missing or fallen-back file (a shape only loaded is none).
    for (const TuningTarget &t : shapes) {
        if (t.needsTuning())
            d.targets.append(t);
    }
    d.findings = sortedFindings(folderFindings(d.targets));
    d.summary = FindingWording::summary(d);
    return d;
}

QList<TuningTarget> DiagnosisBuilder::mergeTargets() {
    // A shape whose framework nothing told: the log's other lines vote.
    const Framework majority = m_frameworkVotes[1] >= m_frameworkVotes[2]
                                   ? (m_frameworkVotes[1] > 0 ? Framework::SGLang : Framework::Unknown)
                                   : Framework::VLLM;
    QList<TuningTarget> targets;
    QHash<QString, qsizetype> byShape; // shapeKey -> index: linear in the number of shapes
    for (Entry &e : m_entries) {
        if (!e.finding.target)
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
            t.noConfigLoaded = !m_loadedFolders.contains(t.installFolder());
    }
    return targets;
}

void DiagnosisBuilder::describeEntries(const QList<TuningTarget> &targets) {
    QHash<QString, qsizetype> byShape;
    for (qsizetype i = 0; i < targets.size(); ++i)
        byShape.insert(targets[i].shapeKey(), i);
    for (Entry &e : m_entries) {
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
            f.finding.id = u"triton-folder-no-config:"_s + t.installFolder();
            f.finding.rule = u"triton-folder-no-config"_s;
            f.finding.severity = Severity::Warning;
            f.finding.target = t;
        }
    }
    if (folders.isEmpty())
        return {};
    QList<QSet<QString>> seenFiles(folders.size());
    for (const Entry &e : m_entries) {
        if (!e.finding.target || !e.message)
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
        for (const Evidence &ev : e.finding.evidence) {
            if (f.evidence.size() < Finding::maxEvidence)
                f.evidence.append(ev);
        }
    }
    QList<Finding> out;
    for (Folder &folder : folders) {
        Finding &f = folder.finding;
        std::sort(f.evidence.begin(), f.evidence.end(),
                  [](const Evidence &a, const Evidence &b) { return a.line < b.line; });
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
    std::stable_sort(all.begin(), all.end(), [](const auto &a, const auto &b) {
        if (a.second.severity != b.second.severity)
            return a.second.severity > b.second.severity;
        return a.first < b.first;
    });
    QList<Finding> out;
    out.reserve(all.size());
    for (auto &p : all)
        out.append(std::move(p.second));
    return out;
}

} // namespace moetune
