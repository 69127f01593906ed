// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

struct Report;

// Plain text and Markdown renderings of a Report (the CLI's `report` without --pdf, copy to clipboard).
class ReportText {
public:
    static QString toText(const Report &report);
    static QString toMarkdown(const Report &report);
    // Shared number formats, so every rendering (PDF included) prints the same values.
    static QString us(double v);       // "54.2" / "-"
    static QString speedup(double v);  // "1.08x" / "-"
    static QString percent(double v);  // "32%" / "-"
    static QString duration(double s); // "1 min 14 s", "8.8 h"
};

} // namespace moetune
