#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes moe_vectors.json: the shared naming/JSON test vectors of moetune's C++ core and Python agent.

The expected bytes come from the same calls the servers' tuners make (json.dump(..., indent=4) then a
newline; vLLM puts "triton_version" first), and the names from the servers' naming rules
(docs/servers.md section 2), so the vectors check both implementations against the servers, not against
each other.
Run: python3 tests/data/make_moe_vectors.py   (rewrites tests/data/moe_vectors.json)
"""
import json
import os

BATCHES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096]


def sglang_name(E, N, dev, dtype=None, block=None, per_channel=False, down=False):
    s = "E=%d,N=%d,device_name=%s" % (E, N, dev)
    if dtype:
        s += ",dtype=%s" % dtype
    if block and all(block):
        s += ",block_shape=%s" % str(list(block))  # Python list repr: "[128, 128]"
    if per_channel:
        s += ",per_channel_quant=True"
    if down:
        s += "_down"
    return s + ".json"


def vllm_name(E, N, dev, dtype=None, block=None):
    s = "E=%d,N=%d,device_name=%s" % (E, N, dev)
    if dtype:
        s += ",dtype=%s" % dtype
    if block and all(block):
        s += (",block_shape=%s" % str(list(block))).replace(" ", "")
    return s + ".json"


def name_row(dialect, E, N, dev, dtype=None, block=None, per_channel=False, down=False):
    if dialect == "sglang":
        name = sglang_name(E, N, dev, dtype, block, per_channel, down)
    else:
        assert not per_channel and not down
        name = vllm_name(E, N, dev, dtype, block)
    return {"name": name, "dialect": dialect, "E": E, "N": N, "device_name": dev, "dtype": dtype,
            "block_shape": list(block) if block else None, "per_channel_quant": per_channel, "down": down}


NAMES = [
    name_row("sglang", 128, 768, "NVIDIA_H200"),
    name_row("vllm", 128, 768, "NVIDIA_H200"),
    name_row("sglang", 128, 768, "NVIDIA_H200", down=True),
    name_row("sglang", 128, 192, "NVIDIA_H200"),
    name_row("sglang", 257, 256, "NVIDIA_H200", "fp8_w8a8", (128, 128)),
    name_row("sglang", 257, 256, "NVIDIA_H200", "fp8_w8a8", (128, 128), down=True),
    name_row("vllm", 256, 256, "NVIDIA_H200", "fp8_w8a8", (128, 128)),
    name_row("vllm", 256, 128, "NVIDIA_H100_80GB_HBM3", "fp8_w8a8", (128, 128)),
    name_row("sglang", 129, 352, "NVIDIA_H20-3e", "fp8_w8a8", (128, 128)),
    name_row("sglang", 385, 128, "NVIDIA_B200", "fp8_w8a8", (128, 128)),
    name_row("sglang", 64, 1408, "NVIDIA_H20-3e", "fp8_w8a8"),
    name_row("vllm", 64, 1408, "NVIDIA_H20-3e", "fp8_w8a8"),
    name_row("sglang", 64, 1408, "NVIDIA_H20-3e", "fp8_w8a8", per_channel=True),
    name_row("sglang", 64, 1408, "NVIDIA_H20-3e", "fp8_w8a8", per_channel=True, down=True),
    name_row("sglang", 8, 7168, "NVIDIA_A100-SXM4-80GB", "int8_w8a8"),
    name_row("sglang", 8, 7168, "NVIDIA_A100-SXM4-80GB", "int8_w8a8", per_channel=True),
    name_row("vllm", 8, 14336, "NVIDIA_A100-SXM4-80GB", "int8_w8a16"),
    name_row("sglang", 8, 14336, "NVIDIA_L40S", "int8_w8a16"),
    name_row("sglang", 60, 1408, "NVIDIA_GeForce_RTX_4090", "int4_w4a16"),
    name_row("vllm", 60, 1408, "NVIDIA_GeForce_RTX_4090", "int4_w4a16"),
    name_row("sglang", 16, 1024, "NVIDIA_H100_80GB_HBM3", "float32"),
    name_row("vllm", 16, 1024, "NVIDIA_H100_80GB_HBM3", "float32"),
    name_row("sglang", 128, 384, "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition"),
    name_row("vllm", 128, 384, "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition", "fp8_w8a8", (128, 128)),
    name_row("sglang", 32, 512, "Intel(R)_Arc(TM)_B580_Graphics"),
    name_row("vllm", 32, 512, "Intel(R)_Arc(TM)_B580_Graphics"),
    name_row("sglang", 128, 768, ""),
    name_row("vllm", 160, 192, ""),
    name_row("sglang", 160, 192, "", "fp8_w8a8", (128, 128), down=True),
    name_row("vllm", 8, 4096, "AMD_Instinct_MI300X", "fp8_w8a8"),
    name_row("sglang", 256, 64, "NVIDIA_H200", "fp8_w8a8", (64, 128)),
    name_row("vllm", 256, 64, "NVIDIA_H200", "fp8_w8a8", (64, 128)),
    name_row("sglang", 1, 14336, "NVIDIA_H200"),
]

TRITON = [("3.1.0", "triton_3_1_0"), ("3.2.0", "triton_3_2_0"), ("3.3.1", "triton_3_3_1"),
          ("3.4.0", "triton_3_4_0"), ("3.5.1", "triton_3_5_1"), ("3.6.0", "triton_3_6_0"),
          ("3.7.0", "triton_3_7_0"), ("10.12.3", "triton_10_12_3")]


def cfg(bm, bn, bk, gm, warps, stages, **extra):
    c = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": gm,
         "num_warps": warps, "num_stages": stages}
    c.update(extra)
    return c


def full_sweep(seed):
    out = {}
    for i, m in enumerate(BATCHES):
        bm = 16 if m <= 16 else (32 if m <= 64 else (64 if m <= 512 else 128))
        bn = [32, 64, 128, 256][(i + seed) % 4]
        bk = [64, 128, 256][(i * 7 + seed) % 3]
        gm = [1, 16, 32, 64][(i * 3 + seed) % 4]
        out[m] = cfg(bm, bn, bk, gm, [4, 8][(i + seed) % 2], [2, 3, 4, 5][(i * 5 + seed) % 4])
    return out


def file_row(dialect, triton_version, configs):
    data = {str(k): v for k, v in configs.items()}
    if dialect == "vllm" and triton_version is not None:
        text = json.dumps({"triton_version": triton_version, **configs}, indent=4) + "\n"
    else:
        text = json.dumps(configs, indent=4) + "\n"
    return {"dialect": dialect, "triton_version": triton_version, "entries": data, "text": text}


FILES = [
    file_row("sglang", None, full_sweep(0)),
    file_row("vllm", "3.4.0", full_sweep(1)),
    file_row("vllm", None, {1: cfg(16, 64, 128, 1, 4, 3), 64: cfg(32, 128, 128, 16, 8, 4)}),
    file_row("sglang", None, {k: cfg(64, 128, 64, 1, 4, 3, USE_TMA=(k >= 256)) for k in (1, 16, 256, 4096)}),
    file_row("vllm", "3.3.0", {k: cfg(16, 32, 256, 1, 4, 2, waves_per_eu=0, matrix_instr_nonkdim=16, kpack=2)
                               for k in (1, 2, 1024)}),
    file_row("sglang", None, {3072: cfg(128, 256, 64, 32, 8, 3)}),
]

INVALID = [
    "",
    "config.json",
    "E=128,N=768.json",
    "E=128,N=768,device_name=NVIDIA_H200",
    "E=128,N=768,device_name=NVIDIA_H200.JSON",
    "E=abc,N=768,device_name=NVIDIA_H200.json",
    "E=0,N=768,device_name=NVIDIA_H200.json",
    "E=128,N=-1,device_name=NVIDIA_H200.json",
    "N=768,E=128,device_name=NVIDIA_H200.json",
    "E=128,N=768,device_name=NVIDIA_H200,dtype=.json",
    "E=128,N=768,device_name=NVIDIA_H200,block_shape=[128].json",
    "E=128,N=768,device_name=NVIDIA_H200,block_shape=[128,  128].json",
    "E=128,N=768,device_name=NVIDIA_H200,per_channel_quant=False.json",
    "E=128,N=768,device_name=NVIDIA_H200_down_down.json.bak",
    "E=128,N=768,device_name=NVIDIA_H200,unknown=1.json",
]


def main():
    assert len(NAMES) >= 25
    for row in NAMES:
        assert row["name"].endswith(".json")
    doc = {"version": 1, "names": NAMES, "triton_versions": [{"version": v, "folder": f} for v, f in TRITON],
           "files": FILES, "invalid_names": INVALID}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "moe_vectors.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
