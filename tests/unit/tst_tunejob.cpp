// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The one job builder (src/core/host/tunejob.h, issue 45 point 1): "Tune This..." and "Tune the Served
// Model" build the same job from the same facts: the log's targets (up and _down), the device name the
// log asks for (never SIMULATED_GPU for a server's files), K and top-k, the config root.
#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "core/host/tunejob.h"
#include "core/moe/moemodelcatalog.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

TuningTarget target(const QString &file, bool downMissing) {
    TuningTarget t;
    t.framework = Framework::SGLang;
    t.configRoot = u"/srv/sglang/configs"_s;
    t.tritonFolder = u"triton_3_6_0"_s;
    t.name = *ConfigName::parse(file);
    t.upFellBack = true;
    t.downMissing = downMissing;
    return t;
}

HostProbe probe(const QString &gpuName) {
    HostProbe p;
    p.pythonExecutable = u"/opt/venv/bin/python"_s;
    GpuInfo g;
    g.name = gpuName;
    g.deviceName = gpuName;
    p.gpus = {g};
    TuneSpec s;
    s.framework = Framework::SGLang;
    s.experts = 128;
    s.n = 384;
    s.hiddenSize = 2048;
    s.topk = 8;
    p.suggestedSpec = s;
    return p;
}

} // namespace

class TestTuneJob : public QObject {
    Q_OBJECT
private slots:
    void bothEntriesBuildTheSameJob() {
        Diagnosis d;
        d.host = u"h"_s;
        // A target of another shape first: the served one is chosen, not the first.
        d.targets = {target(u"E=64,N=256,device_name=NVIDIA_H200.json"_s, false),
                     target(u"E=128,N=384,device_name=NVIDIA_H200.json"_s, true)};
        const HostProbe p = probe(u"NVIDIA_H200"_s);
        const auto served = servedTarget(d, &p);
        QVERIFY(served);
        QCOMPARE(served->name.experts, 128);
        const TuneJob fromHosts = buildTuneJob(&d, &p);
        const TuneJob fromFinding = buildTuneJob(&d, &p, d.targets.at(1));
        QCOMPARE(fromHosts.spec, fromFinding.spec);
        QCOMPARE(fromHosts.target, fromFinding.target);
        const TuneSpec &s = fromHosts.spec;
        QVERIFY(s.upAndDown); // the log wants the _down file
        QCOMPARE(s.deviceName, u"NVIDIA_H200"_s);
        QCOMPARE(s.hiddenSize, 2048);
        QCOMPARE(s.topk, 8);
        QCOMPARE(s.python, u"/opt/venv/bin/python"_s);
        QCOMPARE(fromHosts.target->installFolder(), u"/srv/sglang/configs/triton_3_6_0"_s);
        QVERIFY(!fromHosts.fromProbeOnly);
    }

    void withoutALogTheHostsGpuNamesTheFiles() {
        const HostProbe p = probe(u"NVIDIA_H100_80GB_HBM3"_s);
        const TuneJob job = buildTuneJob(nullptr, &p);
        QVERIFY(job.fromProbeOnly && !job.target);
        QCOMPARE(job.spec.deviceName, u"NVIDIA_H100_80GB_HBM3"_s);
        QVERIFY(!job.spec.upAndDown);
        // A host whose only "GPU" is the synthetic one: no device name (never SIMULATED_GPU files).
        const HostProbe sim = probe(u"SIMULATED_GPU"_s);
        QCOMPARE(buildTuneJob(nullptr, &sim).spec.deviceName, QString());
        // Nothing known: no job.
        QVERIFY(!buildTuneJob(nullptr, nullptr).valid());
    }

    void kAndTopkFromTheModelList() {
        Diagnosis d;
        d.targets = {target(u"E=128,N=384,device_name=NVIDIA_H200_NVL.json"_s, true)};
        ServerStart start;
        start.model = u"/models/Qwen3-30B-A3B"_s;
        d.starts = {start};
        QString error;
        const MoeModelCatalog list = MoeModelCatalog::fromJson(
            R"({"format":"moetune-moe-models","version":1,"models":[{"names":["Qwen3-30B-A3B"],)"
            R"("hidden_size":2048,"experts":128,"top_k":8,"moe_intermediate_size":768}]})",
            u"list.json"_s, &error);
        QCOMPARE(error, QString());
        const TuneJob job = buildTuneJob(&d, nullptr, std::nullopt, &list);
        QVERIFY(job.target);
        QCOMPARE(job.spec.hiddenSize, 2048);
        QCOMPARE(job.spec.topk, 8);
        QCOMPARE(job.spec.deviceName, u"NVIDIA_H200_NVL"_s);
        QCOMPARE(job.catalogFile, u"list.json"_s);
    }

    void aShapeInUseIsStillTheLogsTarget() {
        // The tuned files are in use: no entry in targets, but the finding names the shape.
        Diagnosis d;
        Finding f;
        TuningTarget t = target(u"E=128,N=384,device_name=NVIDIA_H200.json"_s, false);
        t.upFellBack = false;
        t.upLoaded = t.downLoaded = true;
        f.target = t;
        d.findings = {f};
        const HostProbe p = probe(u"NVIDIA_H200"_s);
        const TuneJob job = buildTuneJob(&d, &p);
        QVERIFY(job.target && !job.fromProbeOnly);
        QCOMPARE(job.spec, buildTuneJob(&d, &p, t).spec);
    }

    void aProbeOfAnotherShapeTakesNoTarget() {
        Diagnosis d;
        d.targets = {target(u"E=64,N=256,device_name=NVIDIA_H200.json"_s, true)};
        const HostProbe p = probe(u"NVIDIA_H200"_s); // serves E=128
        QVERIFY(!servedTarget(d, &p));
        const TuneJob job = buildTuneJob(&d, &p);
        QVERIFY(job.fromProbeOnly);
        QCOMPARE(job.spec.experts, 128);
    }
};

QTEST_GUILESS_MAIN(TestTuneJob)
#include "tst_tunejob.moc"
