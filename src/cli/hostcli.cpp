// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/hostcli.h"

#include "cli/console.h"
#include "remote/hosts/hoststore.h"

#include <QSettings>

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune::cli {

namespace {

// Reads one line from the terminal with echo off (passwords, passphrases); "" when there is no terminal.
QString readSecret(const QString &prompt, bool *ok) {
    *ok = false;
    const int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return {};
    const QByteArray p = prompt.toUtf8();
    if (::write(fd, p.constData(), size_t(p.size())) < 0) {
        ::close(fd);
        return {};
    }
    termios old{};
    const bool haveTermios = tcgetattr(fd, &old) == 0;
    if (haveTermios) {
        termios quiet = old;
        quiet.c_lflag &= ~tcflag_t(ECHO);
        tcsetattr(fd, TCSAFLUSH, &quiet);
    }
    QByteArray line;
    char c = 0;
    ssize_t n = 0;
    while ((n = ::read(fd, &c, 1)) == 1 && c != '\n')
        line.append(c);
    if (haveTermios)
        tcsetattr(fd, TCSAFLUSH, &old);
    [[maybe_unused]] const ssize_t w = ::write(fd, "\n", 1);
    ::close(fd);
    *ok = n == 1;
    return QString::fromUtf8(line);
}

} // namespace

std::optional<HostConfig> resolveHost(const QString &spec, QString *error) {
    QSettings settings;
    return HostStore(&settings).resolve(spec, error);
}

HostSessionSync::SecretPrompt terminalSecretPrompt() {
    return [](SshTransport::SecretKind kind, const QStringList &prompts, const QString &instruction,
              QString *why) -> std::optional<QStringList> {
        if (!Console::stdinIsTerminal()) {
            *why = kind == SshTransport::SecretKind::Passphrase
                       ? u"the key needs a passphrase and there is no terminal to ask it on. Load the key "
                         u"into ssh-agent (ssh-add) first."_s
                       : u"the host asks for a password and there is no terminal to ask it on. Use a key "
                         u"(ssh-copy-id) or ssh-agent."_s;
            return std::nullopt;
        }
        if (!instruction.isEmpty())
            Console::err(instruction + u'\n');
        QStringList answers;
        const QStringList asked = prompts.isEmpty() ? QStringList{u"Password: "_s} : prompts;
        for (const QString &prompt : asked) {
            bool ok = false;
            QString text = prompt.trimmed();
            if (!text.endsWith(u':'))
                text += u':';
            answers.append(readSecret(text + u' ', &ok));
            if (!ok) {
                *why = u"no answer was given on the terminal."_s;
                return std::nullopt;
            }
        }
        return answers;
    };
}

} // namespace moetune::cli
