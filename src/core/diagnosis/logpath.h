// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

// Paths as a log prints them: '/' or '\' separated, never touched on disk.
QString fileNameOf(const QString &path); // "a/b/E=1.json" -> "E=1.json"
QString folderOf(const QString &path);   // "a/b/E=1.json" -> "a/b"; "" without a separator

} // namespace moetune
