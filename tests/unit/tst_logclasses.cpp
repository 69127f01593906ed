// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Issue 8's classes of input, each with several variants: Python-list paths, SGLang's newest down-miss
// wording, the bare default warning, other kernels' "sub-optimal" lines, found-config lines, claims a
// log cannot support, tuned configs in use, every prefix form, and evidence of rejoined wrapped lines;
// server starts and readiness, several starts in one log, the dense block-FP8 target, the N's of int4 and
// int8 targets; issue 12's misleading info findings (memory quoted, KV cache once, latest evidence).
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/logprefix.h"
#include "core/diagnosis/moemessage.h"
#include "core/diagnosis/sourcelist.h"
#include "core/job/tunespec.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryFile>
#include <QTest>

using namespace moetune;
using namespace Qt::StringLiterals;

namespace {

const QByteArray kSgl =
    "/sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_6_0/";
const QByteArray kVllm =
    "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/configs/";
const QByteArray kName = "E=128,N=768,device_name=NVIDIA_H200";
const QByteArray kTail = ", you can create them with "
                         "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton";

QByteArray sgl(int rank, const QByteArray &message) {
    return "[2026-03-14 09:12:50 TP" + QByteArray::number(rank) + "] " + message + "\n";
}

QByteArray vllm(const QByteArray &message) {
    return "(EngineCore_DP0 pid=4242) WARNING 03-14 09:12:50 [fused_moe.py:1108] " + message + "\n";
}

QByteArray untuned(const QByteArray &path) {
    return "Using default MoE kernel config. Performance might be sub-optimal! Config file not found at " +
           path + kTail;
}

QStringList rules(const Diagnosis &d) {
    QStringList out;
    for (const Finding &f : d.findings)
        out << f.rule + u" x"_s + QString::number(f.occurrences);
    out.sort();
    return out;
}

// Every sentence a person reads about a finding.
QString words(const Finding &f) {
    return f.title + u'\n' + f.explanation + u'\n' + f.advice;
}

} // namespace

class TestLogClasses : public QObject {
    Q_OBJECT

private slots:
    void pythonListPaths_data();
    void pythonListPaths();
    void downMissNewestWording_data();
    void downMissNewestWording();
    void bareDefaultWarning_data();
    void bareDefaultWarning();
    void notMoeFindings_data();
    void notMoeFindings();
    void claimsTheLogSupports_data();
    void claimsTheLogSupports();
    void tunedConfigInUse_data();
    void tunedConfigInUse();
    void prefixForms_data();
    void prefixForms();
    void prefixFormsInADiagnosis_data();
    void prefixFormsInADiagnosis();
    void rejoinedEvidence_data();
    void rejoinedEvidence();
    void sampleLogs_data();
    void sampleLogs();
    void readiness_data();
    void readiness();
    void severalStarts_data();
    void severalStarts();
    void denseBlockFp8Target_data();
    void denseBlockFp8Target();
    void nFieldsOfTargets_data();
    void nFieldsOfTargets();
    void memoryLeftQuotesTheLastReport_data();
    void memoryLeftQuotesTheLastReport();
    void kvCacheOnce_data();
    void kvCacheOnce();
    void evidenceKeepsTheLatestLines_data();
    void evidenceKeepsTheLatestLines();
};

void TestLogClasses::pythonListPaths_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("upPath");
    const QString plain = QString::fromUtf8(kVllm + kName + ".json");
    const QString user = u"/data/moe-configs/"_s + QString::fromUtf8(kName) + u".json"_s;
    QTest::newRow("one path, single quotes")
        << vllm("Using default MoE config. Performance might be sub-optimal! Config file not found at ['" +
                kVllm + kName + ".json']")
        << plain;
    QTest::newRow("one path, double quotes")
        << vllm("Using default MoE config. Performance might be sub-optimal! Config file not found at [\"" +
                kVllm + kName + ".json\"]")
        << plain;
    QTest::newRow("two paths, the user folder first")
        << vllm("Using default MoE config. Performance might be sub-optimal! Config file not found at ['" +
                user.toUtf8() + "', '" + kVllm + kName + ".json']")
        << user;
    QTest::newRow("block shape inside the list")
        << vllm("Using default MoE config. Performance might be sub-optimal! Config file not found at ['" +
                kVllm + "E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json']")
        << QString::fromUtf8(kVllm +
                             "E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json");
    QTest::newRow("list wrapped by a terminal")
        << ("(EngineCore_DP0 pid=4242) WARNING 03-14 09:12:50 [fused_moe.py:1108] Using default MoE config. "
            "Performance might be sub-optimal! Config file not found at ['" +
            kVllm.left(40) + "\n" + kVllm.mid(40) + kName + ".json']\n")
        << plain;
}

void TestLogClasses::pythonListPaths() {
    QFETCH(QByteArray, text);
    QFETCH(QString, upPath);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QCOMPARE(rules(d), QStringList{u"moe-untuned x1"_s});
    QCOMPARE(d.targets.size(), 1);
    const TuningTarget &t = d.targets.front();
    QCOMPARE(t.framework, Framework::VLLM);
    QCOMPARE(t.upPath(), upPath);
    QCOMPARE(t.downPath(), QString()); // vLLM reads no _down file
    for (const Finding &f : d.findings) {
        for (const QString &s : {words(f), f.target->upPath(), f.target->configRoot, d.summary}) {
            QVERIFY2(!s.contains(u"['"_s) && !s.contains(u"']"_s) && !s.contains(u"[\""_s), qPrintable(s));
        }
    }
}

void TestLogClasses::downMissNewestWording_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QStringList>("rules");
    QTest::addColumn<bool>("upMissing");
    const QByteArray downPath = kSgl + kName + "_down.json";
    const QByteArray newest =
        "Down MoE config file not found at " + downPath +
        "; reusing the tuned up-projection config without TMA. Performance might be sub-optimal.";
    QTest::newRow("up found, 2 ranks")
        << (sgl(0, "Using MoE kernel config from " + kSgl + kName + ".json.") + sgl(0, newest) +
            sgl(1, "Using MoE kernel config from " + kSgl + kName + ".json.") + sgl(1, newest))
        << QStringList{u"moe-config-used x2"_s, u"moe-down-missing x2"_s} << false;
    QTest::newRow("alone") << sgl(3, newest) << QStringList{u"moe-down-missing x1"_s} << false;
    QTest::newRow("both missing: default warning names _down")
        << (sgl(0, untuned(kSgl + kName + ".json")) + sgl(0, untuned(downPath)))
        << QStringList{u"moe-down-missing x1"_s, u"moe-untuned x1"_s, u"triton-folder-no-config x2"_s}
        << true;
    QTest::newRow("old and newest wording of one shape merge")
        << (sgl(0,
                "Using MoE kernel config with down_moe=False. Performance might be sub-optimal! Config file "
                "not found at " +
                    downPath + kTail) +
            sgl(1, newest))
        << QStringList{u"moe-down-missing x2"_s} << false; // the newest line shows the up file loaded
    QTest::newRow("wrapped after the path")
        << ("[2026-03-14 09:12:50 TP0] Down MoE config file not found at " + downPath +
            ";\nreusing the tuned "
            "up-projection config without TMA. Performance might be sub-optimal.\n")
        << QStringList{u"moe-down-missing x1"_s} << false;
}

void TestLogClasses::downMissNewestWording() {
    QFETCH(QByteArray, text);
    QFETCH(QStringList, rules);
    QFETCH(bool, upMissing);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QCOMPARE(::rules(d), rules);
    QCOMPARE(d.targets.size(), 1); // merged into its shape's target
    const TuningTarget &t = d.targets.front();
    QVERIFY(t.downMissing);
    QCOMPARE(t.upMissing, upMissing);
    QVERIFY(!t.downFellBack && !t.upFellBack); // not a fallback occurrence
    QVERIFY(t.tunesDown());
    QCOMPARE(t.downPath(), QString::fromUtf8(kSgl + kName + "_down.json"));
    const Finding *down = nullptr;
    for (const Finding &f : d.findings)
        down = f.rule == u"moe-down-missing"_s ? &f : down;
    QVERIFY(down);
    QVERIFY2(down->advice.contains(u"\"ops\": \"up+down\""_s), qPrintable(down->advice));
    QVERIFY2(down->advice.contains(QString::fromUtf8(kName) + u"_down.json"_s), qPrintable(down->advice));
    QVERIFY(!down->title.contains(u"taken from"_s));
    // Issue 41: SGLang 2026 (get_moe_configs in .../moe_runner/triton_utils/fused_moe_triton_config.py)
    // runs the down GEMM with the tuned up file's configs, without TMA, not with the defaults.
    if (text.contains("reusing the tuned") && !text.contains("down_moe=False")) {
        QVERIFY2(
            down->explanation.contains(u"the down GEMM reuses the tuned up-projection config without TMA"_s),
            qPrintable(down->explanation));
        QVERIFY(!down->explanation.contains(u"built-in default tile sizes"_s));
        QVERIFY(t.upLoaded);
    }
}

void TestLogClasses::bareDefaultWarning_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("occurrences");
    const QByteArray bare = "Using default MoE kernel config. Performance might be sub-optimal!";
    QByteArray eight;
    for (int r = 0; r < 8; ++r)
        eight += sgl(r, bare);
    QTest::newRow("8 ranks, consecutive lines") << eight << 8;
    QTest::newRow("one line, end of log without newline") << sgl(0, bare).chopped(1) << 1;
    QTest::newRow("vLLM-style prefix")
        << vllm("Using default MoE config. Performance might be sub-optimal!") +
               sgl(1, "Capture cuda graph end.")
        << 1;
    QTest::newRow("followed by an unrelated line")
        << (sgl(0, bare) + "[2026-03-14 09:12:51] INFO: Load weight end. avail mem=10.00 GB\n") << 1;
}

void TestLogClasses::bareDefaultWarning() {
    QFETCH(QByteArray, text);
    QFETCH(int, occurrences);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    const Finding *f = d.find(u"moe-untuned-no-path"_s);
    QVERIFY2(f, qPrintable(rules(d).join(u' ')));
    QCOMPARE(f->occurrences, occurrences);
    QCOMPARE(f->severity, Severity::Warning); // the CLI exits 1
    QVERIFY(d.worst() >= Severity::Warning);
    QVERIFY(d.targets.isEmpty()); // the shape is not in the log
    QVERIFY2(f->explanation.contains(u"does not name"_s), qPrintable(f->explanation));
    QVERIFY2(f->advice.contains(u"probe"_s) && f->advice.contains(u"config.json"_s), qPrintable(f->advice));
    QVERIFY2(d.summary.contains(u"untuned"_s, Qt::CaseInsensitive), qPrintable(d.summary));
}

void TestLogClasses::notMoeFindings_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QStringList>("rules");
    QTest::newRow("vLLM Mamba SSU config")
        << vllm("Using default Mamba SSU config. Performance might be sub-optimal! Config file not found at "
                "/x/vllm/model_executor/layers/mamba/configs/ssu,device_name=NVIDIA_H200.json")
        << QStringList{};
    QTest::newRow("Mamba, bare")
        << vllm("Using default selective state update config. Performance might be sub-optimal!")
        << QStringList{};
    QTest::newRow("vLLM W8A8 config found")
        << vllm(
               "Using configuration from "
               "/x/vllm/model_executor/layers/quantization/utils/configs/N=7168,K=2048,"
               "device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json for W8A8 Block FP8 kernel.")
        << QStringList{};
    QTest::newRow("found lines are no untuned occurrences")
        << (sgl(0, "Using MoE kernel config from " + kSgl + kName + ".json.") +
            sgl(1, "Using MoE kernel config from " + kSgl + kName + ".json.") +
            sgl(0, untuned(kSgl + "E=64,N=1408,device_name=NVIDIA_H200.json")))
        << QStringList{u"moe-config-used x2"_s, u"moe-untuned x1"_s};
    QTest::newRow("vLLM found line, then a wrapped warning")
        << (vllm("Using configuration from " + kVllm + kName + ".json for MoE layer.") +
            vllm("Using default MoE config. Performance might be sub-optimal!"))
        << QStringList{u"moe-config-used x1"_s, u"moe-untuned-no-path x1"_s};
}

void TestLogClasses::notMoeFindings() {
    QFETCH(QByteArray, text);
    QFETCH(QStringList, rules);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QCOMPARE(::rules(d), rules);
}

void TestLogClasses::claimsTheLogSupports_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("downAdvice");
    QTest::newRow("SGLang, up missing only") << sgl(0, untuned(kSgl + kName + ".json")) << false;
    QTest::newRow("SGLang fallback")
        << sgl(0, "Config file not found at " + kSgl + kName +
                      ".json. Fallback to triton version 3.4.0 and use "
                      "MoE kernel config from "
                      "/sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/"
                      "configs/triton_3_4_0/" +
                      kName + ".json. Performance might be sub-optimal!")
        << false;
    QTest::newRow("SGLang, up and down missing")
        << (sgl(0, untuned(kSgl + kName + ".json")) + sgl(0, untuned(kSgl + kName + "_down.json"))) << true;
    QTest::newRow("old SGLang, no version folder")
        << sgl(0, "Using default MoE config. Performance might be sub-optimal! Config file not found at "
                  "/usr/lib/python3/sglang/srt/layers/moe/fused_moe_triton/configs/" +
                      kName + ".json")
        << false;
    QTest::newRow("vLLM")
        << vllm("Using default MoE config. Performance might be sub-optimal! Config file not found at " +
                kVllm + kName + ".json")
        << false;
    QTest::newRow("framework unknown")
        << ("Using default MoE config. Performance might be sub-optimal! Config file not found at /opt/cfg/" +
            kName + ".json\n")
        << false;
}

void TestLogClasses::claimsTheLogSupports() {
    QFETCH(QByteArray, text);
    QFETCH(bool, downAdvice);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QVERIFY(!d.findings.isEmpty());
    for (const Finding &f : d.findings) {
        const QString w = words(f);
        // A log names files not found, never a folder's absence.
        for (const QString &claim :
             {u"does not exist"_s, u"is missing"_s, u"folder missing"_s, u"probably"_s})
            QVERIFY2(!w.contains(claim), qPrintable(w));
        QCOMPARE(w.contains(u"_down.json"_s) || w.contains(u"up+down"_s), downAdvice);
        if (f.target)
            QVERIFY(!f.target->tritonFolderMissing);
    }
    QVERIFY2(!d.summary.contains(u"does not exist"_s), qPrintable(d.summary));
    for (const TuningTarget &t : d.targets)
        QCOMPARE(t.downPath().isEmpty(), !downAdvice);
}

void TestLogClasses::tunedConfigInUse_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("sources");
    QTest::addColumn<bool>("downLoaded");
    QByteArray eight;
    for (int r = 0; r < 8; ++r)
        eight += sgl(r, "Using MoE kernel config from " + kSgl + kName + ".json.") +
                 sgl(r, "Using MoE kernel config from " + kSgl + kName + "_down.json.");
    QTest::newRow("SGLang, 8 ranks, up and down") << eight << u"TP0,TP1,TP2,TP3,TP4,TP5,TP6,TP7"_s << true;
    QTest::newRow("SGLang, up only, 2 ranks")
        << (sgl(4, "Using MoE kernel config from " + kSgl + kName + ".json.") +
            sgl(5, "Using MoE kernel config from " + kSgl + kName + ".json."))
        << u"TP4,TP5"_s << false;
    QTest::newRow("vLLM")
        << ("(EngineCore_DP0 pid=77) INFO 03-14 09:12:50 [fused_moe.py:1093] Using configuration from " +
            kVllm + kName + ".json for MoE layer.\n")
        << u"EngineCore_DP0 pid=77"_s << false;
}

void TestLogClasses::tunedConfigInUse() {
    QFETCH(QByteArray, text);
    QFETCH(QString, sources);
    QFETCH(bool, downLoaded);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QCOMPARE(d.findings.size(), 1); // one per shape, up and down loads merged
    const Finding &f = d.findings.front();
    QCOMPARE(f.rule, u"moe-config-used"_s);
    QCOMPARE(f.severity, Severity::Info);
    QCOMPARE(f.sources.join(u','), sources);
    QVERIFY(f.target);
    QVERIFY(f.target->upLoaded);
    QCOMPARE(f.target->downLoaded, downLoaded);
    QCOMPARE(f.target->name.experts, 128);
    QVERIFY(d.targets.isEmpty()); // nothing to tune
    QVERIFY2(f.title.contains(u"E=128, N=768"_s), qPrintable(f.title));
}

void TestLogClasses::prefixForms_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("time");
    QTest::addColumn<QByteArray>("message");
    const QByteArray m = "Using default MoE kernel config.";
    const int sgl = int(Framework::SGLang), vl = int(Framework::VLLM), unk = int(Framework::Unknown);
    QTest::newRow("SGLang rank") << "[2026-03-14 09:12:50 TP3] " + m << u"TP3"_s << sgl
                                 << u"2026-03-14 09:12:50"_s << m;
    QTest::newRow("SGLang main") << "[2026-03-14 09:12:50] " + m << u"main"_s << sgl
                                 << u"2026-03-14 09:12:50"_s << m;
    QTest::newRow("SGLang DP TP") << "[2026-03-14 09:12:50 DP1 TP3] " + m << u"DP1 TP3"_s << sgl
                                  << u"2026-03-14 09:12:50"_s << m;
    QTest::newRow("SGLang with level and file")
        << "[2026-03-14 09:12:50,123 TP0] WARNING fused_moe_triton_config.py:165: " + m << u"TP0"_s << sgl
        << u"2026-03-14 09:12:50"_s << "WARNING fused_moe_triton_config.py:165: " + m;
    QTest::newRow("vLLM v1") << "(EngineCore_DP0 pid=123) WARNING 03-14 09:12:50 [fused_moe.py:1108] " + m
                             << u"EngineCore_DP0 pid=123"_s << vl << u"03-14 09:12:50"_s
                             << "WARNING 03-14 09:12:50 [fused_moe.py:1108] " + m;
    QTest::newRow("vLLM old") << "WARNING 03-14 09:12:50 fused_moe.py:1108] " + m << u"main"_s << vl
                              << u"03-14 09:12:50"_s << "WARNING 03-14 09:12:50 fused_moe.py:1108] " + m;
    QTest::newRow("wrapper tag") << "[Stage-1] (Worker pid=9) INFO 03-14 09:12:50 [x.py:1] " + m
                                 << u"Worker pid=9"_s << vl << u"03-14 09:12:50"_s
                                 << "INFO 03-14 09:12:50 [x.py:1] " + m;
    QTest::newRow("TP7[]") << "TP7[] " + m << u"TP7"_s << unk << QString() << m;
    QTest::newRow("[TP7] tag") << "[TP7] " + m << u"TP7"_s << unk << QString() << m;
    QTest::newRow("progress bar glued in front")
        << "Loading safetensors checkpoint shards: 100% Completed | 8/8 [00:05<00:00,  1.45it/s][2026-03-14 "
           "09:12:50 TP2] " +
               m
        << u"TP2"_s << sgl << u"2026-03-14 09:12:50"_s << m;
    QTest::newRow("process prefix inside another")
        << "(RayWorkerWrapper pid=555, ip=10.0.0.2) (VllmWorker TP3 pid=556) INFO 03-14 09:12:50 [x.py:1] " +
               m
        << u"VllmWorker TP3 pid=556"_s << vl << u"03-14 09:12:50"_s << "INFO 03-14 09:12:50 [x.py:1] " + m;
    QTest::newRow("Python logging") << "WARNING:sglang.srt.layers.moe.fused_moe_triton:" + m << u"main"_s
                                    << sgl << QString() << m;
    QTest::newRow("Python logging, vLLM")
        << "INFO:vllm.model_executor:" + m << u"main"_s << vl << QString() << m;
    QTest::newRow("Rust tracing") << "2026-03-14T09:12:50.123456Z  WARN sgl_model_gateway::routers::http: " +
                                         m
                                  << u"main"_s << sgl << u"2026-03-14T09:12:50.123456Z"_s << m;
    QTest::newRow("Kubernetes CRI, SGLang inside")
        << "2026-03-14T09:12:50.123456789Z stdout F [2026-03-14 09:12:50 TP5] " + m << u"TP5"_s << sgl
        << u"2026-03-14 09:12:50"_s << m;
    QTest::newRow("Kubernetes CRI, vLLM inside")
        << "2026-03-14T09:12:50.123456789+00:00 stderr F (EngineCore_DP0 pid=1) INFO 03-14 09:12:50 "
           "[a.py:1] " +
               m
        << u"EngineCore_DP0 pid=1"_s << vl << u"03-14 09:12:50"_s << "INFO 03-14 09:12:50 [a.py:1] " + m;
    QTest::newRow("docker logs -t") << "2026-03-14T09:12:50.1Z [2026-03-14 09:12:50 TP1] " + m << u"TP1"_s
                                    << sgl << u"2026-03-14 09:12:50"_s << m;
    QTest::newRow("no prefix") << m << u"main"_s << unk << QString() << m;
}

void TestLogClasses::prefixForms() {
    QFETCH(QByteArray, line);
    QFETCH(QString, source);
    QFETCH(int, framework);
    QFETCH(QString, time);
    QFETCH(QByteArray, message);
    const LogPrefix p = LogPrefix::parse(line);
    QCOMPARE(p.source, source);
    QCOMPARE(int(p.framework), framework);
    QCOMPARE(QString::fromUtf8(p.time), time);
    QCOMPARE(line.sliced(p.messageStart), message);
    QCOMPARE(LogPrefix::startsRecord(line),
             source != u"main"_s || framework != int(Framework::Unknown) || !time.isEmpty());
}

void TestLogClasses::prefixFormsInADiagnosis_data() {
    QTest::addColumn<QByteArray>("prefix"); // {r}: the rank
    QTest::addColumn<QString>("sources");
    QTest::newRow("TP[]") << QByteArray("TP{r}[] ") << u"TP0-3"_s;
    QTest::newRow("glued bar") << QByteArray(
                                      " 100%|##########| 8/8 [00:05<00:00][2026-03-14 09:12:50 TP{r}] ")
                               << u"TP0-3"_s;
    QTest::newRow("nested process")
        << QByteArray("(RayWorkerWrapper pid=1{r}, ip=10.0.0.2) (VllmWorker TP{r} pid=2{r}) "
                      "WARNING 03-14 09:12:50 [fused_moe.py:1] ")
        << u"VllmWorker TP0-3"_s;
    QTest::newRow("Kubernetes") << QByteArray("2026-03-14T09:12:50.1Z stdout F [2026-03-14 09:12:50 TP{r}] ")
                                << u"TP0-3"_s;
}

void TestLogClasses::prefixFormsInADiagnosis() {
    QFETCH(QByteArray, prefix);
    QFETCH(QString, sources);
    QByteArray text;
    for (int r = 0; r < 4; ++r)
        text +=
            QByteArray(prefix).replace("{r}", QByteArray::number(r)) + untuned(kSgl + kName + ".json") + "\n";
    const Diagnosis d = Diagnoser().diagnoseText(text);
    const Finding &f = d.findings.front();
    QCOMPARE(f.rule, u"moe-untuned"_s);
    QCOMPARE(f.occurrences, 4);
    QCOMPARE(compactSources(f.sources), sources);
}

void TestLogClasses::rejoinedEvidence_data() {
    QTest::addColumn<QByteArray>("line");  // as the server printed it
    QTest::addColumn<QByteArray>("first"); // what a terminal showed on the first row (rest on the next)
    const QByteArray full = "[2026-03-14 09:12:50 TP0] " + untuned(kSgl + kName + ".json");
    auto cutAt = [&](const QByteArray &marker, int offset) {
        return full.left(full.indexOf(marker) + offset);
    };
    QTest::newRow("inside the path") << full << cutAt("triton_3_6_0", 7);
    QTest::newRow("inside the file name") << full << cutAt("device_name", 4);
    QTest::newRow("at a slash") << full << cutAt("/triton_3_6_0", 0);
    QTest::newRow("inside a word") << full << cutAt("optimal", 3);
    QTest::newRow("between words, space kept") << full << cutAt("might", 0);
    QTest::newRow("between words, trailing space lost") << full << cutAt(" might", 0);
    QTest::newRow("before the path, space lost") << full << cutAt(" /sgl-workspace", 0);
    QTest::newRow("before the path, space kept") << full << cutAt("/sgl-workspace", 0);
    const QByteArray block =
        "[2026-03-14 09:12:50 TP0] " +
        untuned(kSgl + "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, "
                       "128].json");
    QTest::newRow("inside the block shape, at its space") << block << block.left(block.indexOf("[128, ") + 5);
    QTest::newRow("inside the block shape, after its space")
        << block << block.left(block.indexOf("[128, ") + 6);
}

void TestLogClasses::rejoinedEvidence() {
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, first);
    QByteArray second = line.mid(first.size());
    const bool spaceLost = first.isEmpty() ? false
                                           : second.startsWith(' ') && QTest::currentDataTag() &&
                                                 QByteArray(QTest::currentDataTag()).contains("lost");
    if (spaceLost)
        second = second.mid(1); // a copy from the terminal dropped the row's trailing space
    const QByteArray text = first + "\n" + second + "\n";
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QVERIFY(!d.findings.isEmpty());
    const Finding &f = d.findings.front();
    QCOMPARE(f.rule, u"moe-untuned"_s);
    QCOMPARE(f.evidence.front().text, QString::fromUtf8(line));
    QCOMPARE(f.evidence.front().line, 1);
    QVERIFY(f.target);
    QCOMPARE(f.target->upPath().toUtf8(), line.mid(line.indexOf(" at ") + 4).chopped(kTail.size()));
}

void TestLogClasses::sampleLogs_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("rules");
    QTest::newRow("vLLM list paths") << u"vllm-list-paths.log"_s
                                     << QStringList{u"moe-config-used x1"_s, u"moe-untuned x2"_s};
    QTest::newRow("SGLang newest down miss")
        << u"sglang-down-reuse.log"_s << QStringList{u"moe-config-used x4"_s, u"moe-down-missing x4"_s};
    QTest::newRow("bare default, Kubernetes")
        << u"sglang-k8s-bare-default.log"_s << QStringList{u"moe-untuned-no-path x4"_s};
}

void TestLogClasses::sampleLogs() {
    QFETCH(QString, file);
    QFETCH(QStringList, rules);
    const Diagnosis d = Diagnoser().diagnoseFile(QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs/") + file);
    QStringList moe;
    for (const QString &r : ::rules(d)) {
        if (r.startsWith(u"moe-"_s) || r.startsWith(u"triton-"_s))
            moe << r;
    }
    QCOMPARE(moe, rules);
}

namespace {

QByteArray sglAt(const QByteArray &time, const QByteArray &message) {
    return "[2026-03-14 " + time + "] " + message + "\n";
}

QByteArray sglRankAt(const QByteArray &time, int rank, const QByteArray &message) {
    return "[2026-03-14 " + time + " TP" + QByteArray::number(rank) + "] " + message + "\n";
}

QByteArray vllmAt(const QByteArray &proc, const QByteArray &time, const QByteArray &message) {
    return "(" + proc + ") INFO 03-14 " + time + " [api_server.py:1884] " + message + "\n";
}

const QByteArray kServerArgs = "server_args=ServerArgs(model_path='Qwen/Qwen3-30B-A3B', tp_size=2)";
const QByteArray kReady = "The server is fired up and ready to roll!";

const Finding *byRule(const Diagnosis &d, const QString &rule) {
    for (const Finding &f : d.findings) {
        if (f.rule == rule)
            return &f;
    }
    return nullptr;
}

} // namespace

void TestLogClasses::readiness_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("rule"); // server-ready or server-start
    QTest::addColumn<qint64>("startLine");
    QTest::addColumn<qint64>("readyLine");
    QTest::addColumn<QString>("readyTime");
    QTest::addColumn<int>("secondsToReady"); // -1: none (or not computable)
    QTest::addColumn<QString>("title");

    QTest::newRow("SGLang, server_args to fired up")
        << (sglAt("09:12:01", kServerArgs) + sglRankAt("09:12:40", 0, "Load weight end. avail mem=20.11 GB") +
            sglAt("09:13:32", "INFO:     Application startup complete.") + sglAt("09:13:35", kReady))
        << u"server-ready"_s << qint64(1) << qint64(4) << u"2026-03-14 09:13:35"_s << 94
        << u"Server ready at 09:13:35, 94 s after its start"_s;
    QTest::newRow("vLLM, year-less times, Starting vLLM API server")
        << (vllmAt("APIServer pid=3121", "09:10:04", "vLLM API server version 0.11.0") +
            vllmAt("APIServer pid=3121", "09:11:58", "Starting vLLM API server 0 on http://0.0.0.0:8000") +
            "(APIServer pid=3121) INFO:     Application startup complete.\n")
        << u"server-ready"_s << qint64(1) << qint64(2) << u"03-14 09:11:58"_s << 114
        << u"Server ready at 09:11:58, 114 s after its start"_s;
    QTest::newRow("uvicorn only: the time of the line before")
        << (vllmAt("APIServer pid=9", "23:59:50", "vLLM API server version 0.9.2") +
            vllmAt("APIServer pid=9", "00:00:10", "Route: /health, Methods: GET") +
            "INFO:     Application startup complete.\n")
        << u"server-ready"_s << qint64(1) << qint64(3) << u"03-14 00:00:10"_s
        << -1 // same date printed: no time difference
        << u"Server ready at about 00:00:10"_s;
    QTest::newRow("log joined after the start: no start line")
        << (sglRankAt("10:00:00", 0, "Decode batch. #running-req: 3") + sglAt("10:00:05", kReady))
        << u"server-ready"_s << qint64(0) << qint64(2) << u"2026-03-14 10:00:05"_s << -1
        << u"Server ready at 10:00:05"_s;
    QTest::newRow("started, not ready yet (a followed log)")
        << (sglAt("11:00:00", kServerArgs) +
            sglRankAt("11:00:30", 0, "Load weight begin. avail mem=78.00 GB"))
        << u"server-start"_s << qint64(1) << qint64(0) << QString() << -1
        << u"Server started at 11:00:00, not ready yet in this log"_s;
    QTest::newRow("Kubernetes CRI prefix around SGLang's")
        << ("2026-03-14T09:12:01.000000000Z stdout F [2026-03-14 09:12:01] " + kServerArgs + "\n" +
            "2026-03-14T09:13:20.000000000Z stdout F [2026-03-14 09:13:20] " + kReady + "\n")
        << u"server-ready"_s << qint64(1) << qint64(2) << u"2026-03-14 09:13:20"_s << 79
        << u"Server ready at 09:13:20, 79 s after its start"_s;
    QTest::newRow("ready line without any time")
        << (QByteArray("server_args=ServerArgs(model_path='m')\n") + kReady + "\n") << u"server-ready"_s
        << qint64(1) << qint64(2) << QString() << -1 << u"Server ready (line 2)"_s;
}

void TestLogClasses::readiness() {
    QFETCH(QByteArray, text);
    QFETCH(QString, rule);
    QFETCH(qint64, startLine);
    QFETCH(qint64, readyLine);
    QFETCH(QString, readyTime);
    QFETCH(int, secondsToReady);
    QFETCH(QString, title);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QCOMPARE(d.starts.size(), 1);
    const ServerStart &s = d.starts.front();
    QCOMPARE(s.line, startLine);
    QCOMPARE(s.readyLine, readyLine);
    QCOMPARE(s.readyTime, readyTime);
    QCOMPARE(s.secondsToReady.value_or(-1), qint64(secondsToReady));
    const Finding *f = byRule(d, rule);
    QVERIFY2(f, qPrintable(rules(d).join(u", "_s)));
    QCOMPARE(f->severity, Severity::Info);
    QCOMPARE(f->title, title);
    QCOMPARE(f->start, 1);
    // Its evidence is the start line and the readiness lines, with their line numbers.
    QVERIFY(!f->evidence.isEmpty());
    if (startLine > 0)
        QCOMPARE(f->evidence.front().line, startLine);
    if (readyLine > 0)
        QVERIFY(std::any_of(f->evidence.begin(), f->evidence.end(),
                            [&](const Evidence &e) { return e.line == readyLine; }));
    QCOMPARE(d.worst(), Severity::Info);
    const QJsonObject json = d.toJson();
    QCOMPARE(json.value(u"starts"_s).toArray().size(), 1);
    const QJsonObject js = json.value(u"starts"_s).toArray().first().toObject();
    QCOMPARE(js.value(u"ready_line"_s).toInteger(-1), readyLine > 0 ? readyLine : -1);
    QCOMPARE(js.value(u"seconds_to_ready"_s).toInteger(-1), qint64(secondsToReady));
}

void TestLogClasses::severalStarts_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("starts");
    QTest::addColumn<qint64>("latestLine");
    QTest::addColumn<int>("latestWarnings");       // counted: the latest start only
    QTest::addColumn<QStringList>("earlierRules"); // findings of earlier starts (rule@start)
    QTest::addColumn<QString>("summaryStart");

    const QByteArray miss = untuned(kSgl + kName + ".json");
    const QByteArray used = "Using MoE kernel config from " + kSgl + kName + ".json.";
    // Before a push: 2 ranks warn; after the restart both load the pushed file.
    const QByteArray before = sglAt("09:00:00", kServerArgs) + sglRankAt("09:00:40", 0, miss) +
                              sglRankAt("09:00:40", 1, miss) + sglAt("09:01:10", kReady);
    const QByteArray after = sglAt("10:00:00", kServerArgs) + sglRankAt("10:00:40", 0, used) +
                             sglRankAt("10:00:40", 1, used) + sglAt("10:01:05", kReady);
    QTest::newRow("restart after a push: warning gone")
        << (before + after) << 2 << qint64(5) << 0 << QStringList{u"moe-untuned@1"_s, u"server-ready@1"_s}
        << u"Latest of 2 server starts (from line 5): No problems found"_s;
    QTest::newRow("restart, the warning stays")
        << (before + before) << 2 << qint64(5) << 2 << QStringList{u"moe-untuned@1"_s, u"server-ready@1"_s}
        << u"Latest of 2 server starts (from line 5): 1 MoE config untuned"_s;
    QTest::newRow("three starts, a crash in the middle one")
        << (before + sglAt("09:30:00", kServerArgs) +
            sglRankAt("09:30:20", 0, "torch.OutOfMemoryError: CUDA out of memory.") + after)
        << 3 << qint64(7) << 0
        << QStringList{u"cuda-out-of-memory@2"_s, u"moe-untuned@1"_s, u"server-ready@1"_s,
                       u"server-start@2"_s}
        << u"Latest of 3 server starts (from line 7): No problems found"_s;
    // vLLM prints the platform line before its start line: one start, not two.
    QTest::newRow("vLLM platform line before the start line")
        << ("INFO 03-14 09:10:01 [__init__.py:216] Automatically detected platform cuda.\n" +
            vllmAt("APIServer pid=1", "09:10:04", "vLLM API server version 0.11.0") +
            vllmAt("APIServer pid=1", "09:11:58", "Starting vLLM API server 0 on http://0.0.0.0:8000"))
        << 1 << qint64(2) << 0 << QStringList{} << u"No problems found"_s;
    QTest::newRow("two start lines in a row (the first start died silently)")
        << (sglAt("09:00:00", kServerArgs) + sglAt("09:05:00", kServerArgs) + sglAt("09:06:00", kReady)) << 1
        << qint64(2) << 0 << QStringList{} << u"No problems found"_s;
}

void TestLogClasses::severalStarts() {
    QFETCH(QByteArray, text);
    QFETCH(int, starts);
    QFETCH(qint64, latestLine);
    QFETCH(int, latestWarnings);
    QFETCH(QStringList, earlierRules);
    QFETCH(QString, summaryStart);
    // The same in one pass and split into parts read in parallel (parts of a few lines each).
    for (const bool parallel : {false, true}) {
        Diagnoser diagnoser;
        Diagnosis d;
        if (parallel) {
            QTemporaryFile file;
            QVERIFY(file.open());
            file.write(text);
            file.flush();
            diagnoser.setMaxThreads(4);
            diagnoser.setParallelThreshold(1);
            d = diagnoser.diagnoseFile(file.fileName());
        } else {
            d = diagnoser.diagnoseText(text);
        }
        QCOMPARE(d.starts.size(), starts);
        QCOMPARE(d.starts.back().line, latestLine);
        QCOMPARE(d.count(Severity::Warning), latestWarnings);
        QStringList earlier;
        for (const Finding &f : d.findings) {
            if (d.isLatest(f))
                continue;
            earlier << f.rule + u'@' + QString::number(f.start);
            QVERIFY2(f.title.endsWith(u" (earlier start %1 of %2)"_s.arg(f.start).arg(starts)),
                     qPrintable(f.title));
            QVERIFY2(f.id.endsWith(u"@start"_s + QString::number(f.start)), qPrintable(f.id));
        }
        earlier.sort();
        QCOMPARE(earlier, earlierRules);
        QVERIFY2(d.summary.startsWith(summaryStart), qPrintable(d.summary));
        // The latest start's findings come first, and ids stay unique.
        QSet<QString> ids;
        bool seenEarlier = false;
        for (const Finding &f : d.findings) {
            QVERIFY(!ids.contains(f.id));
            ids.insert(f.id);
            seenEarlier = seenEarlier || !d.isLatest(f);
            QVERIFY2(!(seenEarlier && d.isLatest(f)), qPrintable(f.id));
        }
        // Tuning jobs are those of the server as it runs now.
        QCOMPARE(d.targets.isEmpty(), latestWarnings == 0);
    }
}

void TestLogClasses::denseBlockFp8Target_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<QString>("device");
    QTest::addColumn<QString>("block"); // "n,k" or ""
    QTest::addColumn<QString>("file");
    const QByteArray root = "/sgl-workspace/sglang/python/sglang/srt/layers/quantization/configs/";
    const QByteArray head = "Using default W8A8 Block FP8 kernel config. Performance might be sub-optimal! "
                            "Config file not found at ";
    QTest::newRow("SGLang, block [128, 128]")
        << sgl(0, head + root +
                      "N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json")
        << 1536 << 7168 << u"NVIDIA_H200"_s << u"128,128"_s
        << u"N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json"_s;
    QTest::newRow("vLLM, block [128,128] without a space")
        << vllm(head +
                "/usr/lib/python3/dist-packages/vllm/model_executor/layers/quantization/utils/configs/"
                "N=576,K=7168,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,block_shape=[128,128].json")
        << 576 << 7168 << u"NVIDIA_H100_80GB_HBM3"_s << u"128,128"_s
        << u"N=576,K=7168,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,block_shape=[128, 128].json"_s;
    QTest::newRow("empty device name")
        << sgl(1, head + root + "N=4096,K=512,device_name=,dtype=fp8_w8a8,block_shape=[128, 128].json")
        << 4096 << 512 << QString() << u"128,128"_s
        << u"N=4096,K=512,device_name=,dtype=fp8_w8a8,block_shape=[128, 128].json"_s;
}

void TestLogClasses::denseBlockFp8Target() {
    QFETCH(QByteArray, line);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(QString, device);
    QFETCH(QString, block);
    QFETCH(QString, file);
    const Diagnosis d = Diagnoser().diagnoseText(line);
    const Finding *f = byRule(d, u"w8a8-block-fp8-untuned"_s);
    QVERIFY2(f, qPrintable(rules(d).join(u", "_s)));
    QVERIFY(f->target);
    const TuningTarget &t = *f->target;
    QCOMPARE(t.kernel, TuningTarget::Kernel::BlockFp8Gemm);
    QVERIFY(!t.isTunable());
    QCOMPARE(t.name.n, n);
    QCOMPARE(t.denseK, k);
    QCOMPARE(t.name.deviceName, device);
    QCOMPARE(t.name.dtype, u"fp8_w8a8"_s);
    QVERIFY(t.name.blockShape);
    QCOMPARE(u"%1,%2"_s.arg((*t.name.blockShape)[0]).arg((*t.name.blockShape)[1]), block);
    QVERIFY2(t.upPath().endsWith(u'/' + file), qPrintable(t.upPath()));
    QVERIFY(t.downPath().isEmpty());
    QVERIFY(d.targets.isEmpty()); // not a fused-MoE tuning job
    const QJsonObject json = t.toJson();
    QCOMPARE(json.value(u"kernel"_s).toString(), u"w8a8_block_fp8_gemm"_s);
    QCOMPARE(json.value(u"N"_s).toInt(), n);
    QCOMPARE(json.value(u"K"_s).toInt(), k);
    QVERIFY(json.value(u"E"_s).isNull());
    QCOMPARE(json.value(u"device_name"_s).toString(), device);
    QCOMPARE(json.value(u"block_shape"_s).toArray(),
             (QJsonArray{(*t.name.blockShape)[0], (*t.name.blockShape)[1]}));
    QVERIFY(t.shapeSummary().startsWith(u"N=%1, K=%2, fp8_w8a8"_s.arg(n).arg(k)));
}

void TestLogClasses::nFieldsOfTargets_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("fileN");
    QTest::addColumn<int>("intermediateN");
    QTest::addColumn<int>("weightN");
    QTest::addColumn<QStringList>("dtypes");
    QTest::newRow("vLLM int4_w4a16: file N twice the packed weight's")
        << vllm("Using default MoE config. Performance might be sub-optimal! Config file not found at " +
                kVllm + "E=64,N=512,device_name=NVIDIA_H200,dtype=int4_w4a16.json")
        << 512 << 512 << 256 << QStringList{u"int4_w4a16"_s};
    QTest::newRow("SGLang int4_w4a16: file N is the packed weight's")
        << sgl(0, untuned(kSgl + "E=64,N=256,device_name=NVIDIA_H200,dtype=int4_w4a16.json")) << 256 << 512
        << 256 << QStringList{u"int4_w4a16"_s};
    QTest::newRow("vLLM plain name: bf16/fp16 or int8_w8a8")
        << vllm("Using default MoE config. Performance might be sub-optimal! Config file not found at " +
                kVllm + kName + ".json")
        << 768 << 768 << 768 << QStringList{u"bf16"_s, u"fp16"_s, u"int8_w8a8"_s};
    QTest::newRow("SGLang plain name: bf16/fp16 only")
        << sgl(2, untuned(kSgl + kName + ".json")) << 768 << 768 << 768 << QStringList{u"bf16"_s, u"fp16"_s};
    QTest::newRow("SGLang int8_w8a8 names its dtype")
        << sgl(3, untuned(kSgl + "E=128,N=768,device_name=NVIDIA_H200,dtype=int8_w8a8.json")) << 768 << 768
        << 768 << QStringList{u"int8_w8a8"_s};
}

void TestLogClasses::nFieldsOfTargets() {
    QFETCH(QByteArray, line);
    QFETCH(int, fileN);
    QFETCH(int, intermediateN);
    QFETCH(int, weightN);
    QFETCH(QStringList, dtypes);
    const Diagnosis d = Diagnoser().diagnoseText(line);
    QCOMPARE(d.targets.size(), 1);
    const TuningTarget &t = d.targets.front();
    QCOMPARE(t.name.n, fileN);
    QCOMPARE(t.intermediateN(), intermediateN);
    QCOMPARE(t.weightN(), weightN);
    QCOMPARE(t.dtypeCandidates(), dtypes);
    const QJsonObject json = t.toJson();
    QCOMPARE(json.value(u"N"_s).toInt(), fileN);
    QCOMPARE(json.value(u"N_intermediate"_s).toInt(), intermediateN);
    QCOMPARE(json.value(u"N_weight"_s).toInt(), weightN);
    QCOMPARE(json.value(u"dtype_candidates"_s).toVariant().toStringList(), dtypes);
    // A tuning job built from the target takes the layer's N (the agent names the file from it).
    QCOMPARE(TuneSpec::fromTarget(t).n, intermediateN);
    const Finding *f = d.findings.isEmpty() ? nullptr : &d.findings.front();
    QVERIFY(f && f->target);
    if (intermediateN != fileN || weightN != fileN)
        QVERIFY2(f->explanation.contains(u"packed down weight's N is %1"_s.arg(weightN)),
                 qPrintable(f->explanation));
    QCOMPARE(f->explanation.contains(u"tune dtype int8_w8a8"_s),
             dtypes.contains(u"int8_w8a8"_s) && dtypes.size() > 1);
}

void TestLogClasses::memoryLeftQuotesTheLastReport_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("title");
    QTest::addColumn<QString>("step"); // in the explanation
    QByteArray startup;
    const char *steps[] = {
        "Load weight begin. avail mem=138.31 GB",
        "Load weight end. type=Qwen3MoeForCausalLM, "
        "avail mem=82.77 GB, mem usage=55.54 GB.",
        "Memory pool end. avail mem=33.52 GB",
        "Capture cuda graph begin. This can take up to several minutes. avail mem=33.31 GB",
        "Capture cuda graph end. Time elapsed: 42.02 s. mem usage=1.63 GB. avail mem=31.62 GB."};
    for (const char *step : steps)
        startup += sglRankAt("09:12:47", 0, step);
    QTest::newRow("startup steps, then ready")
        << (startup + sglAt("09:13:35", kReady)) << u"GPU memory left: 31.62 GB at the last startup report"_s
        << u"Capture cuda graph end"_s;
    QTest::newRow("a report after serving is not quoted")
        << (startup + sglAt("09:13:35", kReady) +
            sglRankAt("09:20:00", 0, "Load weight end. avail mem=2.00 GB"))
        << u"GPU memory left: 31.62 GB at the last startup report"_s << u"Capture cuda graph end"_s;
    QTest::newRow("not ready yet: the latest report")
        << startup.first(startup.indexOf("[2026-03-14 09:12:47 TP0] Memory pool end"))
        << u"GPU memory left: 82.77 GB at the last startup report"_s << u"Load weight end"_s;
    QTest::newRow("old SGLang, one report")
        << sglRankAt("10:00:00", 0,
                     "Load weight end. type=DeepseekV3ForCausalLM, avail mem=40.12 GB, mem usage=80.33 GB.")
        << u"GPU memory left: 40.12 GB at the last startup report"_s << u"Load weight end"_s;
}

void TestLogClasses::memoryLeftQuotesTheLastReport() {
    QFETCH(QByteArray, text);
    QFETCH(QString, title);
    QFETCH(QString, step);
    for (const bool parallel : {false, true}) {
        Diagnosis d;
        if (parallel) {
            QTemporaryFile file;
            QVERIFY(file.open());
            file.write(text);
            file.flush();
            Diagnoser diagnoser;
            diagnoser.setMaxThreads(4);
            diagnoser.setParallelThreshold(1);
            d = diagnoser.diagnoseFile(file.fileName());
        } else {
            d = Diagnoser().diagnoseText(text);
        }
        const Finding *f = byRule(d, u"memory-left"_s);
        QVERIFY(f);
        QCOMPARE(f->title, title);
        QVERIFY2(f->explanation.contains(u'(' + step + u')'), qPrintable(f->explanation));
    }
}

void TestLogClasses::kvCacheOnce_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QStringList>("titles"); // of the info findings about the KV cache
    QTest::newRow("SGLang: KV cache and capacity line")
        << (sglRankAt("09:12:47", 0,
                      "KV Cache is allocated. #tokens: 1046371, K size: 23.95 GB, V size: 23.95 GB") +
            sglRankAt("09:12:47", 1,
                      "KV Cache is allocated. #tokens: 1046371, K size: 23.95 GB, V size: 23.95 GB") +
            sglRankAt("09:13:31", 0,
                      "max_total_num_tokens=1046371, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                      "max_running_requests=4096, context_len=40960, available_gpu_mem=31.68 GB"))
        << QStringList{u"KV cache: 1046371 tokens, at most 4096 running requests"_s};
    QTest::newRow("vLLM: memory and tokens")
        << ("(EngineCore_DP0 pid=3300) INFO 03-14 09:11:30 [gpu_worker.py:298] Available KV cache memory: "
            "101.22 GiB\n"
            "(EngineCore_DP0 pid=3300) INFO 03-14 09:11:30 [kv_cache_utils.py:1087] GPU KV cache size: 1,234,560 tokens\n"_ba)
        << QStringList{u"KV cache: 1,234,560 tokens in 101.22 GiB per GPU"_s};
    QTest::newRow("vLLM: memory only stands alone")
        << ("(EngineCore_DP0 pid=3300) INFO 03-14 09:11:30 [gpu_worker.py:298] Available KV cache memory: 61.23 GiB\n"_ba)
        << QStringList{u"Memory for the KV cache: 61.23 GiB"_s};
    QTest::newRow("SGLang: capacity line only")
        << sglRankAt("09:13:31", 0, "max_total_num_tokens=5000, max_running_requests=48, context_len=4096")
        << QStringList{u"Capacity: 5000 tokens, at most 48 running requests"_s};
}

void TestLogClasses::kvCacheOnce() {
    QFETCH(QByteArray, text);
    QFETCH(QStringList, titles);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QStringList kv;
    for (const Finding &f : d.findings) {
        if (f.title.contains(u"KV cache"_s) || f.title.contains(u"tokens"_s))
            kv << f.title;
    }
    QCOMPARE(kv, titles);
}

void TestLogClasses::evidenceKeepsTheLatestLines_data() {
    QTest::addColumn<int>("lines");
    QTest::addColumn<qint64>("omitted");
    QTest::newRow("8 lines: all") << 8 << qint64(0);
    QTest::newRow("20 lines: all") << 20 << qint64(0);
    QTest::newRow("21 lines: one left out") << 21 << qint64(1);
    QTest::newRow("40 lines (issue 12)") << 40 << qint64(20);
    QTest::newRow("1000 lines") << 1000 << qint64(980);
}

void TestLogClasses::evidenceKeepsTheLatestLines() {
    QFETCH(int, lines);
    QFETCH(qint64, omitted);
    QByteArray text;
    for (int i = 0; i < lines; ++i)
        text += sgl(i % 8, untuned(kSgl + kName + ".json"));
    for (const bool parallel : {false, true}) {
        Diagnosis d;
        if (parallel) {
            QTemporaryFile file;
            QVERIFY(file.open());
            file.write(text);
            file.flush();
            Diagnoser diagnoser;
            diagnoser.setMaxThreads(4);
            diagnoser.setParallelThreshold(1);
            d = diagnoser.diagnoseFile(file.fileName());
        } else {
            d = Diagnoser().diagnoseText(text);
        }
        const Finding *f = byRule(d, u"moe-untuned"_s);
        QVERIFY(f);
        QCOMPARE(f->occurrences, lines);
        QCOMPARE(f->evidence.size(), qMin(lines, Finding::maxEvidence));
        QCOMPARE(f->evidenceOmitted, omitted);
        // The first lines, then the latest: the last line of the log is shown.
        for (int i = 0; i < qMin(lines, Finding::headEvidence); ++i)
            QCOMPARE(f->evidence[i].line, qint64(i + 1));
        QCOMPARE(f->evidence.back().line, qint64(lines));
        for (qsizetype i = 1; i < f->evidence.size(); ++i)
            QVERIFY(f->evidence[i - 1].line < f->evidence[i].line);
        QCOMPARE(d.toJson()
                     .value(u"findings"_s)
                     .toArray()
                     .first()
                     .toObject()
                     .value(u"evidence_omitted"_s)
                     .toInteger(),
                 omitted);
    }
}

QTEST_GUILESS_MAIN(TestLogClasses)
#include "tst_logclasses.moc"
