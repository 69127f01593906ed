// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "report/demoworkspace.h"

#include <QtCore/qresource.h>

using namespace Qt::StringLiterals;

// The resources of a static library are registered only when asked for by name.
static void initDemoWorkspaceResource() {
    Q_INIT_RESOURCE(demo_workspace);
}

namespace moetune {

QString DemoWorkspace::path() {
    static const bool once = [] {
        initDemoWorkspaceResource();
        return true;
    }();
    Q_UNUSED(once);
    return u":/moetune/demo-workspace"_s;
}

QString DemoWorkspace::headlineRun() {
    return u"20261129-qwen3-h200-fast"_s;
}

} // namespace moetune
