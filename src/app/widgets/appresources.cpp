// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/appresources.h"

#include "core/util/coreresources.h"

#include <QtGlobal>

// Q_INIT_RESOURCE must be used outside any namespace.
static void initAppQrc() {
    Q_INIT_RESOURCE(app);
}

namespace moetune {

void ensureAppResources() {
    static const bool done = [] {
        initAppQrc();
        ensureCoreResources();
        return true;
    }();
    Q_UNUSED(done);
}

} // namespace moetune
