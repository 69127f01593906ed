// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringList>
#include <QStringView>

namespace moetune {

// The one place that makes shell words, for the remote host's shell and for the commands shown to people
// (the serving benchmark's, a push's undo). Every remote path and argument goes through here.
// POSIX single quotes: 'it'\''s' - nothing inside is expanded ($(...), `...`, ;, newlines, globs).
// A leading dash stays a dash: commands put `--` before words that may start with one.
enum class ShellQuoting {
    Always,     // every word quoted: what moetune runs
    WhenNeeded, // a word of letters, digits and _-./=:,@+% only stays bare: what a person reads and types
};

QString shellQuote(QStringView word, ShellQuoting how = ShellQuoting::Always);
// A path that may start with "~/" (the remote user's home): "~/a b" -> "$HOME"/'a b'; otherwise shellQuote.
QString shellQuotePath(QStringView path);
// Joins argv into one command line, each word quoted.
QString shellJoin(const QStringList &argv, ShellQuoting how = ShellQuoting::Always);

} // namespace moetune
