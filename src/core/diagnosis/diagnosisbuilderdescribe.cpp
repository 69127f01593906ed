// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// DiagnosisBuilder::finish(): the findings joined, worded and given their targets, one per folder too.
#include "core/diagnosis/diagnosisbuilder.h"

#include "core/diagnosis/findingwording.h"
#include "core/diagnosis/logpath.h"
#include "core/diagnosis/moerule.h"

#include <QRegularExpression>

#include <algorithm>
#include <limits>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

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

} // namespace

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

} // namespace moetune
