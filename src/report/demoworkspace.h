// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

// The demo workspace compiled into the binary: a real recorded H200 sweep (Qwen3-30B-A3B, TP1), from
// remote_agent/bench/recordings via resources/demo-workspace/make_demo_workspace.py. Read-only.
class DemoWorkspace {
public:
    static QString path(); // a resource folder Workspace::open reads (":/moetune/demo-workspace")
    // The run the demo opens on, in the app and in `moetune-cli report demo`: tuned against the Triton
    // default of the shape the demo log (resources/demo) misses, 18 sizes (the server-kernel run against
    // SGLang's already tuned file, ~1.00x, is the newest but not the story's first page).
    static QString headlineRun();
};

} // namespace moetune
