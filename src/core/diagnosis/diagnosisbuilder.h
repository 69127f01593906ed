// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/literalsearcher.h"
#include "core/diagnosis/logreader.h"
#include "core/diagnosis/moemessage.h"
#include "core/diagnosis/ruleset.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>

#include <algorithm>
#include <array>

namespace moetune {

// Turns the reader's hit lines into merged findings and tuning targets (one Diagnosis).
class DiagnosisBuilder {
public:
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
    };

    void handleMoe(const MoeMessage &msg, const QString &text, QByteArrayView bytes, qint64 line);
    void applyRules(const QByteArray &text, qint64 line, quint64 present);
    Entry &entry(const QString &id, const QString &ruleId, Severity severity, bool *created);
    static void addEvidence(Entry &e, qint64 line, const QString &text, qsizetype start, qsizetype length,
                            const QString &source);
    std::optional<TuningTarget> targetFor(const QString &path, Framework framework) const;
    Framework frameworkFor(const MoeMessage &msg, Framework prefixFramework) const;
    // finish(), step by step: one target per shape; each finding worded with its merged target; the
    // folder findings; all sorted by severity and first line.
    QList<TuningTarget> mergeTargets();
    void describeEntries(const QList<TuningTarget> &targets);
    QList<Finding> folderFindings(const QList<TuningTarget> &targets) const;
    QList<Finding> sortedFindings(QList<Finding> extra) const;

    const QString &sourceName(QByteArrayView bytes);

    const RuleSet &m_rules;
    QList<std::pair<QByteArray, QString>> m_sourceNames; // small cache: ranks repeat
    LiteralSearcher m_lineSearcher;                      // which literals one hit line holds
    quint64 m_moeBits = 0;                               // the MoE messages' literals among them
    QList<QList<const Rule *>> m_rulesByLiteral;
    QList<Entry> m_entries;
    QHash<QString, qsizetype> m_index;
    qint64 m_consumedThrough = 0;
    QSet<QString> m_loadedFolders;            // folders a tuned config was loaded from
    std::array<qint64, 3> m_frameworkVotes{}; // by Framework, from line prefixes
};

} // namespace moetune
