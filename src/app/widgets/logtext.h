// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

// What a terminal would show for raw log text (LogReader::cleanText): no escape sequences or control
// bytes, CRLF as one line break, a carriage-return progress bar as its last state; line numbers kept.
QString displayLogText(const QString &raw);

} // namespace moetune
