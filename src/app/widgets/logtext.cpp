// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/widgets/logtext.h"

#include "core/diagnosis/logreader.h"

using namespace Qt::StringLiterals;

namespace moetune {

QString displayLogText(const QString &raw) {
    return LogReader::cleanText(raw); // the reader's cleaning, so editor and evidence show one text
}

} // namespace moetune
