// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

// The readers' and writers' one way to fail: the sentence into *error (when the caller wants it), false out.
//   if (!ok) return failWith(error, tr("..."));
inline bool failWith(QString *error, const QString &message) {
    if (error)
        *error = message;
    return false;
}

} // namespace moetune
