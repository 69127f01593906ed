// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/hostdiagnosesource.h"

#include "cli/console.h"
#include "cli/hostcli.h"
#include "cli/tempfileguard.h"
#include "core/host/serverchoice.h"

#include <QCommandLineParser>
#include <QDir>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune::cli {

QList<QCommandLineOption> HostDiagnoseSource::options() const {
    return {
        QCommandLineOption(
            u"host"_s,
            u"Diagnose the server log of HOST (ssh config alias, app host, user@host[:port], or "
            u"'local'), merged with what the host's probe finds."_s,
            u"HOST"_s),
        QCommandLineOption(u"python"_s, u"With --host: the host's Python interpreter (e.g. a venv's)."_s,
                           u"PATH"_s),
        QCommandLineOption(u"bytes"_s,
                           u"With --host: how much of the end of the log to fetch (default 64M)."_s,
                           u"N[K|M|G]"_s, u"64M"_s),
        QCommandLineOption(
            u"log"_s,
            u"With --host: the log source, a file on the host (/path, ~/path; one word without spaces is "
            u"a file too: relative to the current folder for 'local', refused for other hosts) or a "
            u"command that prints the log, with at least one space (default: the host's setting in the "
            u"app)."_s,
            u"SOURCE"_s),
        QCommandLineOption(
            u"accept-new-host-key"_s,
            u"With --host: record an unknown host key instead of refusing (a changed key is always "
            u"refused)."_s),
        QCommandLineOption(u"server"_s,
                           u"With --host: which of the host's servers the host facts are about, a pid or a "
                           u"port (needed when several run and none writes the log file)."_s,
                           u"PID|PORT"_s),
    };
}

bool HostDiagnoseSource::isSelected(const QCommandLineParser &parser) const {
    return parser.isSet(u"host"_s);
}

std::optional<LogSource> HostDiagnoseSource::logSourceOption(const QString &text, bool local,
                                                             QString *error) {
    const QString t = text.trimmed();
    if (t.isEmpty()) {
        *error = u"--log is empty: give a file on the host or a command that prints the log."_s;
        return std::nullopt;
    }
    if (t.startsWith(u'/') || t.startsWith(u"~/"_s))
        return LogSource{LogSource::Kind::File, t};
    static const QRegularExpression space(u"\\s"_s);
    const qsizetype firstSpace = t.indexOf(space);
    QString firstWord = firstSpace < 0 ? t : t.left(firstSpace);
    // A quoted first word is the program the shell runs: judge it without its quotes.
    if (firstWord.startsWith(u'\'') || firstWord.startsWith(u'"')) {
        const qsizetype close = t.indexOf(t.at(0), 1);
        firstWord = close > 0 ? t.mid(1, close - 1) : t.mid(1);
    }
    const bool absoluteProgram = firstWord.startsWith(u'/') || firstWord.startsWith(u"~/"_s);
    // One word, or a first word that is a relative path: a file, never run (a relative path as a command
    // would execute that file).
    if (firstSpace < 0 || (firstWord.contains(u'/') && !absoluteProgram)) {
        if (firstSpace >= 0) {
            *error = u"--log '%1' would run the file %2 as a command. Give a log file as /path or ~/path, "
                     u"or a command that starts with a program name (journalctl, docker, cat -- FILE)."_s.arg(
                         t, firstWord);
            return std::nullopt;
        }
        if (local) // the Local machine: relative to where moetune-cli runs, like any local path
            return LogSource{LogSource::Kind::File, QDir::current().absoluteFilePath(t)};
        *error = u"--log '%1' is a relative path, and moetune does not guess the folder it is relative to "
                 u"on the host. Give it as /path or ~/%1 (a command needs a space, e.g. 'journalctl -u "
                 u"sglang')."_s.arg(t);
        return std::nullopt;
    }
    return LogSource{LogSource::Kind::Command, t};
}

std::optional<Diagnosis> HostDiagnoseSource::diagnose(const QCommandLineParser &parser,
                                                      const Diagnoser &diagnoser, QString *label,
                                                      QString *error) {
    auto host = resolveHost(parser.value(u"host"_s), error);
    if (!host)
        return std::nullopt;
    if (parser.isSet(u"log"_s)) {
        const auto source = logSourceOption(parser.value(u"log"_s), host->local, error);
        if (!source)
            return std::nullopt;
        host->logSource = *source;
    }
    if (parser.isSet(u"python"_s))
        host->python = parser.value(u"python"_s);
    if (parser.isSet(u"server"_s)) {
        QString why;
        if (!ServerChoice::parse(parser.value(u"server"_s), &why)) {
            *error = u"--server: "_s + why;
            return std::nullopt;
        }
        host->serverProfile.server = parser.value(u"server"_s).trimmed();
    }
    static const QRegularExpression sizeRe(u"^(\\d+)([KkMmGg]?)[Bb]?$"_s);
    const auto m = sizeRe.match(parser.value(u"bytes"_s).trimmed());
    if (!m.hasMatch() || m.captured(1).toLongLong() <= 0) {
        *error = u"--bytes wants a size such as 1048576, 512K, 64M or 2G (got '%1')."_s.arg(
            parser.value(u"bytes"_s));
        return std::nullopt;
    }
    const QString unit = m.captured(2).toUpper();
    const int shift = unit == u"K"_s ? 10 : unit == u"M"_s ? 20 : unit == u"G"_s ? 30 : 0;
    const qint64 maxBytes = m.captured(1).toLongLong() << shift;
    if (host->logSource.kind == LogSource::Kind::None) {
        *error = u"%1 has no log source. Pass --log /path/to/server.log or --log 'journalctl -u sglang -n "
                 u"20000' (or set it in the app's Hosts page)."_s.arg(host->label());
        return std::nullopt;
    }

    HostSessionSync::Options options;
    options.acceptNewHostKey = parser.isSet(u"accept-new-host-key"_s);
    options.askSecret = terminalSecretPrompt();
    HostSessionSync session(*host, options);
    session.session()->setChooseHow(u"with --server PID|PORT"_s);
    if (!session.connect(error))
        return std::nullopt;
    // The fetched log lives only as long as this call, and is removed on every exit (signals too).
    TempFileGuard log(QDir::tempPath() + u"/moetune-host-log-XXXXXX.log"_s);
    if (!log.create(error))
        return std::nullopt;
    QString probeError;
    auto diagnosis = session.diagnoseHost(maxBytes, log.path(), diagnoser, error, &probeError);
    session.disconnect();
    if (!diagnosis)
        return std::nullopt;
    if (!probeError.isEmpty())
        Console::err(
            u"moetune-cli diagnose: warning: the probe of %1 failed, so the diagnosis has no host facts: %2\n"_s
                .arg(host->label(), probeError));
    *label = host->label() + u':' + host->logSource.value;
    return diagnosis;
}

MOETUNE_REGISTER_DIAGNOSE_SOURCE(HostDiagnoseSource)

} // namespace moetune::cli
