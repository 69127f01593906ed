// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/fleet/configgroups.h"

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString fleetOrNone(const QString &value) {
    return value.isEmpty() ? u"none"_s : value;
}

QString fleetFrameworkName(const QString &framework) {
    if (framework == u"vllm"_s)
        return u"vLLM"_s;
    if (framework == u"sglang"_s)
        return u"SGLang"_s;
    return framework;
}

QString fleetShortHash(const QString &hash) {
    return hash.left(12);
}

} // namespace

QStringList fleetFactDifferences(const FleetHostFacts &a, const FleetHostFacts &b) {
    QStringList reasons;
    if (a.framework != b.framework)
        reasons.append(u"%1 vs %2: each framework reads its own config folder and kernel"_s.arg(
            fleetFrameworkName(a.framework), fleetFrameworkName(b.framework)));
    if (a.tritonFolder != b.tritonFolder) {
        if (a.tritonVersion != b.tritonVersion)
            reasons.append(u"Triton %1 vs %2: a different config folder (%3 vs %4)"_s.arg(
                fleetOrNone(a.tritonVersion), fleetOrNone(b.tritonVersion), fleetOrNone(a.tritonFolder),
                fleetOrNone(b.tritonFolder)));
        else
            reasons.append(u"a different config folder (%1 vs %2)"_s.arg(fleetOrNone(a.tritonFolder),
                                                                         fleetOrNone(b.tritonFolder)));
    }
    if (a.deviceName != b.deviceName)
        reasons.append(u"%1 vs %2: the file names the GPU, and a config timed on one GPU is not "
                       u"tuned for another"_s.arg(a.deviceName, b.deviceName));
    if (a.experts != b.experts || a.intermediate != b.intermediate)
        reasons.append(u"E=%1,N=%2 vs E=%3,N=%4: a different expert shape"_s.arg(a.experts)
                           .arg(a.intermediate)
                           .arg(b.experts)
                           .arg(b.intermediate));
    if (a.dtype != b.dtype)
        reasons.append(u"dtype %1 vs %2: a different file"_s.arg(fleetOrNone(a.dtype), fleetOrNone(b.dtype)));
    if (a.blockShape != b.blockShape)
        reasons.append(u"block shape %1 vs %2: a different file"_s.arg(fleetOrNone(a.blockShape),
                                                                       fleetOrNone(b.blockShape)));
    if (a.missingConfig != b.missingConfig && reasons.isEmpty())
        reasons.append(u"%1 vs %2: the servers want different files"_s.arg(a.missingConfig, b.missingConfig));
    if (a.kernelSourceHash != b.kernelSourceHash)
        reasons.append(
            u"fused-MoE kernel source %1 vs %2: different kernel code, whose best configs "
            u"can differ"_s.arg(fleetShortHash(a.kernelSourceHash), fleetShortHash(b.kernelSourceHash)));
    return reasons;
}

FleetGrouping groupFleetHosts(const QList<FleetHostFacts> &facts) {
    FleetGrouping out;
    for (const FleetHostFacts &f : facts) {
        if (f.missingConfig.isEmpty()) {
            out.nothingMissing.append(f.host);
            continue;
        }
        QStringList unknown;
        if (f.kernelSourceHash.isEmpty())
            unknown.append(u"the fused-MoE kernel source hash"_s);
        if (f.deviceName.isEmpty())
            unknown.append(u"the device name"_s);
        if (f.experts <= 0 || f.intermediate <= 0)
            unknown.append(u"E and N"_s);
        if (f.framework.isEmpty())
            unknown.append(u"the framework"_s);
        if (!unknown.isEmpty()) {
            out.notGrouped.append(
                {f.host, u"not known: %1; no tuning done elsewhere can be shown to fit"_s.arg(
                             unknown.join(u", "_s))});
            continue;
        }
        bool placed = false;
        for (FleetConfigGroup &g : out.groups) {
            if (fleetFactDifferences(g.key, f).isEmpty()) {
                g.hosts.append(f.host);
                if (!g.frameworkVersions.contains(f.frameworkVersion)) {
                    g.frameworkVersions.append(f.frameworkVersion);
                    g.frameworkVersions.sort();
                }
                placed = true;
                break;
            }
        }
        if (!placed)
            out.groups.append({f, {f.host}, {f.frameworkVersion}});
    }
    for (int i = 0; i < out.groups.size(); ++i)
        for (int j = i + 1; j < out.groups.size(); ++j)
            out.differences.append({i, j, fleetFactDifferences(out.groups.at(i).key, out.groups.at(j).key)});
    return out;
}

} // namespace moetune
