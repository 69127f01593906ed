// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The "diagnose host" merge and the tuning value types, on hand-written probe objects (PROTOCOL.md 3).
#include "core/diagnosis/diagnoser.h"
#include "core/host/hostprobemerge.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

const char kRoot[] = "/opt/venv/lib/python3.11/site-packages/sglang/srt/layers/moe/fused_moe_triton/configs";

QJsonObject probeJson(const QString &triton, const QJsonArray &folders, const QJsonArray &servers) {
    const QByteArray text = R"({"type":"probe","host":{"hostname":"gpu-7"},
      "gpus":[{"index":0,"name":"NVIDIA_H200","raw_name":"NVIDIA H200","memory_total_mib":143771,
               "memory_used_mib":120034,"compute_capability":"9.0",
               "processes":[{"pid":5123,"name":"python3","used_memory_mib":120000}]}],
      "python":{"executable":"/opt/venv/bin/python","version":"3.11.2","torch":"2.11.0","triton":null},
      "nvcc":null,
      "frameworks":[{"name":"vllm","importable":false},
                    {"name":"sglang","importable":true,"version":"0.5.6","config_root":null,
                     "triton_folder_exists":false,"triton_folders":[]}],
      "servers":[]})";
    QJsonObject o = QJsonDocument::fromJson(text).object();
    QJsonObject py = o["python"_L1].toObject();
    py["triton"_L1] = triton;
    o["python"_L1] = py;
    QJsonArray fws = o["frameworks"_L1].toArray();
    QJsonObject sg = fws[1].toObject();
    sg["config_root"_L1] = QString::fromLatin1(kRoot);
    sg["triton_folders"_L1] = folders;
    bool exists = false;
    for (const QJsonValue &f : folders)
        exists |= f.toObject()["name"_L1].toString() == u"triton_"_s + QString(triton).replace(u'.', u'_');
    sg["triton_folder_exists"_L1] = exists;
    fws[1] = sg;
    o["frameworks"_L1] = fws;
    o["servers"_L1] = servers;
    return o;
}

QJsonObject folder(const QString &name, const QStringList &files) {
    return QJsonObject{{u"name"_s, name}, {u"files"_s, QJsonArray::fromStringList(files)}};
}

QByteArray fallbackLog() {
    const QByteArray root(kRoot);
    return "[2026-11-29 10:00:00 TP0] Config file not found at " + root +
           "/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200.json. Fallback to triton version 3.4.0 and use "
           "MoE "
           "kernel config from " +
           root +
           "/triton_3_4_0/E=128,N=768,device_name=NVIDIA_H200.json. Performance "
           "might be sub-optimal!\n"
           "[2026-11-29 10:00:00 TP0] Using MoE kernel config with down_moe=False. Performance might be "
           "sub-optimal! Config file not found at " +
           root +
           "/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200_down.json, you can create them with "
           "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n";
}

const QString kFile = u"E=128,N=768,device_name=NVIDIA_H200.json"_s;

} // namespace

class TestProbeMerge : public QObject {
    Q_OBJECT
private slots:
    void probeFromJson() {
        QString error;
        const auto p =
            HostProbe::fromJson(probeJson(u"3.6.0"_s, {folder(u"triton_3_4_0"_s, {kFile})}, {}), &error);
        QVERIFY2(p, qPrintable(error));
        QCOMPARE(p->hostName, u"gpu-7"_s);
        QCOMPARE(p->framework, Framework::SGLang); // the importable one, not the first listed
        QCOMPARE(p->gpus.size(), 1);
        QCOMPARE(p->gpus[0].deviceName, u"NVIDIA_H200"_s);
        QCOMPARE(p->gpus[0].processes[0].pid, qint64(5123));
        QCOMPARE(p->installedTritonFolder(), u"triton_3_6_0"_s);
        QVERIFY(!p->installedTritonFolderExists);
        QCOMPARE(p->folder(u"triton_3_4_0"_s)->files, QStringList{kFile});
        QVERIFY(!HostProbe::fromJson(QJsonObject{{u"type"_s, u"done"_s}}, &error));
        QVERIFY(error.contains(u"Not a probe"_s));
    }

    void merge_data() {
        QTest::addColumn<QString>("triton");
        QTest::addColumn<QJsonArray>("folders");
        QTest::addColumn<QJsonArray>("servers");
        QTest::addColumn<QStringList>("rules"); // host-* rules expected (others may appear too)
        QTest::addColumn<QStringList>("absent");
        QTest::addColumn<QString>("fallback");

        QTest::newRow("folder missing, fallback named")
            << u"3.6.0"_s
            << QJsonArray{folder(u"triton_3_4_0"_s, {kFile}), folder(u"triton_3_3_1"_s, {kFile})}
            << QJsonArray{}
            << QStringList{u"host-triton-folder-missing"_s, u"host-fallback-folder"_s, u"host-facts"_s}
            << QStringList{u"host-triton-folder-present"_s} << u"triton_3_4_0"_s;
        QTest::newRow("folder created since, file there")
            << u"3.6.0"_s
            << QJsonArray{folder(u"triton_3_6_0"_s, {kFile}), folder(u"triton_3_4_0"_s, {kFile})}
            << QJsonArray{} << QStringList{u"host-triton-folder-present"_s, u"host-config-now-present"_s}
            << QStringList{u"host-triton-folder-missing"_s} << QString();
        QTest::newRow("Triton upgraded since the log")
            << u"3.7.0"_s << QJsonArray{folder(u"triton_3_4_0"_s, {kFile})} << QJsonArray{}
            << QStringList{u"host-triton-version-differs"_s, u"host-triton-folder-missing"_s} << QStringList{}
            << u"triton_3_4_0"_s;
        const QJsonObject server =
            QJsonDocument::fromJson(
                R"({"pid":5123,"framework":"sglang","cmdline":["python3","-m","sglang.launch_server"],
                "model":"/models/Qwen3-30B-A3B","tp":1,
                "moe":{"num_experts":128,"top_k":8,"hidden_size":2048,"moe_intermediate_size":768}})")
                .object();
        QTest::newRow("served model matched")
            << u"3.6.0"_s << QJsonArray{folder(u"triton_3_4_0"_s, {kFile})} << QJsonArray{server}
            << QStringList{u"host-served-model"_s, u"host-triton-folder-missing"_s} << QStringList{}
            << u"triton_3_4_0"_s;
    }

    void merge() {
        QFETCH(QString, triton);
        QFETCH(QJsonArray, folders);
        QFETCH(QJsonArray, servers);
        QFETCH(QStringList, rules);
        QFETCH(QStringList, absent);
        QFETCH(QString, fallback);
        const auto probe = HostProbe::fromJson(probeJson(triton, folders, servers));
        QVERIFY(probe);
        const Diagnosis log = Diagnoser().diagnoseText(fallbackLog());
        QCOMPARE(log.targets.size(), 1);
        const Diagnosis d = mergeHostProbe(log, *probe);
        QStringList got;
        QSet<QString> ids;
        for (const Finding &f : d.findings) {
            got.append(f.rule);
            QVERIFY2(!ids.contains(f.id), qPrintable(f.id)); // ids stay unique
            ids.insert(f.id);
        }
        for (const QString &r : rules)
            QVERIFY2(got.contains(r), qPrintable(r + u" not in "_s + got.join(u", "_s)));
        for (const QString &r : absent)
            QVERIFY2(!got.contains(r), qPrintable(r));
        // still sorted by severity, most severe first
        for (qsizetype i = 1; i < d.findings.size(); ++i)
            QVERIFY(int(d.findings[i - 1].severity) >= int(d.findings[i].severity));
        if (!fallback.isEmpty())
            QCOMPARE(d.targets.first().fallbackFolder, fallback);
        QVERIFY(d.summary.startsWith(u"gpu-7: "_s));
        QVERIFY(d.findings.size() > log.findings.size());
    }

    void mergeNamesTheHostAsTheUserKnowsIt_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("shown");
        QTest::newRow("no name: the probe's hostname") << QString() << u"gpu-7"_s;
        QTest::newRow("the app's label for the local host") << u"Local machine"_s << u"Local machine"_s;
        QTest::newRow("an ssh-config alias") << u"h200-box"_s << u"h200-box"_s;
    }

    void mergeNamesTheHostAsTheUserKnowsIt() {
        // One host, one name: the summary and the host findings say what the rest of the app says.
        QFETCH(QString, name);
        QFETCH(QString, shown);
        const auto probe = HostProbe::fromJson(probeJson(u"3.6.0"_s, QJsonArray{}, QJsonArray{}));
        QVERIFY(probe);
        const Diagnosis d = mergeHostProbe(Diagnoser().diagnoseText(fallbackLog()), *probe, name);
        QVERIFY2(d.summary.startsWith(shown + u": "_s), qPrintable(d.summary));
        bool named = false;
        for (const Finding &f : d.findings) {
            if (!f.rule.startsWith(u"host-"_s))
                continue;
            named = named || f.title.contains(shown) || f.explanation.contains(shown);
            if (shown != u"gpu-7"_s)
                QVERIFY2(!f.title.contains(u"gpu-7"_s), qPrintable(f.title));
        }
        QVERIFY(named);
    }

    void tuneSpecFromTargetAndProbe() {
        const QJsonObject server = QJsonDocument::fromJson(
                                       R"({"pid":1,"framework":"sglang","model":"/m","tp":2,
                "moe":{"num_experts":128,"top_k":8,"hidden_size":2048,"moe_intermediate_size":1536}})")
                                       .object();
        const auto probe = HostProbe::fromJson(probeJson(u"3.6.0"_s, {}, {server}));
        const Diagnosis log = Diagnoser().diagnoseText(fallbackLog());
        TuneSpec s = tuneSpecFor(log.targets.first(), &*probe);
        QCOMPARE(s.experts, 128);
        QCOMPARE(s.n, 768); // 1536 / tp 2
        QCOMPARE(s.hiddenSize, 2048);
        QCOMPARE(s.topk, 8);
        QVERIFY(s.upAndDown); // the log asked for the _down file
        QCOMPARE(s.validate(), QString());
        const QJsonObject j = s.toJson();
        QCOMPARE(j["ops"_L1].toString(), u"up+down"_s);
        QCOMPARE(j["K"_L1].toInt(), 2048);
        QCOMPARE(j["gpus"_L1].toString(), u"all"_s);
        QCOMPARE(j["batch_sizes"_L1].toArray().size(), 18);
        QString error;
        const auto back = TuneSpec::fromJson(j, &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(*back, s);
    }

    void tuneSpecErrors_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("error");
        QTest::newRow("typo key")
            << QByteArray(R"({"framework":"sglang","E":8,"N":64,"K":128,"topk":2,"bach_sizes":[1]})")
            << u"bach_sizes"_s;
        QTest::newRow("E not integer") << QByteArray(R"({"framework":"sglang","E":"8"})") << u"\"E\""_s;
        QTest::newRow("bad block") << QByteArray(R"({"framework":"sglang","block_shape":[128]})")
                                   << u"block_shape"_s;
    }

    void tuneSpecErrors() {
        QFETCH(QByteArray, json);
        QFETCH(QString, error);
        QString e;
        QVERIFY(!TuneSpec::fromJson(QJsonDocument::fromJson(json).object(), &e));
        QVERIFY2(e.contains(error), qPrintable(e));
    }

    void tuneSpecValidate() {
        TuneSpec s;
        QVERIFY(s.validate().contains(u"framework"_s));
        s.framework = Framework::VLLM;
        s.experts = 8;
        s.n = 64;
        QVERIFY(s.validate().contains(u"hidden size"_s));
        s.hiddenSize = 128;
        s.topk = 9;
        QVERIFY(s.validate().contains(u"top-k"_s));
        s.topk = 2;
        QCOMPARE(s.validate(), QString());
    }

    // Issue 23: a device name that becomes part of a file name is refused at validation (the shared
    // check of the CLI and the app), not after the whole sweep when writing the result fails.
    void tuneSpecDeviceName_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("error"); // "" = valid
        QTest::newRow("ordinary") << u"NVIDIA_H200"_s << QString();
        QTest::newRow("long real name") << u"NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition"_s << QString();
        QTest::newRow("200 characters")
            << QString(200, u'A') << u"shorten the device name (200 characters)"_s;
        QTest::newRow("right-to-left override") << u"NVIDIA_H200\u202Egpj.exe"_s << u"U+202E"_s;
        QTest::newRow("escape") << u"NVIDIA\x1b]0;pwned\x07"_s << u"U+001B"_s;
        QTest::newRow("slash") << u"../../etc"_s << u"slashes"_s;
        QTest::newRow("newline") << u"H200\nX"_s << u"U+000A"_s;
    }
    void tuneSpecDeviceName() {
        QFETCH(QString, device);
        QFETCH(QString, error);
        TuneSpec s;
        s.framework = Framework::SGLang;
        s.experts = 257;
        s.n = 256;
        s.hiddenSize = 7168;
        s.topk = 8;
        s.dtype = u"fp8_w8a8"_s;
        s.blockShape = std::array<int, 2>{128, 128};
        s.upAndDown = true;
        s.deviceName = device;
        if (error.isEmpty())
            QCOMPARE(s.validate(), QString());
        else
            QVERIFY2(s.validate().contains(error), qPrintable(s.validate()));
    }
};

QTEST_GUILESS_MAIN(TestProbeMerge)
#include "tst_probemerge.moc"
