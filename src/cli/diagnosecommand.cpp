// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/diagnosecommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/diagnosesource.h"
#include "cli/fddevice.h"
#include "cli/progressline.h"
#include "cli/textreport.h"
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/logsniff.h"
#include "core/diagnosis/ruleset.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(DiagnoseCommand)

namespace {

enum class Format { Text, Json, Markdown };

} // namespace

QString DiagnoseCommand::name() const {
    return u"diagnose"_s;
}

QString DiagnoseCommand::summary() const {
    return u"Read an SGLang/vLLM server log and report missing or untuned MoE kernel configs"_s;
}

int DiagnoseCommand::run(const QStringList &args) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Diagnose an inference-server log (SGLang, vLLM): which tuned fused-MoE kernel configs are missing, "
        u"taken from another Triton version's folder, or replaced by defaults, and what to do.\n\n"
        u"Exit status: 0 clean (nothing at warning or above), 1 findings at warning or above, "
        u"2 usage or read error."_s);
    parser.addHelpOption();
    parser.addPositionalArgument(u"FILE"_s, u"The log file; '-' or nothing (with input piped) reads stdin."_s,
                                 u"[FILE|-]"_s);
    const QCommandLineOption formatOption(
        {u"f"_s, u"format"_s}, u"Output format: text (default), json, markdown."_s, u"format"_s, u"text"_s);
    const QCommandLineOption rulesOption(
        u"rules"_s,
        u"Also load the rule files (*.json) in DIR, besides the built-in rules and your own in "_s +
            RuleSet::userRulesDir() + u'.',
        u"DIR"_s);
    const QCommandLineOption noColorOption(
        u"no-color"_s, u"Never colour the text output (default: colour on a terminal only; "
                       u"the NO_COLOR environment variable also turns it off)."_s);
    const QCommandLineOption colorOption(u"color"_s,
                                         u"Colour the text output even when not on a terminal."_s);
    const QCommandLineOption evidenceOption(
        u"evidence"_s,
        u"Evidence lines shown per finding in text output (default 3; 0 shows all the engine kept)."_s,
        u"N"_s, u"3"_s);
    parser.addOptions({formatOption, rulesOption, noColorOption, colorOption, evidenceOption});
    auto sources = DiagnoseSource::all();
    for (const auto &source : sources)
        parser.addOptions(source->options());

    if (!parser.parse(args))
        return Console::fail(u"diagnose"_s, parser.errorText() + u". Run 'moetune-cli diagnose --help'."_s);
    if (parser.isSet(u"help"_s)) {
        // QCommandLineParser names argv[0] alone; show the subcommand too.
        QString help = parser.helpText();
        const qsizetype options = help.indexOf(u" [options]"_s);
        if (help.startsWith(u"Usage: "_s) && options > 0)
            help.replace(7, options - 7, u"moetune-cli diagnose"_s);
        Console::out(help);
        return ExitClean;
    }

    Format format = Format::Text;
    const QString formatName = parser.value(formatOption).toLower();
    if (formatName == u"json"_s)
        format = Format::Json;
    else if (formatName == u"markdown"_s || formatName == u"md"_s)
        format = Format::Markdown;
    else if (formatName != u"text"_s)
        return Console::fail(u"diagnose"_s, u"unknown --format '"_s + parser.value(formatOption) +
                                                u"'; use text, json or markdown."_s);

    bool evidenceOk = false;
    const int maxEvidence = parser.value(evidenceOption).toInt(&evidenceOk);
    if (!evidenceOk || maxEvidence < 0)
        return Console::fail(u"diagnose"_s, u"--evidence wants a number of lines (0 for all), not '"_s +
                                                parser.value(evidenceOption) + u"'."_s);

    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1)
        return Console::fail(u"diagnose"_s,
                             u"give one log at a time (got %1 arguments: %2)."_s.arg(positional.size())
                                 .arg(positional.join(u' ')));

    // Rules: built-in, the user's own folder, and --rules DIR. A broken rule file is reported, not fatal.
    QStringList ruleErrors;
    RuleSet rules = RuleSet::withUserRules(RuleSet::userRulesDir(), &ruleErrors);
    if (parser.isSet(rulesOption)) {
        const QString dir = parser.value(rulesOption);
        if (!QFileInfo(dir).isDir())
            return Console::fail(u"diagnose"_s, u"--rules "_s + dir + u": no such directory."_s);
        rules.addRulesFromDir(dir, &ruleErrors); // bounded: files, their size, the rules (issue 42)
    }
    for (const QString &e : std::as_const(ruleErrors))
        Console::err(u"moetune-cli diagnose: warning: "_s + e + u" (rule file skipped)\n"_s);
    const Diagnoser diagnoser(rules);

    Diagnosis diagnosis;
    QString label;
    // One progress line on stderr while reading (only on a terminal), erased before the report prints.
    std::unique_ptr<ProgressLine> progressLine;
    auto progressFor = [&progressLine](const QString &name) -> Diagnoser::Progress {
        progressLine = std::make_unique<ProgressLine>(name);
        return [line = progressLine.get()](qint64 done, qint64 total) { return line->update(done, total); };
    };
    QString error;
    DiagnoseSource *selected = nullptr;
    for (const auto &source : sources) {
        if (source->isSelected(parser))
            selected = source.get();
    }
    if (selected) {
        if (!positional.isEmpty())
            return Console::fail(u"diagnose"_s, u"give either a FILE or a remote source, not both."_s);
        auto result = selected->diagnose(parser, diagnoser, &label, &error);
        if (!result)
            return Console::fail(u"diagnose"_s, error);
        diagnosis = std::move(*result);
    } else if (positional.isEmpty() || positional.first() == u"-"_s) {
        if (positional.isEmpty() && Console::stdinIsTerminal())
            return Console::fail(
                u"diagnose"_s,
                u"no log given. Pass a FILE, or pipe a log in: 'moetune-cli diagnose - < server.log'. "
                u"Run 'moetune-cli diagnose --help' for more."_s);
        label = u"stdin"_s;
        FdDevice in(STDIN_FILENO, false);
        if (const LogSniff sniff = LogSniff::check(in.head(LogSniff::headBytes)); !sniff.isText())
            return Console::fail(u"diagnose"_s, sniff.problem(label));
        diagnosis = diagnoser.diagnoseDevice(&in, progressFor(label), &error);
    } else {
        const QString &path = positional.first();
        label = path;
        const QFileInfo info(path);
        if (!info.exists())
            return Console::fail(u"diagnose"_s, u"cannot read '"_s + path + u"': no such file."_s);
        if (info.isDir())
            return Console::fail(u"diagnose"_s,
                                 u"'"_s + path + u"' is a directory; pass a log file inside it."_s);
        if (info.isFile()) {
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly))
                return Console::fail(u"diagnose"_s,
                                     u"cannot read '"_s + path + u"': "_s + file.errorString() +
                                         (info.isReadable() ? QString() : u" (check its permissions)"_s) +
                                         u'.');
            if (const LogSniff sniff = LogSniff::check(file.read(LogSniff::headBytes)); !sniff.isText())
                return Console::fail(u"diagnose"_s, sniff.problem(u"'"_s + path + u"'"_s));
            file.close();
            diagnosis = diagnoser.diagnoseFile(path, progressFor(label), &error);
        } else {
            // A FIFO or /dev/fd/N from `<(...)`: it can be read once, so stream it from one descriptor.
            const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                return Console::fail(u"diagnose"_s, u"cannot read '"_s + path + u"': "_s +
                                                        QString::fromLocal8Bit(std::strerror(errno)) + u'.');
            FdDevice in(fd, true);
            if (const LogSniff sniff = LogSniff::check(in.head(LogSniff::headBytes)); !sniff.isText())
                return Console::fail(u"diagnose"_s, sniff.problem(u"'"_s + path + u"'"_s));
            diagnosis = diagnoser.diagnoseDevice(&in, progressFor(label), &error);
        }
    }
    progressLine.reset();
    if (!error.isEmpty())
        return Console::fail(u"diagnose"_s, u"reading "_s + label + u" failed: "_s + error);

    // Printed in pieces of about 1 MB: the report of a log with many shapes is never whole in memory.
    QByteArray buffer;
    auto print = [&buffer](QByteArrayView piece) {
        buffer += piece;
        if (buffer.size() >= (1 << 20)) {
            Console::outBytes(buffer);
            buffer.clear();
        }
    };
    switch (format) {
    case Format::Json:
        diagnosis.writeJson(print);
        break;
    case Format::Markdown:
        diagnosis.writeMarkdown([&](const QString &piece) { print(piece.toUtf8()); });
        break;
    case Format::Text: {
        bool color = Console::stdoutIsTerminal() && qEnvironmentVariableIsEmpty("NO_COLOR");
        if (parser.isSet(colorOption))
            color = true;
        if (parser.isSet(noColorOption))
            color = false;
        TextReport(color, maxEvidence).render(diagnosis, label, [&](const QString &piece) {
            print(piece.toUtf8());
        });
        break;
    }
    }
    Console::outBytes(buffer);
    const bool actionable = diagnosis.count(Severity::Warning) + diagnosis.count(Severity::Error) > 0;
    return actionable ? ExitFindings : ExitClean;
}

} // namespace moetune::cli
