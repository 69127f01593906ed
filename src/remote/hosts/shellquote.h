// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringList>
#include <QStringView>

namespace moetune {

// The one place that makes remote shell words. Every remote path and argument goes through here.
// POSIX single quotes: 'it'\''s' - nothing inside is expanded ($(...), `...`, ;, newlines, globs).
QString shellQuote(QStringView word);
// A path that may start with "~/" (the remote user's home): "~/a b" -> "$HOME"/'a b'; otherwise shellQuote.
QString shellQuotePath(QStringView path);
// Joins argv into one command line, each word quoted.
QString shellJoin(const QStringList &argv);

} // namespace moetune
