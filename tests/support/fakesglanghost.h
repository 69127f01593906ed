// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "fakehosttree.h"

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace moetune::test {

// A fake SGLang host on this machine: a Python package tree (FakeHostTree: sglang 0.5.6 with a
// fused_moe_triton/configs/triton_3_4_0 folder, triton 3.6.0), a model folder with a Qwen3-30B-A3B
// config.json, a running "sglang.launch_server" process serving it, a server log, and a stand-in for
// nvidia-smi. TEST DOUBLE: nvidia-smi and the server process only stand in for a GPU and a real server,
// which this machine has not; the agent, its probe and the transport are the real ones.
// create() also sets PYTHONPATH and MOETUNE_NVIDIA_SMI in this process's environment (for "local").
// Tests know their fake servers by pid and port (each gets a free port; its stdout is its log file, so the
// probe sees which server writes the log), never as "the" server of the machine: another SGLang process
// on the same machine (a practice server, another test's) changes nothing they assert (issue 41).
class FakeSglangHost {
public:
    static constexpr const char *triton = "3.6.0";
    static constexpr const char *sglangVersion = "0.5.6";

    FakeSglangHost();
    ~FakeSglangHost();
    bool create(QString *error);

    qint64 serverPid() const { return m_server ? m_server->processId() : 0; }
    int serverPort() const { return m_port; }
    // A second server on the same host (TEST DOUBLE too): another model and MoE shape (Qwen1.5-MoE-A2.7B:
    // 60 experts, top-k 4, hidden size 2048, N = 1408), its own free port, its own log, and its own
    // SGLANG_MOE_CONFIG_DIR (so its config folder differs from the first server's).
    bool addSecondServer(QString *error);
    qint64 secondPid() const { return m_second ? m_second->processId() : 0; }
    int secondPort() const { return m_secondPort; }
    QString secondModelPath() const { return root() + QStringLiteral("/models/Qwen1.5-MoE-A2.7B"); }
    QString secondLogPath() const { return root() + QStringLiteral("/logs/second server.log"); }
    QString secondConfigDir() const { return root() + QStringLiteral("/second-configs"); }
    // A free TCP port of 127.0.0.1 (bound, then released) for a fake server's --port.
    static int freePort();
    QString root() const { return m_dir.path(); }
    QString sitePath() const { return m_tree.sitePath(); }
    QString configRoot() const { return m_tree.configRoot(); }
    QString python() const { return m_tree.python(); } // an interpreter that sees the fake install
    QString modelPath() const { return root() + QStringLiteral("/models/Qwen3-30B-A3B"); }
    QString homePath() const { return root() + QStringLiteral("/home"); }
    QString binPath() const { return root() + QStringLiteral("/bin"); }
    QString logPath() const { return root() + QStringLiteral("/logs/sglang server.log"); }

private:
    QTemporaryDir m_dir;
    FakeHostTree m_tree;
    std::unique_ptr<QProcess> m_server;
    std::unique_ptr<QProcess> m_second;
    int m_port = 0;
    int m_secondPort = 0;
};

} // namespace moetune::test
