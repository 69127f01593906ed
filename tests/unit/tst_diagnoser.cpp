// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The diagnosis engine over log variants written from docs/servers.md (tests/data/logs and in-memory
// variants): every wording and prefix, multi-rank repeats, wrapped paths, CRLF, ANSI, CR progress
// bars, tabs, invalid UTF-8, garbage, empty input and huge lines.
#include "core/diagnosis/diagnoser.h"
#include "core/util/coreresources.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace moetune;
using namespace Qt::StringLiterals;

namespace {

const QByteArray kRoot = "/sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs";
const QByteArray kTail = ", you can create them with "
                         "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton";

// Issue 19: a log that names no MoE kernel says what moetune assumed.
const QString kAssumed = u"; the log does not name the MoE kernel (Triton fused MoE assumed)"_s;

QByteArray untunedLine(int rank, const QByteArray &name = "E=128,N=768,device_name=NVIDIA_H200") {
    return "[2026-03-14 09:12:50 TP" + QByteArray::number(rank) +
           "] Using default MoE kernel config. Performance might be sub-optimal! Config file not found at " +
           kRoot + "/triton_3_6_0/" + name + ".json" + kTail;
}

QByteArray readData(const QString &name) {
    QFile f(QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing test log %s", qPrintable(name));
    return f.readAll();
}

// "rule xN" for each finding, sorted: what was found and how often.
QStringList findingKeys(const Diagnosis &d) {
    QStringList out;
    for (const Finding &f : d.findings)
        out << f.rule + u" x"_s + QString::number(f.occurrences);
    out.sort();
    return out;
}

// framework|shape|device|folder(!=missing on the host, ~=nothing loaded from it)|flags U D u d|fallback
QStringList targetKeys(const Diagnosis &d) {
    QStringList out;
    for (const TuningTarget &t : d.targets) {
        QString flags;
        flags += t.upMissing ? u"U"_s : QString();
        flags += t.downMissing ? u"D"_s : QString();
        flags += t.upFellBack ? u"u"_s : QString();
        flags += t.downFellBack ? u"d"_s : QString();
        out << frameworkId(t.framework) + u'|' + t.shapeSummary() + u'|' + t.name.deviceName + u'|' +
                   t.tritonFolder +
                   (t.tritonFolderMissing ? u"!"_s : (t.noConfigLoaded ? u"~"_s : QString())) + u'|' + flags +
                   u'|' + t.fallbackFolder;
    }
    out.sort();
    return out;
}

} // namespace

class TestDiagnoser : public QObject {
    Q_OBJECT

    void quotedWarningRows(); // logs_data() rows of issue 23 item 2
    void elidedNameRows();    // logs_data() rows of issue 41 (shortened names)

private slots:
    void logs_data();
    void logs();
    void manyNamesAreCountedNotListed();
    void elidedNamesSayWhatIsKnown();
    void manyStartsKeepTheLatest();
    void sameResultFromFileTextAndDevice_data();
    void sameResultFromFileTextAndDevice();
    void ranksMergeIntoOneFinding();
    void evidenceSpansTheMatch();
    void wrappedPathIsRejoined();
    void hugeLines();
    void fileWindowsKeepLineNumbers();
    void parallelFileEqualsSinglePass();
    void cancel();
    void missingFileIsAClearError();
    void jsonSchema();
    void jsonStreamedSameBytes();
    void markdown();
    void demoLogInResources();
};

void TestDiagnoser::logs_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QStringList>("findings");
    QTest::addColumn<QStringList>("targets");
    QTest::addColumn<QString>("summary"); // checked when not empty

    const QString h200 = u"sglang|E=128, N=768, bf16|NVIDIA_H200|triton_3_6_0~|U|"_s;
    QTest::newRow("sglang 8 ranks up and down")
        << readData(u"sglang-untuned-tp8.log"_s)
        << QStringList{u"kv-cache-size x8"_s, u"moe-down-missing x8"_s, u"moe-untuned x8"_s,
                       u"server-start x1"_s, u"triton-folder-no-config x16"_s}
        << QStringList{u"sglang|E=128, N=768, bf16|NVIDIA_H200|triton_3_6_0~|UD|"_s}
        << u"2 MoE configs untuned on NVIDIA_H200 under Triton 3.6.0: 1 tuning job (E=128, N=768, bf16), up "
           u"and "
           "down; no config loaded from triton_3_6_0"_s +
               kAssumed;
    QTest::newRow("sglang fallback fp8 block")
        << readData(u"sglang-fallback-fp8.log"_s)
        << QStringList{u"moe-fallback x4"_s, u"moe-fallback x4"_s, u"triton-folder-no-config x8"_s}
        << QStringList{u"sglang|E=257, N=256, fp8_w8a8, block [128, 128]|NVIDIA_H200|triton_3_6_0~|ud|triton_3_4_0"_s}
        << u"2 MoE configs untuned on NVIDIA_H200 under Triton 3.6.0: 1 tuning job (E=257, N=256, fp8_w8a8, "
           u"block "
           "[128, 128]), up and down; up and down fell back to triton_3_4_0; no config loaded from triton_3_6_0"_s +
               kAssumed;
    QTest::newRow("sglang old wording, no version folder")
        << readData(u"sglang-old-default.log"_s) << QStringList{u"memory-left x1"_s, u"moe-untuned x2"_s}
        << QStringList{u"sglang|E=256, N=256, fp8_w8a8, block [128, 128]|NVIDIA_H20||U|"_s}
        << u"1 MoE config untuned on NVIDIA_H20: 1 tuning job (E=256, N=256, fp8_w8a8, block [128, 128]), up"_s +
               kAssumed;
    QTest::newRow("vllm v1 process prefix")
        << readData(u"vllm-v1.log"_s)
        << QStringList{u"cuda-graph-capture-vllm x1"_s, u"kv-cache-size-vllm x1"_s, u"moe-config-used x1"_s,
                       u"moe-untuned x1"_s, u"platform-detected x1"_s}
        << QStringList{u"vllm|E=128, N=768, bf16|NVIDIA_H200||U|"_s}
        << u"1 MoE config untuned on NVIDIA_H200: 1 tuning job (E=128, N=768, bf16)"_s + kAssumed;
    QTest::newRow("vllm old prefix, two paths")
        << readData(u"vllm-old-two-paths.log"_s) << QStringList{u"moe-untuned x2"_s}
        << QStringList{u"vllm|E=8, N=14336, int8_w8a16|NVIDIA_A100-SXM4-80GB||U|"_s} << QString();
    QTest::newRow("vllm behind a wrapper tag")
        << readData(u"vllm-stage-tag.log"_s) << QStringList{u"moe-untuned x1"_s}
        << QStringList{u"vllm|E=256, N=256, fp8_w8a8, block [128, 128]|NVIDIA_H200||U|"_s} << QString();
    QTest::newRow("terminal-wrapped lines")
        << readData(u"sglang-wrapped.log"_s)
        << QStringList{u"cuda-graph-capture x1"_s, u"memory-left x1"_s, u"memory-left-low x1"_s,
                       u"moe-fallback x1"_s,       u"moe-untuned x1"_s, u"triton-folder-no-config x2"_s}
        << QStringList{u"sglang|E=160, N=192, bf16|NVIDIA_H200|triton_3_6_0~|Ud|triton_3_5_1"_s} << QString();
    QTest::newRow("CRLF, ANSI, CR progress bars, tab")
        << readData(u"sglang-messy-crlf.log"_s)
        << QStringList{u"memory-left x1"_s, u"moe-untuned x2"_s, u"triton-folder-no-config x2"_s}
        << QStringList{u"sglang|E=64, N=2560, bf16|NVIDIA_H100_80GB_HBM3|triton_3_6_0~|U|"_s} << QString();
    QTest::newRow("deterministic and block-FP8 GEMM")
        << readData(u"sglang-deterministic-fp8gemm.log"_s)
        << QStringList{u"deterministic-default-config x2"_s, u"w8a8-block-fp8-untuned x1"_s} << QStringList{}
        << u"1 warning: Untuned W8A8 block-FP8 GEMM: N=1536, K=7168 on NVIDIA_H200"_s;
    QTest::newRow("DP ranks, config in use, startup errors")
        << readData(u"sglang-dp-errors.log"_s)
        << QStringList{u"address-in-use x1"_s, u"cuda-out-of-memory x1"_s, u"moe-config-used x2"_s,
                       u"moe-down-missing x1"_s, u"python-traceback x1"_s}
        << QStringList{u"sglang|E=128, N=768, bf16|NVIDIA_H200|triton_3_6_0|D|"_s}
        << u"1 MoE config untuned on NVIDIA_H200 under Triton 3.6.0: 1 tuning job (E=128, N=768, bf16), "
           u"down; 3 "
           "other problems"_s +
               kAssumed;

    // In-memory variants of one warning.
    const QByteArray line = untunedLine(0);
    const QStringList one{u"moe-untuned x1"_s, u"triton-folder-no-config x1"_s};
    QTest::newRow("plain") << line + "\n" << one << QStringList{h200} << QString();
    QTest::newRow("no final newline") << line << one << QStringList{h200} << QString();
    QTest::newRow("CRLF") << line + "\r\n" << one << QStringList{h200} << QString();
    QTest::newRow("ANSI colour") << "\x1b[33m" + line.left(30) + "\x1b[0m\x1b[1m" + line.mid(30) + "\x1b[0m\n"
                                 << one << QStringList{h200} << QString();
    QTest::newRow("CR progress bar before") << "  5%|#  | 1/20\r 50%|#### | 10/20\r" + line + "\n"
                                            << one << QStringList{h200} << QString();
    QTest::newRow("CR progress bar after, overwriting it")
        << line + "\r100%|##########| 20/20\n"
        << QStringList{} << QStringList{} << u"No problems found in 1 line"_s;
    QTest::newRow("tabs") << QByteArray(line).replace("found at ", "found at\t").replace("] ", "]\t") + "\n"
                          << one << QStringList{h200} << QString();
    QTest::newRow("invalid UTF-8 around") << "\xff\xfe\xc3(" + line + "\xed\xa0\x80\n"
                                          << one << QStringList{h200} << QString();
    QTest::newRow("empty") << QByteArray() << QStringList{} << QStringList{}
                           << u"No problems found in 0 lines"_s;
    QTest::newRow("only newlines") << QByteArray(5, '\n') << QStringList{} << QStringList{}
                                   << u"No problems found in 5 lines"_s;
    QByteArray garbage(256 * 1024, '\0');
    quint32 x = 12345;
    for (char &c : garbage) {
        x = x * 1664525u + 1013904223u;
        c = static_cast<char>(x >> 24);
    }
    QTest::newRow("binary garbage") << garbage << QStringList{} << QStringList{} << QString();
    QTest::newRow("garbage then warning") << garbage + "\n" + line + "\n"
                                          << one << QStringList{h200} << QString();
    QTest::newRow("elided path") << QByteArray(line).replace(kRoot, "/.../configs") + "\n"
                                 << one
                                 << QStringList{u"sglang|E=128, N=768, bf16|NVIDIA_H200|triton_3_6_0~|U|"_s}
                                 << QString();
    QTest::newRow("odd device name")
        << untunedLine(0, "E=32,N=512,device_name=Intel(R)_Arc(TM)_B580_Graphics") + "\n"
        << one << QStringList{u"sglang|E=32, N=512, bf16|Intel(R)_Arc(TM)_B580_Graphics|triton_3_6_0~|U|"_s}
        << QString();
    QTest::newRow("empty device name")
        << untunedLine(0, "E=128,N=768,device_name=") + "\n"
        << one << QStringList{u"sglang|E=128, N=768, bf16||triton_3_6_0~|U|"_s}
        << u"1 MoE config untuned on an unnamed GPU under Triton 3.6.0: 1 tuning job "
           "(E=128, N=768, bf16), up; no config loaded from triton_3_6_0"_s +
               kAssumed;
    QTest::newRow("two shapes, two devices")
        << line + "\n" + untunedLine(1, "E=64,N=1408,device_name=NVIDIA_H20-3e,dtype=fp8_w8a8_down") + "\n"
        << QStringList{u"moe-down-missing x1"_s, u"moe-untuned x1"_s, u"triton-folder-no-config x2"_s}
        << QStringList{h200, u"sglang|E=64, N=1408, fp8_w8a8|NVIDIA_H20-3e|triton_3_6_0~|D|"_s}
        << u"2 MoE configs untuned on NVIDIA_H200, NVIDIA_H20-3e under Triton 3.6.0: 2 tuning jobs (E=128, "
           u"N=768, "
           "bf16: up; E=64, N=1408, fp8_w8a8: down); no config loaded from triton_3_6_0"_s +
               kAssumed;
    quotedWarningRows();
    elidedNameRows();
    // Issue 41, pastes as people make them, from the upstream lines:
    // vllm/model_executor/layers/fused_moe/fused_moe.py get_moe_configs(): "Using default MoE config.
    // Performance might be sub-optimal! Config file not found at %s"; vllm/model_executor/layers/
    // quantization/fp8.py get_fp8_moe_backend(): "Using Triton backend for FP8 MoE". All on one line.
    QTest::newRow("vllm-newlines-lost.log")
        << readData(u"vllm-newlines-lost.log"_s)
        << QStringList{u"attention-backend-vllm x1"_s, u"moe-kernel x1"_s, u"moe-untuned x2"_s,
                       u"server-ready x2"_s} // its start and its ready record
        << QStringList{u"vllm|E=128, N=384, fp8_w8a8, block [128, 128]|NVIDIA_H100_80GB_HBM3||U|"_s}
        << QString();
    // The same warning with the first characters of the first line cut ("VllmWorker rank=2 pid=...)").
    QTest::newRow("vllm-cut-prefix.log")
        << readData(u"vllm-cut-prefix.log"_s) << QStringList{u"moe-untuned x2"_s}
        << QStringList{u"vllm|E=128, N=768, bf16|NVIDIA_H200||U|"_s} << QString();
}

// Issue 41: names a poster shortened, and GPU names the server could not read. The target keeps what the
// line says; nothing is guessed, and a name missing a part is no tuning job.
void TestDiagnoser::elidedNameRows() {
    // vllm/model_executor/layers/fused_moe/fused_moe.py, get_moe_configs():
    //   logger.info("Using configuration from %s for MoE layer.", config_file_path)
    // as quoted in a public tuning plan: "Using configuration from
    // .../moe_configs_h100/E=24,N=768,device_name=....json"
    QTest::newRow("elided: vLLM config in use, folder and device cut")
        << QByteArray(
               "(EngineCore_DP0 pid=7) INFO 03-14 09:13:11 [fused_moe.py:1030] Using configuration from "
               ".../moe_configs_h100/E=24,N=768,device_name=....json for MoE layer.\n")
        << QStringList{u"moe-config-used x1"_s} << QStringList{} << QString();
    // sglang/srt/layers/moe/fused_moe_triton/fused_moe_triton_config.py, get_moe_configs():
    //   "Using default MoE kernel config. Performance might be sub-optimal! Config file not found at %s, ..."
    QTest::newRow("elided: SGLang device_name=... with dtype and block after it")
        << untunedLine(0, "E=256,N=256,device_name=...,dtype=fp8_w8a8,block_shape=[128, 128]") + "\n"
        << QStringList{u"moe-untuned x1"_s} << QStringList{} << QString();
    QTest::newRow("elided: ,..., in the middle of the name")
        << untunedLine(0, "E=256,N=256,...,block_shape=[128, 128]") + "\n"
        << QStringList{u"moe-untuned x1"_s} << QStringList{} << QString();
    QTest::newRow("elided: only the folder cut keeps the target")
        << QByteArray("[2026-03-14 09:12:50 TP0] Using default MoE kernel config. Performance might be "
                      "sub-optimal! Config file not found at .../E=128,N=768,device_name=NVIDIA_H200.json" +
                      kTail + "\n")
        << QStringList{u"moe-untuned x1"_s} << QStringList{u"sglang|E=128, N=768, bf16|NVIDIA_H200||U|"_s}
        << QString();
    // The name PyTorch gives a GPU its driver cannot name, in a public SGLang benchmark output:
    // ".../configs/E=256,N=256,device_name=NVIDIA_Graphics_Device,dtype=fp8_w8a8,block_shape=[128, 128].json"
    QTest::newRow("unreadable GPU name: NVIDIA_Graphics_Device is no target")
        << untunedLine(
               0, "E=256,N=256,device_name=NVIDIA_Graphics_Device,dtype=fp8_w8a8,block_shape=[128, 128]") +
               "\n"
        << QStringList{u"moe-untuned x1"_s} << QStringList{} << QString();
}

// Issue 23: only the server's own line is a finding, not the same words quoted inside another message
// (a logged request: any API user can have the server print them).
void TestDiagnoser::quotedWarningRows() {
    const QByteArray planted =
        "Using default MoE config. Performance might be sub-optimal! Config file not found "
        "at /etc/cron.d/../cron.d/E=128,N=768,device_name=NVIDIA_H200.json";
    QTest::newRow("quoted in an SGLang request log")
        << ("[2026-03-14 09:12:50 TP0] Receive: obj=GenerateReqInput(text='" + planted +
            "', sampling_params={})\n")
        << QStringList{} << QStringList{} << QString();
    QTest::newRow("quoted in a vLLM request log")
        << ("(APIServer pid=7) INFO 03-14 09:12:50 [logger.py:41] Received request cmpl-1: prompt: '" +
            planted + "', params: SamplingParams(n=1)\n")
        << QStringList{} << QStringList{} << QString();
    QTest::newRow("after words of another message")
        << ("[2026-03-14 09:12:50 TP0] Prefill text: " + planted + "\n") << QStringList{} << QStringList{}
        << QString();
    QTest::newRow("quoted without a prefix")
        << ("echo '" + planted + "'\n") << QStringList{} << QStringList{} << QString();
    QTest::newRow("own line behind a level and file header")
        << ("[2026-03-14 09:12:50 TP0] WARNING fused_moe.py:812: " + untunedLine(0).mid(26) + "\n")
        << QStringList{u"moe-untuned x1"_s, u"triton-folder-no-config x1"_s}
        << QStringList{u"sglang|E=128, N=768, bf16|NVIDIA_H200|triton_3_6_0~|U|"_s} << QString();
    QTest::newRow("own line behind a syslog head")
        << ("Mar 14 09:12:50 gpu-7 python3[1234]: WARNING 03-14 09:12:50 [fused_moe.py:812] " +
            QByteArray(planted).replace(
                "/etc/cron.d/../cron.d",
                "/usr/lib/python3/dist-packages/vllm/model_executor/layers/fused_moe/configs") +
            "\n")
        << QStringList{u"moe-untuned x1"_s} << QStringList{u"vllm|E=128, N=768, bf16|NVIDIA_H200||U|"_s}
        << QString();

    // Issue 41: pastes as people make them. A record is told from a quote by its shape (a process prefix,
    // a level word, a logger location; the record boundary before it), not by its column.
    const QByteArray vllmPath =
        "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/configs/"
        "E=128,N=768,device_name=NVIDIA_H200.json";
    // vllm/model_executor/layers/fused_moe/fused_moe.py, get_moe_configs():
    // logger.warning("Using default MoE config. Performance might be sub-optimal! Config file not found at
    // %s", ...)
    const QByteArray vllmWarning = "WARNING 03-18 11:13:40 [fused_moe.py:1042] Using default MoE config. "
                                   "Performance might be sub-optimal! Config file not found at " +
                                   vllmPath;
    const QStringList vllmTarget{u"vllm|E=128, N=768, bf16|NVIDIA_H200||U|"_s};
    QTest::newRow("newlines lost: a vLLM record mid-line after other records")
        << ("(EngineCore_DP0 pid=192) INFO 03-18 11:13:38 [layer.py:372] Enabled separate cuda stream for "
            "MoE "
            "shared_experts (EngineCore_DP0 pid=192) INFO 03-18 11:13:38 [fp8.py:205] Loading weights took "
            "3.1 s (Worker_TP0 pid=311) " +
            vllmWarning +
            " (Worker_TP0 pid=311) INFO 03-18 11:13:41 [gpu_model_runner.py:2000] Model loading "
            "took 15.2 GiB\n")
        << QStringList{u"moe-untuned x1"_s} << vllmTarget << QString();
    QTest::newRow("newlines lost without a blank: two ranks glued")
        << ("(Worker_TP0 pid=311) " + vllmWarning + "(Worker_TP1 pid=312) " + vllmWarning + "\n")
        << QStringList{u"moe-untuned x2"_s} << vllmTarget << QString();
    QTest::newRow("cut paste: the prefix lost its opening parenthesis")
        << ("VllmWorker rank=2 pid=4711) " + vllmWarning + "\n") << QStringList{u"moe-untuned x1"_s}
        << vllmTarget << QString();
    QTest::newRow("cut paste deeper: the process name and pid= cut")
        << ("d=4711) " + vllmWarning + "\n") << QStringList{u"moe-untuned x1"_s} << vllmTarget << QString();
    QTest::newRow("newlines lost: an SGLang record after a request log")
        << ("[2026-03-14 09:12:49 TP0] Prefill batch. #new-seq: 1, #new-token: 7 " + untunedLine(0) + "\n")
        << QStringList{u"moe-untuned x1"_s, u"triton-folder-no-config x1"_s}
        << QStringList{u"sglang|E=128, N=768, bf16|NVIDIA_H200|triton_3_6_0~|U|"_s} << QString();
    QTest::newRow("record shape quoted inside a vLLM request log")
        << ("(APIServer pid=7) INFO 03-14 09:12:50 [logger.py:41] Received request cmpl-1: prompt: '"
            "(Worker_TP0 pid=311) " +
            vllmWarning + "', params: SamplingParams(n=1)\n")
        << QStringList{} << QStringList{} << QString();
    QTest::newRow("record shape quoted inside an SGLang request object")
        << ("[2026-03-14 09:12:50 TP0] Receive: obj=GenerateReqInput(text=" + untunedLine(0) + ", rid=1)\n")
        << QStringList{} << QStringList{} << QString();
}

// Issue 41: what a shortened name says, what it does not, and what to find out; never a guessed part.
void TestDiagnoser::elidedNamesSayWhatIsKnown() {
    auto only = [](const QByteArray &log) {
        const Diagnosis d = Diagnoser().diagnoseText(log);
        for (const Finding &f : d.findings) {
            if (f.rule.startsWith(u"moe-"_s))
                return f;
        }
        return Finding{};
    };
    const Finding device =
        only(untunedLine(0, "E=256,N=256,device_name=...,dtype=fp8_w8a8,block_shape=[128, 128]"));
    QVERIFY2(
        device.title.contains(u"E=256, N=256, fp8_w8a8, block [128, 128] on an unknown GPU; GPU name not in "
                              "the paste"_s),
        qPrintable(device.title));
    QVERIFY(!device.target);
    QVERIFY2(device.advice.startsWith(u"Find out the GPU name as the server writes it"_s),
             qPrintable(device.advice));
    const Finding middle = only(untunedLine(0, "E=256,N=256,...,block_shape=[128, 128]"));
    QVERIFY2(
        middle.title.contains(u"E=256, N=256, dtype unknown, block [128, 128] on an unknown GPU; GPU name, "
                              "dtype not in the paste"_s),
        qPrintable(middle.title));
    QVERIFY2(middle.explanation.contains(u"moetune does not guess them"_s), qPrintable(middle.explanation));
    const Finding unnamed = only(untunedLine(
        0, "E=256,N=256,device_name=NVIDIA_Graphics_Device,dtype=fp8_w8a8,block_shape=[128, 128]"));
    QVERIFY2(unnamed.title.contains(u"on NVIDIA_Graphics_Device (a GPU the server could not name)"_s),
             qPrintable(unnamed.title));
    QVERIFY2(unnamed.explanation.contains(u"moetune offers no tuning job for it"_s),
             qPrintable(unnamed.explanation));
    QVERIFY(unnamed.advice.contains(u"nvidia-smi -L"_s));
    const Finding noShape = only(untunedLine(0, "E=...,N=...,device_name=..."));
    QVERIFY2(noShape.title.contains(u"names no shape"_s), qPrintable(noShape.title));
    QVERIFY(!noShape.target);
    const Finding folder =
        only("[2026-03-14 09:12:50 TP0] Using default MoE kernel config. Performance might be "
             "sub-optimal! Config file not found at .../E=128,N=768,device_name=NVIDIA_H200.json" +
             kTail + "\n");
    QVERIFY(folder.target);
    QVERIFY(folder.target->configRoot.isEmpty());
    QVERIFY2(folder.explanation.contains(u"The paste cut the folder"_s), qPrintable(folder.explanation));
}

// More distinct config names than a diagnosis lists: the first kMaxShapeFindings are findings and targets,
// the rest one honest "and N more" finding (memory and output follow what is shown).
void TestDiagnoser::manyNamesAreCountedNotListed() {
    auto logOf = [](int names) {
        QByteArray log;
        for (int i = 0; i < names; ++i)
            log += untunedLine(i % 2, "E=128,N=768,device_name=GPU_" + QByteArray::number(i)) + '\n';
        return log;
    };
    auto jsonOf = [](const Diagnosis &d) {
        QByteArray json;
        d.writeJson([&](QByteArrayView piece) { json += piece; });
        return json;
    };
    constexpr int names = 2000;
    const QByteArray log = logOf(names);
    const Diagnosis d = Diagnoser().diagnoseText(log);
    QCOMPARE(d.targets.size(), 256);
    const Finding *more = d.find(u"moe-shapes-not-listed"_s);
    QVERIFY(more);
    QCOMPARE(more->occurrences, names - 256);
    QVERIFY2(more->title.contains(u"1744 more"_s), qPrintable(more->title));
    QCOMPARE(more->severity, Severity::Warning);
    QVERIFY(!more->evidence.isEmpty());
    QVERIFY(d.findings.size() < 300);
    // The JSON grows with what is listed, not with the log: twice the names, (nearly) the same output.
    const qsizetype size2000 = jsonOf(d).size();
    const qsizetype size4000 = jsonOf(Diagnoser().diagnoseText(logOf(2 * names))).size();
    QVERIFY2(size4000 < size2000 + size2000 / 10, qPrintable(u"%1 -> %2"_s.arg(size2000).arg(size4000)));
}

// 100 server starts: the latest kMaxStartsKept in detail, the earlier ones counted; numbers and the
// summary still speak of the whole log.
void TestDiagnoser::manyStartsKeepTheLatest() {
    QByteArray log;
    for (int s = 0; s < 100; ++s) {
        log += "[2026-03-14 09:12:50] server_args=ServerArgs(model_path='/m', tp_size=1)\n";
        log += untunedLine(0) + '\n';
        log += "[2026-03-14 09:13:50] The server is fired up and ready to roll!\n";
    }
    const Diagnosis d = Diagnoser().diagnoseText(log);
    QCOMPARE(d.starts.size(), 16);
    QCOMPARE(d.startsOmitted, 84);
    QVERIFY2(d.summary.startsWith(u"Latest of 100 server starts (from line 298)"_s), qPrintable(d.summary));
    QCOMPARE(d.targets.size(), 1);
    int earlier = 0;
    for (const Finding &f : d.findings) {
        QVERIFY(f.start >= 1 && f.start <= 16);
        if (f.title.contains(u"(earlier start 85 of 100)"_s))
            ++earlier;
    }
    QVERIFY(earlier > 0);
}

void TestDiagnoser::logs() {
    QFETCH(QByteArray, text);
    QFETCH(QStringList, findings);
    QFETCH(QStringList, targets);
    QFETCH(QString, summary);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QCOMPARE(findingKeys(d), findings);
    QCOMPARE(targetKeys(d), targets);
    if (!summary.isEmpty())
        QCOMPARE(d.summary, summary);
    QVERIFY(!d.summary.isEmpty());
    QCOMPARE(d.bytesRead, text.size());
    QCOMPARE(d.cancelled, false);
    QSet<QString> ids;
    for (const Finding &f : d.findings) {
        QVERIFY2(!ids.contains(f.id), qPrintable(f.id));
        ids.insert(f.id);
        QVERIFY(!f.title.isEmpty());
        QVERIFY(!f.explanation.isEmpty());
        QVERIFY(!f.advice.isEmpty());
        QVERIFY(!f.evidence.isEmpty());
        QVERIFY(f.evidence.size() <= Finding::maxEvidence);
    }
    for (qsizetype i = 1; i < d.findings.size(); ++i) // sorted by severity, worst first
        QVERIFY(d.findings[i - 1].severity >= d.findings[i].severity);
}

void TestDiagnoser::sameResultFromFileTextAndDevice_data() {
    QTest::addColumn<QString>("name");
    const QStringList files = QDir(QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs")).entryList({u"*.log"_s});
    QVERIFY(files.size() >= 10);
    for (const QString &f : files)
        QTest::newRow(qPrintable(f)) << f;
}

void TestDiagnoser::sameResultFromFileTextAndDevice() {
    QFETCH(QString, name);
    const QString path = QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs/") + name;
    const QByteArray data = readData(name);
    const Diagnoser diagnoser;
    QString error;
    const QJsonObject fromFile = diagnoser.diagnoseFile(path, {}, &error).toJson();
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QJsonObject fromText = diagnoser.diagnoseText(data).toJson();
    QBuffer buffer;
    buffer.setData(data);
    QVERIFY(buffer.open(QIODevice::ReadOnly));
    const QJsonObject fromDevice = diagnoser.diagnoseDevice(&buffer, {}, &error).toJson();
    QCOMPARE(fromFile, fromText);
    QCOMPARE(fromDevice, fromText);
    QCOMPARE(fromText.value(u"lines_read"_s).toInteger(), data.count('\n') + (data.endsWith('\n') ? 0 : 1));
}

void TestDiagnoser::ranksMergeIntoOneFinding() {
    QByteArray text;
    for (int rank : {11, 3, 0, 10, 2, 1, 9, 4, 8, 5, 7, 6})
        text += untunedLine(rank) + '\n';
    const Diagnosis d = Diagnoser().diagnoseText(text);
    const Finding *f = d.find(u"moe-untuned:E=128,N=768,device_name=NVIDIA_H200.json@"_s +
                              QString::fromUtf8(kRoot) + u"/triton_3_6_0"_s);
    QVERIFY(f);
    QCOMPARE(f->occurrences, 12);
    QStringList expected;
    for (int r = 0; r < 12; ++r)
        expected << u"TP"_s + QString::number(r);
    QCOMPARE(f->sources, expected); // natural order: TP2 before TP10
    QCOMPARE(f->evidence.size(), 12);
    QCOMPARE(f->evidence.front().line, 1);
    QCOMPARE(f->severity, Severity::Warning);
    QVERIFY(f->target);
    QCOMPARE(f->target->upPath(),
             QString::fromUtf8(kRoot) + u"/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200.json"_s);
    // The log shows no down lookup for this shape: no _down file is claimed.
    QCOMPARE(f->target->downPath(), QString());
    QCOMPARE(f->target->tritonVersion->toString(), u"3.6.0"_s);
    QVERIFY(f->advice.contains(QString::fromUtf8(kRoot) + u"/triton_3_6_0/"_s));

    QByteArray many;
    for (int i = 0; i < 50; ++i)
        many += untunedLine(i % 8) + '\n';
    const Diagnosis capped = Diagnoser().diagnoseText(many);
    QCOMPARE(capped.findings.front().occurrences, 50);
    QCOMPARE(capped.findings.front().evidence.size(), Finding::maxEvidence);
}

void TestDiagnoser::evidenceSpansTheMatch() {
    const QByteArray text = "noise\n\x1b[33m" + untunedLine(5) + "\x1b[0m\n";
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QVERIFY(!d.findings.isEmpty());
    const Evidence &e = d.findings.front().evidence.front();
    QCOMPARE(e.line, 2);
    QVERIFY(!e.text.contains(QChar(0x1b))); // cleaned
    QVERIFY(e.text.startsWith(u"[2026-03-14 09:12:50 TP5]"_s));
    QVERIFY(e.text.mid(e.matchStart, e.matchLength).startsWith(u"Using default MoE kernel config."_s));
    QVERIFY(e.text.mid(e.matchStart, e.matchLength).endsWith(u"NVIDIA_H200.json"_s));
}

void TestDiagnoser::wrappedPathIsRejoined() {
    // Cut at every column from inside the root to inside the file name: always the same target.
    const QByteArray line = untunedLine(0);
    const qsizetype from = line.indexOf("found at") + 12;
    for (qsizetype cut = from; cut < line.indexOf(".json") + 4; cut += 7) {
        const QByteArray text = "[2026-03-14 09:12:49 TP0] Capture cuda graph begin.\n" + line.left(cut) +
                                '\n' + line.mid(cut) + "\nnext line\n";
        const Diagnosis d = Diagnoser().diagnoseText(text);
        QCOMPARE(d.targets.size(), 1);
        QCOMPARE(d.targets.front().name.experts, 128);
        QCOMPARE(d.targets.front().name.deviceName, u"NVIDIA_H200"_s);
        QCOMPARE(d.targets.front().tritonFolder, u"triton_3_6_0"_s);
        QCOMPARE(d.findings.front().evidence.front().line, 2);
        QCOMPARE(d.linesRead, 4);
    }
}

void TestDiagnoser::hugeLines() {
    // A 2 MB line, then the warning: found on line 2.
    QByteArray text(2 * 1024 * 1024, 'x');
    text += '\n' + untunedLine(0) + '\n';
    Diagnosis d = Diagnoser().diagnoseText(text);
    QCOMPARE(d.targets.size(), 1);
    QCOMPARE(d.findings.front().evidence.front().line, 2);

    // The warning inside a 600 KB line without any newline: found, evidence cut around it.
    QByteArray inside(300 * 1024, 'y');
    inside += ' ' + untunedLine(3) + ' ';
    inside += QByteArray(300 * 1024, 'z');
    d = Diagnoser().diagnoseText(inside);
    QCOMPARE(d.targets.size(), 1);
    const Evidence &e = d.findings.front().evidence.front();
    QCOMPARE(e.line, 1);
    QVERIFY(e.text.size() <= 2000);
    QVERIFY(e.text.mid(e.matchStart, e.matchLength).startsWith(u"Using default MoE kernel config"_s));
    QCOMPARE(d.linesRead, 1);
}

void TestDiagnoser::fileWindowsKeepLineNumbers() {
    // Larger than one mapped window (16 MB): warnings before, across and after the boundaries.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(u"big.log"_s);
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    const QByteArray filler =
        "[2026-03-14 09:12:50 TP0] Decode batch. #running-req: 12, #token: 3456, token usage: "
        "0.02, cuda graph: True, gen throughput (token/s): 1234.56, #queue-req: 0, \n";
    QList<qint64> expectedLines;
    qint64 line = 0;
    qint64 bytes = 0;
    while (bytes < 33LL * 1024 * 1024) {
        QByteArray chunk;
        for (int i = 0; i < 1000; ++i)
            chunk += filler;
        line += 1000;
        bytes += chunk.size();
        if (line % 37000 == 0 || (bytes / (16 << 20)) != ((bytes + filler.size()) / (16 << 20))) {
            chunk += untunedLine(static_cast<int>(line % 8)) + '\n';
            expectedLines << ++line;
            bytes += untunedLine(0).size() + 1;
        }
        QVERIFY(f.write(chunk) == chunk.size());
    }
    f.close();
    QString error;
    qint64 lastDone = 0;
    int calls = 0;
    const Diagnosis d = Diagnoser().diagnoseFile(
        path,
        [&](qint64 done, qint64 total) {
            ++calls;
            lastDone = done;
            return total == f.size();
        },
        &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(calls >= 3);
    QCOMPARE(lastDone, f.size());
    QCOMPARE(d.linesRead, line);
    QVERIFY(!expectedLines.isEmpty());
    const Finding *untuned = nullptr;
    for (const Finding &fi : d.findings)
        untuned = fi.rule == u"moe-untuned"_s ? &fi : untuned;
    QVERIFY(untuned);
    QCOMPARE(untuned->occurrences, expectedLines.size());
    for (qsizetype i = 0; i < std::min<qsizetype>(expectedLines.size(), Finding::maxEvidence); ++i)
        QCOMPARE(untuned->evidence[i].line, expectedLines[i]);
}

void TestDiagnoser::parallelFileEqualsSinglePass() {
    // Every sample log, and a 4 MB one, read by 1 and by several threads: the same diagnosis.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QStringList paths;
    for (const QString &name : QDir(QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs")).entryList({u"*.log"_s}))
        paths << QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs/") + name;
    const QString big = dir.filePath(u"big.log"_s);
    QFile f(big);
    QVERIFY(f.open(QIODevice::WriteOnly));
    const QByteArray sample = readData(u"sglang-untuned-tp8.log"_s) + readData(u"vllm-v1.log"_s);
    for (qint64 written = 0; written < 4 * 1024 * 1024; written += sample.size())
        f.write(sample);
    f.close();
    paths << big;
    Diagnoser single;
    single.setMaxThreads(1);
    for (const QString &path : std::as_const(paths)) {
        const QJsonObject expected = single.diagnoseFile(path).toJson();
        for (int threads : {2, 3, 4}) {
            Diagnoser parallel;
            parallel.setMaxThreads(threads);
            parallel.setParallelThreshold(1);
            qint64 last = 0;
            const QJsonObject got = parallel
                                        .diagnoseFile(path,
                                                      [&](qint64 done, qint64) {
                                                          last = done;
                                                          return true;
                                                      })
                                        .toJson();
            QCOMPARE(got, expected);
            QCOMPARE(last, QFileInfo(path).size());
        }
    }
}

void TestDiagnoser::cancel() {
    QByteArray text;
    while (text.size() < 9 * 1024 * 1024)
        text += untunedLine(1) + '\n';
    int calls = 0;
    const Diagnosis d = Diagnoser().diagnoseText(text, [&](qint64, qint64) { return ++calls < 2; });
    QVERIFY(d.cancelled);
    QVERIFY(d.bytesRead < text.size());
    QVERIFY(d.summary.startsWith(u"Cancelled after "_s));
}

void TestDiagnoser::missingFileIsAClearError() {
    QString error;
    const Diagnosis d = Diagnoser().diagnoseFile(u"/nonexistent/moetune/server.log"_s, {}, &error);
    QVERIFY(error.contains(u"/nonexistent/moetune/server.log"_s));
    QVERIFY(d.findings.isEmpty());
    error.clear();
    Diagnoser().diagnoseFile(QStringLiteral(MOETUNE_TEST_DATA_DIR), {}, &error);
    QVERIFY(error.contains(u"is a folder"_s));
}

void TestDiagnoser::jsonSchema() {
    const Diagnosis d = Diagnoser().diagnoseText(readData(u"sglang-untuned-tp8.log"_s));
    const QJsonObject j = d.toJson();
    QCOMPARE(j.value(u"schema"_s).toString(), u"moetune.diagnosis/1"_s);
    QCOMPARE(j.value(u"summary"_s).toString(), d.summary);
    QCOMPARE(j.value(u"worst"_s).toString(), u"warning"_s);
    QCOMPARE(j.value(u"counts"_s).toObject().value(u"warning"_s).toInt(), 3);
    QCOMPARE(j.value(u"lines_read"_s).toInteger(), 25);
    const QJsonArray findings = j.value(u"findings"_s).toArray();
    QCOMPARE(findings.size(), d.findings.size());
    const QJsonObject first = findings.first().toObject();
    for (const char *key : {"id", "rule", "severity", "title", "explanation", "advice", "occurrences",
                            "sources", "evidence", "target"})
        QVERIFY2(first.contains(QLatin1StringView(key)), key);
    const QJsonObject ev = first.value(u"evidence"_s).toArray().first().toObject();
    QCOMPARE(ev.value(u"line"_s).toInt(), 2);
    QVERIFY(ev.value(u"match_length"_s).toInt() > 0);
    const QJsonObject target = j.value(u"targets"_s).toArray().first().toObject();
    QCOMPARE(target.value(u"framework"_s).toString(), u"sglang"_s);
    QCOMPARE(target.value(u"E"_s).toInt(), 128);
    QCOMPARE(target.value(u"N"_s).toInt(), 768);
    QCOMPARE(target.value(u"dtype"_s), QJsonValue());
    QCOMPARE(target.value(u"triton_version"_s).toString(), u"3.6.0"_s);
    QCOMPARE(target.value(u"triton_folder_missing"_s).toBool(), false); // only a listing says so
    QCOMPARE(target.value(u"no_config_loaded"_s).toBool(), true);
    QCOMPARE(target.value(u"down_path"_s).toString(),
             QString::fromUtf8(kRoot) + u"/triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200_down.json"_s);
    QCOMPARE(target.value(u"up_missing"_s).toBool(), true);
    QCOMPARE(target.value(u"down_missing"_s).toBool(), true);
    const Diagnosis empty = Diagnoser().diagnoseText({});
    QCOMPARE(empty.toJson().value(u"worst"_s), QJsonValue());
    QCOMPARE(empty.toJson().value(u"findings"_s).toArray().size(), 0);
}

// writeJson (what moetune-cli diagnose --format json prints, in pieces) gives exactly the bytes of the
// whole document, for every test log, an empty diagnosis and one with a hostile summary.
void TestDiagnoser::jsonStreamedSameBytes() {
    const QDir dir(QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs"));
    QList<Diagnosis> cases{Diagnoser().diagnoseText({})};
    for (const QString &name : dir.entryList(QDir::Files))
        cases.append(Diagnoser().diagnoseText(readData(name)));
    const QByteArray two = untunedLine(0) + '\n' + untunedLine(1, "E=8,N=64,device_name=X");
    Diagnosis hostile = Diagnoser().diagnoseText(two);
    hostile.summary = u"\n    \"findings\": [\n    ] and \n    \"targets\": [\n    ] \u202E \x1b[2J"_s;
    cases.append(hostile);
    QVERIFY(cases.size() > 10);
    int withFindings = 0;
    for (const Diagnosis &d : cases) {
        const QByteArray whole = QJsonDocument(d.toJson()).toJson(QJsonDocument::Indented);
        QByteArray streamed;
        int pieces = 0;
        d.writeJson([&](QByteArrayView piece) {
            streamed += piece;
            ++pieces;
        });
        QCOMPARE(streamed, whole);
        QVERIFY(pieces >= 3 + d.findings.size() + d.targets.size()); // one piece per element
        withFindings += d.findings.isEmpty() ? 0 : 1;
    }
    QVERIFY(withFindings > 5);
}

void TestDiagnoser::markdown() {
    const Diagnosis d = Diagnoser().diagnoseText(readData(u"sglang-fallback-fp8.log"_s));
    const QString md = d.toMarkdown();
    QVERIFY(md.startsWith(u"# moetune diagnosis\n\n**"_s + d.summary + u"**"_s));
    for (const Finding &f : d.findings) {
        QVERIFY(md.contains(f.title));
        QVERIFY(d.findingMarkdown(f).contains(f.advice));
    }
    QVERIFY(md.contains(u"| SGLang | E=257, N=256, fp8_w8a8, block [128, 128] | NVIDIA_H200 | triton_3_6_0 "
                        u"(nothing loaded) | "
                        "fell back | fell back |"_s));
    QVERIFY(d.findingMarkdown(d.findings.front()).contains(u"Seen 4 times on TP0, TP1, TP2, TP3"_s));
}

void TestDiagnoser::demoLogInResources() {
    ensureCoreResources();
    QFile f(demoLogPath());
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    QVERIFY(text.count('\n') >= 50);
    // The server of the demo workspace's runs (Qwen3-30B-A3B TP1 on one H200: E=128, N=768), one story.
    QVERIFY(text.contains("model_path='Qwen/Qwen3-30B-A3B'") && text.contains("tp_size=1,"));
    const Diagnosis d = Diagnoser().diagnoseText(text);
    QCOMPARE(d.summary,
             u"2 MoE configs untuned on NVIDIA_H200 under Triton 3.6.0: 1 tuning job (E=128, N=768, bf16), "
             "up and down; up fell back to triton_3_4_0; no config loaded from triton_3_6_0"_s +
                 kAssumed);
    QCOMPARE(d.targets.size(), 1);
    QCOMPARE(d.count(Severity::Warning), 3);
    QVERIFY(d.count(Severity::Info) >= 5);
}

QTEST_GUILESS_MAIN(TestDiagnoser)
#include "tst_diagnoser.moc"
