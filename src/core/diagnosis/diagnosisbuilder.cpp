#include "core/diagnosis/diagnosisbuilder.h"
#include "core/moe/precompiledregex.h"

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

QString fileNameOf(const QString &path) {
    const qsizetype slash = std::max(path.lastIndexOf(u'/'), path.lastIndexOf(u'\\'));
    return path.mid(slash + 1);
}

QString folderOf(const QString &path) {
    const qsizetype slash = std::max(path.lastIndexOf(u'/'), path.lastIndexOf(u'\\'));
    return slash < 0 ? QString() : path.left(slash);
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

// The agent's tune spec for this target, as far as the log tells it (hidden size and top-k are not in
// the log: the model's config.json has them, and the Hosts page's probe fills them in).
QString tuneCommand(const TuningTarget &t, bool withDown) {
    QString s = u"moetune-agent tune with spec {\"framework\": \""_s + frameworkId(t.framework) +
                u"\", \"E\": "_s + QString::number(t.name.experts) + u", \"N\": "_s +
                QString::number(t.name.n);
    if (!t.name.dtype.isEmpty())
        s += u", \"dtype\": \""_s + t.name.dtype + u'"';
    if (t.name.blockShape)
        s += u", \"block_shape\": ["_s + QString::number((*t.name.blockShape)[0]) + u", "_s +
             QString::number((*t.name.blockShape)[1]) + u']';
    if (t.name.perChannelQuant)
        s += u", \"per_channel_quant\": true"_s;
    s += withDown ? u", \"ops\": \"up+down\""_s : u", \"ops\": \"up\""_s;
    return s + u"} plus K and topk from the model's config.json"_s;
}

QString deviceText(const TuningTarget &t) {
    return t.name.deviceName.isEmpty() ? u"an unnamed GPU"_s : t.name.deviceName;
}

QString tritonText(const TuningTarget &t) {
    return t.tritonVersion ? u"Triton "_s + t.tritonVersion->toString() : u"the installed Triton"_s;
}

QString installText(const TuningTarget &t) {
    const QString folder = t.installFolder();
    return folder.isEmpty() ? u"the server's config folder"_s : folder + u'/';
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
            joined += LogReader::cleanLine(nl < 0 ? after : after.first(nl));
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
            for (qsizetype k = previous.size() - 1; k >= 0 && !msg; --k) {
                prefix.prepend(previous[k]);
                const QByteArray candidate = prefix + joined;
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
    case MoeMessage::Kind::Deterministic:
    case MoeMessage::Kind::ConfigUsed:
        return Framework::SGLang; // wordings only SGLang prints
    case MoeMessage::Kind::ConfigUsedVllm:
        return Framework::VLLM;
    case MoeMessage::Kind::DefaultConfig:
    case MoeMessage::Kind::BlockFp8Default:
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
        ruleId = u"moe-config-used"_s;
        id = ruleId + u':' + msg.path;
        severity = Severity::Info;
        m_loadedFolders.insert(folderOf(msg.path));
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
    case MoeMessage::Kind::DownMissing:
        ruleId = u"moe-down-missing"_s;
        target = targetFor(msg.path, framework);
        break;
    case MoeMessage::Kind::DefaultKernelConfig:
    case MoeMessage::Kind::DefaultConfig:
        ruleId = u"moe-untuned"_s;
        target = targetFor(msg.path, framework);
        break;
    }
    if (id.isEmpty()) {
        // One finding per wanted file (and so per shape, up and down apart), whatever the rank.
        const std::optional<ConfigName> name = ConfigName::parse(msg.path);
        const Framework dialect = framework == Framework::VLLM ? Framework::VLLM : Framework::SGLang;
        id = ruleId + u':' + (name ? name->fileName(dialect) : fileNameOf(msg.path));
        if (target && !target->installFolder().isEmpty())
            id += u'@' + target->installFolder();
    }
    bool created = false;
    Entry &e = entry(id, ruleId, severity, &created);
    if (created) {
        e.message = msg;
        e.finding.target = target;
        if (target) {
            const bool down = ConfigName::parse(msg.path).value_or(ConfigName{}).down;
            TuningTarget &t = *e.finding.target;
            if (msg.kind == MoeMessage::Kind::Fallback) {
                (down ? t.downFellBack : t.upFellBack) = true;
                t.fallbackFolder = fileNameOf(folderOf(msg.fallbackPath));
            } else {
                (down || msg.kind == MoeMessage::Kind::DownMissing ? t.downMissing : t.upMissing) = true;
            }
        }
    }
    addEvidence(e, line, text, msg.matchStart, msg.matchLength, prefix.source);
}

void DiagnosisBuilder::describe(Entry &e, const QList<TuningTarget> &targets) const {
    Finding &f = e.finding;
    if (!e.message)
        return; // data rules were worded when created
    const MoeMessage &msg = *e.message;
    const QString fw = f.target ? frameworkName(f.target->framework) : u"The server"_s;
    const QString server = f.target && f.target->framework != Framework::Unknown ? fw : u"The server"_s;
    switch (msg.kind) {
    case MoeMessage::Kind::Deterministic:
        f.title = u"Deterministic inference forces default MoE kernel configs"_s;
        f.explanation =
            u"Deterministic inference is on, so SGLang ignores any tuned fused-MoE config and runs its "
            "built-in defaults. Tuning changes nothing while this mode is on."_s;
        f.advice = u"If you do not need reproducible outputs, restart the server without "
                   "--enable-deterministic-inference; otherwise no tuning action applies."_s;
        return;
    case MoeMessage::Kind::ConfigUsed:
    case MoeMessage::Kind::ConfigUsedVllm:
        f.title = u"Tuned MoE config in use: "_s + fileNameOf(msg.path);
        f.explanation = u"The server loaded the tuned fused-MoE kernel config "_s + msg.path + u'.';
        f.advice = u"Nothing to do for this shape."_s;
        return;
    case MoeMessage::Kind::BlockFp8Default: {
        static const QRegularExpression nk = precompiledRegex(u"N=(\\d+),K=(\\d+),device_name=([^,]*)"_s);
        const QRegularExpressionMatch m = nk.match(fileNameOf(msg.path));
        f.title = m.hasMatch() ? u"Untuned W8A8 block-FP8 GEMM: N=%1, K=%2 on %3"_s.arg(
                                     m.captured(1), m.captured(2),
                                     m.captured(3).isEmpty() ? u"an unnamed GPU"_s : m.captured(3))
                               : u"Untuned W8A8 block-FP8 GEMM"_s;
        f.explanation =
            u"The dense block-quantised FP8 GEMM (not the MoE kernel) found no tuned config at "_s +
            msg.path + u" and runs default tile sizes, which can be markedly slower."_s;
        f.advice =
            u"Tune it with SGLang's block-wise FP8 tuning script (benchmark/kernels/quantization/) and "
            "put the resulting "_s +
            fileNameOf(msg.path) + u" into "_s + folderOf(msg.path) +
            u"/. moetune tunes the fused-MoE kernel only."_s;
        return;
    }
    default:
        break;
    }
    if (!f.target) {
        f.title = u"No tuned MoE config for "_s + fileNameOf(msg.path);
        f.explanation =
            u"The server found no tuned fused-MoE config at "_s + msg.path +
            u" and uses default kernel settings; the file name could not be read as a config name."_s;
        f.advice = u"Check the path in the log line; tune the shape it names and install the file there."_s;
        return;
    }
    // The merged target (up + down of this shape) carries the folder facts.
    for (const TuningTarget &t : targets) {
        if (t.sameShape(*f.target)) {
            f.target = t;
            break;
        }
    }
    const TuningTarget &t = *f.target;
    const bool down = ConfigName::parse(msg.path).value_or(ConfigName{}).down;
    const QString shape = t.shapeSummary() + u" on "_s + deviceText(t);
    const QString file = fileNameOf(msg.path);
    const QString folderNote = t.tritonFolderMissing
                                   ? u" No config at all was loaded from "_s + t.tritonFolder +
                                         u", the folder for the installed "_s + tritonText(t) +
                                         u", so that folder probably does not exist yet."_s
                                   : QString();
    switch (msg.kind) {
    case MoeMessage::Kind::Fallback:
        f.title = u"MoE config for "_s + shape + (down ? u" (down)"_s : QString()) + u" taken from "_s +
                  t.fallbackFolder + u" ("_s + tritonText(t) + u" installed)"_s;
        f.explanation = server + u" found no config for this shape in "_s + t.tritonFolder +
                        u" and used the one tuned under Triton "_s + msg.fallbackVersion + u" ("_s +
                        msg.fallbackPath +
                        u"). A config tuned for another Triton release may be slower under the installed "
                        "compiler; retuning under "_s +
                        tritonText(t) + u" removes the warning."_s + folderNote;
        f.advice = u"Retune under "_s + tritonText(t) + u" ("_s + tuneCommand(t, down) + u") and install "_s +
                   file + u" into "_s + installText(t) + u"; as a stopgap, copying "_s + msg.fallbackPath +
                   u" there silences the fallback."_s;
        return;
    case MoeMessage::Kind::DownMissing:
        f.title = u"No tuned down-projection config for "_s + shape;
        f.explanation =
            server +
            u" tunes the down GEMM of the MoE layer separately (the *_down.json file). It found none at "_s +
            msg.path +
            u", so the down GEMM reuses the up config (down_moe=False), which is rarely the best "
            "for a GEMM of a different shape."_s +
            folderNote;
        f.advice = u"Tune up and down together ("_s + tuneCommand(t, true) + u") and install "_s + file +
                   u" into "_s + installText(t) +
                   u"; up and down configs must share BLOCK_SIZE_M for every batch size."_s;
        return;
    default:
        break;
    }
    f.title = u"No tuned MoE config for "_s + shape + (down ? u" (down projection)"_s : QString());
    QString where = msg.path;
    if (!msg.path2.isEmpty())
        where += u" or "_s + msg.path2;
    f.explanation =
        server +
        u" found no tuned fused-MoE kernel config for this shape on this GPU and runs "
        "built-in default tile sizes instead. It looked for "_s +
        where + u". A tuned config is commonly 10-60% faster for this kernel, most at larger batch sizes."_s +
        folderNote;
    QString advice = u"Tune this shape on "_s + deviceText(t) + u" ("_s +
                     tuneCommand(t, down || t.downMissing) + u") and install "_s + file + u" into "_s +
                     installText(t);
    if (t.framework == Framework::VLLM)
        advice += u" (or into the folder VLLM_TUNED_CONFIG_FOLDER names)"_s;
    advice += u", then restart the server."_s;
    f.advice = advice;
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

    // A shape whose framework nothing told: the log's other lines vote.
    const Framework majority = m_frameworkVotes[1] >= m_frameworkVotes[2]
                                   ? (m_frameworkVotes[1] > 0 ? Framework::SGLang : Framework::Unknown)
                                   : Framework::VLLM;
    QList<TuningTarget> targets;
    for (Entry &e : m_entries) {
        if (!e.finding.target)
            continue;
        TuningTarget &t = *e.finding.target;
        if (t.framework == Framework::Unknown)
            t.framework = majority;
        auto it = std::find_if(targets.begin(), targets.end(),
                               [&](const TuningTarget &o) { return o.sameShape(t); });
        if (it == targets.end()) {
            targets.append(t);
            continue;
        }
        it->upMissing = it->upMissing || t.upMissing;
        it->downMissing = it->downMissing || t.downMissing;
        it->upFellBack = it->upFellBack || t.upFellBack;
        it->downFellBack = it->downFellBack || t.downFellBack;
        if (it->fallbackFolder.isEmpty())
            it->fallbackFolder = t.fallbackFolder;
    }
    for (TuningTarget &t : targets) {
        if (!t.tritonFolder.isEmpty())
            t.tritonFolderMissing = !m_loadedFolders.contains(t.installFolder());
    }

    for (Entry &e : m_entries) {
        describe(e, targets);
        QStringList sources(e.sourceSet.begin(), e.sourceSet.end());
        std::sort(sources.begin(), sources.end(), naturalLess);
        e.finding.sources = sources;
    }

    // One finding per missing triton_X_Y_Z folder, backed by the lookups that failed in it.
    QList<Finding> folderFindings;
    for (const TuningTarget &t : targets) {
        if (!t.tritonFolderMissing)
            continue;
        const QString id = u"triton-folder-missing:"_s + t.installFolder();
        if (std::any_of(folderFindings.begin(), folderFindings.end(),
                        [&](const Finding &f) { return f.id == id; }))
            continue;
        Finding f;
        f.id = id;
        f.rule = u"triton-folder-missing"_s;
        f.severity = Severity::Warning;
        QSet<QString> sources;
        QStringList files;
        QStringList fallbacks;
        qint64 firstLine = std::numeric_limits<qint64>::max();
        for (const Entry &e : m_entries) {
            if (!e.finding.target || e.finding.target->installFolder() != t.installFolder())
                continue;
            f.occurrences += e.finding.occurrences;
            for (const QString &s : e.finding.sources)
                sources.insert(s);
            files << fileNameOf(e.message->path);
            if (!e.finding.target->fallbackFolder.isEmpty() &&
                !fallbacks.contains(e.finding.target->fallbackFolder))
                fallbacks << e.finding.target->fallbackFolder;
            firstLine = std::min(firstLine, e.firstLine);
            for (const Evidence &ev : e.finding.evidence) {
                if (f.evidence.size() < Finding::maxEvidence)
                    f.evidence.append(ev);
            }
        }
        std::sort(f.evidence.begin(), f.evidence.end(),
                  [](const Evidence &a, const Evidence &b) { return a.line < b.line; });
        f.sources = QStringList(sources.begin(), sources.end());
        std::sort(f.sources.begin(), f.sources.end(), naturalLess);
        files.removeDuplicates();
        const QString version = t.tritonVersion ? t.tritonVersion->toString() : t.tritonFolder;
        f.title =
            u"Folder "_s + t.tritonFolder + u" for the installed Triton "_s + version + u" is missing"_s;
        f.explanation = u"The server runs Triton "_s + version + u" and looks for tuned MoE configs in "_s +
                        t.installFolder() + u"/, but no config was loaded from there ("_s +
                        QString::number(files.size()) +
                        u" lookups failed). Each Triton release starts without its folder, so every shape "
                        "falls back or runs defaults until configs are tuned for it."_s;
        if (!fallbacks.isEmpty())
            f.explanation += u" The server fell back to "_s + fallbacks.join(u", "_s) + u" where it could."_s;
        f.advice = u"Create "_s + t.installFolder() + u"/ and install configs tuned under Triton "_s +
                   version + u" into it: "_s + files.join(u", "_s) + u'.';
        f.target = t;
        folderFindings.append(f);
    }

    QList<std::pair<qint64, Finding>> all;
    for (const Entry &e : m_entries)
        all.append({e.firstLine, e.finding});
    for (const Finding &f : folderFindings)
        all.append({f.evidence.isEmpty() ? 0 : f.evidence.front().line, f});
    std::stable_sort(all.begin(), all.end(), [](const auto &a, const auto &b) {
        if (a.second.severity != b.second.severity)
            return a.second.severity > b.second.severity;
        return a.first < b.first;
    });
    for (auto &p : all)
        d.findings.append(std::move(p.second));
    d.targets = targets;

    // The one line a person reads first.
    QString summary;
    QList<TuningTarget> jobs;
    for (const TuningTarget &t : targets) {
        if (t.upMissing || t.downMissing || t.upFellBack || t.downFellBack)
            jobs.append(t);
    }
    if (!jobs.isEmpty()) {
        int files = 0;
        QStringList devices, tritons, descs, fellBack, missingFolders;
        for (const TuningTarget &t : jobs) {
            const bool up = t.upMissing || t.upFellBack;
            const bool down = t.downMissing || t.downFellBack;
            files += (up ? 1 : 0) + (down ? 1 : 0);
            const QString dev = deviceText(t);
            if (!devices.contains(dev))
                devices << dev;
            if (t.tritonVersion && !tritons.contains(t.tritonVersion->toString()))
                tritons << t.tritonVersion->toString();
            const QString parts = up && down ? u"up and down"_s : (up ? u"up"_s : u"down"_s);
            descs << (t.framework == Framework::VLLM ? t.shapeSummary() : t.shapeSummary() + u": "_s + parts);
            if (t.upFellBack || t.downFellBack) {
                const QString which =
                    t.upFellBack && t.downFellBack ? u"up and down"_s : (t.upFellBack ? u"up"_s : u"down"_s);
                fellBack << which + (jobs.size() == 1 ? QString() : u" of "_s + t.shapeSummary()) +
                                u" fell back to "_s + t.fallbackFolder;
            }
            if (t.tritonFolderMissing && !missingFolders.contains(t.tritonFolder))
                missingFolders << t.tritonFolder;
        }
        summary = QString::number(files) +
                  (files == 1 ? u" MoE config untuned on "_s : u" MoE configs untuned on "_s) +
                  devices.join(u", "_s);
        if (!tritons.isEmpty())
            summary += u" under Triton "_s + tritons.join(u", "_s);
        summary += u": "_s + QString::number(jobs.size()) +
                   (jobs.size() == 1 ? u" tuning job ("_s : u" tuning jobs ("_s);
        if (jobs.size() == 1 && jobs.front().framework != Framework::VLLM) {
            const qsizetype colon = descs.front().lastIndexOf(u": "_s);
            summary += descs.front().left(colon) + u"), "_s + descs.front().mid(colon + 2);
        } else {
            summary += descs.join(u"; "_s) + u')';
        }
        if (!fellBack.isEmpty())
            summary += u"; "_s + fellBack.join(u", "_s);
        if (!missingFolders.isEmpty())
            summary += (missingFolders.size() == 1 ? u"; folder "_s : u"; folders "_s) +
                       missingFolders.join(u", "_s) +
                       (missingFolders.size() == 1 ? u" does not exist yet"_s : u" do not exist yet"_s);
        int others = 0;
        for (const Finding &f : d.findings)
            others += f.severity >= Severity::Warning && !f.target ? 1 : 0;
        if (others > 0)
            summary += u"; "_s + QString::number(others) +
                       (others == 1 ? u" other problem"_s : u" other problems"_s);
    } else if (d.worst() >= Severity::Warning) {
        const int errors = d.count(Severity::Error);
        const int warnings = d.count(Severity::Warning);
        QStringList counts;
        if (errors)
            counts << QString::number(errors) + (errors == 1 ? u" error"_s : u" errors"_s);
        if (warnings)
            counts << QString::number(warnings) + (warnings == 1 ? u" warning"_s : u" warnings"_s);
        summary = counts.join(u", "_s) + u": "_s + d.findings.front().title;
    } else {
        summary = u"No problems found in "_s + QString::number(linesRead) +
                  (linesRead == 1 ? u" line"_s : u" lines"_s);
        const int infos = d.count(Severity::Info);
        if (infos > 0)
            summary += u"; "_s + QString::number(infos) + (infos == 1 ? u" fact noted"_s : u" facts noted"_s);
    }
    if (cancelled)
        summary = u"Cancelled after "_s + QString::number(linesRead) + u" lines; so far: "_s + summary;
    d.summary = summary;
    return d;
}

} // namespace moetune
