// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringList>

// Server logs written from docs/servers.md sections 1 and 6 for the GUI tests.
namespace guitestlogs {

inline const QString sglangRoot =
    QStringLiteral("/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/moe/fused_moe_triton/configs");

// An 8-rank SGLang server on H200 under Triton 3.6.0 with neither the up nor the down config.
inline QString sglangEightRanks() {
    QStringList lines;
    lines << QStringLiteral(
                 "[2026-11-20 10:00:01] server_args=ServerArgs(model_path='Qwen/Qwen3-30B-A3B', tp_size=8)")
          << QStringLiteral("[2026-11-20 10:00:02] Automatically detected platform cuda.");
    for (int rank = 0; rank < 8; ++rank) {
        lines << QStringLiteral("[2026-11-20 10:00:05 TP%1] Load weight end. type=Qwen3MoeForCausalLM, "
                                "dtype=torch.bfloat16, avail mem=120.50 GB, mem usage=7.21 GB.")
                     .arg(rank);
    }
    for (int rank = 0; rank < 8; ++rank) {
        lines << QStringLiteral(
                     "[2026-11-20 10:00:09 TP%1] Using default MoE kernel config. Performance might be "
                     "sub-optimal! Config file not found at %2/triton_3_6_0/"
                     "E=128,N=96,device_name=NVIDIA_H200.json, you can create them with "
                     "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton")
                     .arg(rank)
                     .arg(sglangRoot);
        lines << QStringLiteral(
                     "[2026-11-20 10:00:09 TP%1] Using MoE kernel config with down_moe=False. Performance "
                     "might be sub-optimal! Config file not found at %2/triton_3_6_0/"
                     "E=128,N=96,device_name=NVIDIA_H200_down.json, you can create them with "
                     "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton")
                     .arg(rank)
                     .arg(sglangRoot);
    }
    lines << QStringLiteral(
                 "[2026-11-20 10:00:20 TP0] KV Cache is allocated. #tokens: 1234567, K size: 10.00 GB, "
                 "V size: 10.00 GB")
          << QStringLiteral("[2026-11-20 10:00:30] The server is fired up and ready to roll!");
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

// A vLLM engine core on H100 without a tuned fp8 block-quant config.
inline QString vllmFp8() {
    QStringList lines;
    lines << QStringLiteral("INFO 11-20 10:00:01 [__init__.py:241] Automatically detected platform cuda.")
          << QStringLiteral(
                 "(EngineCore_DP0 pid=4242) INFO 11-20 10:00:05 [gpu_model_runner.py:1234] Model loading "
                 "took 60.1 GiB")
          << QStringLiteral(
                 "(EngineCore_DP0 pid=4242) WARNING 11-20 10:00:09 [fused_moe.py:727] Using default MoE "
                 "config. Performance might be sub-optimal! Config file not found at "
                 "/usr/lib/python3/dist-packages/vllm/model_executor/layers/fused_moe/configs/"
                 "E=256,N=256,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,block_shape=[128,128].json")
          << QStringLiteral(
                 "(EngineCore_DP0 pid=4242) INFO 11-20 10:00:12 [kv_cache_utils.py:1001] GPU KV cache "
                 "size: 345,678 tokens");
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

// Nothing about MoE configs: no warnings.
inline QString quietLog() {
    return QStringLiteral("[2026-11-20 10:00:01] Starting server\n"
                          "[2026-11-20 10:00:30] The server is fired up and ready to roll!\n");
}

} // namespace guitestlogs
