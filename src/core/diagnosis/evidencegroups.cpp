// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/evidencegroups.h"

#include <QHash>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

QString rankFreeText(const QString &text) {
    // SGLang "TP3" / "DP1 TP3" / "EP2", vLLM "rank=3" / "Worker_TP3" / "pid=123".
    static const QRegularExpression rank(uR"((\b|_)(TP|DP|PP|EP)\d+\b|\brank[= ]\d+\b|\bpid[= ]\d+\b)"_s);
    QString out = text;
    out.replace(rank, u"\\1\\2#"_s);
    return out;
}

QList<EvidenceGroup> groupRankEvidence(const QList<Evidence> &evidence) {
    QList<EvidenceGroup> groups;
    QHash<QString, qsizetype> byText;
    for (const Evidence &e : evidence) {
        const QString key = rankFreeText(e.text);
        const auto it = byText.constFind(key);
        if (it != byText.cend()) {
            groups[*it].lines.append(e.line);
            continue;
        }
        byText.insert(key, groups.size());
        groups.append(EvidenceGroup{e, {e.line}});
    }
    return groups;
}

} // namespace moetune
