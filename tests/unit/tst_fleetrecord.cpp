// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The fleet record (issue 46): JSON round trip, atomic save into <workspace>/fleet/<id>.json, loadAll
// (newest first, damaged files named), regroup from the hosts' facts, stage names.
#include "core/fleet/fleetrecord.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

FleetHostFacts facts(const QString &host, const QString &device, const QString &triton, const QString &hash) {
    FleetHostFacts f;
    f.host = host;
    f.framework = u"sglang"_s;
    f.frameworkVersion = u"0.5.4"_s;
    f.tritonVersion = triton;
    f.tritonFolder = u"configs/triton_"_s + QString(triton).replace(u'.', u'_');
    f.deviceName = device;
    f.experts = 128;
    f.intermediate = 768;
    f.dtype = u"fp8_w8a8"_s;
    f.blockShape = u"[128,128]"_s;
    f.kernelSourceHash = hash;
    f.missingConfig = u"E=128,N=768,device_name=%1,dtype=fp8_w8a8,block_shape=[128,128].json"_s.arg(device);
    return f;
}

FleetHostRecord hostRecord(const QString &name) {
    FleetHostRecord h;
    h.host.name = name;
    h.host.address = u"127.0.0.1"_s;
    h.host.port = 2222;
    h.host.user = u"ops"_s;
    h.host.groups = {u"gpus"_s, u"h200"_s};
    h.host.tags = {u"prod"_s};
    return h;
}

FleetRecord sampleRecord() {
    FleetRecord r;
    r.id = u"fleet-20261208-011530-000"_s;
    r.createdAt = 1796000000.5;
    r.inventory = u"/etc/ansible/hosts.yml"_s;
    r.selection = u"group h200"_s;

    FleetHostRecord a = hostRecord(u"gpu-a"_s);
    a.stage = FleetHostStage::Proved;
    a.reason = u"the warning is gone after the restart"_s;
    a.gpu = u"8x NVIDIA H200"_s;
    a.framework = u"sglang"_s;
    a.frameworkVersion = u"0.5.4"_s;
    a.triton = u"3.5.0"_s;
    a.model = u"/models/Qwen3-30B-A3B-FP8"_s;
    a.moeKernel = u"Triton fused MoE"_s;
    a.findings = {u"missing fused-MoE config E=128,N=768"_s, u"dense GEMM note"_s};
    a.facts = facts(u"gpu-a"_s, u"NVIDIA_H200"_s, u"3.5.0"_s, u"aaaa1111"_s);
    a.runId = u"20261208-011600-abcd"_s;
    a.push.runId = a.runId;
    a.push.host = u"gpu-a"_s;
    a.push.framework = Framework::SGLang;
    a.push.pushedAt = 1796000100;
    PushRecord::File file;
    file.fileName = u"E=128,N=768,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"_s;
    file.target = u"/srv/sglang/configs/triton_3_5_0/"_s + file.fileName;
    file.sha256 = QString(64, u'a');
    file.existedBefore = false;
    a.push.files.append(file);
    a.proof = u"The warning is gone."_s;
    a.servingVerdict = u"+4.1% output tokens/s (95% interval +2.0% to +6.3%)"_s;
    a.startedAt = 1796000001;
    a.endedAt = 1796000200;

    FleetHostRecord b = hostRecord(u"gpu-b"_s);
    b.stage = FleetHostStage::Unreachable;
    b.reason = u"host key changed for [127.0.0.1]:2223"_s;

    r.hosts = {a, b};
    r.regroup();
    return r;
}

} // namespace

class TestFleetRecord : public QObject {
    Q_OBJECT

private slots:
    void stageNamesRoundTrip() {
        QSet<QString> names;
        for (int i = 0; i <= int(FleetHostStage::Skipped); ++i) {
            const auto stage = FleetHostStage(i);
            const QString name = fleetStageName(stage);
            QVERIFY(!names.contains(name));
            names.insert(name);
            QCOMPARE(fleetStageFromName(name), std::optional<FleetHostStage>(stage));
            QVERIFY(!fleetStageText(stage).isEmpty());
        }
        QCOMPARE(fleetStageName(FleetHostStage::ProofFailed), u"proof-failed"_s);
        QCOMPARE(fleetStageText(FleetHostStage::Unreachable), u"Unreachable"_s);
        QVERIFY(!fleetStageFromName(u"nonsense"_s));
        QVERIFY(fleetStageIsTerminalFailure(FleetHostStage::Unreachable));
        QVERIFY(fleetStageIsTerminalFailure(FleetHostStage::ProofFailed));
        QVERIFY(!fleetStageIsTerminalFailure(FleetHostStage::Proved));
        QVERIFY(!fleetStageIsTerminalFailure(FleetHostStage::Skipped));
    }

    void jsonRoundTrip() {
        const FleetRecord r = sampleRecord();
        QCOMPARE(r.hosts.at(0).group, 0);
        QCOMPARE(r.hosts.at(1).group, -1);
        QString error;
        const auto back = FleetRecord::fromJson(r.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->toJson(), r.toJson());
        QCOMPARE(back->hosts, r.hosts);
        QCOMPARE(back->groups, r.groups);
        QCOMPARE(back->nothingMissing, r.nothingMissing);
        QCOMPARE(back->hosts.at(0).push.files.size(), 1);
        QCOMPARE(back->hosts.at(1).push.files.size(), 0);
    }

    void refusesWhatIsNotARecord() {
        QString error;
        QVERIFY(!FleetRecord::fromJson(QJsonObject{{"format"_L1, u"moetune-push"_s}}, &error));
        QVERIFY(error.contains(u"moetune-fleet"_s));

        QJsonObject o = sampleRecord().toJson();
        QJsonArray hosts = o.value("hosts"_L1).toArray();
        QJsonObject h = hosts.at(0).toObject();
        h.insert("stage"_L1, u"flying"_s);
        hosts.replace(0, h);
        o.insert("hosts"_L1, hosts);
        QVERIFY(!FleetRecord::fromJson(o, &error));
        QVERIFY2(error.contains(u"flying"_s) && error.contains(u"gpu-a"_s), qPrintable(error));

        o = sampleRecord().toJson();
        hosts = o.value("hosts"_L1).toArray();
        h = hosts.at(0).toObject();
        h.insert("group"_L1, 5);
        hosts.replace(0, h);
        o.insert("hosts"_L1, hosts);
        QVERIFY(!FleetRecord::fromJson(o, &error));
        QVERIFY2(error.contains(u"group 6"_s), qPrintable(error));

        o = sampleRecord().toJson();
        o.insert("id"_L1, u"../../etc/passwd"_s);
        QVERIFY(!FleetRecord::fromJson(o, &error));
    }

    void savesAtomicallyAndLoadsNewestFirst() {
        QTemporaryDir ws;
        QVERIFY(ws.isValid());
        FleetRecord older = sampleRecord();
        older.id = u"fleet-older"_s;
        older.createdAt = 100;
        FleetRecord newer = sampleRecord();
        newer.id = u"fleet-newer"_s;
        newer.createdAt = 200;
        QString error;
        QVERIFY2(older.save(ws.path(), &error), qPrintable(error));
        QVERIFY2(newer.save(ws.path(), &error), qPrintable(error));
        QVERIFY(QFile::exists(ws.filePath(u"fleet/fleet-newer.json"_s)));
        // Saving again replaces the file; no temporary file is left beside it.
        newer.selection = u"all"_s;
        QVERIFY2(newer.save(ws.path(), &error), qPrintable(error));
        QCOMPARE(QDir(ws.filePath(u"fleet"_s)).entryList(QDir::Files | QDir::Hidden).size(), 2);

        const auto loaded = FleetRecord::load(ws.filePath(u"fleet/fleet-newer.json"_s), &error);
        QVERIFY2(loaded, qPrintable(error));
        QCOMPARE(loaded->selection, u"all"_s);
        QCOMPARE(loaded->toJson(), newer.toJson());

        // A damaged file is skipped and named; the others still load, newest first.
        QFile bad(ws.filePath(u"fleet/fleet-bad.json"_s));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"format\": \"moetune-fleet\", \"version\": 1, ");
        bad.close();
        QStringList warnings;
        const QList<FleetRecord> all = FleetRecord::loadAll(ws.path(), &warnings);
        QCOMPARE(all.size(), 2);
        QCOMPARE(all.at(0).id, u"fleet-newer"_s);
        QCOMPARE(all.at(1).id, u"fleet-older"_s);
        QCOMPARE(warnings.size(), 1);
        QVERIFY2(warnings.at(0).contains(u"fleet-bad.json"_s), qPrintable(warnings.at(0)));

        FleetRecord unsafe = sampleRecord();
        unsafe.id = u"../x"_s;
        QVERIFY(!unsafe.save(ws.path(), &error));
        QVERIFY(FleetRecord::loadAll(ws.path() + u"/nowhere"_s).isEmpty());
    }

    void newIdsAreSafeAndDistinctAcrossMilliseconds() {
        const QString a = FleetRecord::newId();
        QTest::qWait(5);
        const QString b = FleetRecord::newId();
        QVERIFY(a.startsWith(u"fleet-"_s));
        QVERIFY(a != b);
        FleetRecord r;
        r.id = a;
        QTemporaryDir ws;
        QString error;
        QVERIFY2(r.save(ws.path(), &error), qPrintable(error));
    }

    void regroupFormsGroupsAndKeepsWhatWasDone() {
        FleetRecord r;
        r.id = u"fleet-x"_s;
        const QStringList names{u"h200-a"_s, u"h200-b"_s, u"h100-a"_s, u"h200-new-triton"_s,
                                u"fine"_s,   u"down"_s,   u"nohash"_s};
        for (const QString &n : names) {
            FleetHostRecord h = hostRecord(n);
            h.stage = FleetHostStage::Diagnosed;
            r.hosts.append(h);
        }
        r.hosts[0].facts = facts(u"h200-a"_s, u"NVIDIA_H200"_s, u"3.5.0"_s, u"k1"_s);
        r.hosts[1].facts = facts(u"h200-b"_s, u"NVIDIA_H200"_s, u"3.5.0"_s, u"k1"_s);
        r.hosts[2].facts = facts(u"h100-a"_s, u"NVIDIA_H100_80GB_HBM3"_s, u"3.5.0"_s, u"k1"_s);
        r.hosts[3].facts = facts(u"h200-new-triton"_s, u"NVIDIA_H200"_s, u"3.6.0"_s, u"k2"_s);
        r.hosts[4].facts = facts(u"fine"_s, u"NVIDIA_H200"_s, u"3.5.0"_s, u"k1"_s);
        r.hosts[4].facts.missingConfig.clear();
        r.hosts[5].stage = FleetHostStage::Unreachable;
        r.hosts[5].reason = u"connection refused"_s;
        r.hosts[6].facts = facts(u"nohash"_s, u"NVIDIA_H200"_s, u"3.5.0"_s, QString());

        r.regroup();
        QCOMPARE(r.groups.size(), 3);
        QCOMPARE(r.groups.at(0).group.hosts, (QStringList{u"h200-a"_s, u"h200-b"_s}));
        QCOMPARE(r.groups.at(1).group.hosts, (QStringList{u"h100-a"_s}));
        QCOMPARE(r.groups.at(2).group.hosts, (QStringList{u"h200-new-triton"_s}));
        QCOMPARE(r.groups.at(0).state, u"diagnosed"_s);
        QCOMPARE(r.differences.size(), 3);
        QVERIFY(r.differences.at(1).reasons.join(u'\n').contains(u"Triton 3.5.0 vs 3.6.0"_s));
        QCOMPARE(r.nothingMissing, QStringList{u"fine"_s});
        QCOMPARE(r.host(u"h200-b"_s)->group, 0);
        QCOMPARE(r.host(u"h100-a"_s)->group, 1);
        QCOMPARE(r.host(u"fine"_s)->group, -1);
        QCOMPARE(r.host(u"down"_s)->group, -1);
        QCOMPARE(r.host(u"down"_s)->reason, u"connection refused"_s); // never overwritten
        QCOMPARE(r.host(u"nohash"_s)->group, -1);
        QVERIFY2(r.host(u"nohash"_s)->reason.contains(u"kernel source hash"_s),
                 qPrintable(r.host(u"nohash"_s)->reason));
        QCOMPARE(r.count(FleetHostStage::Diagnosed), 6);
        QCOMPARE(r.count(FleetHostStage::Unreachable), 1);
        QVERIFY(!r.host(u"nobody"_s));

        // Regrouping keeps the tuning and rollout state of a group formed again.
        r.groups[1].tuneHost = u"h100-a"_s;
        r.groups[1].runId = u"run-1"_s;
        r.groups[1].state = u"tuned"_s;
        r.hosts.removeAt(0); // h200-a gone: group 0 still forms from h200-b
        r.regroup();
        QCOMPARE(r.groups.size(), 3);
        QCOMPARE(r.groups.at(1).runId, u"run-1"_s);
        QCOMPARE(r.groups.at(1).state, u"tuned"_s);
        QCOMPARE(r.groups.at(0).runId, QString());
    }
};

QTEST_GUILESS_MAIN(TestFleetRecord)
#include "tst_fleetrecord.moc"
