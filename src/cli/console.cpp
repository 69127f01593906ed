// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/console.h"

#include <QString>

using namespace Qt::StringLiterals;

#include <cstdio>
#include <unistd.h>

namespace moetune::cli {

int Console::fail(const QString &command, const QString &message, int code) {
    err(u"moetune-cli "_s + command + u": "_s + message + u'\n');
    return code;
}

namespace {
void write(std::FILE *stream, QByteArrayView bytes) {
    if (!bytes.isEmpty())
        std::fwrite(bytes.data(), 1, static_cast<size_t>(bytes.size()), stream);
    std::fflush(stream);
}
} // namespace

namespace {
bool hidden(QChar c) {
    const char16_t u = c.unicode();
    if (u == u'\n' || u == u'\t')
        return false;
    if (u < 0x20 || u == 0x7f || (u >= 0x80 && u < 0xa0))
        return true;
    const auto cat = c.category();
    return cat == QChar::Other_Format || cat == QChar::Separator_Line || cat == QChar::Separator_Paragraph;
}
} // namespace

QString Console::safe(QStringView text) {
    qsizetype i = 0;
    while (i < text.size() && !hidden(text[i]))
        ++i;
    if (i == text.size())
        return text.toString();
    QString out = text.first(i).toString();
    for (; i < text.size(); ++i) {
        const QChar c = text[i];
        if (hidden(c))
            out += u"\\u"_s + QString::number(c.unicode(), 16).toUpper().rightJustified(4, u'0');
        else
            out += c;
    }
    return out;
}

void Console::out(const QString &text) {
    write(stdout, safe(text).toUtf8());
}

void Console::outBytes(QByteArrayView bytes) {
    write(stdout, bytes);
}

void Console::err(const QString &text) {
    write(stderr, safe(text).toUtf8());
}

void Console::errControl(const QString &sequence) {
    write(stderr, sequence.toUtf8());
}

bool Console::stdoutIsTerminal() {
    return isatty(STDOUT_FILENO) == 1;
}

bool Console::stderrIsTerminal() {
    return isatty(STDERR_FILENO) == 1;
}

bool Console::stdinIsTerminal() {
    return isatty(STDIN_FILENO) == 1;
}

} // namespace moetune::cli
