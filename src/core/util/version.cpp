// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/util/version.h"

namespace moetune {

QString versionString() {
    return QStringLiteral(MOETUNE_VERSION);
}

} // namespace moetune
