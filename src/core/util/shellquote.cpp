// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/util/shellquote.h"

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool isBare(QStringView word) {
    static const QString safe = u"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@+%"_s;
    if (word.isEmpty())
        return false;
    for (const QChar c : word) {
        if (!safe.contains(c))
            return false;
    }
    return true;
}

} // namespace

QString shellQuote(QStringView word, ShellQuoting how) {
    if (how == ShellQuoting::WhenNeeded && isBare(word))
        return word.toString();
    QString out;
    out.reserve(word.size() + 2);
    out += u'\'';
    for (QChar c : word) {
        if (c == u'\'')
            out += u"'\\''"_s; // close, escaped quote, reopen: the only character single quotes cannot hold
        else
            out += c;
    }
    out += u'\'';
    return out;
}

QString shellQuotePath(QStringView path) {
    if (path == u"~")
        return u"\"$HOME\""_s;
    if (path.startsWith(u"~/")) {
        const QStringView rest = path.sliced(2);
        return rest.isEmpty() ? u"\"$HOME\"/"_s : u"\"$HOME\"/"_s + shellQuote(rest);
    }
    return shellQuote(path);
}

QString shellJoin(const QStringList &argv, ShellQuoting how) {
    QStringList quoted;
    quoted.reserve(argv.size());
    for (const QString &a : argv)
        quoted.append(shellQuote(a, how));
    return quoted.join(u' ');
}

} // namespace moetune
