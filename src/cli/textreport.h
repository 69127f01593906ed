// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

#include <functional>

namespace moetune {
struct Diagnosis;
struct Finding;
struct TuningTarget;
} // namespace moetune

namespace moetune::cli {

// Renders a Diagnosis for a person at a terminal: the summary line, then each finding with its
// severity, occurrences and sources, the parsed tuning target, the evidence lines and the advice.
class TextReport {
public:
    // maxEvidence: evidence lines shown per finding (0 = all); the others are counted.
    explicit TextReport(bool color, int maxEvidence = 3, int width = 100);

    QString render(const Diagnosis &diagnosis, const QString &inputLabel) const;
    // The same text in pieces (the head, then one finding at a time): a report of 32,000 shapes is
    // printed without being whole in memory.
    void render(const Diagnosis &diagnosis, const QString &inputLabel,
                const std::function<void(const QString &)> &sink) const;
    // withTargetFields: list the target's fields (false when an earlier finding already listed them).
    QString renderFinding(const Finding &finding, bool withTargetFields = true) const;
    QString renderTarget(const TuningTarget &target, const QString &indent) const;

    // Control characters (ANSI escapes from the log included) made visible, so a log cannot drive the
    // terminal.
    static QString printable(QStringView text);

private:
    QString style(const QString &text, const char *code) const;
    QString wrap(const QString &text, const QString &indent) const;

    bool m_color;
    int m_maxEvidence;
    int m_width;
};

} // namespace moetune::cli
