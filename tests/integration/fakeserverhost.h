// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// A fake SGLang host for the tuning end-to-end tests. TEST DOUBLES, labelled as such: the inference
// server is tests/support/fakeserver.py installed as the fake tree's sglang/launch_server.py (it writes
// an SGLang-style startup log that follows SGLang's lookup over the config files on disk, then idles),
// and nvidia-smi is a script that reports one H200 held by that server while its pid file names a live
// process. The agent, its install-config, the sshd, the shell commands of the server profile and every
// file are real.

#include "core/server/serverprofile.h"
#include "remote/shellquote.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

namespace moetune::test {

class FakeServerHost {
public:
    bool create(const QString &fakeServerPy, QString *error) {
        if (!m_dir.isValid())
            return fail(error, QStringLiteral("no temporary folder"));
        bool ok = QDir().mkpath(configRoot() + QStringLiteral("/triton_3_4_0")) &&
                  QDir().mkpath(site() + QStringLiteral("/triton")) && QDir().mkpath(model()) &&
                  QDir().mkpath(bin()) && QDir().mkpath(root() + QStringLiteral("/logs"));
        QFile::remove(site() + QStringLiteral("/sglang/launch_server.py"));
        ok = ok && QFile::copy(fakeServerPy, site() + QStringLiteral("/sglang/launch_server.py"));
        for (const char *pkg :
             {"/sglang/__init__.py", "/sglang/srt/__init__.py", "/sglang/srt/layers/__init__.py",
              "/sglang/srt/layers/moe/__init__.py", "/sglang/srt/layers/moe/fused_moe_triton/__init__.py"})
            ok = ok && write(site() + QString::fromLatin1(pkg), "");
        ok = ok && write(site() + QStringLiteral("/triton/__init__.py"), "__version__ = \"3.6.0\"\n");
        // An older Triton's file for the shape: the server falls back to it (a warning per rank).
        ok = ok && write(fallbackFile(),
                         "{\n    \"1\": {\"BLOCK_SIZE_M\": 16, \"BLOCK_SIZE_N\": 32, \"BLOCK_SIZE_K\": 64, "
                         "\"GROUP_SIZE_M\": 1, \"num_warps\": 4, \"num_stages\": 3}\n}\n");
        ok = ok &&
             write(model() + QStringLiteral("/config.json"),
                   "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"num_experts\": 128, "
                   "\"num_experts_per_tok\": 8, "
                   "\"hidden_size\": 2048, \"moe_intermediate_size\": 768, \"torch_dtype\": \"bfloat16\"}\n");
        // TEST DOUBLE nvidia-smi: the fake server holds 140 GB of GPU 0 while its pid file names a live
        // process.
        const QByteArray pidf = shellQuote(pidFile()).toUtf8();
        ok = ok &&
             write(bin() + QStringLiteral("/nvidia-smi"),
                   "#!/bin/sh\n# TEST DOUBLE for nvidia-smi (moetune tests): one H200 and the fake server\n"
                   "pid=$(cat " +
                       pidf +
                       " 2>/dev/null)\n"
                       "if [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; then used=140000; else used=0; "
                       "pid=; fi\n"
                       "case \"$1\" in\n"
                       "  --query-gpu=*) echo \"0, NVIDIA H200, GPU-1a2b, 143771, $used, 9.0\" ;;\n"
                       "  --query-compute-apps=*) [ -n \"$pid\" ] && echo \"GPU-1a2b, $pid, python3, "
                       "140000\" ;;\n"
                       "esac\nexit 0\n");
        // The host's "venv" interpreter for the agent: the system python with the fake tree (and test hooks).
        // TEST DOUBLE marker (remote_agent install.py TEST_DOUBLE_MARKER/TEXT, same bytes): this tree is a
        // fake server's, so the agent installs the synthetic backend's simulated results into it.
        ok = ok && write(root() + QStringLiteral("/.moetune-test-double"),
                         "moetune test double: this folder tree is a test fixture's fake server; simulated "
                         "results may be installed into it\n");
        ok = ok && writePython(python(), QByteArray());
        ok = ok && writePython(slowPython(), "export MOETUNE_SYNTHETIC_DELAY_MS=40\n");
        ok = ok && QFile::setPermissions(bin() + QStringLiteral("/nvidia-smi"),
                                         QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        if (!ok)
            return fail(error, QStringLiteral("cannot write the fake host under ") + root());
        return true;
    }

    ~FakeServerHost() { stopServer(); }

    // The serving benchmark's test doubles: the fake server answers its OpenAI-compatible API on port
    // (its latency follows the config file it loaded, see fakeserver.py; tpotMs per token and 2 x tpotMs
    // to the first token at factor 1)
    // and tests/support/fakebenchserving.py becomes the tree's sglang/bench_serving.py.
    bool enableServing(const QString &fakeBenchPy, int port, int tpotMs, QString *error) {
        m_port = port;
        m_tpotMs = tpotMs;
        QFile::remove(benchTool());
        if (!QFile::copy(fakeBenchPy, benchTool()))
            return fail(error, QStringLiteral("cannot install the fake bench tool as ") + benchTool());
        return true;
    }
    QString benchTool() const { return site() + QStringLiteral("/sglang/bench_serving.py"); }
    int port() const { return m_port; }

    // The profile a user would write for this server (kind Command: nohup + log file + pid file).
    ServerProfile profile() const {
        ServerProfile p;
        p.kind = ServerProfile::Kind::Command;
        p.logFile = log();
        p.startCommand =
            QStringLiteral("cd ") + shellQuote(root()) + QStringLiteral(" && { PYTHONPATH=") +
            shellQuote(site()) + QStringLiteral(" FAKESERVER_PID_FILE=") + shellQuote(pidFile()) +
            QStringLiteral(" FAKESERVER_EXIT_AFTER_S=600 FAKESERVER_TPOT_MS=") + QString::number(m_tpotMs) +
            QStringLiteral(" FAKESERVER_TTFT_MS=") + QString::number(2 * m_tpotMs) +
            QStringLiteral(" setsid nohup python3 -m sglang.launch_server --model-path ") +
            shellQuote(model()) + QStringLiteral(" --tp 2") + servingArgs() + QStringLiteral(" >> ") +
            shellQuote(log()) + QStringLiteral(" 2>&1 < /dev/null & }");
        p.stopCommand = QStringLiteral("kill -TERM \"$(cat ") + shellQuote(pidFile()) + QStringLiteral(")\"");
        p.readyLine = QStringLiteral("The server is fired up and ready to roll!");
        p.readyTimeoutS = 60;
        return p;
    }

    // Starts the server the way the profile does and waits for its readiness line.
    bool startServer(QString *error) {
        const qint64 before = QFileInfo(log()).size();
        if (QProcess::execute(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), profile().startCommand}) != 0)
            return fail(error, QStringLiteral("the start command failed"));
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 30000) {
            QFile f(log());
            if (f.open(QIODevice::ReadOnly) && f.size() > before) {
                f.seek(before);
                if (f.readAll().contains("ready to roll"))
                    return true;
            }
            QThread::msleep(50);
        }
        return fail(error, QStringLiteral("the fake server did not get ready"));
    }

    void stopServer() {
        QFile f(pidFile());
        if (!f.open(QIODevice::ReadOnly))
            return;
        const qint64 pid = f.readAll().trimmed().toLongLong();
        if (pid > 0) {
            QProcess::execute(QStringLiteral("kill"), {QStringLiteral("-TERM"), QString::number(pid)});
            QElapsedTimer t;
            t.start();
            while (QFile::exists(pidFile()) && t.elapsed() < 10000)
                QThread::msleep(20);
        }
    }

    QString root() const { return m_dir.path(); }
    QString site() const { return root() + QStringLiteral("/site"); }
    QString configRoot() const {
        return site() + QStringLiteral("/sglang/srt/layers/moe/fused_moe_triton/configs");
    }
    QString wantedFolder() const { return configRoot() + QStringLiteral("/triton_3_6_0"); }
    QString upName() const { return QStringLiteral("E=128,N=384,device_name=NVIDIA_H200.json"); }
    QString downName() const { return QStringLiteral("E=128,N=384,device_name=NVIDIA_H200_down.json"); }
    QString fallbackFile() const { return configRoot() + QStringLiteral("/triton_3_4_0/") + upName(); }
    QString model() const { return root() + QStringLiteral("/models/Qwen3-30B-A3B"); }
    QString bin() const { return root() + QStringLiteral("/bin"); }
    QString python() const { return bin() + QStringLiteral("/python"); }
    QString slowPython() const { return bin() + QStringLiteral("/python-slow"); }
    QString log() const { return root() + QStringLiteral("/logs/sglang server.log"); }
    QString pidFile() const { return root() + QStringLiteral("/server.pid"); }

private:
    QString servingArgs() const {
        return m_port > 0 ? QStringLiteral(" --port %1 --serve-http").arg(m_port) : QString();
    }
    static bool fail(QString *error, const QString &message) {
        if (error)
            *error = message;
        return false;
    }
    bool writePython(const QString &path, const QByteArray &extra) {
        const QByteArray body =
            "#!/bin/sh\n# the fake host's interpreter: system python3 + the fake SGLang tree\n"
            "export PYTHONPATH=" +
            shellQuote(site()).toUtf8() + "\nexport MOETUNE_NVIDIA_SMI=" +
            shellQuote(QString(bin() + QStringLiteral("/nvidia-smi"))).toUtf8() + "\n" + extra +
            "exec python3 \"$@\"\n";
        return write(path, body) &&
               QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    }
    static bool write(const QString &path, const QByteArray &data) {
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile f(path);
        return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
    }

    QTemporaryDir m_dir;
    int m_port = 0;
    int m_tpotMs = 4;
};

} // namespace moetune::test
