// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/serverchoice.h"
#include "core/host/serverlaunch.h"
#include "core/job/tunespec.h"
#include "core/moe/configname.h"
#include "core/moe/framework.h"
#include "core/moe/tritonversion.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace moetune {

// A process holding GPU memory.
struct GpuProcess {
    qint64 pid = 0;
    QString name;
    qint64 usedMiB = 0;
};

struct GpuInfo {
    int index = 0;
    QString name;       // as nvidia-smi / torch prints it
    QString deviceName; // as the server spells it in config file names ("NVIDIA_H200")
    qint64 memoryTotalMiB = 0;
    qint64 memoryUsedMiB = 0;
    QString computeCapability; // "9.0"
    QList<GpuProcess> processes;
};

// One triton_X_Y_Z folder under the config root (SGLang) and the config files in it.
struct TritonFolder {
    QString name;
    std::optional<TritonVersion> version;
    QStringList files;
};

// A model's MoE shape, read from its config.json.
struct MoeShape {
    int experts = 0;
    int topk = 0;
    int hiddenSize = 0;
    int intermediateSize = 0; // moe_intermediate_size (before dividing by TP)
    std::optional<std::array<int, 2>> blockShape;
    QString quantMethod; // "fp8", ... "" when unquantised
    bool operator==(const MoeShape &) const = default;
};

// A running inference server process.
struct ServerProcess {
    qint64 pid = 0;
    Framework framework = Framework::Unknown;
    QString commandLine;
    QString modelPath;
    int tensorParallel = 1;
    std::optional<MoeShape> shape;
    QStringList arguments; // the command line as argv
    ServerLaunch launch;   // how it was launched and what it reads (agents older than 0.2: empty)
    int port = 0;          // --port, else the framework's default (0: unknown)
    bool portFromCommandLine = false;
    qint64 uid = -1; // its owner (-1: an agent that did not say)
    QString user;
    // "" for a server of the agent's user; else why it is only listed (another user's process, 42.1).
    QString notUsed;
    std::optional<TuneSpec> suggestedSpec; // the agent's job for its model, when it is MoE

    // "SGLang pid 4242 on port 30000 (/models/Qwen3-30B-A3B)": how every flow names the server it acts on.
    QString label() const;

    // "128 experts, top-k 8, hidden size 2048, MoE intermediate size 768 (N = 768 per rank at TP 1)":
    // the served model's shape in one line, for the app and the CLI.
    QString shapeText() const;
    // Whether this server's model has the shape of config file `name` as `namedBy` names it: E (or
    // E + 1, a fused shared expert) and N per rank at the server's TP (int4's packed N undone).
    bool serves(const ConfigName &name, Framework namedBy) const;
};

// Everything the agent's `probe` learns about a host.
struct HostProbe {
    QString hostName;
    QString agentVersion;
    QString pythonExecutable;
    QString pythonVersion;
    QString torchVersion;
    std::optional<TritonVersion> tritonVersion;
    QString nvccVersion;
    QList<GpuInfo> gpus;

    Framework framework = Framework::Unknown;
    QString frameworkVersion;
    QString configRoot;       // SGLang: the folder holding triton_*; vLLM: the configs folder
    QString userConfigFolder; // VLLM_TUNED_CONFIG_FOLDER / SGLANG_MOE_CONFIG_DIR when set
    QList<TritonFolder> tritonFolders;
    QStringList configFiles; // vLLM (flat folder)
    bool installedTritonFolderExists = false;

    // The servers flows act on: after focused(), the chosen one (or none); before, or with no way to
    // choose, every server of the agent's user (several: serverQuestion() asks which).
    QList<ServerProcess> servers;
    QList<ServerProcess> otherServers;      // the agent user's servers that were not chosen (listed only)
    QList<ServerProcess> otherUsersServers; // other users' server processes: listed, never used (42.1)
    QString serverChoiceProblem;            // the explicit choice matched no server: which and what runs
    std::optional<TuneSpec> suggestedSpec;
    bool simulated = false;
    QJsonObject raw; // the agent's object as received, for fields this build does not know

    const TritonFolder *folder(const QString &name) const;
    QString installedTritonFolder() const; // "triton_3_6_0" or "" without Triton
    // Parses the agent's probe object (remote_agent/PROTOCOL.md); unknown fields are kept in raw.
    static std::optional<HostProbe> fromJson(const QJsonObject &o, QString *error = nullptr);

    // This probe with `servers` narrowed to the server `choice` names (ServerChoice: explicit, else the
    // log's writer or the systemd unit, else the only one); the others move to otherServers. An explicit
    // choice that matches nothing leaves no server and says why in serverChoiceProblem. Another user's
    // process is adopted only when the choice names its pid or its systemd unit. The framework facts and
    // the suggested spec follow the servers left.
    HostProbe focused(const ServerChoice &choice) const;
    // Every server process seen, chosen or not, own or another user's (for listings).
    QList<ServerProcess> allServers() const;
    // "" with at most one server; else the question a flow asks instead of picking one: "HOST runs 2
    // servers: ...; choose one: HOW." (how: "--server PID|PORT" / "on the Hosts page").
    QString serverQuestion(const QString &how) const;
};

struct TuningTarget;

// The job a diagnosis names (TuneSpec::fromTarget) with what the probe knows filled in: K and top-k from
// the agent's suggested spec or a running server of that shape, and the server's interpreter. Without a
// probe it is fromTarget's spec.
TuneSpec tuneSpecFor(const TuningTarget &target, const HostProbe *probe);

} // namespace moetune
