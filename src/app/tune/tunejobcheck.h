// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/job/jobcheck.h"
#include "core/job/tunespec.h"
#include "core/job/tuningtarget.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// The Tune page's view of the core's JobCheck (core/job/jobcheck.h, the one validator the CLI uses too):
// the same sentences and file names, each problem named by the object name of the widget that shows it.
struct TuneJobCheck {
    struct Problem {
        QString field; // object name of the widget ("nSpin", ...); "" when no field of the form has it
        QString sentence;
    };
    QList<Problem> problems;
    QStringList fileNames;
    QString fileNamesMatch;
    bool namesMatch = true;

    bool ok() const { return problems.isEmpty(); }
    static TuneJobCheck check(const TuneSpec &spec, const std::optional<TuningTarget> &target);
    static QString widgetName(JobCheck::Field field);
    static std::optional<QList<int>> parseList(const QString &text, bool allowAll, QString *error) {
        return JobCheck::parseList(text, allowAll, error);
    }
};

} // namespace moetune
