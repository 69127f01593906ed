// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringView>

#include <optional>

namespace moetune {

// Ordered: a higher value is worse.
enum class Severity { Info, Warning, Error };

// "info" / "warning" / "error"
QString severityName(Severity severity);
std::optional<Severity> severityFromString(QStringView text);

} // namespace moetune
