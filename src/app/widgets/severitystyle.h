// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/severity.h"

#include <QColor>
#include <QIcon>
#include <QString>

namespace moetune {

// How a severity looks everywhere in the app: one icon, one colour, one word.
class SeverityStyle {
public:
    static QIcon icon(Severity severity);
    static QColor color(Severity severity);
    static QString label(Severity severity);       // "Error", "Warning", "Info"
    static QString pluralLabel(Severity severity); // "errors", "warnings", "info"
};

} // namespace moetune
