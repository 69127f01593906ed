// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Which MoE kernel a server start runs (docs/servers.md section 9), from the data rules with "moe_kernel" and
// the "moe_backends" table: every wording of both servers with their real prefixes
// (docs/servers.md section 6), quoted and unquoted names, ranks merged into one finding per start, and what
// it does to the config lookups.
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/moebackend.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace moetune;
using namespace Qt::StringLiterals;

Q_DECLARE_METATYPE(moetune::Severity)

namespace {

const QByteArray kVllmConfigs =
    "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/configs/";
const QByteArray kSglConfigs =
    "/sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_6_0/";

QByteArray vllmUntuned(const QByteArray &name, const QByteArray &proc = "(EngineCore_DP0 pid=950)") {
    return proc +
           " WARNING 05-02 11:02:31 [fused_moe.py:1108] Using default MoE config. Performance might be "
           "sub-optimal! Config file not found at ['" +
           kVllmConfigs + name + ".json']\n";
}

QByteArray sglUntuned(const QByteArray &name, int rank = 0) {
    return "[2026-05-11 09:03:10 TP" + QByteArray::number(rank) +
           "] Using default MoE kernel config. Performance might be sub-optimal! Config file not found at " +
           kSglConfigs + name +
           ".json, you can create them with "
           "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n";
}

QByteArray readLog(const QString &name) {
    QFile f(QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing test log %s", qPrintable(name));
    return f.readAll();
}

// "backend|scheme|triton_configs" of each kernel of the latest start.
QStringList kernelKeys(const Diagnosis &d) {
    QStringList out;
    for (const MoeKernelUse &u : d.starts.back().moeKernels)
        out << u.backend + u'|' + u.scheme + u'|' + MoeBackend::configsName(u.configs);
    return out;
}

const Finding *kernelFinding(const Diagnosis &d) {
    for (const Finding &f : d.findings) {
        if (f.rule == u"moe-kernel"_s && d.isLatest(f))
            return &f;
    }
    return nullptr;
}

const Finding *lookup(const Diagnosis &d) {
    for (const Finding &f : d.findings) {
        if ((f.rule == u"moe-untuned"_s || f.rule == u"moe-down-missing"_s) && d.isLatest(f))
            return &f;
    }
    return nullptr;
}

} // namespace

class TestMoeKernel : public QObject {
    Q_OBJECT

private slots:
    void wordings_data();
    void wordings();
    void lookups_data();
    void lookups();
    void ranksMergeIntoOneFindingPerStart();
    void twoStarts();
    void sampleLogs_data();
    void sampleLogs();
    void userBackendNames();
    void brokenBackendEntries();
    void normalise_data();
    void normalise();
};

void TestMoeKernel::wordings_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("kernel"); // backend|scheme|triton_configs
    QTest::addColumn<QString>("title");

    const QByteArray list =
        " out of potential backends: ['AITER', 'FLASHINFER_TRTLLM', 'FLASHINFER_CUTLASS', "
        "'DEEPGEMM', 'VLLM_CUTLASS', 'TRITON', 'MARLIN'].";
    // vLLM: the backend oracle, one line per worker, in each prefix form of docs/servers.md section 6.
    QTest::newRow("vllm TRITON Unquantized, v1 prefix")
        << QByteArray(
               "(EngineCore_DP0 pid=4242) INFO 03-14 09:13:09 [unquantized.py:181] Using TRITON Unquantized "
               "MoE backend out of potential backends: ['TRITON', 'BATCHED_TRITON', 'FlashInfer TRTLLM', "
               "'FlashInfer CUTLASS']")
        << u"TRITON|Unquantized|used"_s
        << u"MoE kernel TRITON (Unquantized): its Triton config files decide its speed"_s;
    QTest::newRow("vllm TritonExperts")
        << QByteArray(
               "(Worker_TP0 pid=42) INFO 03-14 09:13:09 [layer.py:402] Using TritonExperts MoE backend")
        << u"TritonExperts||used"_s
        << u"MoE kernel TritonExperts: its Triton config files decide its speed"_s;
    QTest::newRow("vllm MARLIN Fp8, nested worker prefix")
        << QByteArray(
               "(EngineCore_DP0 pid=40) (Worker_TP0 pid=42) INFO 06-14 04:57:13 [fp8.py:419] Using MARLIN "
               "Fp8 MoE backend" +
               list)
        << u"MARLIN|Fp8|unused"_s
        << u"MoE kernel MARLIN (Fp8): no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("vllm FLASHINFER_TRTLLM Fp8, old prefix")
        << QByteArray("INFO 06-14 04:57:13 fp8.py:411] Using FLASHINFER_TRTLLM Fp8 MoE backend" + list)
        << u"FLASHINFER_TRTLLM|Fp8|unused"_s
        << u"MoE kernel FLASHINFER_TRTLLM (Fp8): no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("vllm 'FLASHINFER_CUTLASS' NvFp4, quoted, behind a wrapper tag")
        << QByteArray(
               "[Stage-1] (EngineCore pid=207) INFO 04-19 10:19:24 [nvfp4.py:203] Using 'FLASHINFER_CUTLASS' "
               "NvFp4 MoE backend out of potential backends: ['FLASHINFER_TRTLLM', 'FLASHINFER_CUTLASS'].")
        << u"FLASHINFER_CUTLASS|NvFp4|unused"_s
        << u"MoE kernel FLASHINFER_CUTLASS (NvFp4): no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("vllm unquoted name with a space (FlashInfer CUTLASS Unquantized)")
        << QByteArray("(EngineCore_DP0 pid=4242) INFO 03-14 09:13:09 [unquantized.py:181] Using FlashInfer "
                      "CUTLASS Unquantized MoE backend" +
                      list)
        << u"FlashInfer CUTLASS|Unquantized|unused"_s
        << u"MoE kernel FlashInfer CUTLASS (Unquantized): no Triton config file is read, tuning would not "
           u"change "
           "its speed"_s;
    QTest::newRow("vllm 'MARLIN' WNA16")
        << QByteArray(
               "(EngineCore_DP0 pid=77) INFO 07-01 10:00:00 [wna16.py:88] Using 'MARLIN' WNA16 MoE backend.")
        << u"MARLIN|WNA16|unused"_s
        << u"MoE kernel MARLIN (WNA16): no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("vllm 'MARLIN' Mxfp4")
        << QByteArray(
               "(EngineCore_DP0 pid=77) INFO 07-01 10:00:00 [mxfp4.py:352] Using 'MARLIN' Mxfp4 MoE backend.")
        << u"MARLIN|Mxfp4|unused"_s
        << u"MoE kernel MARLIN (Mxfp4): no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("vllm 'TRITON' Mxfp4 is OpenAI triton_kernels")
        << QByteArray(
               "(EngineCore_DP0 pid=77) INFO 07-01 10:00:00 [mxfp4.py:352] Using 'TRITON' Mxfp4 MoE backend.")
        << u"TRITON|Mxfp4|unused"_s
        << u"MoE kernel TRITON (Mxfp4): no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("vllm CPU Fp8")
        << QByteArray("(EngineCore_DP0 pid=77) INFO 07-01 10:00:00 [fp8.py:419] Using CPU Fp8 MoE backend" +
                      list)
        << u"CPU|Fp8|unused"_s
        << u"MoE kernel CPU (Fp8): no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("vllm DEEPGEMM Fp8")
        << QByteArray(
               "(EngineCore_DP0 pid=950) INFO 05-02 11:01:20 [fp8.py:411] Using DEEPGEMM Fp8 MoE backend" +
               list)
        << u"DEEPGEMM|Fp8|partly"_s
        << u"MoE kernel DEEPGEMM (Fp8): Triton config files matter only for the shapes it hands to Triton"_s;
    // Issue 41: vLLM before its backend oracle (quoted from the upstream source line by line).
    // vllm/model_executor/layers/quantization/fp8.py, get_fp8_moe_backend():
    //   logger.info_once("Using Triton backend for FP8 MoE")
    QTest::newRow("vllm legacy: Using Triton backend for FP8 MoE (fp8.py)")
        << QByteArray(
               "(EngineCore_DP0 pid=192) INFO 03-18 11:13:38 [fp8.py:205] Using Triton backend for FP8 MoE")
        << u"Triton|FP8|used"_s << u"MoE kernel Triton (FP8): its Triton config files decide its speed"_s;
    //   logger.info_once("Using Marlin backend for FP8 MoE")
    QTest::newRow("vllm legacy: Using Marlin backend for FP8 MoE (fp8.py)")
        << QByteArray(
               "(EngineCore_DP0 pid=192) INFO 03-18 11:13:38 [fp8.py:170] Using Marlin backend for FP8 MoE")
        << u"Marlin|FP8|unused"_s
        << u"MoE kernel Marlin (FP8): no Triton config file is read, tuning would not change its speed"_s;
    //   logger.info_once("Using DeepGEMM backend for FP8 MoE", scope="local")
    QTest::newRow("vllm legacy: Using DeepGEMM backend for FP8 MoE (fp8.py)")
        << QByteArray(
               "(Worker_TP0 pid=311) INFO 03-18 11:13:38 [fp8.py:181] Using DeepGEMM backend for FP8 MoE")
        << u"DeepGEMM|FP8|partly"_s
        << u"MoE kernel DeepGEMM (FP8): Triton config files matter only for the shapes it hands to Triton"_s;
    //   logger.info_once("Using Cutlass BlockScaled GroupedGemm backend for FP8 MoE", scope="local")
    QTest::newRow("vllm legacy: Cutlass BlockScaled GroupedGemm for FP8 MoE (fp8.py)")
        << QByteArray("(Worker_TP0 pid=311) INFO 03-18 11:13:38 [fp8.py:192] Using Cutlass BlockScaled "
                      "GroupedGemm backend for FP8 MoE")
        << u"Cutlass BlockScaled GroupedGemm|FP8|unused"_s
        << u"MoE kernel Cutlass BlockScaled GroupedGemm (FP8): no Triton config file is read, tuning would "
           u"not "
           "change its speed"_s;
    //   logger.info_once("Using FlashInfer FP8 MoE TRTLLM backend for SM100")
    QTest::newRow("vllm legacy: FlashInfer FP8 MoE TRTLLM backend for SM100 (fp8.py)")
        << QByteArray("(Worker_TP0 pid=311) INFO 03-18 11:13:38 [fp8.py:150] Using FlashInfer FP8 MoE TRTLLM "
                      "backend for SM100")
        << u"FlashInfer TRTLLM|FP8|unused"_s
        << u"MoE kernel FlashInfer TRTLLM (FP8): no Triton config file is read, tuning would not change its "
           "speed"_s;
    // vllm/model_executor/layers/quantization/utils/nvfp4_moe_support.py, select_nvfp4_moe_backend():
    //   f"Using {backend.value} backend for NvFp4 MoE" with MARLIN = "vLLM MARLIN"
    QTest::newRow("vllm legacy: Using vLLM MARLIN backend for NvFp4 MoE (nvfp4_moe_support.py)")
        << QByteArray(
               "(EngineCore_DP0 pid=77) INFO 11-02 10:00:00 [nvfp4_moe_support.py:70] Using vLLM MARLIN "
               "backend for NvFp4 MoE")
        << u"vLLM MARLIN|NvFp4|unused"_s
        << u"MoE kernel vLLM MARLIN (NvFp4): no Triton config file is read, tuning would not change its "
           "speed"_s;
    //   "Requested FlashInfer backend for NvFp4 MoE, but it's not available. Falling back to %s for NvFp4
    //   MoE" with VLLM_CUTLASS = "vLLM CUTASS" (sic)
    QTest::newRow("vllm legacy: Falling back to vLLM CUTASS for NvFp4 MoE (nvfp4_moe_support.py)")
        << QByteArray(
               "(EngineCore_DP0 pid=77) WARNING 11-02 10:00:00 [nvfp4_moe_support.py:75] Requested "
               "FlashInfer backend for NvFp4 MoE, but it's not available. Falling back to vLLM CUTASS for "
               "NvFp4 MoE")
        << u"vLLM CUTASS|NvFp4|unused"_s
        << u"MoE kernel vLLM CUTASS (NvFp4): no Triton config file is read, tuning would not change its "
           "speed"_s;
    // vllm/model_executor/layers/quantization/mxfp4.py, get_mxfp4_backend():
    //   logger.info_once("Using FlashInfer MXFP4 MXFP8 CUTLASS backend for SM100")
    QTest::newRow("vllm legacy: FlashInfer MXFP4 MXFP8 CUTLASS backend for SM100 (mxfp4.py)")
        << QByteArray(
               "(EngineCore_DP0 pid=77) INFO 08-06 10:00:00 [mxfp4.py:110] Using FlashInfer MXFP4 MXFP8 "
               "CUTLASS backend for SM100")
        << u"FlashInfer MXFP8 CUTLASS|MXFP4|unused"_s
        << u"MoE kernel FlashInfer MXFP8 CUTLASS (MXFP4): no Triton config file is read, tuning would not "
           "change its speed"_s;
    //   logger.info_once("Using Triton backend") -- OpenAI's triton_kernels, not the fused-MoE kernel
    QTest::newRow("vllm legacy: mxfp4.py Using Triton backend is triton_kernels")
        << QByteArray("(EngineCore_DP0 pid=77) INFO 08-06 10:00:00 [mxfp4.py:140] Using Triton backend")
        << u"Triton|Mxfp4|unused"_s
        << u"MoE kernel Triton (Mxfp4): no Triton config file is read, tuning would not change its speed"_s;
    // SGLang: the printed server_args, and the model-specific switches.
    QTest::newRow("sglang server_args auto")
        << QByteArray(
               "[2026-05-10 08:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-30B-A3B', tp_size=2, "
               "moe_runner_backend='auto', mem_fraction_static=0.85)")
        << u"auto||auto"_s
        << u"MoE kernel auto: chosen by SGLang, the Triton fused-MoE kernel on Hopper/Ampere"_s;
    QTest::newRow("sglang server_args triton")
        << QByteArray(
               "[2026-05-10 08:00:00] server_args=ServerArgs(model_path='m', moe_runner_backend='triton')")
        << u"triton||used"_s << u"MoE kernel triton: its Triton config files decide its speed"_s;
    QTest::newRow("sglang server_args flashinfer_cutlass")
        << QByteArray("[2026-05-10 08:00:00] server_args=ServerArgs(model_path='m', "
                      "moe_runner_backend=\"flashinfer_cutlass\")")
        << u"flashinfer_cutlass||unused"_s
        << u"MoE kernel flashinfer_cutlass: no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("sglang sm100 switch, level and file prefix")
        << QByteArray(
               "[2026-05-11 09:00:01 TP0] INFO server_args.py:1204: Use flashinfer_trtllm as MoE runner "
               "backend on sm100 for DeepseekV3ForCausalLM")
        << u"flashinfer_trtllm||unused"_s
        << u"MoE kernel flashinfer_trtllm: no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("sglang GPT-OSS triton_kernels")
        << QByteArray("[2026-05-10 08:00:05 TP0] Detected GPT-OSS model, enabling triton_kernels MOE kernel.")
        << u"triton_kernels||unused"_s
        << u"MoE kernel triton_kernels: no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("sglang GPT-OSS FlashInfer MXFP4 on SM100")
        << QByteArray("[2026-05-10 08:00:05] Detected SM100 and MXFP4 quantization format for GPT-OSS model, "
                      "enabling FlashInfer MXFP4 MOE kernel.")
        << u"FlashInfer MXFP4||unused"_s
        << u"MoE kernel FlashInfer MXFP4: no Triton config file is read, tuning would not change its speed"_s;
    QTest::newRow("sglang deterministic inference")
        << QByteArray(
               "[2026-05-12 11:00:00] server_args=ServerArgs(model_path='m', moe_runner_backend='auto', "
               "enable_deterministic_inference=True)")
        << u"deterministic||ignored"_s
        << u"MoE kernel deterministic: config files ignored, tuning changes nothing"_s;
    QTest::newRow("a name no rule knows")
        << QByteArray(
               "(EngineCore_DP0 pid=77) INFO 07-01 10:00:00 [mxfp4.py:352] Using 'B12X' Mxfp4 MoE backend.")
        << u"B12X|Mxfp4|unknown"_s
        << u"MoE kernel B12X (Mxfp4): not in moetune's rules: whether it reads Triton config files is not known"_s;
}

void TestMoeKernel::wordings() {
    QFETCH(QByteArray, line);
    QFETCH(QString, kernel);
    QFETCH(QString, title);
    for (const QByteArray &ending : {QByteArray("\n"), QByteArray("\r\n"), QByteArray()}) {
        const Diagnosis d = Diagnoser().diagnoseText(QByteArray(line + ending));
        QCOMPARE(kernelKeys(d), QStringList{kernel});
        const Finding *f = kernelFinding(d);
        QVERIFY(f);
        QCOMPARE(f->title, title);
        QCOMPARE(f->severity, Severity::Info);
        QCOMPARE(f->occurrences, 1);
        QVERIFY(!f->explanation.isEmpty() && !f->advice.isEmpty());
        QCOMPARE(f->evidence.size(), 1);
        QVERIFY(f->evidence.front().matchLength > 0);
        // The summary says it too.
        QVERIFY2(d.summary.contains(title.mid(u"MoE kernel "_s.size())), qPrintable(d.summary));
        const QJsonArray kernels =
            d.toJson().value(u"starts"_s).toArray().last().toObject().value(u"moe_kernels"_s).toArray();
        QCOMPARE(kernels.size(), 1);
        QCOMPARE(kernels.first().toObject().value(u"triton_configs"_s).toString(), kernel.section(u'|', 2));
    }
}

void TestMoeKernel::lookups_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<Severity>("severity"); // of the missing-config finding
    QTest::addColumn<QString>("titleHas");  // in its title ("" = no note added)
    QTest::addColumn<QString>("explanationHas");
    QTest::addColumn<QString>("summaryHas");

    const QByteArray oracle = "(EngineCore_DP0 pid=950) INFO 05-02 11:01:20 [fp8.py:411] Using ";
    const QByteArray list = " MoE backend out of potential backends: ['DEEPGEMM', 'TRITON', 'MARLIN'].\n";
    const QByteArray bf16 = "E=512,N=256,device_name=NVIDIA_H200";
    const QByteArray fp8 = "E=256,N=512,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128]";
    QTest::newRow("no kernel line: Triton assumed")
        << vllmUntuned(bf16) << Severity::Warning << QString()
        << u"The log does not say which MoE kernel runs; moetune assumes the Triton fused-MoE kernel, whose "
           "config lookup printed this line (the default on Hopper/Ampere for bf16)."_s
        << u"; the log does not name the MoE kernel (Triton fused MoE assumed)"_s;
    // Issue 41: a B200 fp8 lookup said "the default on Hopper/Ampere for bf16", true of neither.
    QTest::newRow("no kernel line, B200 fp8: no Hopper/Ampere claim")
        << vllmUntuned("E=256,N=512,device_name=NVIDIA_B200,dtype=fp8_w8a8,block_shape=[128,128]")
        << Severity::Warning << QString()
        << u"whose config lookup printed this line. On NVIDIA_B200 with fp8_w8a8 layers the server may pick "
           "another kernel for the main layers"_s
        << u"; the log does not name the MoE kernel (Triton fused MoE assumed)"_s;
    QTest::newRow("TRITON Unquantized runs the bf16 layers")
        << QByteArray(oracle + "TRITON Unquantized" + list + vllmUntuned(bf16)) << Severity::Warning
        << QString() << QString()
        << u"; MoE kernel TRITON (Unquantized): its Triton config files decide its speed"_s;
    QTest::newRow("MARLIN Fp8, a bf16 lookup: a draft/NextN layer")
        << QByteArray(oracle + "MARLIN Fp8" + list + vllmUntuned(bf16)) << Severity::Info
        << u"(bf16/fp16 layers only; MARLIN runs the others)"_s << u"for example a draft/NextN layer"_s
        << u"MARLIN (Fp8): no Triton config file is read, tuning would not change its speed (the untuned "
           u"configs "
           "concern only layers it does not run: low urgency)"_s;
    QTest::newRow("MARLIN Fp8, an fp8 lookup")
        << QByteArray(oracle + "MARLIN Fp8" + list + vllmUntuned(fp8)) << Severity::Info
        << u"(not the layers MARLIN runs)"_s
        << u"MARLIN runs the fp8 MoE layers (line 1) and reads no Triton config file for them"_s
        << u"low urgency"_s;
    QTest::newRow("DEEPGEMM with the fallback line of this shape")
        << QByteArray(oracle + "DEEPGEMM Fp8" + list +
                      "(EngineCore_DP0 pid=950) DEBUG 05-02 11:02:31 [deep_gemm_moe.py:89] DeepGemm disabled "
                      "for N <= 512. "
                      "M: 16, N: 512, K: 7168. This means we will fallback to triton for this specific shape "
                      "for further "
                      "speed up.\n" +
                      vllmUntuned(fp8))
        << Severity::Warning << QString()
        << u"the log shows it handing this shape (N=512) to the Triton fused-MoE "
           "kernel (line 2)"_s
        << u"MoE kernel DEEPGEMM (Fp8)"_s;
    QTest::newRow("DEEPGEMM, another shape")
        << QByteArray(oracle + "DEEPGEMM Fp8" + list +
                      vllmUntuned("E=256,N=1024,device_name=NVIDIA_H200,dtype=fp8_w8a8"))
        << Severity::Info << u"(only shapes DEEPGEMM hands to Triton)"_s
        << u"it hands the Triton fused-MoE kernel only the shapes it rejects"_s << u"low urgency"_s;
    QTest::newRow("sglang flashinfer_trtllm on sm100, the bf16 NextN layer")
        << QByteArray(
               "[2026-05-11 09:00:00] server_args=ServerArgs(model_path='m', moe_runner_backend='auto')\n"
               "[2026-05-11 09:00:01] Use flashinfer_trtllm as MoE runner backend on sm100 for "
               "DeepseekV3ForCausalLM\n" +
               sglUntuned("E=256,N=512,device_name=NVIDIA_B200"))
        << Severity::Info << u"(not the layers flashinfer_trtllm runs)"_s
        << u"for example a draft/NextN layer"_s
        << u"MoE kernel flashinfer_trtllm: no Triton config file is read"_s;
    QTest::newRow("sglang auto: the Triton lookups count")
        << QByteArray(
               "[2026-05-11 09:00:00] server_args=ServerArgs(model_path='m', moe_runner_backend='auto')\n" +
               sglUntuned("E=128,N=768,device_name=NVIDIA_H200"))
        << Severity::Warning << QString() << QString()
        << u"; MoE kernel auto: chosen by SGLang, the Triton fused-MoE kernel on Hopper/Ampere"_s;
    QTest::newRow("sglang deterministic: the files are ignored")
        << QByteArray(
               "[2026-05-11 09:00:00] server_args=ServerArgs(model_path='m', moe_runner_backend='auto', "
               "enable_deterministic_inference=True)\n" +
               sglUntuned("E=128,N=768,device_name=NVIDIA_H200"))
        << Severity::Info << u"(ignored: deterministic inference)"_s
        << u"the loader ignores every tuned config"_s << u"config files ignored, tuning changes nothing"_s;
    QTest::newRow("a backend no rule knows")
        << QByteArray(
               "[2026-05-11 09:00:00] server_args=ServerArgs(model_path='m', moe_runner_backend='b12x')\n" +
               sglUntuned("E=128,N=768,device_name=NVIDIA_H200"))
        << Severity::Warning << QString() << u"which no rule file describes"_s << u"is not known"_s;
}

void TestMoeKernel::lookups() {
    QFETCH(QByteArray, text);
    QFETCH(Severity, severity);
    QFETCH(QString, titleHas);
    QFETCH(QString, explanationHas);
    QFETCH(QString, summaryHas);
    const Diagnosis d = Diagnoser().diagnoseText(text);
    const Finding *f = lookup(d);
    QVERIFY(f);
    QCOMPARE(f->severity, severity);
    if (!titleHas.isEmpty())
        QVERIFY2(f->title.contains(titleHas), qPrintable(f->title));
    else
        QVERIFY2(!f->title.contains(u'('), qPrintable(f->title));
    if (!explanationHas.isEmpty())
        QVERIFY2(f->explanation.contains(explanationHas), qPrintable(f->explanation));
    QVERIFY2(d.summary.contains(summaryHas), qPrintable(d.summary));
    // The target is found wherever the lookup is: tuning it still helps the layers that run Triton.
    QCOMPARE(d.targets.size(), 1);
    // The folder finding of SGLang's lookups follows the lookup's urgency.
    for (const Finding &g : d.findings) {
        if (g.rule == u"triton-folder-no-config"_s)
            QCOMPARE(g.severity, severity);
    }
    for (qsizetype i = 1; i < d.findings.size(); ++i) // still sorted worst first
        QVERIFY(d.findings[i - 1].severity >= d.findings[i].severity);
}

void TestMoeKernel::ranksMergeIntoOneFindingPerStart() {
    QByteArray text =
        "(APIServer pid=3121) INFO 06-14 04:56:04 [api_server.py:1839] vLLM API server version 0.21.0\n";
    for (int rank : {3, 0, 7, 1, 6, 2, 5, 4})
        text += "(EngineCore_DP0 pid=40) (Worker_TP" + QByteArray::number(rank) +
                " pid=" + QByteArray::number(42 + rank) +
                ") INFO 06-14 04:57:13 [fp8.py:419] Using MARLIN Fp8 MoE backend out of potential backends: "
                "['MARLIN'].\n";
    for (int rank = 0; rank < 8; ++rank)
        text += vllmUntuned("E=512,N=256,device_name=NVIDIA_H200",
                            "(EngineCore_DP0 pid=40) (Worker_TP" + QByteArray::number(rank) +
                                " pid=" + QByteArray::number(42 + rank) + ")");
    const Diagnosis d = Diagnoser().diagnoseText(text);
    int kernelFindings = 0;
    for (const Finding &f : d.findings)
        kernelFindings += f.rule == u"moe-kernel"_s ? 1 : 0;
    QCOMPARE(kernelFindings, 1);
    const Finding *k = kernelFinding(d);
    QCOMPARE(k->occurrences, 8);
    QCOMPARE(k->evidence.size(), 8);
    QCOMPARE(k->sources.size(), 8);
    QVERIFY2(k->sources.front().startsWith(u"Worker_TP0"_s), qPrintable(k->sources.join(u", "_s)));
    QCOMPARE(kernelKeys(d), QStringList{u"MARLIN|Fp8|unused"_s});
    QCOMPARE(d.starts.back().moeKernels.front().line, 2);
    QCOMPARE(lookup(d)->severity, Severity::Info);
    QCOMPARE(d.worst(), Severity::Info);
}

void TestMoeKernel::twoStarts() {
    const Diagnosis d = Diagnoser().diagnoseText(readLog(u"sglang-restart-deterministic.log"_s));
    QCOMPARE(d.starts.size(), 2);
    QCOMPARE(d.starts[0].moeKernels.size(), 1);
    QCOMPARE(d.starts[0].moeKernels.front().configs, MoeBackend::Configs::Auto);
    QCOMPARE(d.starts[1].moeKernels.size(), 1);
    QCOMPARE(d.starts[1].moeKernels.front().configs, MoeBackend::Configs::Ignored);
    QStringList kernels;
    for (const Finding &f : d.findings) {
        if (f.rule == u"moe-kernel"_s)
            kernels << f.id + u": "_s + f.title;
        if (f.rule == u"moe-untuned"_s) // auto in start 1: a warning there; deterministic in start 2: info
            QCOMPARE(f.severity, f.start == 1 ? Severity::Warning : Severity::Info);
    }
    QCOMPARE(kernels,
             (QStringList{u"moe-kernel: MoE kernel deterministic: config files ignored, tuning changes "
                          "nothing"_s,
                          u"moe-kernel@start1: MoE kernel auto: chosen by SGLang, the Triton fused-MoE "
                          "kernel on Hopper/Ampere (earlier start 1 of 2)"_s}));
    QVERIFY2(d.summary.startsWith(u"Latest of 2 server starts (from line 5): 1 MoE config untuned"_s),
             qPrintable(d.summary));
    QVERIFY2(d.summary.contains(u"MoE kernel deterministic: config files ignored"_s), qPrintable(d.summary));
}

void TestMoeKernel::sampleLogs_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("kernels");
    QTest::addColumn<int>("warnings");
    QTest::addColumn<int>("targets");
    QTest::newRow("vllm MARLIN fp8 + MTP bf16 layer")
        << u"vllm-marlin-fp8-mtp.log"_s << QStringList{u"MARLIN|Fp8|unused"_s} << 0 << 1;
    QTest::newRow("vllm TRITON bf16")
        << u"vllm-triton-bf16.log"_s << QStringList{u"TRITON|Unquantized|used"_s} << 1 << 1;
    QTest::newRow("vllm DEEPGEMM + fallback")
        << u"vllm-deepgemm-fallback.log"_s << QStringList{u"DEEPGEMM|Fp8|partly"_s} << 1 << 2;
    QTest::newRow("vllm NvFp4 FLASHINFER_CUTLASS")
        << u"vllm-nvfp4-cutlass.log"_s << QStringList{u"FLASHINFER_CUTLASS|NvFp4|unused"_s} << 0 << 0;
    QTest::newRow("sglang GPT-OSS triton_kernels")
        << u"sglang-gptoss-triton-kernels.log"_s << QStringList{u"triton_kernels||unused"_s} << 0 << 0;
    QTest::newRow("sglang sm100 NextN")
        << u"sglang-sm100-nextn.log"_s << QStringList{u"flashinfer_trtllm||unused"_s} << 0 << 1;
}

void TestMoeKernel::sampleLogs() {
    QFETCH(QString, file);
    QFETCH(QStringList, kernels);
    QFETCH(int, warnings);
    QFETCH(int, targets);
    const Diagnosis d = Diagnoser().diagnoseText(readLog(file));
    QCOMPARE(kernelKeys(d), kernels);
    QCOMPARE(d.count(Severity::Warning), warnings);
    QCOMPARE(d.targets.size(), targets);
    const Finding *k = kernelFinding(d);
    QVERIFY(k);
    QVERIFY(!k->sources.isEmpty());
    // A file read in windows by several threads gives the same kernels and lines.
    Diagnoser parallel;
    parallel.setMaxThreads(3);
    parallel.setParallelThreshold(1);
    QString error;
    const Diagnosis p =
        parallel.diagnoseFile(QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs/") + file, {}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(p.toJson(), d.toJson());
}

void TestMoeKernel::userBackendNames() {
    // A backend name unknown to the built-in table is taught by a user rule file that holds only names.
    const QByteArray text =
        "(EngineCore_DP0 pid=77) INFO 07-01 10:00:00 [mxfp4.py:352] Using 'B12X' Mxfp4 MoE backend.\n"
        "(EngineCore_DP0 pid=77) INFO 07-01 10:00:01 [fp8.py:419] Using MARLIN Fp8 MoE backend out of "
        "potential "
        "backends: ['MARLIN'].\n" +
        vllmUntuned("E=256,N=512,device_name=NVIDIA_H200,dtype=fp8_w8a8", "(EngineCore_DP0 pid=77)");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile f(dir.filePath(u"50-site.json"_s));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"moe_backends": [
        {"name": "b12x", "triton_configs": "unused", "kernel": "the B12X kernel"},
        {"name": "MARLIN", "scheme": "fp8", "triton_configs": "used", "note": "A site patch runs Triton here."}]})");
    f.close();
    QStringList errors;
    const RuleSet rules = RuleSet::withUserRules(dir.path(), &errors);
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
    QCOMPARE(rules.size(), RuleSet::builtin().size()); // names only: no rule added
    const Diagnosis before = Diagnoser().diagnoseText(text);
    QCOMPARE(kernelKeys(before), (QStringList{u"B12X|Mxfp4|unknown"_s, u"MARLIN|Fp8|unused"_s}));
    QCOMPARE(lookup(before)->severity, Severity::Info);
    const Diagnosis after = Diagnoser(rules).diagnoseText(text);
    QCOMPARE(kernelKeys(after), (QStringList{u"B12X|Mxfp4|unused"_s, u"MARLIN|Fp8|used"_s}));
    QCOMPARE(lookup(after)->severity, Severity::Warning); // the scheme entry wins for the fp8 layers
    const Finding *k = kernelFinding(after);
    QCOMPARE(k->title, u"MoE kernels: B12X (Mxfp4), MARLIN (Fp8)"_s);
    QVERIFY2(k->explanation.contains(u"The B12X kernel runs the mxfp4 MoE layers: no Triton config file"_s),
             qPrintable(k->explanation));
    QVERIFY2(k->explanation.contains(u"A site patch runs Triton here."_s), qPrintable(k->explanation));
}

void TestMoeKernel::brokenBackendEntries() {
    QStringList errors;
    const QList<MoeBackend> b = RuleSet::parseBackends(R"({"moe_backends": [
        {"name": "GOOD", "triton_configs": "unused"},
        {"name": "BAD", "triton_configs": "sometimes"},
        {"triton_configs": "used"},
        "MARLIN",
        {"name": 7, "triton_configs": "used"}]})",
                                                       u"site.json"_s, &errors);
    QCOMPARE(b.size(), 1);
    QCOMPARE(b.front().name, u"GOOD"_s);
    QCOMPARE(errors.size(), 4);
    QVERIFY2(errors[0].contains(u"triton_configs \"sometimes\" is not one of used, unused, partly, auto, "
                                "ignored"_s),
             qPrintable(errors[0]));
    QVERIFY(errors[1].contains(u"\"name\" is missing"_s));
    QVERIFY(errors[2].contains(u"not an object"_s));
    QVERIFY(errors[3].contains(u"must be a string"_s));
    for (const QString &e : std::as_const(errors))
        QVERIFY2(e.startsWith(u"site.json: "_s) && e.contains(u"skipped"_s), qPrintable(e));
    QStringList none;
    QVERIFY(RuleSet::parseBackends(R"({"moe_backends": {"name": "X"}})", u"x.json"_s, &none).isEmpty());
    QCOMPARE(none.size(), 1);
    // A kernel rule's optional fields belong to a kernel rule.
    QString error;
    QVERIFY(!Rule::fromJson(QJsonObject{{u"id"_s, u"x"_s},
                                        {u"prefilter"_s, u"abcd"_s},
                                        {u"pattern"_s, u"a"_s},
                                        {u"title"_s, u"t"_s},
                                        {u"moe_scheme"_s, u"{1}"_s}},
                            &error));
    QVERIFY2(error.contains(u"give its moe_kernel"_s), qPrintable(error));
    // Every built-in name is well formed and unique per scheme.
    QSet<QString> seen;
    const RuleSet builtin = RuleSet::builtin(); // held: moeBackends() refers into it
    for (const MoeBackend &m : builtin.moeBackends()) {
        QVERIFY2(!seen.contains(m.name + u'/' + m.scheme), qPrintable(m.name));
        seen.insert(m.name + u'/' + m.scheme);
        QVERIFY(m.configs != MoeBackend::Configs::Unknown);
    }
    QVERIFY(seen.size() >= 20);
}

void TestMoeKernel::normalise_data() {
    QTest::addColumn<QString>("printed");
    QTest::addColumn<QString>("name");
    QTest::newRow("unquoted") << u"FLASHINFER_TRTLLM"_s << u"FLASHINFER_TRTLLM"_s;
    QTest::newRow("quoted") << u"'FLASHINFER_CUTLASS'"_s << u"FLASHINFER_CUTLASS"_s;
    QTest::newRow("spaced, mixed case") << u"FlashInfer TRTLLM"_s << u"FLASHINFER_TRTLLM"_s;
    QTest::newRow("sglang lower case") << u"flashinfer_trtllm"_s << u"FLASHINFER_TRTLLM"_s;
    QTest::newRow("hyphen, double quotes") << u"\"deep-gemm\""_s << u"DEEP_GEMM"_s;
    QTest::newRow("empty") << QString() << QString();
}

void TestMoeKernel::normalise() {
    QFETCH(QString, printed);
    QFETCH(QString, name);
    QCOMPARE(MoeBackend::normalise(printed), name);
}

QTEST_GUILESS_MAIN(TestMoeKernel)
#include "tst_moekernel.moc"
