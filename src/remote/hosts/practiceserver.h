// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/server/serverprofile.h"
#include "remote/hosts/hostconfig.h"

#include <QString>

namespace moetune {

// The practice server: a sandbox host the user creates in one click (Hosts page, demo banner) to try the
// whole loop without a GPU: tune (synthetic backend), push, restart and prove, undo. PRACTICE DOUBLE,
// labelled as such everywhere: a fake SGLang tree in the app's data folder, whose "server" is
// resources/practice/fake_sglang_server.py (it writes an SGLang-style log that follows SGLang's config
// lookup over the files on disk, then idles), and a script standing in for nvidia-smi (two H200s, held by
// that server while it runs), and resources/practice/practice_bench_serving.py for the serving benchmark tool
// (`python3 -m sglang.bench_serving`: SIMULATED figures that follow the config the server loaded). The agent,
// its install-config, the shell commands of the server profile and every file are real; the host is this
// machine (LocalTransport) with the tree's own HOME.
//
// Simulated numbers are installable only into a tree marked as a double (.moetune-test-double at its top,
// remote_agent install/installer.py); create() writes the practice text there, and only into a folder it made
// itself, so no real server's tree is ever marked by the app.
class PracticeServer {
public:
    static QString alias();       // "practice": the host's name in the app and on the CLI
    static QString label();       // "Practice server (sandbox)"
    static QString defaultRoot(); // <app data folder>/practice-server
    static QString markerText();  // the bytes of remote_agent install/installer.py PRACTICE_DOUBLE_TEXT

    explicit PracticeServer(QString root = defaultRoot());

    // Writes the tree (again, keeping the config files pushed so far and the log). Refuses a folder that
    // exists, is not empty and is not a practice server's.
    bool create(QString *error) const;
    bool exists() const; // a practice tree is there (its marker)
    // Starts the server the way its profile does (detached; its log grows with the startup lines).
    bool startServer(QString *error) const;
    bool isRunning() const; // its pid file names a live process

    HostConfig host() const; // the host to save in the registry
    ServerProfile profile() const;

    QString root() const { return m_root; }
    QString site() const { return m_root + QStringLiteral("/site"); }
    QString configRoot() const {
        return site() + QStringLiteral("/sglang/srt/layers/moe/fused_moe_triton/configs");
    }
    QString wantedFolder() const { return configRoot() + QStringLiteral("/triton_3_6_0"); }
    QString upName() const { return QStringLiteral("E=128,N=384,device_name=NVIDIA_H200.json"); }
    QString downName() const { return QStringLiteral("E=128,N=384,device_name=NVIDIA_H200_down.json"); }
    QString fallbackFile() const { return configRoot() + QStringLiteral("/triton_3_4_0/") + upName(); }
    QString model() const { return m_root + QStringLiteral("/models/Qwen3-30B-A3B"); }
    QString bin() const { return m_root + QStringLiteral("/bin"); }
    QString python() const { return bin() + QStringLiteral("/python"); }
    QString log() const { return m_root + QStringLiteral("/logs/sglang server.log"); }
    QString pidFile() const { return m_root + QStringLiteral("/server.pid"); }
    QString home() const { return m_root + QStringLiteral("/home"); }
    QString marker() const { return m_root + QStringLiteral("/.moetune-test-double"); }

private:
    QString m_root;
};

} // namespace moetune
