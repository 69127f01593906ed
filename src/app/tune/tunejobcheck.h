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

// The Tune page's checks of a job as typed: one sentence per bad field (naming the field and the fix),
// and the file names a server would read for it, compared with the ones the server wanted.
struct TuneJobCheck {
    struct Problem {
        QString field; // object name of the widget ("nSpin", ...)
        QString sentence;
    };
    QList<Problem> problems;
    QStringList fileNames;  // what the run will write (SGLang up [+ _down], or vLLM)
    QString fileNamesMatch; // a sentence: matches the wanted names, or how it differs ("" without a target)
    bool namesMatch = true;

    bool ok() const { return problems.isEmpty(); }
    static TuneJobCheck check(const TuneSpec &spec, const std::optional<TuningTarget> &target);
    // "1, 2, 4" / "0,1" / "all" as typed.
    static std::optional<QList<int>> parseList(const QString &text, bool allowAll, QString *error);
};

} // namespace moetune
