// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// DiagnosisBuilder, the order of the findings: latest start first, by severity, a job's findings together.
#include "core/diagnosis/diagnosisbuilder.h"

#include "core/diagnosis/moerule.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

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
