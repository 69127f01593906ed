// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/evidence.h"
#include "core/diagnosis/severity.h"
#include "core/job/tuningtarget.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// One thing the log says, merged over every rank that said it.
struct Finding {
    QString id;   // stable per finding, e.g. "moe-untuned:E=128,N=768,...": unique within a Diagnosis
    QString rule; // rule id ("moe-untuned", "moe-fallback", ... or a data rule's id)
    Severity severity = Severity::Info;
    QString title;
    QString explanation;
    QString advice;
    // Distinct lines: the first headEvidence and the latest ones, maxEvidence in all; evidenceOmitted
    // counts the lines left out between them.
    QList<Evidence> evidence;
    qint64 evidenceOmitted = 0;
    int occurrences = 0; // total times seen (8 ranks -> 8)
    QStringList sources; // ranks/processes seen: "TP0".."TP7", "EngineCore_DP0 pid=123", "main"
    std::optional<TuningTarget> target;
    int start = 1; // the server start (1-based, in log order) whose lines these are: Diagnosis::starts

    static constexpr int maxEvidence = 20;
    static constexpr int headEvidence = 5;

    bool operator==(const Finding &) const = default;
};

} // namespace moetune
