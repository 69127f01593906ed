// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/host/tunejob.h"

#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "core/moe/moemodelcatalog.h"

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

bool tunejobServes(const TuningTarget &t, const HostProbe &probe) {
    for (const ServerProcess &s : probe.servers)
        if (s.serves(t.name, t.framework))
            return true;
    if (probe.suggestedSpec) // the agent's job for the served model: E (or E + 1) and N per rank
        return (probe.suggestedSpec->experts == t.name.experts ||
                probe.suggestedSpec->experts + 1 == t.name.experts) &&
               probe.suggestedSpec->n == t.name.logicalN(t.framework);
    return false;
}

bool tunejobKnowsShape(const HostProbe *probe) {
    if (!probe)
        return false;
    if (probe->suggestedSpec)
        return true;
    for (const ServerProcess &s : probe->servers)
        if (s.shape)
            return true;
    return false;
}

} // namespace

std::optional<TuningTarget> servedTarget(const Diagnosis &diagnosis, const HostProbe *probe) {
    const bool filter = tunejobKnowsShape(probe);
    const TuningTarget *any = nullptr;
    // The targets that need tuning, then the findings' own (a shape whose tuned file is in use has no
    // entry in targets but its finding names it: Tune This on it builds that job too).
    QList<TuningTarget> all = diagnosis.targets;
    for (const Finding &f : diagnosis.findings)
        if (f.target)
            all.append(*f.target);
    for (const TuningTarget &t : std::as_const(all)) {
        if (!t.isTunable() || (filter && !tunejobServes(t, *probe)))
            continue;
        if (t.needsTuning())
            return t;
        if (!any)
            any = &t;
    }
    if (any)
        return *any;
    return std::nullopt;
}

TuneJob buildTuneJob(const Diagnosis *diagnosis, const HostProbe *probe,
                     const std::optional<TuningTarget> &chosen, const MoeModelCatalog *catalog) {
    TuneJob job;
    job.target = chosen;
    if (!job.target && diagnosis)
        job.target = servedTarget(*diagnosis, probe);
    if (job.target) {
        job.spec = tuneSpecFor(*job.target, probe); // the log's files, device name and up/down
    } else if (probe && probe->suggestedSpec) {
        job.fromProbeOnly = true;
        job.spec = *probe->suggestedSpec;
        if (!probe->pythonExecutable.isEmpty())
            job.spec.python = probe->pythonExecutable;
    } else {
        return job;
    }
    // The files a server reads are named after its GPU: without the log's name, the probe's GPU's.
    if (job.spec.deviceName.isEmpty() && probe) {
        for (const GpuInfo &g : probe->gpus) {
            if (!g.deviceName.isEmpty() && g.deviceName != "SIMULATED_GPU"_L1) {
                job.spec.deviceName = g.deviceName;
                break;
            }
        }
    }
    // K and top-k: the probe's config.json; without one, the model the log names, from the list of
    // common MoE models (only when its expert count is the file's).
    const QString model =
        diagnosis && !diagnosis->starts.isEmpty() ? diagnosis->starts.constLast().model : QString();
    if ((job.spec.hiddenSize == 0 || job.spec.topk == 0) && !model.isEmpty()) {
        std::optional<MoeModelCatalog> loaded;
        if (!catalog) {
            loaded = MoeModelCatalog::load();
            catalog = &*loaded;
        }
        if (const auto m = catalog->findForShape(model, job.spec.experts)) {
            job.spec.hiddenSize = m->hiddenSize;
            job.spec.topk = m->topk;
            job.model = model;
            job.catalogFile = m->file;
        }
    }
    return job;
}

} // namespace moetune
