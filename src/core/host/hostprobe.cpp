// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/host/hostprobe.h"

#include "core/job/tuningtarget.h"

#include <QJsonArray>

#include <functional>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString str(const QJsonObject &o, const char *key) {
    return o.value(QLatin1StringView(key)).toString();
}

qint64 num(const QJsonObject &o, const char *key) {
    return qint64(o.value(QLatin1StringView(key)).toDouble());
}

std::optional<MoeShape> shapeFromJson(const QJsonValue &v) {
    if (!v.isObject())
        return std::nullopt;
    const QJsonObject o = v.toObject();
    MoeShape m;
    m.experts = int(num(o, "num_experts"));
    m.topk = int(num(o, "top_k"));
    m.hiddenSize = int(num(o, "hidden_size"));
    m.intermediateSize = int(num(o, "moe_intermediate_size"));
    const QJsonArray block = o.value("weight_block_size"_L1).toArray();
    if (block.size() == 2)
        m.blockShape = std::array<int, 2>{block[0].toInt(), block[1].toInt()};
    m.quantMethod = str(o, "quant_method");
    return m;
}

ServerLaunch launchFromJson(const QJsonObject &l, const QJsonObject &view) {
    ServerLaunch s;
    s.parentPid = num(l, "ppid");
    s.executable = str(l, "exe");
    s.workingDir = str(l, "cwd");
    s.logFile = str(l, "log_file");
    s.supervisor = str(l, "supervisor");
    s.systemdUnit = str(l, "systemd_unit");
    s.systemdUserUnit = l.value("systemd_user"_L1).toBool();
    s.containerId = str(l, "container_id");
    s.environmentKnown = l.value("env"_L1).isObject();
    const QJsonObject env = l.value("env"_L1).toObject();
    for (auto it = env.begin(); it != env.end(); ++it)
        s.environment.insert(it.key(), it.value().toString());
    s.serverPython = str(view, "python");
    s.serverTriton = str(view, "triton");
    s.serverConfigRoot = str(view, "config_root");
    s.serverConfigRootSource = str(view, "config_root_source");
    s.serverViewError = str(view, "error");
    s.interpreterProblem = str(view, "interpreter_problem");
    const QJsonObject kernel = view.value("kernel_source"_L1).toObject();
    s.kernelSourcePath = str(kernel, "path");
    s.kernelSourceHash = str(kernel, "sha256");
    return s;
}

ServerProcess serverFromJson(const QJsonObject &so) {
    ServerProcess s;
    s.pid = num(so, "pid");
    s.framework = frameworkFromString(str(so, "framework"));
    QStringList args;
    for (const QJsonValue a : so.value("cmdline"_L1).toArray())
        args.append(a.toString());
    s.commandLine = args.join(u' ');
    s.arguments = args;
    s.launch = launchFromJson(so.value("launch"_L1).toObject(), so.value("server_view"_L1).toObject());
    if (s.launch.systemdUnit.isEmpty()) // other users' entries carry it at the top
        s.launch.systemdUnit = str(so, "systemd_unit");
    if (s.launch.containerId.isEmpty())
        s.launch.containerId = str(so, "container_id");
    s.modelPath = str(so, "model");
    s.tensorParallel = qMax(1, int(num(so, "tp")));
    s.shape = shapeFromJson(so.value("moe"_L1));
    s.port = int(num(so, "port"));
    s.portFromCommandLine = so.value("port_from_cmdline"_L1).toBool();
    s.uid = so.contains("uid"_L1) ? num(so, "uid") : -1;
    s.user = str(so, "user");
    s.notUsed = str(so, "not_used");
    if (so.value("suggested_spec"_L1).isObject())
        s.suggestedSpec = TuneSpec::fromJson(so.value("suggested_spec"_L1).toObject());
    return s;
}

// The facts that follow the servers flows act on: the suggested job (the one server's, or the one all
// agree on) and which framework's install the probe describes (the servers' one, when they agree).
void settle(HostProbe &p) {
    p.suggestedSpec.reset();
    p.framework = Framework::Unknown;
    p.frameworkVersion.clear();
    p.configRoot.clear();
    p.userConfigFolder.clear();
    p.tritonFolders.clear();
    p.configFiles.clear();
    p.installedTritonFolderExists = false;
    p.tritonVersion = TritonVersion::parse(str(p.raw.value("python"_L1).toObject(), "triton"));
    bool specsAgree = true;
    for (const ServerProcess &s : std::as_const(p.servers)) {
        if (!s.suggestedSpec)
            continue;
        if (!p.suggestedSpec)
            p.suggestedSpec = s.suggestedSpec;
        else if (p.suggestedSpec->toJson() != s.suggestedSpec->toJson())
            specsAgree = false;
    }
    if (!specsAgree)
        p.suggestedSpec.reset(); // several servers of several shapes: the job is the chosen one's

    Framework wanted = p.servers.isEmpty() ? Framework::Unknown : p.servers.first().framework;
    for (const ServerProcess &s : std::as_const(p.servers)) {
        if (s.framework != wanted)
            wanted = Framework::Unknown;
    }
    QJsonObject chosen;
    for (const QJsonValue fv : p.raw.value("frameworks"_L1).toArray()) {
        const QJsonObject f = fv.toObject();
        if (!f.value("importable"_L1).toBool())
            continue;
        const Framework fw = frameworkFromString(str(f, "name"));
        if (chosen.isEmpty() || fw == wanted)
            chosen = f;
    }
    if (chosen.isEmpty())
        return;
    p.framework = frameworkFromString(str(chosen, "name"));
    p.frameworkVersion = str(chosen, "version");
    p.configRoot = str(chosen, "config_root");
    p.userConfigFolder = str(chosen, "user_folder");
    p.installedTritonFolderExists = chosen.value("triton_folder_exists"_L1).toBool();
    for (const QJsonValue tv : chosen.value("triton_folders"_L1).toArray()) {
        const QJsonObject t = tv.toObject();
        TritonFolder folder;
        folder.name = str(t, "name");
        folder.version = TritonVersion::parse(folder.name);
        for (const QJsonValue f : t.value("files"_L1).toArray())
            folder.files.append(f.toString());
        p.tritonFolders.append(folder);
    }
    for (const QJsonValue f : chosen.value("files"_L1).toArray())
        p.configFiles.append(f.toString());
    // triton_folder is the agent's own reading of the installed Triton; keep it when torch's is unknown
    if (!p.tritonVersion)
        p.tritonVersion = TritonVersion::parse(str(chosen, "triton_folder"));
}

} // namespace

bool ServerProcess::serves(const ConfigName &name, Framework namedBy) const {
    if (!shape)
        return false;
    const int tp = qMax(1, tensorParallel);
    const bool experts = shape->experts == name.experts || shape->experts + 1 == name.experts;
    // SGLang's int4_w4a16 file names half the per-rank intermediate size (packed weights)
    return experts && shape->intermediateSize > 0 && shape->intermediateSize / tp == name.logicalN(namedBy);
}

QString ServerProcess::shapeText() const {
    if (!shape)
        return u"not readable (no config.json found for the model)"_s;
    const MoeShape &m = *shape;
    const int tp = qMax(1, tensorParallel);
    QString text =
        u"%1 experts, top-k %2, hidden size %3, MoE intermediate size %4 (N = %5 per rank at TP %6)"_s
            .arg(m.experts)
            .arg(m.topk)
            .arg(m.hiddenSize)
            .arg(m.intermediateSize)
            .arg(m.intermediateSize / tp)
            .arg(tp);
    if (!m.quantMethod.isEmpty())
        text += u", "_s + m.quantMethod;
    if (m.blockShape)
        text += u", block [%1, %2]"_s.arg((*m.blockShape)[0]).arg((*m.blockShape)[1]);
    return text;
}

const TritonFolder *HostProbe::folder(const QString &name) const {
    for (const TritonFolder &f : tritonFolders) {
        if (f.name == name)
            return &f;
    }
    return nullptr;
}

QString HostProbe::installedTritonFolder() const {
    return tritonVersion ? tritonVersion->folderName() : QString();
}

std::optional<HostProbe> HostProbe::fromJson(const QJsonObject &o, QString *error) {
    if (o.value("type"_L1).toString() != "probe"_L1) {
        if (error)
            *error = u"Not a probe event (type \"%1\")."_s.arg(str(o, "type"));
        return std::nullopt;
    }
    HostProbe p;
    p.raw = o;
    p.simulated = o.value("simulated"_L1).toBool();
    const QJsonObject host = o.value("host"_L1).toObject();
    p.hostName = str(host, "hostname");

    for (const QJsonValue gv : o.value("gpus"_L1).toArray()) {
        const QJsonObject g = gv.toObject();
        GpuInfo gpu;
        gpu.index = int(num(g, "index"));
        gpu.deviceName = str(g, "name");
        gpu.name = g.contains("raw_name"_L1) ? str(g, "raw_name") : gpu.deviceName;
        gpu.memoryTotalMiB = num(g, "memory_total_mib");
        gpu.memoryUsedMiB = num(g, "memory_used_mib");
        gpu.computeCapability = str(g, "compute_capability");
        for (const QJsonValue pv : g.value("processes"_L1).toArray()) {
            const QJsonObject po = pv.toObject();
            gpu.processes.append({num(po, "pid"), str(po, "name"), num(po, "used_memory_mib")});
        }
        p.gpus.append(gpu);
    }

    const QJsonObject py = o.value("python"_L1).toObject();
    p.pythonExecutable = str(py, "executable");
    p.pythonVersion = str(py, "version");
    p.torchVersion = str(py, "torch");
    p.tritonVersion = TritonVersion::parse(str(py, "triton"));
    const QJsonObject nvcc = o.value("nvcc"_L1).toObject();
    p.nvccVersion = str(nvcc, "version");

    // Servers first: a running server decides which framework this host is about.
    for (const QJsonValue sv : o.value("servers"_L1).toArray())
        p.servers.append(serverFromJson(sv.toObject()));
    for (const QJsonValue sv : o.value("other_users_servers"_L1).toArray()) {
        ServerProcess s = serverFromJson(sv.toObject());
        if (s.notUsed.isEmpty())
            s.notUsed = u"pid %1 belongs to another user: listed, never used"_s.arg(s.pid);
        p.otherUsersServers.append(s);
    }
    settle(p);
    return p;
}

QString ServerProcess::label() const {
    QString text = u"%1 pid %2"_s.arg(frameworkName(framework), QString::number(pid));
    if (port > 0)
        text += u" on port %1"_s.arg(port);
    if (!modelPath.isEmpty())
        text += u" (%1)"_s.arg(modelPath);
    return text;
}

QList<ServerProcess> HostProbe::allServers() const {
    return servers + otherServers + otherUsersServers;
}

HostProbe HostProbe::focused(const ServerChoice &choice) const {
    HostProbe p = *this;
    p.serverChoiceProblem.clear();
    QList<ServerProcess> candidates = servers + otherServers;
    // Another user's process counts only when the user's own settings name it: its pid or its unit.
    for (const ServerProcess &s : otherUsersServers) {
        const bool named = (choice.pid > 0 && s.pid == choice.pid) ||
                           (choice.pidOrPort > 0 && s.pid == choice.pidOrPort) ||
                           (!choice.unit.isEmpty() && s.launch.systemdUnit == choice.unit);
        if (named) {
            ServerProcess adopted = s;
            adopted.notUsed.clear();
            candidates.append(adopted);
        }
    }
    auto pick = [&](const std::function<bool(const ServerProcess &)> &match) -> int {
        int found = -1;
        for (int i = 0; i < candidates.size(); ++i) {
            if (!match(candidates[i]))
                continue;
            if (found >= 0)
                return -2; // more than one: not a choice
            found = i;
        }
        return found;
    };
    int index = -1;
    if (choice.isExplicit()) {
        if (choice.pid > 0)
            index = pick([&](const ServerProcess &s) { return s.pid == choice.pid; });
        else if (choice.port > 0)
            index = pick([&](const ServerProcess &s) { return s.port == choice.port; });
        else {
            index = pick([&](const ServerProcess &s) { return s.pid == choice.pidOrPort; });
            if (index == -1)
                index = pick([&](const ServerProcess &s) { return s.port == choice.pidOrPort; });
        }
        if (index < 0) {
            QStringList running;
            for (const ServerProcess &s : std::as_const(candidates))
                running.append(s.label());
            p.serverChoiceProblem =
                (index == -2 ? u"The chosen server (%1) matches more than one server process; "_s
                             : u"The chosen server (%1) is not running; "_s)
                    .arg(choice.text()) +
                (running.isEmpty() ? u"no server runs on the host."_s
                                   : u"running: %1."_s.arg(running.join(u"; "_s)));
            p.servers.clear();
            p.otherServers = servers + otherServers; // an unchosen other user's process stays theirs
            settle(p);
            return p;
        }
    } else {
        if (!choice.logFile.isEmpty())
            index = pick([&](const ServerProcess &s) { return s.launch.logFile == choice.logFile; });
        if (index < 0 && !choice.unit.isEmpty())
            index = pick([&](const ServerProcess &s) { return s.launch.systemdUnit == choice.unit; });
        if (index < 0) {
            // The only server of the agent's user; an adopted one only when it is the only candidate.
            index = candidates.size() == 1 ? 0 : -1;
        }
    }
    p.otherUsersServers.clear();
    for (const ServerProcess &s : otherUsersServers) {
        bool adopted = false;
        for (const ServerProcess &c : std::as_const(candidates))
            adopted = adopted || c.pid == s.pid;
        if (!adopted)
            p.otherUsersServers.append(s);
    }
    if (index >= 0) {
        p.servers = {candidates.at(index)};
        candidates.removeAt(index);
        p.otherServers = candidates;
    } else {
        p.servers = candidates;
        p.otherServers.clear();
    }
    settle(p);
    return p;
}

QString HostProbe::serverQuestion(const QString &how) const {
    if (!serverChoiceProblem.isEmpty())
        return serverChoiceProblem + u" Choose a running one: "_s + how + u'.';
    if (servers.size() <= 1)
        return {};
    QStringList names;
    for (const ServerProcess &s : servers)
        names.append(s.label());
    return u"%1 runs %2 servers (%3); moetune does not pick one for you: choose one %4."_s.arg(
        hostName.isEmpty() ? u"The host"_s : hostName, QString::number(servers.size()), names.join(u"; "_s),
        how);
}

TuneSpec tuneSpecFor(const TuningTarget &target, const HostProbe *probe) {
    TuneSpec s = TuneSpec::fromTarget(target);
    if (!probe)
        return s;
    if (probe->suggestedSpec) {
        const TuneSpec &p = *probe->suggestedSpec;
        if (p.experts == s.experts && p.n == s.n) {
            s.hiddenSize = p.hiddenSize;
            s.topk = p.topk;
        }
    }
    for (const ServerProcess &server : probe->servers) {
        if (!server.shape || s.hiddenSize > 0)
            continue;
        const MoeShape &m = *server.shape;
        const int tp = qMax(1, server.tensorParallel);
        // The file's E may count a fused shared expert (E+1); N is per rank.
        if ((m.experts == s.experts || m.experts + 1 == s.experts) && m.intermediateSize / tp == s.n) {
            s.hiddenSize = m.hiddenSize;
            s.topk = m.topk;
        }
    }
    if (!probe->pythonExecutable.isEmpty())
        s.python = probe->pythonExecutable;
    return s;
}

} // namespace moetune
