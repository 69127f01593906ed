// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

// The version of moetune (app, CLI and the agent it deploys share it).
QString versionString();

} // namespace moetune
