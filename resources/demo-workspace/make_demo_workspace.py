#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the app's demo workspace from a REAL recorded H200 sweep.

Input: remote_agent/bench/recordings/h200-strategies/qwen3_h200.json, written by remote_agent/bench/bench_h200.py on one
NVIDIA H200 on 2026-11-29 (see remote_agent/bench/RESULTS.md). Every latency below is copied from that
file; nothing is invented. The benchmark wrote no agent event stream, so the runs have no events.jsonl;
their result.json follows remote_agent/PROTOCOL.md section 5.

Run: python3 resources/demo-workspace/make_demo_workspace.py   (rewrites resources/demo-workspace/*/)
"""

import calendar
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SRC = os.path.join(ROOT, "remote_agent", "bench", "recordings", "h200-strategies", "qwen3_h200.json")
RECORDED = calendar.timegm((2026, 11, 29, 0, 0, 0))  # the day only: the bench file has no clock times
KEY = re.compile(r"^m(\d+)n(\d+)k(\d+)g(\d+)w(\d+)s(\d+)$")
SHAPE = {"E": 128, "N": 768, "K": 2048, "topk": 8, "dtype": "bf16", "block_shape": None, "per_channel_quant": False}


def config(key):
    m = KEY.match(key)
    if not m:
        sys.exit("unexpected config key %r" % key)
    v = [int(x) for x in m.groups()]
    return {"BLOCK_SIZE_M": v[0], "BLOCK_SIZE_N": v[1], "BLOCK_SIZE_K": v[2], "GROUP_SIZE_M": v[3],
            "num_warps": v[4], "num_stages": v[5]}


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def measurement(rec, default_cfg=None):
    us = rec["us"]
    med = median(us)
    return {"op": rec["op"], "m": rec["m"], "config": config(rec["cfg"]), "config_down": None,
            # The agent's round -1 is the server's default config timed for the speedup figures.
            "round": -1 if rec["cfg"] == default_cfg else rec["round"], "replays": rec["r"], "median_us": med, "min_us": min(us), "max_us": max(us),
            "spread": (max(us) - min(us)) / med, "samples_us": us, "gpu": 0, "error_kind": None, "error": None}


def file_entries(winners):
    return {str(w["m"]): w["config"] for w in sorted(winners, key=lambda w: w["m"])}


def write(folder, name, obj, indent=1):
    with open(os.path.join(folder, name), "w") as f:
        json.dump(obj, f, indent=indent)
        f.write("\n")


def run(d, run_id, title, strategy, sizes, measurements, wall_s, winner_key, winner_us):
    folder = os.path.join(HERE, run_id)
    os.makedirs(folder, exist_ok=True)
    table = {row["m"]: row for row in d["table"]}
    winners = [{"op": "both", "m": m, "config": config(table[m][winner_key]), "median_us": table[m][winner_us]}
               for m in sizes]
    defaults = [{"op": "both", "m": m, "config": config(table[m]["default_cfg"]),
                 "median_us": table[m]["default_us"]} for m in sizes]
    roofline = [{"op": "both", "m": m, "us": table[m]["roofline_us"]} for m in sizes]
    per_batch = []
    for w, df, rl in zip(winners, defaults, roofline):
        per_batch.append({"m": w["m"], "best_us": w["median_us"], "default_us": df["median_us"],
                          "speedup": df["median_us"] / w["median_us"], "roofline_us": rl["us"],
                          "roofline_fraction": rl["us"] / w["median_us"]})
    name = "E=128,N=768,device_name=NVIDIA_H200.json"
    spec = {"framework": "sglang", "E": 128, "N": 768, "K": 2048, "topk": 8, "dtype": "bf16", "block_shape": None,
            "per_channel_quant": False, "ops": "up", "batch_sizes": sizes, "strategy": strategy, "gpus": [0],
            "time_budget_s": None, "backend": "triton", "python": None, "routing_file": None, "space": {}}
    result = {"format": "moetune-result", "version": 1, "run_id": run_id, "agent_version": "0.1.0",
              "simulated": False, "created_at": RECORDED, "finished_at": RECORDED + wall_s,
              "framework": "sglang", "backend": "triton", "device_name": "NVIDIA_H200", "gpus": [0],
              "triton_version": "3.6.0", "strategy": strategy, "ops": ["both"], "batch_sizes": sizes,
              "shape": SHAPE, "measurements": measurements, "winners": winners, "default": defaults,
              "roofline": roofline, "per_batch": per_batch,
              "timings": {"wall_s": wall_s, "units_measured": len(measurements), "units_failed": 0,
                          "units_from_journal": 0, "worker_crashes": 0},
              "budget_hit": False,
              "files": [{"framework": "sglang", "kind": "sglang", "file_name": name, "path": "sglang/" + name,
                         "sha256": None, "entries": file_entries(winners)}]}
    info = {"format": "moetune-run", "version": 1, "run_id": run_id, "host": "an NVIDIA H200 GPU server",
            "title": title, "source": "remote_agent/bench/recordings/h200-strategies/qwen3_h200.json",
            "note": "Recorded on one NVIDIA H200 (torch 2.11.0+cu130, Triton 3.6.0) on 2026-11-29 with "
                    "moetune's own Triton fused-MoE kernel. Latencies of the tuned "
                    "and default configs are the head-to-head re-timings (3 rounds x 10 replays). "
                    "The benchmark kept no live event stream for this run.",
            "simulated": False}
    host = {"type": "probe", "source": "remote_agent/bench/recordings/h200-strategies/gpu_tests_and_probe.log",
            "host": {"hostname": "nvidia-h200", "os": None, "kernel": None, "cpu_count": 16, "mem_total_bytes": None},
            "gpus": [{"index": 0, "name": "NVIDIA_H200", "raw_name": "NVIDIA H200", "uuid": None,
                      "memory_total_mib": None, "memory_used_mib": 0, "compute_capability": "9.0", "processes": []}],
            "gpu_error": None,
            "python": {"executable": None, "version": None, "torch": "2.11.0+cu130", "torch_cuda": "13.0",
                       "triton": "3.6.0", "error": None},
            "nvcc": {"path": "/usr/local/cuda/bin/nvcc", "version": "13.0"},
            "frameworks": [], "servers": [],
            "bandwidth": d["bandwidth"]}
    write(folder, "run.json", info)
    write(folder, "spec.json", spec)
    write(folder, "result.json", result, indent=None)
    write(folder, "host.json", host)


def main():
    with open(SRC) as f:
        d = json.load(f)
    sizes18 = d["batch_sizes"]
    per_m = d["h2h"]["per_m"]

    def h2h(sizes, keep):
        # The head-to-head re-timing of the winners and the default config (3 rounds x 10 replays).
        out = []
        for r in d["h2h"]["measurements"]:
            names = per_m[str(r["m"])]
            if r["m"] in sizes and r["cfg"] in (names.get(keep), names["default"]):
                out.append(measurement(r, names["default"]))
        return out

    fast = [measurement(r) for r in d["fast18"]["measurements"]] + h2h(sizes18, "fast")
    run(d, "20261129-qwen3-h200-fast", "Qwen3-30B-A3B TP1 on H200: fast strategy, 18 sizes", "fast", sizes18, fast,
        round(d["fast18"]["wall_s"], 3), "fast_cfg", "fast_us")
    exh_sizes = sorted(d["exhaustive"]["sizes"])
    exh = [measurement(r) for r in d["exhaustive"]["measurements"]] + h2h(exh_sizes, "exhaustive")
    run(d, "20261129-qwen3-h200-exhaustive", "Qwen3-30B-A3B TP1 on H200: exhaustive, 5 sizes", "exhaustive",
        exh_sizes, exh, round(d["exhaustive"]["wall_s"], 3), "exh_cfg", "exh_us")
    # The agent's own result.json of a real run through SGLang main's kernel (issue 9), copied unchanged.
    server_src = os.path.join(ROOT, "remote_agent", "bench", "recordings", "h200-server-kernel",
                              "server_up_result.json")
    with open(server_src) as f:
        server = json.load(f)
    folder = os.path.join(HERE, "20261201-sglang-h200-server")
    os.makedirs(folder, exist_ok=True)
    with open(server_src, "rb") as f, open(os.path.join(folder, "result.json"), "wb") as out:
        out.write(f.read())
    write(folder, "spec.json", {"framework": server["framework"], "E": 128, "N": 768, "K": 2048, "topk": 8,
                                "dtype": None, "block_shape": None, "per_channel_quant": False, "ops": "up",
                                "batch_sizes": server["batch_sizes"], "strategy": server["strategy"],
                                "gpus": server["gpus"], "time_budget_s": None, "backend": "server", "python": None,
                                "routing_file": None, "space": {}})
    write(folder, "run.json", {
        "format": "moetune-run", "version": 1, "run_id": server["run_id"], "host": "an NVIDIA H200 GPU server",
        "title": "Qwen3-30B-A3B TP1 on H200: SGLang's own kernel vs its shipped config (18 sizes)",
        "source": "remote_agent/bench/recordings/h200-server-kernel/server_up_result.json",
        "note": "The agent's own result, unchanged: a real run on one NVIDIA H200 (Triton 3.6.0) "
                "through SGLang main's fused-MoE kernel (backend 'server'), where 'default' is the config file "
                "SGLang already ships for this shape, so the speedups are against an already tuned file. "
                "The run's events were not kept.",
        "simulated": False})
    write(HERE, "workspace.json", {"format": "moetune-workspace", "version": 1,
                                   "name": "Demo: real H200 sweeps (Qwen3-30B-A3B)",
                                   # shipped read-only: no .result.cache is written beside its runs
                                   "bundled": True})


if __name__ == "__main__":
    main()
