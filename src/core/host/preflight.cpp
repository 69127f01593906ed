// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/host/preflight.h"

#include "core/host/hosttext.h"

using namespace Qt::StringLiterals;

namespace moetune {

namespace {
QString gib(qint64 mib) {
    return u"%1 GiB"_s.arg(double(mib) / 1024.0, 0, 'f', 1);
}
} // namespace

Preflight Preflight::evaluate(const HostProbe &probe, const QList<int> &wanted, qint64 neededMiB) {
    Preflight p;
    p.neededMiB = neededMiB;
    // What the host sent is shown (preflight text, sentences): cleaned by hostText. Decisions use pids,
    // memory and the raw process names.
    p.gpuError = hostText(probe.raw.value("gpu_error"_L1).toString());
    QList<qint64> serverPids;
    for (const ServerProcess &s : probe.servers)
        serverPids.append(s.pid);
    for (int w : wanted) {
        bool found = false;
        for (const GpuInfo &g : probe.gpus)
            found = found || g.index == w;
        if (!found)
            p.problems.append(u"GPU %1 does not exist on this host (it has %2)."_s.arg(w).arg(
                probe.gpus.isEmpty() ? u"no GPU nvidia-smi could list"_s
                                     : u"GPUs 0-%1"_s.arg(probe.gpus.size() - 1)));
    }
    for (const GpuInfo &g : probe.gpus) {
        if (!wanted.isEmpty() && !wanted.contains(g.index))
            continue;
        Gpu gpu;
        gpu.index = g.index;
        gpu.name = hostText(g.name);
        gpu.totalMiB = g.memoryTotalMiB;
        gpu.usedMiB = g.memoryUsedMiB;
        for (const GpuProcess &h : g.processes) {
            // The server's workers are its children; the probe names the main process, and holders
            // with the server's model loaded are usually its scheduler processes: count both.
            if (serverPids.contains(h.pid) || h.name.contains(u"sglang"_s) || h.name.contains(u"VLLM"_s))
                gpu.heldByServer = true;
            gpu.holders.append({h.pid, hostText(h.name), h.usedMiB});
        }
        const qint64 free = g.memoryTotalMiB - g.memoryUsedMiB;
        gpu.enough = neededMiB <= 0 || free >= neededMiB;
        p.serverHoldsGpus = p.serverHoldsGpus || gpu.heldByServer;
        if (!gpu.enough) {
            QString who;
            for (const GpuProcess &h : gpu.holders)
                who += u"%1pid %2 %3 (%4)"_s.arg(who.isEmpty() ? QString() : u", "_s)
                           .arg(h.pid)
                           .arg(h.name, gib(h.usedMiB));
            p.problems.append(u"GPU %1 has %2 free of %3 but the job needs %4%5."_s.arg(g.index).arg(
                gib(free), gib(g.memoryTotalMiB), gib(neededMiB),
                who.isEmpty() ? QString()
                              : u"; it is held by "_s + who +
                                    (gpu.heldByServer ? u" - stop the server first"_s : QString())));
        }
        p.gpus.append(gpu);
    }
    if (neededMiB > 0 && probe.gpus.isEmpty())
        p.problems.append(u"No GPU found on this host%1: only the synthetic backend can run here."_s.arg(
            p.gpuError.isEmpty() ? QString() : u" ("_s + p.gpuError + u')'));
    return p;
}

QStringList Preflight::holderLines() const {
    QStringList out;
    for (const Gpu &g : gpus) {
        for (const GpuProcess &h : g.holders)
            out.append(u"GPU %1: pid %2 %3 (%4)"_s.arg(g.index).arg(h.pid).arg(h.name, gib(h.usedMiB)));
    }
    return out;
}

} // namespace moetune
