// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/severitystyle.h"

#include "app/widgets/appresources.h"

using namespace Qt::StringLiterals;

namespace moetune {

QIcon SeverityStyle::icon(Severity severity) {
    ensureAppResources();
    switch (severity) {
    case Severity::Error:
        return QIcon(u":/moetune/icons/severity-error.svg"_s);
    case Severity::Warning:
        return QIcon(u":/moetune/icons/severity-warning.svg"_s);
    case Severity::Info:
        break;
    }
    return QIcon(u":/moetune/icons/severity-info.svg"_s);
}

QColor SeverityStyle::color(Severity severity) {
    switch (severity) {
    case Severity::Error:
        return QColor(0xd6, 0x45, 0x41);
    case Severity::Warning:
        return QColor(0xf0, 0xa0, 0x20);
    case Severity::Info:
        break;
    }
    return QColor(0x3a, 0x87, 0xd8);
}

QString SeverityStyle::label(Severity severity) {
    switch (severity) {
    case Severity::Error:
        return u"Error"_s;
    case Severity::Warning:
        return u"Warning"_s;
    case Severity::Info:
        break;
    }
    return u"Info"_s;
}

QString SeverityStyle::pluralLabel(Severity severity) {
    switch (severity) {
    case Severity::Error:
        return u"errors"_s;
    case Severity::Warning:
        return u"warnings"_s;
    case Severity::Info:
        break;
    }
    return u"info"_s;
}

} // namespace moetune
