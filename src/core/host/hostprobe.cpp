// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/host/hostprobe.h"

#include "core/job/tuningtarget.h"

#include <QJsonArray>

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
    return s;
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
    for (const QJsonValue sv : o.value("servers"_L1).toArray()) {
        const QJsonObject so = sv.toObject();
        ServerProcess s;
        s.pid = num(so, "pid");
        s.framework = frameworkFromString(str(so, "framework"));
        QStringList args;
        for (const QJsonValue a : so.value("cmdline"_L1).toArray())
            args.append(a.toString());
        s.commandLine = args.join(u' ');
        s.arguments = args;
        s.launch = launchFromJson(so.value("launch"_L1).toObject(), so.value("server_view"_L1).toObject());
        s.modelPath = str(so, "model");
        s.tensorParallel = qMax(1, int(num(so, "tp")));
        s.shape = shapeFromJson(so.value("moe"_L1));
        if (!p.suggestedSpec && so.value("suggested_spec"_L1).isObject()) {
            QJsonObject spec = so.value("suggested_spec"_L1).toObject();
            if (auto t = TuneSpec::fromJson(spec))
                p.suggestedSpec = t;
        }
        p.servers.append(s);
    }

    const QJsonArray frameworks = o.value("frameworks"_L1).toArray();
    Framework wanted = p.servers.isEmpty() ? Framework::Unknown : p.servers.first().framework;
    QJsonObject chosen;
    for (const QJsonValue fv : frameworks) {
        const QJsonObject f = fv.toObject();
        if (!f.value("importable"_L1).toBool())
            continue;
        const Framework fw = frameworkFromString(str(f, "name"));
        if (chosen.isEmpty() || fw == wanted)
            chosen = f;
    }
    if (!chosen.isEmpty()) {
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
    return p;
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
