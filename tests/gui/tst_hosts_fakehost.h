#pragma once

// A fake SGLang host on this machine for the Hosts tests: a Python package tree (sglang with a
// fused_moe_triton/configs/triton_3_4_0 folder, triton 3.6.0), a model folder with a Qwen3-30B-A3B
// config.json, a running "sglang.launch_server" process serving it, a server log, and a stand-in for
// nvidia-smi. TEST DOUBLE: nvidia-smi and the server process only stand in for a GPU and a real server,
// which this machine has not; the agent, its probe and the transport are the real ones.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

namespace moetune::test {

class FakeSglangHost {
public:
    static constexpr const char *triton = "3.6.0";
    static constexpr const char *sglangVersion = "0.5.6";

    bool create(QString *error) {
        if (!m_dir.isValid()) {
            *error = QStringLiteral("no temporary folder");
            return false;
        }
        const QString site = sitePath();
        const QString cfg = configRoot();
        bool ok = QDir().mkpath(cfg + QStringLiteral("/triton_3_4_0")) &&
                  QDir().mkpath(site + QStringLiteral("/triton")) && QDir().mkpath(modelPath()) &&
                  QDir().mkpath(homePath()) && QDir().mkpath(binPath());
        ok = ok && write(site + QStringLiteral("/sglang/__init__.py"), "__version__ = \"0.5.6\"\n");
        ok = ok && write(site + QStringLiteral("/sglang/launch_server.py"),
                         "import time\nwhile True:\n    time.sleep(1)\n");
        for (const char *pkg :
             {"/sglang/srt/__init__.py", "/sglang/srt/layers/__init__.py",
              "/sglang/srt/layers/moe/__init__.py", "/sglang/srt/layers/moe/fused_moe_triton/__init__.py"})
            ok = ok && write(site + QString::fromLatin1(pkg), "");
        ok = ok && write(site + QStringLiteral("/triton/__init__.py"), "__version__ = \"3.6.0\"\n");
        ok = ok &&
             write(cfg + QStringLiteral("/triton_3_4_0/E=128,N=768,device_name=NVIDIA_H200.json"), "{}\n");
        ok = ok && write(modelPath() + QStringLiteral("/config.json"),
                         "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"num_experts\": 128, "
                         "\"num_experts_per_tok\": 8, \"hidden_size\": 2048, \"moe_intermediate_size\": 768, "
                         "\"torch_dtype\": \"bfloat16\"}\n");
        // TEST DOUBLE for nvidia-smi: one H200 with a server holding most of its memory.
        ok = ok && write(binPath() + QStringLiteral("/nvidia-smi"),
                         "#!/bin/sh\n"
                         "case \"$1\" in\n"
                         "  --query-gpu=*) echo '0, NVIDIA H200, GPU-1a2b, 143771, 120034, 9.0' ;;\n"
                         "  --query-compute-apps=*) echo 'GPU-1a2b, 5123, python3, 120000' ;;\n"
                         "esac\n");
        ok = ok && QFile::setPermissions(binPath() + QStringLiteral("/nvidia-smi"),
                                         QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        const QByteArray wanted =
            (cfg + QStringLiteral("/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200")).toUtf8();
        const QByteArray fallback =
            (cfg + QStringLiteral("/triton_3_4_0/E=128,N=768,device_name=NVIDIA_H200")).toUtf8();
        ok = ok &&
             write(logPath(),
                   "[2026-11-29 10:00:01] server_args=ServerArgs(model_path='Qwen3-30B-A3B', tp_size=1)\n"
                   "[2026-11-29 10:00:09 TP0] Config file not found at " +
                       wanted + ".json. Fallback to triton version 3.4.0 and use MoE kernel config from " +
                       fallback +
                       ".json. Performance might be sub-optimal!\n"
                       "[2026-11-29 10:00:09 TP0] Using MoE kernel config with down_moe=False. Performance "
                       "might be sub-optimal! Config file not found at " +
                       wanted +
                       "_down.json, you can create them with "
                       "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n"
                       "[2026-11-29 10:00:20] The server is fired up and ready to roll!\n");
        if (!ok) {
            *error = QStringLiteral("cannot write the fake host under ") + m_dir.path();
            return false;
        }
        qputenv("PYTHONPATH", sitePath().toUtf8());
        qputenv("MOETUNE_NVIDIA_SMI", (binPath() + QStringLiteral("/nvidia-smi")).toUtf8());
        // The "server": a python process whose command line is an SGLang launch (what the probe looks for).
        m_server = std::make_unique<QProcess>();
        m_server->setProgram(QStringLiteral("python3"));
        m_server->setArguments({QStringLiteral("-m"), QStringLiteral("sglang.launch_server"),
                                QStringLiteral("--model-path"), modelPath(), QStringLiteral("--tp"),
                                QStringLiteral("1")});
        m_server->start();
        if (!m_server->waitForStarted(10000)) {
            *error = QStringLiteral("cannot start the fake server: ") + m_server->errorString();
            return false;
        }
        return true;
    }

    ~FakeSglangHost() {
        if (m_server) {
            m_server->kill();
            m_server->waitForFinished(5000);
        }
    }

    qint64 serverPid() const { return m_server ? m_server->processId() : 0; }
    QString root() const { return m_dir.path(); }
    QString sitePath() const { return m_dir.path() + QStringLiteral("/site"); }
    QString configRoot() const {
        return sitePath() + QStringLiteral("/sglang/srt/layers/moe/fused_moe_triton/configs");
    }
    QString modelPath() const { return m_dir.path() + QStringLiteral("/models/Qwen3-30B-A3B"); }
    QString homePath() const { return m_dir.path() + QStringLiteral("/home"); }
    QString binPath() const { return m_dir.path() + QStringLiteral("/bin"); }
    QString logPath() const { return m_dir.path() + QStringLiteral("/logs/sglang server.log"); }

private:
    static bool write(const QString &path, const QByteArray &data) {
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile f(path);
        return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
    }

    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_server;
};

} // namespace moetune::test
