// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The fleet's core (issue 46): Ansible inventories (INI and YAML), selections and the tuning groups.
#include "core/fleet/configgroups.h"
#include "core/fleet/inventory.h"

#include <QtTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {
QString inventoryData(const QString &name) {
    return QStringLiteral(MOETUNE_TEST_DATA_DIR) + u"/inventory/"_s + name;
}

FleetHostFacts h200Facts(const QString &host) {
    FleetHostFacts f;
    f.host = host;
    f.framework = u"sglang"_s;
    f.frameworkVersion = u"0.5.4"_s;
    f.tritonVersion = u"3.5.0"_s;
    f.tritonFolder = u"configs/triton_3_5_0"_s;
    f.deviceName = u"NVIDIA_H200"_s;
    f.experts = 128;
    f.intermediate = 768;
    f.dtype = u"fp8_w8a8"_s;
    f.blockShape = u"[128,128]"_s;
    f.kernelSourceHash = u"aaaaaaaaaaaaaaaa1111"_s;
    f.missingConfig = u"E=128,N=768,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"_s;
    return f;
}
} // namespace

class TestFleet : public QObject {
    Q_OBJECT

private slots:
    void readsTheSampleFleet_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("INI") << u"fleet.ini"_s;
        QTest::newRow("YAML") << u"fleet.yml"_s;
    }
    void readsTheSampleFleet() {
        QFETCH(QString, file);
        QString error;
        const auto inventory = FleetInventory::load(inventoryData(file), &error);
        QVERIFY2(inventory, qPrintable(error));
        const QList<FleetHost> hosts = inventory->hosts();
        QStringList names;
        for (const FleetHost &h : hosts)
            names.append(h.name);
        QCOMPARE(names, (QStringList{u"bastion"_s, u"gpu01"_s, u"gpu02"_s, u"gpu03"_s, u"gpu04"_s, u"old-a"_s,
                                     u"old-b"_s}));
        QCOMPARE(inventory->groups(), (QStringList{u"gpus"_s, u"h100"_s, u"h200"_s}));

        const FleetHost bastion = hosts.at(0);
        QCOMPARE(bastion.address, u"10.0.0.1"_s);
        QCOMPARE(bastion.user, u"ops"_s);
        QCOMPARE(bastion.port, 0);
        QVERIFY(bastion.groups.isEmpty());

        // The nearest group's variables win over its parent's, the host's own over both.
        const FleetHost gpu02 = hosts.at(2);
        QCOMPARE(gpu02.address, u"127.0.0.1"_s);
        QCOMPARE(gpu02.port, 2200);
        QCOMPARE(gpu02.user, u"tuner"_s);
        QCOMPARE(gpu02.groups, (QStringList{u"gpus"_s, u"h200"_s}));
        QCOMPARE(gpu02.tags, QStringList{u"canary"_s});

        const FleetHost gpu04 = hosts.at(4);
        QCOMPARE(gpu04.port, 2204);
        QCOMPARE(gpu04.tags, (QStringList{u"prod"_s, u"gpu"_s}));

        const FleetHost oldB = hosts.at(6);
        QCOMPARE(oldB.address, u"::1"_s);
        QCOMPARE(oldB.port, 2300);
        QCOMPARE(oldB.user, u"gpuadmin"_s);
        QCOMPARE(oldB.groups, (QStringList{u"gpus"_s, u"h100"_s}));
    }

    void bothFormatsReadTheSame() {
        QString error;
        const auto ini = FleetInventory::load(inventoryData(u"fleet.ini"_s), &error);
        const auto yaml = FleetInventory::load(inventoryData(u"fleet.yml"_s), &error);
        QVERIFY(ini && yaml);
        QCOMPARE(ini->hosts(), yaml->hosts());
    }

    void malformedInventoriesNameFileAndLine_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("says");
        QTest::newRow("INI header") << u"bad-header.ini"_s << 1 << u"no closing ']'"_s;
        QTest::newRow("INI section kind") << u"bad-section.ini"_s << 1 << u"[group:children]"_s;
        QTest::newRow("INI vars") << u"bad-vars.ini"_s << 4 << u"expects key=value"_s;
        QTest::newRow("INI reversed range") << u"bad-range.ini"_s << 3 << u"runs backwards"_s;
        QTest::newRow("INI port") << u"bad-port.ini"_s << 2 << u"'http', not a port number"_s;
        QTest::newRow("INI host variable")
            << u"bad-hostvar.ini"_s << 2 << u"expected key=value after the host 'host1'"_s;
        QTest::newRow("INI children cycle") << u"cycle.ini"_s << 2 << u"its own child"_s;
        QTest::newRow("YAML syntax") << u"bad-syntax.yml"_s << 3 << u"illegal map value"_s;
        QTest::newRow("YAML group key") << u"bad-group-key.yml"_s << 4 << u"has the key 'host'"_s;
        QTest::newRow("YAML port") << u"bad-port.yml"_s << 4 << u"'99999', not a port number"_s;
        QTest::newRow("YAML hosts as a list") << u"hosts-list.yml"_s << 3 << u"mapping of host names"_s;
    }
    void malformedInventoriesNameFileAndLine() {
        QFETCH(QString, file);
        QFETCH(int, line);
        QFETCH(QString, says);
        QString error;
        const QString path = inventoryData(file);
        QVERIFY(!FleetInventory::load(path, &error));
        QVERIFY2(error.startsWith(u"%1:%2: "_s.arg(path).arg(line)), qPrintable(error));
        QVERIFY2(error.size() > path.size() + 6, qPrintable(error));
        QVERIFY2(error.contains(says), qPrintable(error));
    }

    void missingFileIsAnError() {
        QString error;
        QVERIFY(!FleetInventory::load(inventoryData(u"no-such-inventory.ini"_s), &error));
        QVERIFY2(error.contains(u"no-such-inventory.ini"_s), qPrintable(error));
    }

    void expandsRanges_data() {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QStringList>("names");
        QTest::newRow("plain") << u"web1"_s << QStringList{u"web1"_s};
        QTest::newRow("padded") << u"web[08:10].x"_s << QStringList{u"web08.x"_s, u"web09.x"_s, u"web10.x"_s};
        QTest::newRow("unpadded") << u"n[9:11]"_s << QStringList{u"n9"_s, u"n10"_s, u"n11"_s};
        QTest::newRow("letters") << u"db-[a:c]"_s << QStringList{u"db-a"_s, u"db-b"_s, u"db-c"_s};
        QTest::newRow("step") << u"x[0:10:5]"_s << QStringList{u"x0"_s, u"x5"_s, u"x10"_s};
        QTest::newRow("two ranges") << u"r[1:2]c[a:b]"_s
                                    << QStringList{u"r1ca"_s, u"r1cb"_s, u"r2ca"_s, u"r2cb"_s};
        QTest::newRow("unclosed") << u"web[1:2"_s << QStringList{};
        QTest::newRow("one bound") << u"web[1]"_s << QStringList{};
        QTest::newRow("mixed") << u"web[1:c]"_s << QStringList{};
        QTest::newRow("zero step") << u"web[1:3:0]"_s << QStringList{};
    }
    void expandsRanges() {
        QFETCH(QString, pattern);
        QFETCH(QStringList, names);
        QString error;
        QCOMPARE(FleetInventory::expandRange(pattern, &error), names);
        QCOMPARE(error.isEmpty(), !names.isEmpty());
    }

    void selects_data() {
        QTest::addColumn<bool>("all");
        QTest::addColumn<QString>("group");
        QTest::addColumn<QString>("tag");
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QStringList>("expected"); // host names, or empty with error containing errorSays
        QTest::addColumn<QString>("errorSays");
        const QString none;
        QTest::newRow("all") << true << none << none << QStringList{}
                             << QStringList{u"bastion"_s, u"gpu01"_s, u"gpu02"_s, u"gpu03"_s,
                                            u"gpu04"_s,   u"old-a"_s, u"old-b"_s}
                             << none;
        QTest::newRow("child group") << false << u"h100"_s << none << QStringList{}
                                     << QStringList{u"old-a"_s, u"old-b"_s} << none;
        QTest::newRow("parent group")
            << false << u"gpus"_s << none << QStringList{}
            << QStringList{u"gpu01"_s, u"gpu02"_s, u"gpu03"_s, u"gpu04"_s, u"old-a"_s, u"old-b"_s} << none;
        QTest::newRow("tag") << false << none << u"canary"_s << QStringList{}
                             << QStringList{u"gpu01"_s, u"gpu02"_s, u"gpu03"_s} << none;
        QTest::newRow("names") << false << none << none << QStringList{u"old-b"_s, u"bastion"_s}
                               << QStringList{u"old-b"_s, u"bastion"_s} << none;
        QTest::newRow("unknown group") << false << u"a100"_s << none << QStringList{} << QStringList{}
                                       << u"no group 'a100' in the inventory (groups: gpus, h100, h200)"_s;
        QTest::newRow("unknown tag") << false << none << u"blue"_s << QStringList{} << QStringList{}
                                     << u"no host has the tag 'blue'"_s;
        QTest::newRow("unknown names")
            << false << none << none << QStringList{u"gpu01"_s, u"gpu99"_s, u"web"_s} << QStringList{}
            << u"not in the inventory: gpu99, web"_s;
        QTest::newRow("nothing chosen")
            << false << none << none << QStringList{} << QStringList{} << u"one way"_s;
        QTest::newRow("two ways") << true << u"h100"_s << none << QStringList{} << QStringList{}
                                  << u"one way"_s;
    }
    void selects() {
        QFETCH(bool, all);
        QFETCH(QString, group);
        QFETCH(QString, tag);
        QFETCH(QStringList, names);
        QFETCH(QStringList, expected);
        QFETCH(QString, errorSays);
        QString error;
        const auto inventory = FleetInventory::load(inventoryData(u"fleet.ini"_s), &error);
        QVERIFY2(inventory, qPrintable(error));
        const auto chosen = inventory->select({all, group, tag, names}, &error);
        if (expected.isEmpty()) {
            QVERIFY(!chosen);
            QVERIFY2(error.contains(errorSays), qPrintable(error));
            return;
        }
        QVERIFY2(chosen, qPrintable(error));
        QStringList got;
        for (const FleetHost &h : *chosen)
            got.append(h.name);
        QCOMPARE(got, expected);
    }

    void groupsHostsThatShareOneTuning() {
        QList<FleetHostFacts> facts;
        facts.append(h200Facts(u"a"_s));
        FleetHostFacts b = h200Facts(u"b"_s);
        b.frameworkVersion = u"0.5.5"_s; // same kernel hash: still one group
        facts.append(b);
        FleetHostFacts triton36 = h200Facts(u"c"_s);
        triton36.tritonVersion = u"3.6.0"_s;
        triton36.tritonFolder = u"configs/triton_3_6_0"_s;
        facts.append(triton36);
        FleetHostFacts h100 = h200Facts(u"d"_s);
        h100.deviceName = u"NVIDIA_H100_80GB_HBM3"_s;
        h100.missingConfig = u"E=128,N=768,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,"
                             u"block_shape=[128,128].json"_s;
        facts.append(h100);
        FleetHostFacts fine = h200Facts(u"e"_s);
        fine.missingConfig.clear();
        facts.append(fine);
        FleetHostFacts unknownKernel = h200Facts(u"f"_s);
        unknownKernel.kernelSourceHash.clear();
        facts.append(unknownKernel);
        facts.append(h200Facts(u"g"_s));
        FleetHostFacts patched = h200Facts(u"h"_s);
        patched.kernelSourceHash = u"bbbbbbbbbbbbbbbb2222"_s;
        facts.append(patched);

        const FleetGrouping grouping = groupFleetHosts(facts);
        QCOMPARE(grouping.groups.size(), 4);
        QCOMPARE(grouping.groups.at(0).hosts, (QStringList{u"a"_s, u"b"_s, u"g"_s}));
        QCOMPARE(grouping.groups.at(0).frameworkVersions, (QStringList{u"0.5.4"_s, u"0.5.5"_s}));
        QCOMPARE(grouping.groups.at(1).hosts, QStringList{u"c"_s});
        QCOMPARE(grouping.groups.at(2).hosts, QStringList{u"d"_s});
        QCOMPARE(grouping.groups.at(3).hosts, QStringList{u"h"_s});
        QCOMPARE(grouping.nothingMissing, QStringList{u"e"_s});
        QCOMPARE(grouping.notGrouped.size(), 1);
        QCOMPARE(grouping.notGrouped.first().first, u"f"_s);
        QVERIFY(grouping.notGrouped.first().second.contains(u"fused-MoE kernel source hash"_s));

        QCOMPARE(grouping.differences.size(), 6); // every pair of 4 groups
        const FleetGroupDifference first = grouping.differences.at(0);
        QCOMPARE(first.first, 0);
        QCOMPARE(first.second, 1);
        QCOMPARE(first.reasons,
                 QStringList{u"Triton 3.5.0 vs 3.6.0: a different config folder (configs/triton_3_5_0 vs "
                             u"configs/triton_3_6_0)"_s});
        const FleetGroupDifference gpu = grouping.differences.at(1);
        QCOMPARE(gpu.reasons.size(), 1);
        QVERIFY2(gpu.reasons.first().startsWith(u"NVIDIA_H200 vs NVIDIA_H100_80GB_HBM3: "_s),
                 qPrintable(gpu.reasons.first()));
        const FleetGroupDifference kernel = grouping.differences.at(2);
        QCOMPARE(kernel.reasons,
                 QStringList{u"fused-MoE kernel source aaaaaaaaaaaa vs bbbbbbbbbbbb: different "
                             u"kernel code, whose best configs can differ"_s});
        // Triton folder and device both differ between groups 1 and 2: both named.
        QCOMPARE(grouping.differences.at(3).reasons.size(), 2);
    }

    void namesEveryFactThatStopsATransfer() {
        const FleetHostFacts a = h200Facts(u"a"_s);
        FleetHostFacts b = a;
        QVERIFY(fleetFactDifferences(a, b).isEmpty());
        b.framework = u"vllm"_s;
        b.experts = 64;
        b.dtype.clear();
        b.blockShape.clear();
        const QStringList reasons = fleetFactDifferences(a, b);
        QCOMPARE(reasons.size(), 4);
        QVERIFY(reasons.at(0).startsWith(u"SGLang vs vLLM"_s));
        QCOMPARE(reasons.at(1), u"E=128,N=768 vs E=64,N=768: a different expert shape"_s);
        QCOMPARE(reasons.at(2), u"dtype fp8_w8a8 vs none: a different file"_s);
        QCOMPARE(reasons.at(3), u"block shape [128,128] vs none: a different file"_s);
    }
};

QTEST_GUILESS_MAIN(TestFleet)
#include "tst_fleet.moc"
