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
    // "quote": "last": title and texts quote the last match before the server serves (a figure that
    // changes during startup), not the first.
    bool quoteLast = false;
    // "joins": the id of a rule whose finding this one's facts join (one fact, two lines: the KV cache's
    // size and its tokens); joinText (may use {n}) is appended to that finding's title.
    QString joins;
    QString joinText;
    // "moe_kernel": the line names the MoE kernel a server start runs ({n} templates: its backend name,
    // the scheme of its layers, the layers it concerns when not the main ones, the N of the one shape it
    // speaks of). Such lines make one finding per start, rule "moe-kernel"; title and advice are optional.
    QString moeKernel;
    QString moeScheme;
    QString moeLayers;
    QString moeN;

    // The match budget of a rule on one line: PCRE2's match limit (backtracking steps), set in the
    // pattern itself ((*LIMIT_MATCH=n)), so a pattern like ^(a+)+$ costs at most this much per line
    // instead of time exponential in the line's length. A match that runs out of it is not valid
    // (QRegularExpressionMatch::isValid() false): the diagnosis names the rule and stops applying it.
    static constexpr int kMatchBudget = 200000;
    // Bounds of what a rule may hold (a user's rule file is read whole): longer fields are refused.
    static constexpr qsizetype kMaxPatternChars = 4096;
    static constexpr qsizetype kMaxTextChars = 8192; // title, explanation, advice, each

    // Reads one rule object; nullopt with a sentence in *error when a field is missing or wrong.
    static std::optional<Rule> fromJson(const QJsonObject &object, QString *error);
    // Replaces {n} (or {name}) with capture n of match; {n|text} gives text when the capture is empty.
    static QString expand(const QString &text, const QRegularExpressionMatch &match);
    // The finding's title for a rule that ran out of its match budget at a line.
    QString budgetTitle() const;
    QString budgetExplanation() const;
};

} // namespace moetune
