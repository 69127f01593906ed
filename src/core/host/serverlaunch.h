// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QMap>
#include <QString>

namespace moetune {

// How a running server process was launched, as the agent's probe read it from /proc (PROTOCOL.md
// probe `servers[].launch` and `servers[].server_view`): the facts a server profile is suggested from,
// and the server's own view of where it reads tuned configs.
struct ServerLaunch {
    qint64 parentPid = 0;
    QString executable;  // /proc/PID/exe
    QString workingDir;  // /proc/PID/cwd
    QString logFile;     // a regular file on its stdout/stderr
    QString supervisor;  // "tmux", "screen", "nohup" or ""
    QString systemdUnit; // "sglang.service" or ""
    bool systemdUserUnit = false;
    QString containerId; // 64 hex or ""
    QMap<QString, QString>
        environment; // the variables that matter (CUDA_VISIBLE_DEVICES, SGLANG_MOE_CONFIG_DIR, ...)
    bool environmentKnown = false; // false: /proc/PID/environ was not readable

    // The server's interpreter and what it sees (not the agent's interpreter).
    QString serverPython;
    QString serverTriton; // "3.6.0" or ""
    QString serverConfigRoot;
    QString serverConfigRootSource; // "module" | "SGLANG_MOE_CONFIG_DIR" | ""
    QString serverViewError;
    // Why the agent did not run the server's interpreter (its path can be written by another user, issue
    // 42.1); serverPython is then empty and nothing may run it.
    QString interpreterProblem;
    // The file defining the server's fused-MoE Triton kernel and the sha256 of its bytes (the agent's
    // probe.kernel_source): two hosts whose hashes differ run different kernel code, so a config tuned on
    // one is not known to fit the other (fleet tuning groups). Empty when not found.
    QString kernelSourcePath;
    QString kernelSourceHash;

    bool operator==(const ServerLaunch &) const = default;
};

} // namespace moetune
