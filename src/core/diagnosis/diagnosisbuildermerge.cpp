// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// DiagnosisBuilder, the merge of the parts read in parallel, and the server starts folded and pruned.
#include "core/diagnosis/diagnosisbuilder.h"

#include <algorithm>
#include <limits>

using namespace Qt::StringLiterals;

namespace moetune {

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

} // namespace moetune
