// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

// Registers core.qrc (rules, demo log): a static library's resources need an explicit init.
void ensureCoreResources();
// ":/moetune/demo/demo-sglang.log", after ensureCoreResources().
QString demoLogPath();

} // namespace moetune
