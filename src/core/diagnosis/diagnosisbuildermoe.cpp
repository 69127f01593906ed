// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// DiagnosisBuilder, its MoE part: a config lookup or kernel line -> a finding, its target and framework.
#include "core/diagnosis/diagnosisbuilder.h"

#include "core/diagnosis/logpath.h"
#include "core/diagnosis/logprefix.h"
#include "core/diagnosis/moekernelverdict.h"
#include "core/diagnosis/moerule.h"
#include "core/moe/precompiledregex.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

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

} // namespace moetune
