// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

// One log line that supports a finding.
struct Evidence {
    qint64 line = 0; // 1-based, in the logical (cleaned) log
    QString text;    // cleaned line
    qsizetype matchStart = 0;
    qsizetype matchLength = 0;

    bool operator==(const Evidence &) const = default;
};

} // namespace moetune
