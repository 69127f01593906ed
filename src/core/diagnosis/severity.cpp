// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/severity.h"

using namespace Qt::StringLiterals;

namespace moetune {

QString severityName(Severity severity) {
    switch (severity) {
    case Severity::Info:
        return u"info"_s;
    case Severity::Warning:
        return u"warning"_s;
    case Severity::Error:
        return u"error"_s;
    }
    return u"info"_s;
}

std::optional<Severity> severityFromString(QStringView text) {
    if (text.compare(u"info", Qt::CaseInsensitive) == 0)
        return Severity::Info;
    if (text.compare(u"warning", Qt::CaseInsensitive) == 0 || text.compare(u"warn", Qt::CaseInsensitive) == 0)
        return Severity::Warning;
    if (text.compare(u"error", Qt::CaseInsensitive) == 0)
        return Severity::Error;
    return std::nullopt;
}

} // namespace moetune
