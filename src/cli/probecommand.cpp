// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/probecommand.h"

#include "cli/commandregistry.h"
#include "cli/console.h"
#include "cli/hostcli.h"
#include "core/host/hosttext.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace moetune::cli {

MOETUNE_REGISTER_COMMAND(ProbeCommand)

namespace {

QString orNone(const QString &s, const QString &none) {
    return s.isEmpty() ? none : s;
}

} // namespace

QString ProbeCommand::name() const {
    return u"probe"_s;
}

QString ProbeCommand::summary() const {
    return u"Describe a host: GPUs, versions, MoE config folders, served model (over SSH or 'local')"_s;
}

bool ProbeCommand::needsAttention(const HostProbe &p) {
    return p.framework == Framework::SGLang && p.tritonVersion && !p.installedTritonFolderExists;
}

QString ProbeCommand::renderText(const HostProbe &probe) {
    // Everything below comes from the host: shown cleaned (no escape sequences, controls, bidi overrides).
    const HostProbe p = hostProbeForDisplay(probe);
    QString out;
    const QJsonObject host = p.raw.value("host"_L1).toObject();
    out += u"Host:        %1%2%3\n"_s.arg(orNone(p.hostName, u"?"_s),
                                          host.value("os"_L1).toString().isEmpty()
                                              ? QString()
                                              : u" ("_s + host.value("os"_L1).toString() + u')',
                                          p.simulated ? u" [simulated]"_s : QString());
    out += u"Python:      %1 (%2)\n"_s.arg(orNone(p.pythonVersion, u"not found"_s), p.pythonExecutable);
    out += u"torch:       %1\n"_s.arg(orNone(p.torchVersion, u"not installed"_s));
    out += u"Triton:      %1\n"_s.arg(p.tritonVersion ? p.tritonVersion->toString() : u"not installed"_s);
    out += u"nvcc:        %1\n"_s.arg(orNone(p.nvccVersion, u"not found"_s));
    if (p.gpus.isEmpty()) {
        const QString why = p.raw.value("gpu_error"_L1).toString();
        out += u"GPUs:        none%1\n"_s.arg(why.isEmpty() ? QString() : u" (" + why + u')');
    }
    for (const GpuInfo &g : p.gpus) {
        out += u"GPU %1:       %2, %3 / %4 MiB used"_s.arg(g.index)
                   .arg(g.name)
                   .arg(g.memoryUsedMiB)
                   .arg(g.memoryTotalMiB);
        if (!g.computeCapability.isEmpty())
            out += u", sm %1"_s.arg(g.computeCapability);
        out += u'\n';
        for (const GpuProcess &proc : g.processes)
            out += u"             pid %1 %2: %3 MiB\n"_s.arg(proc.pid).arg(proc.name).arg(proc.usedMiB);
    }
    if (p.framework == Framework::Unknown) {
        out += u"Framework:   neither SGLang nor vLLM is importable\n"_s;
    } else {
        out += u"Framework:   %1 %2\n"_s.arg(frameworkName(p.framework), p.frameworkVersion);
        out += u"Config root: %1\n"_s.arg(orNone(p.configRoot, u"-"_s));
        if (!p.userConfigFolder.isEmpty())
            out += u"User folder: %1\n"_s.arg(p.userConfigFolder);
        if (p.framework == Framework::SGLang) {
            const QString installed = p.installedTritonFolder();
            if (!installed.isEmpty())
                out += u"  %1  installed Triton: %2\n"_s.arg(
                    installed.leftJustified(16), p.installedTritonFolderExists ? u"present"_s : u"MISSING"_s);
            for (const TritonFolder &f : p.tritonFolders) {
                if (f.name != installed)
                    out += u"  %1  %2 file(s)\n"_s.arg(f.name.leftJustified(16)).arg(f.files.size());
            }
        } else {
            out += u"  %1 config file(s)\n"_s.arg(p.configFiles.size());
        }
    }
    // Every server seen: the one the flows act on, the agent user's others, and other users' (never used).
    const bool several = p.servers.size() > 1;
    if (p.allServers().isEmpty())
        out += u"Server:      no running inference server found\n"_s;
    else if (p.servers.isEmpty() && p.serverChoiceProblem.isEmpty())
        out += u"Server:      none of the agent's user (%1 of other users, never used)\n"_s.arg(
            p.otherUsersServers.size());
    for (const ServerProcess &s : p.servers) {
        out += u"Server:      %1, TP %2%3\n"_s.arg(s.label())
                   .arg(s.tensorParallel)
                   .arg(several ? u" (a candidate: not chosen)"_s : u" (the server flows act on)"_s);
        if (s.shape)
            out += u"MoE shape:   "_s + s.shapeText() + u'\n';
        if (!s.launch.interpreterProblem.isEmpty())
            out += u"Interpreter: not run: %1\n"_s.arg(s.launch.interpreterProblem);
    }
    for (const ServerProcess &s : p.otherServers)
        out += u"Also:        %1, TP %2 (not chosen)\n"_s.arg(s.label()).arg(s.tensorParallel);
    for (const ServerProcess &s : p.otherUsersServers)
        out += u"Not used:    %1: %2\n"_s.arg(s.label(), s.notUsed);
    // Short: every candidate is on its own line above (a line per server keeps lines bounded).
    if (!p.serverChoiceProblem.isEmpty())
        out += u"Which:       %1; the servers running are listed above.\n"_s.arg(
            p.serverChoiceProblem.section(u';', 0, 0));
    else if (several)
        out += u"Which:       %1 servers run here and none is chosen: give --server PID|PORT.\n"_s.arg(
            p.servers.size());
    if (p.suggestedSpec) {
        out += u"Tuning job:  "_s + p.suggestedSpec->summaryText() + u'\n';
    }
    if (needsAttention(p))
        out += u"\n%1 does not exist: the server falls back to older folders or default configs. "
               u"Tune the served shapes to create it.\n"_s.arg(p.installedTritonFolder());
    return out;
}

int ProbeCommand::run(const QStringList &args) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Run moetune's agent on HOST and describe it: GPUs and who holds their memory, Python/torch/Triton "
        u"versions, the SGLang/vLLM config root and its triton_* folders, the served model's MoE shape.\n\n"
        u"HOST: an alias of ~/.ssh/config, a host added in the app, user@host[:port], or 'local' (this "
        u"machine). An unknown host key is refused (exit 2) with the command that trusts it.\n\n"
        u"Exit status: 0 described, 1 described and the folder for the installed Triton is missing, "
        u"2 usage, connection or agent error."_s);
    parser.addHelpOption();
    parser.addPositionalArgument(u"HOST"_s, u"The host to probe."_s);
    const QCommandLineOption python(
        u"python"_s, u"The host's Python interpreter (e.g. a venv's bin/python)."_s, u"PATH"_s);
    const QCommandLineOption format({u"f"_s, u"format"_s}, u"Output format: text (default) or json."_s,
                                    u"format"_s, u"text"_s);
    const QCommandLineOption accept(
        u"accept-new-host-key"_s, u"Record an unknown host key instead of refusing (a changed key is always "
                                  u"refused)."_s);
    const QCommandLineOption timeout(u"timeout"_s, u"Seconds to wait for the host (default 120)."_s, u"S"_s,
                                     u"120"_s);
    const QCommandLineOption server(
        u"server"_s, u"Which of the host's servers to describe as the one flows act on: a pid or a port."_s,
        u"PID|PORT"_s);
    parser.addOptions({python, format, accept, timeout, server});
    if (!parser.parse(args))
        return Console::fail(u"probe"_s, parser.errorText() + u". Run 'moetune-cli probe --help'."_s);
    if (parser.isSet(u"help"_s)) {
        QString help = parser.helpText();
        const qsizetype options = help.indexOf(u" [options]"_s);
        if (help.startsWith(u"Usage: "_s) && options > 0)
            help.replace(7, options - 7, u"moetune-cli probe"_s);
        Console::out(help);
        return ExitClean;
    }
    const QString fmt = parser.value(format).toLower();
    if (fmt != u"text"_s && fmt != u"json"_s)
        return Console::fail(u"probe"_s,
                             u"unknown --format '%1'; use text or json."_s.arg(parser.value(format)));
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1)
        return Console::fail(u"probe"_s,
                             positional.isEmpty()
                                 ? u"no HOST given. Example: moetune-cli probe gpu-7 (or 'local')."_s
                                 : u"give one HOST (got %1)."_s.arg(positional.join(u' ')));
    bool ok = false;
    const int seconds = parser.value(timeout).toInt(&ok);
    if (!ok || seconds <= 0)
        return Console::fail(
            u"probe"_s, u"--timeout wants a number of seconds > 0 (got '%1')."_s.arg(parser.value(timeout)));

    QString error;
    auto host = resolveHost(positional.first(), &error);
    if (!host)
        return Console::fail(u"probe"_s, error);
    if (parser.isSet(python))
        host->python = parser.value(python);
    if (parser.isSet(server)) {
        if (!ServerChoice::parse(parser.value(server), &error))
            return Console::fail(u"probe"_s, u"--server: "_s + error);
        host->serverProfile.server = parser.value(server).trimmed();
    }
    HostSessionSync::Options options;
    options.acceptNewHostKey = parser.isSet(accept);
    options.timeoutMs = seconds * 1000;
    options.askSecret = terminalSecretPrompt();
    HostSessionSync session(*host, options);
    if (!session.connect(&error))
        return Console::fail(u"probe"_s, error);
    if (!session.acceptedFingerprint().isEmpty())
        Console::err(u"moetune-cli probe: recorded the %1 host key %2 of %3 in known_hosts.\n"_s.arg(
            session.seenKeyType(), session.acceptedFingerprint(), host->label()));
    const auto probe = session.probe(&error);
    session.disconnect();
    if (!probe)
        return Console::fail(u"probe"_s, u"the probe of %1 failed: %2"_s.arg(host->label(), error));

    if (fmt == u"json"_s) {
        QJsonObject o = probe->raw;
        o.remove(u"type"_s);
        o.insert(u"agent_version"_s, probe->agentVersion);
        o.insert(u"host_spec"_s, positional.first());
        // The server the flows act on (null: none, or several and no choice: server_question asks).
        o.insert(u"chosen_server"_s,
                 probe->servers.size() == 1 ? QJsonValue(probe->servers.first().pid) : QJsonValue());
        o.insert(u"server_question"_s, probe->serverQuestion(u"with --server PID|PORT"_s));
        Console::outBytes(QJsonDocument(o).toJson(QJsonDocument::Indented));
    } else {
        Console::out(renderText(*probe));
    }
    return needsAttention(*probe) ? ExitFindings : ExitClean;
}

} // namespace moetune::cli
