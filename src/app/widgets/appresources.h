// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

namespace moetune {

// Registers app.qrc (icons) and core.qrc (demo log, rules): resources of static libraries need an
// explicit init. Safe to call often; only the first call does anything.
void ensureAppResources();

} // namespace moetune
