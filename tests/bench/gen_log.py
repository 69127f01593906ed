#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Generate a realistic inference-server log of a given size for moetune's diagnosis benchmark.

The log mixes what real SGLang and vLLM servers print (docs/servers.md section 6) in steady state: per-rank SGLang lines
`[date time TPn] ...`, main-process lines, vLLM `(EngineCore_DP0 pid=N) INFO MM-DD ...` and the older
prefix-less form, uvicorn access lines with ANSI colours, CR progress bars, Python warnings and the odd
very long line; start-up lines (KV cache, memory, CUDA graphs, platform) come in one block per server
(re)start, --restarts times. A few hundred MoE warnings (untuned, fallback, down missing, block-FP8, vLLM miss,
deterministic) are scattered through it; every rank prints its own copy, as servers do.

Only those warnings contain the string 'sub-optimal', so `grep -c -F sub-optimal` counts them.

usage: gen_log.py --size 1G --out /tmp/moetune-bench-1G.log [--warnings 300] [--seed 1]
"""
import argparse
import random
import sys

SGL_ROOT = "/sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs"
VLLM_ROOT = "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/configs"
FP8_ROOT = "/sgl-workspace/sglang/python/sglang/srt/layers/quantization/configs"
SGL_TAIL = ", you can create them with https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton"

SHAPES = [
    "E=128,N=768,device_name=NVIDIA_H200",
    "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128]",
    "E=160,N=192,device_name=NVIDIA_H200",
    "E=64,N=1408,device_name=NVIDIA_H20-3e,dtype=fp8_w8a8",
]
VLLM_SHAPES = [
    "E=128,N=768,device_name=NVIDIA_H200",
    "E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128]",
]


def parse_size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    unit = text[-1] if text and text[-1] in "KMG" else ""
    return int(float(text[: len(text) - len(unit)]) * units[unit])


def sglang_bodies(rng):
    """Message bodies SGLang ranks print in steady state (no prefix)."""
    out = []
    for _ in range(400):
        run = rng.randint(0, 256)
        tok = rng.randint(0, 400000)
        out.append(
            "Decode batch. #running-req: %d, #token: %d, token usage: %.2f, cuda graph: %s, "
            "gen throughput (token/s): %.2f, #queue-req: %d, "
            % (run, tok, rng.random(), rng.choice(["True", "False"]), rng.uniform(10, 9000), rng.randint(0, 40))
        )
        out.append(
            "Prefill batch. #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, "
            "#running-req: %d, #queue-req: %d, "
            % (rng.randint(1, 32), rng.randint(1, 16384), rng.randint(0, 8192), rng.random(), run, rng.randint(0, 40))
        )
    out += [
        "Cache flushed successfully!",
    ]
    return out


def main_bodies(rng):
    out = []
    for _ in range(200):
        out.append(
            'INFO:     127.0.0.%d:%d - "POST /generate HTTP/1.1" 200 OK' % (rng.randint(1, 254), rng.randint(1024, 65535))
        )
    return out


def vllm_bodies(rng):
    out = []
    for _ in range(300):
        out.append(
            "[loggers.py:123] Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, "
            "Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%"
            % (rng.uniform(0, 9000), rng.uniform(0, 4000), rng.randint(0, 256), rng.randint(0, 40),
               rng.uniform(0, 100), rng.uniform(0, 100))
        )
    return out


def startup_lines(rng, ts, ranks):
    """What a server prints once per start: these lines are rare in a long log, as in real ones."""
    vts = ts[5:]
    out = ["[%s] server_args=ServerArgs(model_path='Qwen/Qwen3-30B-A3B', tp_size=%d, mem_fraction_static=0.88, "
           "chunked_prefill_size=8192, enable_deterministic_inference=False, %s)"
           % (ts, ranks, ", ".join("opt_%d=%d" % (i, rng.randint(0, 99)) for i in range(60))),
           "[%s] Automatically detected platform cuda." % ts]
    for r in range(ranks):
        out.append("[%s TP%d] Init torch distributed ends. mem usage=0.00 GB" % (ts, r))
    for r in range(ranks):
        out.append("[%s TP%d] Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GB, "
                   "mem usage=%.2f GB." % (ts, r, rng.uniform(20, 80), rng.uniform(10, 60)))
    for r in range(ranks):
        out.append("[%s TP%d] KV Cache is allocated. #tokens: %d, K size: %.2f GB, V size: %.2f GB"
                   % (ts, r, 1432115, 32.78, 32.78))
    for r in range(ranks):
        out.append("[%s TP%d] Using MoE kernel config from %s/triton_3_4_0/E=128,N=768,device_name=NVIDIA_H100_80GB_HBM3.json."
                   % (ts, r, SGL_ROOT))
    for r in range(ranks):
        out.append("[%s TP%d] Capture cuda graph end. Time elapsed: %.2f s. mem usage=%.2f GB. avail mem=%.2f GB."
                   % (ts, r, rng.uniform(5, 60), rng.uniform(0.5, 4), rng.uniform(5, 30)))
    out += ["[%s] The server is fired up and ready to roll!" % ts,
            "INFO %s [__init__.py:216] Automatically detected platform cuda." % vts,
            "(EngineCore_DP0 pid=4242) INFO %s [gpu_worker.py:276] Available KV cache memory: %.2f GiB" % (vts, rng.uniform(10, 90)),
            "(EngineCore_DP0 pid=4242) INFO %s [kv_cache_utils.py:1087] GPU KV cache size: %d tokens" % (vts, rng.randint(100000, 3000000)),
            "(EngineCore_DP0 pid=4242) INFO %s [fused_moe.py:1019] Using configuration from %s/E=128,N=768,device_name=NVIDIA_H100_80GB_HBM3.json for MoE layer." % (vts, VLLM_ROOT),
            "(EngineCore_DP0 pid=4242) INFO %s [gpu_model_runner.py:2007] Graph capturing finished in 12 secs, took 0.55 GiB" % vts]
    return out


def warning_lines(rng, kind, shape, ts, ranks):
    """The lines of one warning event, one per rank, as the servers print them."""
    if kind == "vllm":
        vshape = rng.choice(VLLM_SHAPES)
        return [
            "(EngineCore_DP0 pid=%d) WARNING %s [fused_moe.py:1042] Using default MoE config. Performance might be "
            "sub-optimal! Config file not found at %s/%s.json" % (4242, ts[5:], VLLM_ROOT, vshape)
        ]
    lines = []
    for r in range(ranks):
        prefix = "[%s TP%d] " % (ts, r)
        if kind == "untuned":
            msg = "Using default MoE kernel config. Performance might be sub-optimal! Config file not found at %s/triton_3_6_0/%s.json%s" % (SGL_ROOT, shape, SGL_TAIL)
        elif kind == "old":
            msg = "Using default MoE config. Performance might be sub-optimal! Config file not found at %s/%s.json" % (SGL_ROOT, shape)
        elif kind == "fallback":
            msg = ("Config file not found at %s/triton_3_6_0/%s.json. Fallback to triton version 3.4.0 and use MoE kernel "
                   "config from %s/triton_3_4_0/%s.json. Performance might be sub-optimal!" % (SGL_ROOT, shape, SGL_ROOT, shape))
        elif kind == "down":
            msg = "Using MoE kernel config with down_moe=False. Performance might be sub-optimal! Config file not found at %s/triton_3_6_0/%s_down.json%s" % (SGL_ROOT, shape, SGL_TAIL)
        else:  # fp8 dense GEMM
            msg = ("Using default W8A8 Block FP8 kernel config. Performance might be sub-optimal! Config file not found at "
                   "%s/N=%d,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json" % (FP8_ROOT, rng.choice([576, 1536, 2048, 4608])))
        lines.append(prefix + msg)
    return lines


def generate(out, size, n_warnings, seed, restarts):
    rng = random.Random(seed)
    sgl, main, vllm = sglang_bodies(rng), main_bodies(rng), vllm_bodies(rng)
    ansi = ['\x1b[32mINFO\x1b[0m:     127.0.0.1:%d - "GET /health HTTP/1.1" \x1b[32m200 OK\x1b[0m' % p for p in range(40000, 40050)]
    bars = ["Capturing batches (bs=%d avail_mem=%.2f GB): " % (b, rng.uniform(10, 30))
            + "\r".join("%3d%%|%s| %d/23" % (p * 100 // 23, "#" * (p * 10 // 23), p) for p in range(24)) for b in (1, 8, 64, 160)]
    pywarn = ["/usr/lib/python3/dist-packages/torch/cuda/__init__.py:%d: UserWarning: TF32 is off\n  warnings.warn(" % n for n in range(200, 260)]
    kinds = ["untuned"] * 5 + ["fallback"] * 2 + ["down"] * 3 + ["fp8"] + ["vllm"] * 3 + ["old"]

    # Warning events at random byte offsets, leaving room at the end so none is cut off.
    room = max(1, size - 16 * 1024)
    warn_at = sorted(rng.randrange(room) for _ in range(n_warnings))
    # Server (re)starts, evenly spaced from the first byte on.
    start_at = [size * k // max(1, restarts) for k in range(max(1, restarts))]
    si = 0
    wi = 0
    written = 0
    pos = 0
    sub_optimal = 0
    block = 4096
    second = 0
    while written < size:
        second += 1
        hh, mm, ss = (second // 3600) % 24, (second // 60) % 60, second % 60
        ts = "2026-03-%02d %02d:%02d:%02d" % (1 + second // 86400 % 28, hh, mm, ss)
        vts = ts[5:7] + "-" + ts[8:]
        prefixes = ["[%s TP%d] " % (ts, r) for r in range(8)]
        vprefix = ["(EngineCore_DP0 pid=4242) INFO %s " % vts, "(APIServer pid=4100) INFO %s " % vts, "INFO %s " % vts]
        mprefix = "[%s] " % ts
        choice = rng.random
        parts = []
        for _ in range(block):
            if si < len(start_at) and start_at[si] <= pos:
                lines = startup_lines(rng, ts, 8)
                parts.extend(lines)
                pos += sum(len(x) + 1 for x in lines)
                si += 1
            r = choice()
            if r < 0.62:
                parts.append(prefixes[int(r * 1000) & 7] + sgl[int(r * 100003) % len(sgl)])
            elif r < 0.72:
                parts.append(mprefix + main[int(r * 100003) % len(main)])
            elif r < 0.95:
                parts.append(vprefix[int(r * 1000) % 3] + vllm[int(r * 100003) % len(vllm)])
            elif r < 0.985:
                parts.append(ansi[int(r * 100003) % len(ansi)])
            elif r < 0.995:
                parts.append(pywarn[int(r * 100003) % len(pywarn)])
            else:
                parts.append(bars[int(r * 100003) % len(bars)])
            pos += len(parts[-1]) + 1
            while wi < len(warn_at) and warn_at[wi] <= pos:
                kind = kinds[wi % len(kinds)]
                lines = warning_lines(rng, kind, SHAPES[wi % len(SHAPES)], ts, 8)
                parts.extend(lines)
                sub_optimal += len(lines)
                pos += sum(len(x) + 1 for x in lines)
                wi += 1
        chunk = ("\n".join(parts) + "\n").encode("utf-8")
        if written + len(chunk) > size:
            # Cut at a line end so the file is exactly <= size bytes of whole lines; keep the warnings.
            cut = chunk.rfind(b"\n", 0, size - written)
            dropped = chunk[cut + 1:] if cut >= 0 else chunk
            sub_optimal -= dropped.count(b"sub-optimal")
            chunk = chunk[: cut + 1] if cut >= 0 else b""
            out.write(chunk)
            written += len(chunk)
            break
        out.write(chunk)
        written += len(chunk)
    return written, sub_optimal


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G", help="target size, e.g. 10M, 1G (default 1G)")
    ap.add_argument("--out", required=True, help="output file, '-' for stdout")
    ap.add_argument("--warnings", type=int, default=300, help="warning events scattered through the log")
    ap.add_argument("--restarts", type=int, default=20, help="server start-up sequences spread through the log")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    size = parse_size(args.size)
    if args.out == "-":
        written, sub = generate(sys.stdout.buffer, size, args.warnings, args.seed, args.restarts)
    else:
        with open(args.out, "wb") as f:
            written, sub = generate(f, size, args.warnings, args.seed, args.restarts)
    print("gen_log: wrote %d bytes, %d 'sub-optimal' lines" % (written, sub), file=sys.stderr)


if __name__ == "__main__":
    main()
