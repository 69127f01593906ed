#pragma once

#include <QString>

namespace moetune {

// What a terminal would show for raw log text: no ANSI escape sequences, CRLF as one line break, and
// a carriage-return progress bar as its last state. Line breaks are kept one for one, so line numbers
// of the shown text are the log's.
QString displayLogText(const QString &raw);

} // namespace moetune
