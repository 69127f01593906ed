// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/sweepresult.h"

#include <QString>

#include <optional>

namespace moetune {

// A binary copy of a parsed result.json beside it (".result.cache"), so reopening a workspace of tens of
// thousands of measurements skips the JSON parse (~1 s for 50,000). Valid only for the exact result.json
// it was made from (size, modification time, format version); anything else is a miss, never an error.
class SweepResultCache {
public:
    static constexpr quint32 kVersion = 2;
    static QString cachePath(const QString &runDir);
    static std::optional<SweepResult> read(const QString &runDir);
    // Best effort: a read-only folder (the bundled demo, a mounted share) simply has no cache.
    static bool write(const QString &runDir, const SweepResult &result);
};

} // namespace moetune
