// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "fakesglanghost.h"

#include <QDir>
#include <QFile>
#include <QProcessEnvironment>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune::test {

FakeSglangHost::FakeSglangHost()
    : m_tree(m_dir.path()) {}

FakeSglangHost::~FakeSglangHost() {
    for (QProcess *p : {m_server.get(), m_second.get()}) {
        if (p) {
            p->kill();
            p->waitForFinished(5000);
        }
    }
}

int FakeSglangHost::freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    ::close(fd);
    return port;
}

namespace {

// The "server": a python process whose command line is an SGLang launch (what the probe looks for), its
// stdout and stderr appended to its log file as `nohup ... >> log 2>&1` leaves them.
std::unique_ptr<QProcess> startServer(const QString &model, int port, const QString &log,
                                      const QStringList &extraEnv, QString *error) {
    auto p = std::make_unique<QProcess>();
    p->setProgram(u"python3"_s);
    p->setArguments({u"-m"_s, u"sglang.launch_server"_s, u"--model-path"_s, model, u"--tp"_s, u"1"_s,
                     u"--port"_s, QString::number(port)});
    p->setStandardOutputFile(log, QIODevice::Append);
    p->setProcessChannelMode(QProcess::MergedChannels);
    if (!extraEnv.isEmpty()) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const QString &kv : extraEnv)
            env.insert(kv.section(u'=', 0, 0), kv.section(u'=', 1));
        p->setProcessEnvironment(env);
    }
    p->start();
    if (!p->waitForStarted(10000)) {
        *error = u"cannot start the fake server: "_s + p->errorString();
        return nullptr;
    }
    return p;
}

} // namespace

bool FakeSglangHost::create(QString *error) {
    if (!m_dir.isValid()) {
        *error = u"no temporary folder"_s;
        return false;
    }
    if (!m_tree.create(QString::fromLatin1(sglangVersion), QString::fromLatin1(triton), error))
        return false;
    const QString cfg = configRoot();
    bool ok = QDir().mkpath(modelPath()) && QDir().mkpath(homePath()) && QDir().mkpath(binPath());
    ok = ok && FakeHostTree::writeFile(sitePath() + u"/sglang/launch_server.py"_s,
                                       "import time\nwhile True:\n    time.sleep(1)\n");
    ok = ok && m_tree.addConfig(u"triton_3_4_0"_s, u"E=128,N=768,device_name=NVIDIA_H200.json"_s, "{}\n");
    ok = ok && FakeHostTree::writeFile(
                   modelPath() + u"/config.json"_s,
                   "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"num_experts\": 128, "
                   "\"num_experts_per_tok\": 8, \"hidden_size\": 2048, \"moe_intermediate_size\": 768, "
                   "\"torch_dtype\": \"bfloat16\"}\n");
    // TEST DOUBLE for nvidia-smi: one H200 with a server holding most of its memory.
    ok = ok &&
         FakeHostTree::writeFile(binPath() + u"/nvidia-smi"_s,
                                 "#!/bin/sh\n"
                                 "case \"$1\" in\n"
                                 "  --query-gpu=*) echo '0, NVIDIA H200, GPU-1a2b, 143771, 120034, 9.0' ;;\n"
                                 "  --query-compute-apps=*) echo 'GPU-1a2b, 5123, python3, 120000' ;;\n"
                                 "esac\n",
                                 true);
    const QByteArray wanted = (cfg + u"/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200"_s).toUtf8();
    const QByteArray fallback = (cfg + u"/triton_3_4_0/E=128,N=768,device_name=NVIDIA_H200"_s).toUtf8();
    ok = ok && FakeHostTree::writeFile(
                   logPath(),
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
        *error = u"cannot write the fake host under "_s + root();
        return false;
    }
    qputenv("PYTHONPATH", sitePath().toUtf8());
    qputenv("MOETUNE_NVIDIA_SMI", (binPath() + u"/nvidia-smi"_s).toUtf8());
    m_port = freePort();
    m_server = startServer(modelPath(), m_port, logPath(), {}, error);
    return m_server != nullptr;
}

bool FakeSglangHost::addSecondServer(QString *error) {
    const QByteArray wanted =
        (secondConfigDir() + u"/configs/triton_3_6_0/E=60,N=1408,device_name=NVIDIA_H200"_s).toUtf8();
    bool ok = QDir().mkpath(secondModelPath()) && QDir().mkpath(secondConfigDir() + u"/configs"_s);
    ok = ok && FakeHostTree::writeFile(
                   secondModelPath() + u"/config.json"_s,
                   "{\"architectures\": [\"Qwen2MoeForCausalLM\"], \"num_experts\": 60, "
                   "\"num_experts_per_tok\": 4, \"hidden_size\": 2048, \"moe_intermediate_size\": 1408, "
                   "\"torch_dtype\": \"bfloat16\"}\n");
    ok = ok && FakeHostTree::writeFile(
                   secondLogPath(),
                   "[2026-11-29 11:00:01] server_args=ServerArgs(model_path='Qwen1.5-MoE-A2.7B', tp_size=1)\n"
                   "[2026-11-29 11:00:09 TP0] Using default MoE kernel config. Performance might be "
                   "sub-optimal! Config file not found at " +
                       wanted +
                       ".json, you can create them with "
                       "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n"
                       "[2026-11-29 11:00:20] The server is fired up and ready to roll!\n");
    if (!ok) {
        *error = u"cannot write the second server's files under "_s + root();
        return false;
    }
    do
        m_secondPort = freePort();
    while (m_secondPort == m_port);
    m_second = startServer(secondModelPath(), m_secondPort, secondLogPath(),
                           {u"SGLANG_MOE_CONFIG_DIR="_s + secondConfigDir()}, error);
    return m_second != nullptr;
}

} // namespace moetune::test
