// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/severity.h"

#include <QByteArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <QString>

#include <optional>

namespace moetune {

// A log rule given as data (resources/rules/*.json or the user's rule folder).
struct Rule {
    QString id;
    QRegularExpression pattern;
    QByteArray prefilter; // a literal every matching line contains (cheap byte search before the regex)
    Severity severity = Severity::Info;
    QString title;       // may use {1}, {2}... for the pattern's captures
    QString explanation; // likewise
    QString advice;      // likewise
    QString origin;      // file it came from

    // Reads one rule object; nullopt with a sentence in *error when a field is missing or wrong.
    static std::optional<Rule> fromJson(const QJsonObject &object, QString *error);
    // Replaces {n} with capture n of match.
    static QString expand(const QString &text, const QRegularExpressionMatch &match);
};

} // namespace moetune
