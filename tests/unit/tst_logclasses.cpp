// Issue 8's classes of input, each with several variants: Python-list paths, SGLang's newest down-miss
// wording, the bare default warning, other kernels' "sub-optimal" lines, found-config lines, claims a
// log cannot support, tuned configs in use, every prefix form, and evidence of rejoined wrapped lines.
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/logprefix.h"
#include "core/diagnosis/moemessage.h"
#include "core/diagnosis/sourcelist.h"

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

QTEST_GUILESS_MAIN(TestLogClasses)
#include "tst_logclasses.moc"
