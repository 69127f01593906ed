// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/util/coreresources.h"

#include <QtGlobal>

#include <mutex>

// Q_INIT_RESOURCE must be used outside any namespace.
static void initCoreQrc() {
    Q_INIT_RESOURCE(core);
}

namespace moetune {

void ensureCoreResources() {
    static std::once_flag once;
    std::call_once(once, initCoreQrc);
}

QString demoLogPath() {
    return QStringLiteral(":/moetune/demo/demo-sglang.log");
}

} // namespace moetune
