// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/rule.h"
#include "core/moe/precompiledregex.h"
#include "core/util/errorout.h"

#include <QJsonValue>

#include <tuple>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool readString(const QJsonObject &o, QLatin1StringView key, bool required, QString *out, QString *error,
                const QString &where) {
    const QJsonValue v = o.value(key);
    if (v.isUndefined() || v.isNull()) {
        if (required)
            return failWith(error, where + u": the field \""_s + key + u"\" is missing."_s);
        return true;
    }
    if (!v.isString())
        return failWith(error, where + u": the field \""_s + key + u"\" must be a string."_s);
    *out = v.toString();
    if (required && out->trimmed().isEmpty())
        return failWith(error, where + u": the field \""_s + key + u"\" is empty."_s);
    return true;
}

} // namespace

std::optional<Rule> Rule::fromJson(const QJsonObject &object, QString *error) {
    Rule r;
    QString where = u"rule"_s;
    if (!readString(object, "id"_L1, true, &r.id, error, where))
        return std::nullopt;
    where = u"rule \""_s + r.id + u'"';
    static const QRegularExpression idRe = precompiledRegex(u"^[A-Za-z0-9][A-Za-z0-9_.\\-]*$"_s);
    if (!idRe.match(r.id).hasMatch()) {
        failWith(error, where + u": an id may hold only letters, digits, '-', '_' and '.'."_s);
        return std::nullopt;
    }
    QString pattern, prefilter, severity, quote;
    if (!readString(object, "moe_kernel"_L1, false, &r.moeKernel, error, where) ||
        !readString(object, "moe_scheme"_L1, false, &r.moeScheme, error, where) ||
        !readString(object, "moe_layers"_L1, false, &r.moeLayers, error, where) ||
        !readString(object, "moe_n"_L1, false, &r.moeN, error, where))
        return std::nullopt;
    const bool kernelRule = !r.moeKernel.trimmed().isEmpty();
    if (!readString(object, "pattern"_L1, true, &pattern, error, where) ||
        !readString(object, "quote"_L1, false, &quote, error, where) ||
        !readString(object, "joins"_L1, false, &r.joins, error, where) ||
        !readString(object, "join_text"_L1, false, &r.joinText, error, where) ||
        !readString(object, "prefilter"_L1, true, &prefilter, error, where) ||
        !readString(object, "severity"_L1, false, &severity, error, where) ||
        !readString(object, "title"_L1, !kernelRule, &r.title, error, where) ||
        !readString(object, "explanation"_L1, false, &r.explanation, error, where) ||
        !readString(object, "advice"_L1, false, &r.advice, error, where))
        return std::nullopt;
    for (const auto &[key, text, limit] :
         {std::tuple{"pattern", &pattern, kMaxPatternChars}, std::tuple{"title", &r.title, kMaxTextChars},
          std::tuple{"explanation", &r.explanation, kMaxTextChars},
          std::tuple{"advice", &r.advice, kMaxTextChars}}) {
        if (text->size() > limit) {
            failWith(error, where + u": the field \""_s + QLatin1StringView(key) + u"\" is "_s +
                                QString::number(text->size()) + u" characters long, more than the "_s +
                                QString::number(limit) + u" a rule may hold."_s);
            return std::nullopt;
        }
    }
    r.pattern = QRegularExpression(pattern);
    if (!r.pattern.isValid()) {
        failWith(error, where + u": the pattern is not a valid regular expression ("_s +
                            r.pattern.errorString() + u" at offset "_s +
                            QString::number(r.pattern.patternErrorOffset()) + u")."_s);
        return std::nullopt;
    }
    // The budget goes in front of the pattern (PCRE2 reads start-of-pattern limits only there).
    r.pattern = QRegularExpression(u"(*LIMIT_MATCH=%1)"_s.arg(kMatchBudget) + pattern);
    r.prefilter = prefilter.toUtf8();
    // The prefilter is what keeps a 1 GB log fast: too short a literal matches nearly every line.
    if (r.prefilter.size() < 4) {
        failWith(
            error,
            where + u": the prefilter \""_s + prefilter +
                u"\" is too short; give a literal of at least 4 characters that every matching line contains."_s);
        return std::nullopt;
    }
    if (severity.isEmpty()) {
        r.severity = Severity::Info;
    } else if (const auto s = severityFromString(severity)) {
        r.severity = *s;
    } else {
        failWith(error, where + u": severity \""_s + severity + u"\" is not one of info, warning, error."_s);
        return std::nullopt;
    }
    if (quote.isEmpty() || quote == u"first"_s) {
        r.quoteLast = false;
    } else if (quote == u"last"_s) {
        r.quoteLast = true;
    } else {
        failWith(error, where + u": quote \""_s + quote + u"\" is not one of first, last."_s);
        return std::nullopt;
    }
    if (!kernelRule && (!r.moeScheme.isEmpty() || !r.moeLayers.isEmpty() || !r.moeN.isEmpty())) {
        failWith(error, where +
                            u": moe_scheme, moe_layers and moe_n describe a \"moe_kernel\" rule; give its "
                            "moe_kernel (the backend name, e.g. \"{1}\")."_s);
        return std::nullopt;
    }
    if (!r.joins.isEmpty() && r.joinText.isEmpty()) {
        failWith(error, where + u": a rule that joins \""_s + r.joins +
                            u"\" needs a \"join_text\" to add to that finding's title."_s);
        return std::nullopt;
    }
    r.pattern.optimize();
    return r;
}

QString Rule::budgetTitle() const {
    return u"Rule \"%1\" ran out of its match budget and was not applied to the rest of the log"_s.arg(id);
}

QString Rule::budgetExplanation() const {
    return u"On the line quoted, the rule's pattern needed more than %1 backtracking steps (a repeat inside "
           u"a repeat, such as (a+)+, takes time exponential in the line's length), so moetune stopped it "
           u"there rather than let one rule slow the whole diagnosis; lines after it were not matched "
           u"against it. The rule comes from %2: write its pattern without nested repeats."_s
               .arg(kMatchBudget)
               .arg(origin.isEmpty() ? u"a rule file"_s : origin);
}

QString Rule::expand(const QString &text, const QRegularExpressionMatch &match) {
    if (!text.contains(u'{'))
        return text;
    static const QRegularExpression placeholder =
        precompiledRegex(u"\\{(\\d|[A-Za-z_][A-Za-z0-9_]*)(?:\\|([^{}]*))?\\}"_s);
    QString out;
    qsizetype last = 0;
    auto it = placeholder.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch p = it.next();
        out += QStringView(text).sliced(last, p.capturedStart(0) - last);
        const QString key = p.captured(1);
        bool isNumber = false;
        const int n = key.toInt(&isNumber);
        const QString value = isNumber ? match.captured(n) : match.captured(key);
        const QString trimmed = value.trimmed();
        out += trimmed.isEmpty() && p.capturedLength(2) > 0 ? p.captured(2) : trimmed;
        last = p.capturedEnd(0);
    }
    out += QStringView(text).sliced(last);
    return out;
}

} // namespace moetune
