// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QRegularExpression>
#include <QString>

namespace moetune {

// A pattern compiled (and JIT-ed) now, so that threads sharing it later only read it.
inline QRegularExpression precompiledRegex(const QString &pattern) {
    QRegularExpression re(pattern);
    re.optimize();
    return re;
}

} // namespace moetune
