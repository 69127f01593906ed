// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/hosts/practiceserver.h"

#include "core/util/coreresources.h"
#include "core/util/shellquote.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>

#include <signal.h>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// remote_agent/moetune_agent/install/installer.py PRACTICE_DOUBLE_TEXT, the same bytes (its test reads this
// line).
constexpr char kPracticeMarkerText[] =
    "moetune practice server (sandbox): this folder tree is a practice double of an inference server, made "
    "by "
    "the moetune app in its own data folder; simulated results may be installed into it\n";

bool writeFile(const QString &path, const QByteArray &data, bool executable = false) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(data) != data.size())
        return false;
    f.close();
    return !executable || f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
}

} // namespace

QString PracticeServer::alias() {
    return u"practice"_s;
}

QString PracticeServer::label() {
    return QCoreApplication::translate("HostConfig", "Practice server (sandbox)");
}

QString PracticeServer::defaultRoot() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + u"/practice-server"_s;
}

QString PracticeServer::markerText() {
    return QString::fromLatin1(kPracticeMarkerText);
}

PracticeServer::PracticeServer(QString root)
    : m_root(std::move(root)) {}

bool PracticeServer::exists() const {
    QFile f(marker());
    return !QFileInfo(marker()).isSymLink() && f.open(QIODevice::ReadOnly) &&
           f.readAll() == QByteArray(kPracticeMarkerText);
}

bool PracticeServer::create(QString *error) const {
    const auto fail = [error](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    if (QStandardPaths::findExecutable(u"python3"_s).isEmpty())
        return fail(QCoreApplication::translate(
            "PracticeServer", "The practice server needs python3 on this machine (its agent and its "
                              "stand-in server are Python); install it (Debian: apt-get install python3)."));
    // Only a folder the app made is ever marked as a double: an existing folder of someone else's is refused.
    const QDir dir(m_root);
    if (dir.exists() && !exists() && !dir.isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden))
        return fail(QCoreApplication::translate("PracticeServer",
                                                "%1 exists and is not a practice server; move it away to "
                                                "create the practice server there.")
                        .arg(m_root));
    ensureCoreResources();
    QFile script(u":/moetune/practice/fake_sglang_server.py"_s);
    if (!script.open(QIODevice::ReadOnly))
        return fail(u"The practice server's stand-in server is missing from this build."_s);
    const QByteArray server = script.readAll();
    // PRACTICE DOUBLE of the serving benchmark tool: SIMULATED figures that follow the config the practice
    // server loaded, so "Push, restart and compare" runs all its legs here (labelled in its output).
    QFile bench(u":/moetune/practice/practice_bench_serving.py"_s);
    if (!bench.open(QIODevice::ReadOnly))
        return fail(u"The practice server's stand-in serving benchmark is missing from this build."_s);
    const QByteArray benchTool = bench.readAll();
    bool ok = QDir().mkpath(m_root) && writeFile(marker(), kPracticeMarkerText) &&
              QDir().mkpath(configRoot() + u"/triton_3_4_0"_s) && QDir().mkpath(model()) &&
              QDir().mkpath(home()) && QDir().mkpath(m_root + u"/logs"_s);
    ok = ok && writeFile(site() + u"/sglang/launch_server.py"_s, server);
    ok = ok && writeFile(site() + u"/sglang/bench_serving.py"_s, benchTool);
    for (const char *pkg :
         {"/sglang/srt/__init__.py", "/sglang/srt/layers/__init__.py", "/sglang/srt/layers/moe/__init__.py",
          "/sglang/srt/layers/moe/fused_moe_triton/__init__.py"})
        ok = ok && writeFile(site() + QString::fromLatin1(pkg), "");
    ok = ok &&
         writeFile(site() + u"/sglang/__init__.py"_s,
                   "# PRACTICE DOUBLE: moetune's practice server, not SGLang\n__version__ = \"0.5.6\"\n");
    ok = ok &&
         writeFile(site() + u"/triton/__init__.py"_s,
                   "# PRACTICE DOUBLE: moetune's practice server, not Triton\n__version__ = \"3.6.0\"\n");
    // An older Triton's file for the shape: the server falls back to it (a warning per rank) until a push.
    if (!QFile::exists(fallbackFile()))
        ok = ok &&
             writeFile(fallbackFile(),
                       "{\n    \"1\": {\"BLOCK_SIZE_M\": 16, \"BLOCK_SIZE_N\": 32, \"BLOCK_SIZE_K\": 64, "
                       "\"GROUP_SIZE_M\": 1, \"num_warps\": 4, \"num_stages\": 3}\n}\n");
    ok = ok && writeFile(model() + u"/config.json"_s,
                         "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"num_experts\": 128, "
                         "\"num_experts_per_tok\": 8, \"hidden_size\": 2048, \"moe_intermediate_size\": 768, "
                         "\"torch_dtype\": \"bfloat16\"}\n");
    // PRACTICE DOUBLE of nvidia-smi: two H200s (the server runs --tp 2: one rank on each, as its log says),
    // 140 GB of each held by the server while its pid file names a live process.
    const QByteArray pidf = shellQuote(pidFile()).toUtf8();
    ok =
        ok && writeFile(bin() + u"/nvidia-smi"_s,
                        "#!/bin/sh\n# PRACTICE DOUBLE for nvidia-smi (moetune's practice server): two H200s\n"
                        "pid=$(cat " +
                            pidf +
                            " 2>/dev/null)\n"
                            "if [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; then used=140000; else "
                            "used=0; pid=; fi\n"
                            "case \"$1\" in\n"
                            "  --query-gpu=*) echo \"0, NVIDIA H200, GPU-1a2b, 143771, $used, 9.0\"\n"
                            "    echo \"1, NVIDIA H200, GPU-3c4d, 143771, $used, 9.0\" ;;\n"
                            "  --query-compute-apps=*) [ -n \"$pid\" ] && echo \"GPU-1a2b, $pid, python3, "
                            "140000\" && echo \"GPU-3c4d, $pid, python3, 140000\" ;;\n"
                            "esac\nexit 0\n",
                        true);
    // The "server's interpreter" the agent runs with: the system python3 with the practice tree.
    ok = ok &&
         writeFile(python(),
                   "#!/bin/sh\n# moetune practice server: system python3 + the practice SGLang tree\n"
                   "export PYTHONPATH=" +
                       shellQuote(site()).toUtf8() + "\nexport MOETUNE_NVIDIA_SMI=" +
                       shellQuote(QString(bin() + u"/nvidia-smi"_s)).toUtf8() + "\nexec python3 \"$@\"\n",
                   true);
    if (!ok)
        return fail(
            QCoreApplication::translate("PracticeServer", "Cannot write the practice server under %1.")
                .arg(m_root));
    return true;
}

ServerProfile PracticeServer::profile() const {
    ServerProfile p;
    p.kind = ServerProfile::Kind::Command;
    p.logFile = log();
    p.startCommand = u"cd "_s + shellQuote(m_root) + u" && { PYTHONPATH="_s + shellQuote(site()) +
                     u" FAKESERVER_PID_FILE="_s + shellQuote(pidFile()) +
                     u" setsid nohup python3 -m sglang.launch_server --model-path "_s + shellQuote(model()) +
                     u" --tp 2 >> "_s + shellQuote(log()) + u" 2>&1 < /dev/null & }"_s;
    p.stopCommand = u"kill -TERM \"$(cat "_s + shellQuote(pidFile()) + u")\""_s;
    p.readyLine = u"The server is fired up and ready to roll!"_s;
    p.readyTimeoutS = 60;
    p.note = QCoreApplication::translate("PracticeServer",
                                         "The practice server's own profile (a stand-in server, no GPU).");
    return p;
}

HostConfig PracticeServer::host() const {
    HostConfig h;
    h.alias = alias();
    h.practiceRoot = m_root;
    h.python = python();
    h.logSource = {LogSource::Kind::File, log()};
    h.serverProfile = profile();
    return h;
}

bool PracticeServer::isRunning() const {
    QFile f(pidFile());
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const qint64 pid = f.readAll().trimmed().toLongLong();
    return pid > 0 && ::kill(pid_t(pid), 0) == 0;
}

bool PracticeServer::startServer(QString *error) const {
    // Detached through /bin/sh as the profile's start command runs; the command itself backgrounds it.
    if (QProcess::execute(u"/bin/sh"_s, {u"-c"_s, profile().startCommand}) != 0) {
        if (error)
            *error = QCoreApplication::translate("PracticeServer", "The practice server did not start.");
        return false;
    }
    return true;
}

} // namespace moetune
