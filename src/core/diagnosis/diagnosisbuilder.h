// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/literalsearcher.h"
#include "core/diagnosis/logreader.h"
#include "core/diagnosis/logtime.h"
#include "core/diagnosis/moekernelsighting.h"
#include "core/diagnosis/moemessage.h"
#include "core/diagnosis/ruleset.h"
#include "core/diagnosis/serverevent.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>

#include <algorithm>
#include <array>

namespace moetune {

// Turns the reader's hit lines into merged findings and tuning targets (one Diagnosis). One class, a file
// per job: diagnosisbuilder.cpp reads the hit lines (server events, data rules, evidence),
// diagnosisbuildermoe.cpp the MoE config lookups and kernel lines, diagnosisbuildermerge.cpp merges the
// parts read in parallel and folds the server starts, diagnosisbuilderdescribe.cpp words the findings at
// finish() (targets, folders), diagnosisbuilderorder.cpp orders them.
class DiagnosisBuilder {
public:
    // What one diagnosis lists one by one; the rest is counted ("and N more"), so that memory, time and
    // output follow what is shown, not what the log holds (issue 23: 10^6 device names, 10^5 restarts).
    static constexpr int kMaxShapeFindings = 256; // MoE config findings (one per file name) per start
    static constexpr int kMaxStartsKept = 16;     // server starts kept in detail, the latest ones
    static constexpr int kMaxOmittedNamesCounted = 1 << 16; // distinct names beyond the cap counted exactly

    explicit DiagnosisBuilder(const RuleSet &rules);

    // The literals the reader must find: the MoE messages' and every rule's prefilter.
    QList<QByteArray> literals() const;
    void addHit(const LogReader::Hit &hit);
    // Appends what another builder found in the part of the log that follows this one's;
    // lineOffset = lines before that part.
    void merge(DiagnosisBuilder &&later, qint64 lineOffset);
    Diagnosis finish(qint64 bytesRead, qint64 linesRead, bool cancelled);
    // The last line read as the continuation of a wrapped message (0 if none). A part of a split file
    // starts with skipThrough(what the previous part consumed past its end), as a single pass would.
    qint64 consumedThrough() const { return m_consumedThrough; }
    void skipThrough(qint64 line) { m_consumedThrough = std::max(m_consumedThrough, line); }

private:
    struct Entry {
        Finding finding;
        QSet<QString> sourceSet;
        qint64 firstLine = 0;
        std::optional<MoeMessage> message; // the first MoE message, for wording the finding
        const Rule *rule = nullptr;        // the data rule, for the others
        int segment = 0;                   // index into m_segments: the server start it belongs to
        qint64 quoteLine = 0;              // a quote-last rule: the line its texts quote
        bool serverStart = false;          // the start / readiness finding of its segment
    };
    // The lines of one server start: from its start line (or the log's first line) to the next start.
    struct Segment {
        qint64 startLine = 0; // 0: this start began before the log does
        std::optional<LogTime> startTime;
        Framework framework = Framework::Unknown;
        qint64 servingLine = 0; // its first readiness line: facts quoted "before serving" stop there
        qint64 readyLine = 0;   // its strongest readiness line (ServerEvent::strength)
        int readyStrength = 0;
        std::optional<LogTime> readyTime;
        bool readyTimeFromEarlierLine = false; // the ready line has no time: that of a line before it
        QSet<QString> loadedFolders;           // folders a tuned config was loaded from
        QList<MoeKernelSighting> kernels;      // lines naming the MoE kernel, one per distinct fact
        QString model;                         // the served model as its start line names it
        int moeEntries = 0;                    // MoE config findings listed (at most kMaxShapeFindings)
        qint64 omittedLines = 0;               // MoE lines of shapes beyond that, only counted
        QSet<size_t> omittedNames;             // their distinct file names (hashes, bounded)
        bool omittedNamesCapped = false;       // more distinct names than kMaxOmittedNamesCounted
        QList<Evidence> omittedEvidence;       // the first such line
        QSet<QString> omittedSources;          // ranks that printed them (bounded: ranks repeat)
    };

    void handleMoe(const MoeMessage &msg, const QString &text, QByteArrayView bytes, qint64 line);
    // The records of one line whose newlines a paste lost (starts: LogPrefix::recordStartsWithin), each
    // read as a line of its own.
    void addRecords(const LogReader::Hit &hit, const QList<qsizetype> &starts);
    // The server events and data rules of a line, after its MoE messages.
    void finishHit(const LogReader::Hit &hit, quint64 present);
    void handleServerEvent(const ServerEvent &event, const LogReader::Hit &hit);
    void applyRules(const QByteArray &text, qint64 line, quint64 present);
    Entry &entry(const QString &id, const QString &ruleId, Severity severity, bool *created);
    static void addEvidence(Entry &e, qint64 line, const QString &text, qsizetype start, qsizetype length,
                            const QString &source);
    // Moves what `later` (the same finding in a later part of the log) holds into `mine`.
    static void absorb(Entry &mine, Entry &&later, qint64 servingLine);
    static void absorbSegment(Segment &mine, const Segment &later);
    // Starts that hold nothing of their own (a start line right after another, or lines before the first
    // start line that say nothing) join the next one; entries of a joined start merge.
    void foldSegments();
    // Folds, then drops the details of all but the latest kMaxStartsKept starts (counted in
    // m_startsOmitted); keepFirst keeps segment 0 (a part of a split file continues the one before).
    void pruneSegments(bool keepFirst);
    void addOmittedShapesFindings();
    void joinFindings(); // rules that join another rule's finding (Rule::joins)
    static void addKernel(Segment &seg, const MoeKernelSighting &sighting);
    // Per start: the kernel finding's words, its lookups' urgency (MoeKernelVerdict); the starts' kernels.
    QList<QList<MoeKernelUse>> judgeKernels(QList<Finding> &latestFolders);
    std::optional<TuningTarget> targetFor(const QString &path, Framework framework) const;
    static std::optional<TuningTarget> denseTargetFor(const QString &path, Framework framework);
    Framework frameworkFor(const MoeMessage &msg, Framework prefixFramework) const;
    // finish(), step by step: one target per shape; each finding worded with its merged target; the
    // folder findings; all sorted by severity and first line.
    QList<TuningTarget> mergeTargets(int segment);
    void describeEntries(int segment, const QList<TuningTarget> &targets);
    void describeStarts(Diagnosis &d);
    QList<Finding> folderFindings(const QList<TuningTarget> &targets) const;
    QList<Finding> sortedFindings(QList<Finding> extra) const;

    const QString &sourceName(QByteArrayView bytes);

    const RuleSet &m_rules;
    QList<std::pair<QByteArray, QString>> m_sourceNames; // small cache: ranks repeat
    LiteralSearcher m_lineSearcher;                      // which literals one hit line holds
    quint64 m_moeBits = 0;                               // the MoE messages' literals among them
    quint64 m_serverBits = 0;                            // the server start / ready literals
    QList<QList<const Rule *>> m_rulesByLiteral;
    QList<Entry> m_entries;
    QHash<std::pair<QString, int>, qsizetype> m_index; // (finding id, segment) -> entry
    QSet<const Rule *> m_outOfBudget; // rules that ran out of their match budget: not applied again
    QList<Segment> m_segments{Segment{}};
    qint64 m_consumedThrough = 0;
    qint64 m_startsOmitted = 0;               // earlier server starts whose details were dropped
    std::array<qint64, 3> m_frameworkVotes{}; // by Framework, from line prefixes
};

} // namespace moetune
