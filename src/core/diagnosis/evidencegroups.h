// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/evidence.h"

#include <QList>
#include <QString>

namespace moetune {

// Evidence lines that say the same thing on several ranks (8 TP ranks print one warning 8 times), as one
// line with a count, for text meant to be read or pasted (Markdown). The lines differ only in the rank
// tag ("TP3", "DP1 TP3", "rank=3", "pid=123"); the first line of a group stands for it.
struct EvidenceGroup {
    Evidence first;
    QList<qint64> lines; // every line of the group, in log order (first.line first)
};

QList<EvidenceGroup> groupRankEvidence(const QList<Evidence> &evidence);
// The text with its rank tags replaced, the key lines are grouped by.
QString rankFreeText(const QString &text);

} // namespace moetune
