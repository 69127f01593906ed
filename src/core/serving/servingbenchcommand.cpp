// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/serving/servingbenchcommand.h"

#include "core/host/hostprobe.h"
#include "core/moe/framework.h"
#include "core/server/serverprofile.h"
#include "core/util/shellquote.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QProcess>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// The commands are shown for people to read and type: plain words stay bare (core/util/shellquote.h).
QString quote(const QString &w) {
    return shellQuote(w, ShellQuoting::WhenNeeded);
}

QString join(const QStringList &argv) {
    return shellJoin(argv, ShellQuoting::WhenNeeded);
}

const QString kDir = u"@MOETUNE_RESULT_DIR@"_s;

QString argValue(const QStringList &args, const QString &name) {
    for (qsizetype i = 0; i < args.size(); ++i) {
        if (args[i] == name && i + 1 < args.size())
            return args[i + 1];
        if (args[i].startsWith(name + u'='))
            return args[i].mid(name.size() + 1);
    }
    return {};
}

} // namespace

ServingBenchCommand ServingBenchCommand::suggest(Framework framework, const HostProbe *probe,
                                                 const ServerProfile &profile) {
    ServingBenchCommand c;
    c.framework = framework == Framework::VLLM ? Framework::VLLM : Framework::SGLang;
    c.port = c.framework == Framework::VLLM ? 8000 : 30000;
    if (profile.kind == ServerProfile::Kind::Docker)
        c.container = profile.unit;
    // The health URL's port only: its host name is how the user's machine reaches the server, while the
    // tool runs on the server's host, where the loopback is the server's own address.
    const QUrl health(profile.healthUrl.trimmed());
    if (health.isValid() && health.port() > 0)
        c.port = health.port();
    if (!probe)
        return c;
    for (const ServerProcess &s : probe->servers) {
        if (s.framework != c.framework)
            continue;
        bool ok = false;
        const int port = argValue(s.arguments, u"--port"_s).toInt(&ok);
        if (ok && port > 0)
            c.port = port;
        const QString host = argValue(s.arguments, u"--host"_s);
        if (!host.isEmpty() && host != "0.0.0.0"_L1 && host != "::"_L1 && host != "localhost"_L1 &&
            host != "127.0.0.1"_L1) {
            c.host = host; // it listens on that address only
            c.addressFrom = AddressFrom::Server;
        }
        // vLLM's served name is --served-model-name, else the model argument; SGLang's the path.
        const QString served = argValue(s.arguments, u"--served-model-name"_s);
        c.model = !served.isEmpty() ? served : s.modelPath;
        if (c.container.isEmpty() && !s.launch.serverPython.isEmpty()) {
            c.python = s.launch.serverPython;
            // What the agent's probe runs the server's interpreter with, so the tool imports the same.
            for (const char *k : {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}) {
                const QString v = s.launch.environment.value(QString::fromLatin1(k));
                if (!v.isEmpty())
                    c.environment.append(QString::fromLatin1(k) + u'=' + v);
            }
        }
        break;
    }
    return c;
}

QString ServingBenchCommand::validate() const {
    if (host.trimmed().isEmpty())
        return u"Give the address the server listens on (for example 127.0.0.1)."_s;
    if (host.contains(u'/') || host.contains(u' '))
        return u"The server address \"%1\" is a host name or IP address, not a URL."_s.arg(host);
    if (port < 1 || port > 65535)
        return u"The server port must be between 1 and 65535 (got %1)."_s.arg(port);
    return {};
}

QString ServingBenchCommand::baseUrl() const {
    const QString h = host.contains(u':') ? u'[' + host + u']' : host; // IPv6
    return u"http://%1:%2"_s.arg(h).arg(port);
}

QString ServingBenchCommand::addressNote() const {
    switch (addressFrom) {
    case AddressFrom::Host:
        return u" (the host's own address)"_s;
    case AddressFrom::Server:
        return u" (the address the server listens on, its --host)"_s;
    case AddressFrom::User:
        return u" (the address you gave)"_s;
    }
    return {};
}

QString ServingBenchCommand::toolName() const {
    if (!tool.trimmed().isEmpty())
        return tool.trimmed();
    return framework == Framework::VLLM ? u"vllm bench serve"_s : u"sglang.bench_serving"_s;
}

QStringList ServingBenchCommand::argv(const ServingWorkload &w, int concurrency,
                                      const QString &resultFile) const {
    QStringList a;
    if (!container.isEmpty())
        a << u"docker"_s << u"exec"_s << container;
    else if (!environment.isEmpty())
        a << u"env"_s << environment;
    const bool vllm = framework == Framework::VLLM;
    if (!tool.trimmed().isEmpty()) {
        a << QProcess::splitCommand(tool);
    } else if (vllm) {
        // The venv's own vllm beside its interpreter when moetune knows it, else the one on PATH.
        const QFileInfo py(python);
        a << (!python.isEmpty() && py.isAbsolute() && container.isEmpty() ? py.path() + u"/vllm"_s
                                                                          : u"vllm"_s)
          << u"bench"_s << u"serve"_s;
    } else {
        a << (python.isEmpty() ? u"python3"_s : python) << u"-m"_s << u"sglang.bench_serving"_s;
    }
    if (vllm)
        a << u"--backend"_s << u"vllm"_s << u"--base-url"_s << baseUrl();
    else
        a << u"--backend"_s << u"sglang"_s << u"--host"_s << host << u"--port"_s << QString::number(port);
    if (!model.isEmpty())
        a << u"--model"_s << model;
    a << u"--dataset-name"_s << u"random"_s << u"--random-input-len"_s << QString::number(w.inputLen)
      << u"--random-output-len"_s << QString::number(w.outputLen);
    // Fixed lengths: SGLang samples in [ratio*len, len] (default 0); vLLM stops at EOS unless told not to.
    if (vllm)
        a << u"--ignore-eos"_s;
    else
        a << u"--random-range-ratio"_s << u"1"_s;
    a << u"--num-prompts"_s << QString::number(w.numPrompts) << u"--max-concurrency"_s
      << QString::number(concurrency) << u"--seed"_s << QString::number(w.seed);
    const QFileInfo rf(resultFile);
    if (vllm)
        a << u"--save-result"_s << u"--result-dir"_s << (rf.path().isEmpty() ? u"."_s : rf.path())
          << u"--result-filename"_s << rf.fileName();
    else
        a << u"--output-file"_s << resultFile;
    return a;
}

QString ServingBenchCommand::manualCommand(const ServingWorkload &w, int concurrency) const {
    QString cmd = join(argv(w, concurrency, framework == Framework::VLLM ? u"./out.json"_s : u"out.jsonl"_s));
    return cmd;
}

QString ServingBenchCommand::resultMarker(const QString &nonce) {
    return u"@@moetune-bench-result-%1@@"_s.arg(nonce);
}

QString ServingBenchCommand::script(const ServingWorkload &w, int concurrency, const QString &nonce) const {
    const QString file = kDir + u"/result.json"_s;
    if (!container.isEmpty()) {
        // Inside the container: a folder of an unpredictable name under its /tmp, read back with cat.
        const QString dir = u"/tmp/moetune-bench-"_s + nonce;
        const QStringList words = argv(w, concurrency, dir + u"/result.json"_s);
        const QString exec = u"docker exec "_s + quote(container) + u' ';
        return exec + u"mkdir -m 700 -- "_s + quote(dir) + u" || exit 97\n"_s + join(words) +
               u"\nrc=$?\necho "_s + quote(resultMarker(nonce)) + u'\n' + exec + u"cat -- "_s +
               quote(dir + u"/result.json"_s) + u" 2>/dev/null\n"_s + exec + u"rm -rf -- "_s + quote(dir) +
               u"\nexit $rc\n"_s;
    }
    QString line = join(argv(w, concurrency, file));
    // The placeholder becomes the private folder: '@DIR@/result.json' -> "$d"'/result.json'.
    line.replace(u'\'' + kDir, u"\"$d\"'"_s);
    line.replace(kDir, u"\"$d\""_s);
    return u"d=$(mktemp -d \"${TMPDIR:-/tmp}/moetune-bench.XXXXXX\") || exit 97\n"_s + line +
           u"\nrc=$?\necho "_s + quote(resultMarker(nonce)) +
           u"\ncat -- \"$d\"/result.json 2>/dev/null\nrm -rf -- \"$d\"\nexit $rc\n"_s;
}

QString ServingBenchCommand::missingToolSentence(int exitStatus, const QString &output, Framework framework) {
    const bool vllm = framework == Framework::VLLM;
    const QString name = vllm ? u"vllm bench serve"_s : u"python3 -m sglang.bench_serving"_s;
    if (output.contains(u"No module named"_s))
        return u"The serving benchmark %1 is not installed for the server's interpreter (%2)."_s.arg(
            name, output.section(u"No module named"_s, 1).section(u'\n', 0, 0).trimmed());
    if (exitStatus == 127 || output.contains(u"command not found"_s))
        return u"The serving benchmark %1 was not found on the host (exit status %2)."_s.arg(name).arg(
            exitStatus);
    if (vllm && output.contains(u"invalid choice"_s))
        return u"This vLLM has no `vllm bench serve` (older releases ship benchmarks/benchmark_serving.py "
               u"instead): give its command as the tool."_s;
    return {};
}

QJsonObject ServingBenchCommand::toJson() const {
    return QJsonObject{{"framework"_L1, frameworkId(framework)},
                       {"host"_L1, host},
                       {"port"_L1, port},
                       {"address_from"_L1, addressFrom == AddressFrom::User     ? u"user"_s
                                           : addressFrom == AddressFrom::Server ? u"server"_s
                                                                                : u"host"_s},
                       {"model"_L1, model},
                       {"python"_L1, python},
                       {"container"_L1, container},
                       {"tool"_L1, tool},
                       {"environment"_L1, QJsonArray::fromStringList(environment)}};
}

ServingBenchCommand ServingBenchCommand::fromJson(const QJsonObject &o) {
    ServingBenchCommand c;
    const Framework f = frameworkFromString(o.value("framework"_L1).toString());
    c.framework = f == Framework::VLLM ? Framework::VLLM : Framework::SGLang;
    c.host = o.value("host"_L1).toString(c.host);
    c.port = o.value("port"_L1).toInt(c.port);
    const QString from = o.value("address_from"_L1).toString();
    c.addressFrom = from == "user"_L1     ? AddressFrom::User
                    : from == "server"_L1 ? AddressFrom::Server
                                          : AddressFrom::Host;
    c.model = o.value("model"_L1).toString();
    c.python = o.value("python"_L1).toString();
    c.container = o.value("container"_L1).toString();
    c.tool = o.value("tool"_L1).toString();
    for (const QJsonValue v : o.value("environment"_L1).toArray())
        c.environment.append(v.toString());
    return c;
}

} // namespace moetune
