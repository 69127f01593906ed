// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/job/tunespec.h"
#include "core/job/tuningtarget.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// The one check of a tuning job, for every shell (the Tune page, `moetune-cli tune` and `headroom`, the
// flows through TuneSpec::validate()): one sentence per bad field, naming the field and the fix, and the
// file names the run would write next to the ones the server wanted (a warning: never a refusal).
struct JobCheck {
    enum class Field {
        Framework,
        Experts,
        N,
        K,
        Topk,
        BlockShape,
        PerChannel,
        UpAndDown,
        BatchSizes,
        Gpus,
        Strategy,
        TimeBudget,
        DeviceName,
    };
    struct Problem {
        Field field;
        QString sentence;
    };
    QList<Problem> problems;
    QStringList fileNames;  // what the run will write (SGLang up [+ _down], or vLLM)
    QString fileNamesMatch; // a sentence: matches the wanted names, or how it differs ("" without a target)
    bool namesMatch = true;

    bool ok() const { return problems.isEmpty(); }
    QString firstProblem() const { return problems.isEmpty() ? QString() : problems.first().sentence; }
    // "The server looks for X, not Y: ..." when the names differ from the wanted ones, else "".
    QString namesWarning() const { return namesMatch ? QString() : fileNamesMatch; }

    // target: the shape a server's log asked for (a job for another N or E is refused, other names warned).
    static JobCheck check(const TuneSpec &spec, const std::optional<TuningTarget> &target = std::nullopt);
    // "1, 2, 4" / "0,1" / "all" as typed (allowAll: "" and "all" are the empty list, 0 is a number).
    static std::optional<QList<int>> parseList(const QString &text, bool allowAll, QString *error);
};

} // namespace moetune
