// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace moetune {

// Before/after of a push, from two diagnoses of the server's log (before the push, and the log written
// since the restart): is every rank's warning for the pushed shape gone, and does the server say it
// uses the pushed file? Otherwise exactly what remains, per finding and rank.
struct PushProof {
    struct Remaining {
        QString findingId;
        QString title;
        QStringList sources; // ranks
        int occurrences = 0;
    };
    QStringList pushedTargets; // full paths installed
    QStringList ranksBefore;   // ranks that warned about the shape before the push
    int findingsBefore = 0;
    QList<Remaining> remaining; // findings about the shape in the log since the restart
    QStringList ranksUsing;     // ranks whose log says "Using MoE kernel config from <pushed target>."
    bool afterLogEmpty = true;

    bool warningGone() const { return !afterLogEmpty && remaining.isEmpty(); }
    // afterLog: the log written since the restart (for the "Using ... from <path>" lines).
    static PushProof compare(const Diagnosis &before, const Diagnosis &after,
                             const QStringList &pushedTargets, const QString &afterLogPath);
    QString summary() const; // one sentence for people
    QJsonObject toJson() const;
};

} // namespace moetune
