#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""PRACTICE DOUBLE: a stand-in for `python3 -m sglang.bench_serving` (resources/practice/practice_bench_serving.py).

It is NOT SGLang's benchmark and measures nothing: its figures are SIMULATED. The app installs it as
`sglang/bench_serving.py` of its practice server's fake SGLang tree (src/remote/hosts/practiceserver.cpp), so
that "Push, restart and compare" can be walked to a verdict on a machine without a GPU. It takes the options
moetune passes to the real tool (docs/servers.md section 10), prints the real tool's "Serving Benchmark
Result" block under a PRACTICE DOUBLE / SIMULATED label, and appends one JSON line with the real tool's key
names plus "simulated": true to --output-file (moetune shows SIMULATED wherever such figures appear).

Its figures follow the MoE config the practice server loaded at its last start, read from the server's
log (<practice root>/logs/sglang server.log, found from this file's place in the tree), with the same
made-up rule as the practice server's own latency (resources/practice/fake_sglang_server.py):
    factor(M) = 1 + 0.25 * min(1, |log2(nearest key of the loaded up file to M) - log2(M)| / 4)
M = --max-concurrency padded up to a power of two; 1.25 when the log shows the default config (no file).
So a tuned file with a row near the concurrency is faster than the fallback or the default. Each request
takes TTFT = (2 + 0.01 x input tokens) ms x factor and TPOT = 4 ms x factor per further token, with a
seeded noise of about 0.6 % per figure that changes with each server start (the start line seeds it), so
repeated legs differ as real boots do. The server must be running (its pid file names a live process),
else the run fails as the real tool fails on a refused connection.
"""

import argparse
import json
import math
import os
import random
import sys
import time
import zlib

LABEL = ("moetune PRACTICE DOUBLE: simulated sglang.bench_serving of the practice server "
         "(resources/practice/practice_bench_serving.py): every figure below is SIMULATED, nothing was measured")


def practice_root():
    # <root>/site/sglang/bench_serving.py
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def server_running(root):
    try:
        with open(os.path.join(root, "server.pid")) as f:
            pid = int(f.read().strip() or "0")
        os.kill(pid, 0)
        return pid > 0
    except (OSError, ValueError):
        return False


def last_start(root):
    """-> (start line, the up file the server loaded or None for the default config)"""
    try:
        with open(os.path.join(root, "logs", "sglang server.log"), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return "", None
    starts = [i for i, l in enumerate(lines) if "server_args=" in l]
    if not starts:
        return "", None
    start = starts[-1]
    for line in lines[start + 1:]:
        if "Using default MoE kernel config" in line:
            return lines[start], None
        for key in ("use MoE kernel config from ", "Using MoE kernel config from "):
            at = line.find(key)
            if at >= 0:
                path = line[at + len(key):].split(". Performance")[0].rstrip(".")
                if not path.endswith("_down.json"):
                    return lines[start], path
    return lines[start], None


def batch_keys(path):
    try:
        with open(path) as f:
            return sorted(int(k) for k in json.load(f)) or None
    except (OSError, ValueError, TypeError):
        return None


def factor(keys, m):
    if not keys:
        return 1.25
    m = 1 << (max(1, m) - 1).bit_length()
    nearest = min(keys, key=lambda k: abs(k - m))
    return 1.0 + 0.25 * min(1.0, abs(math.log2(max(1, nearest)) - math.log2(m)) / 4.0)


def main(argv=None):
    p = argparse.ArgumentParser(description="PRACTICE DOUBLE of sglang.bench_serving (SIMULATED figures)")
    p.add_argument("--backend", default="sglang")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--base-url", default=None)
    p.add_argument("--model", default=None)
    p.add_argument("--dataset-name", default="random")
    p.add_argument("--random-input-len", type=int, default=1024)
    p.add_argument("--random-output-len", type=int, default=128)
    p.add_argument("--random-range-ratio", type=float, default=0.0)
    p.add_argument("--num-prompts", type=int, default=1000)
    p.add_argument("--max-concurrency", type=int, default=None)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--output-file", default=None)
    args, _ = p.parse_known_args(argv)
    print(LABEL)
    root = practice_root()
    if not server_running(root):
        print("Connection refused: the practice server is not running (start it: Restart on the Tune page)",
              file=sys.stderr)
        return 1
    start_line, loaded = last_start(root)
    keys = batch_keys(loaded) if loaded else None
    conc = args.max_concurrency or args.num_prompts
    f = factor(keys, conc)
    rng = random.Random(zlib.crc32(("%s|%d|%d" % (start_line, args.seed, conc)).encode()))

    def noisy(x):
        return x * (1.0 + rng.gauss(0.0, 0.006))

    n_in = max(1, int(args.random_input_len * (1.0 + args.random_range_ratio) / 2.0))
    n_out = max(1, args.random_output_len)
    ttft = noisy((2.0 + 0.01 * n_in) * f)
    tpot = noisy(4.0 * f)
    latency_ms = ttft + (n_out - 1) * tpot
    waves = math.ceil(args.num_prompts / max(1, conc))
    duration = waves * latency_ms / 1000.0
    time.sleep(min(1.0, 0.05 + duration / 50.0))  # a short pause; the figures are not timed
    m = {
        "backend": args.backend, "dataset_name": args.dataset_name, "max_concurrency": args.max_concurrency,
        "completed": args.num_prompts, "failed": 0, "duration": duration,
        "request_throughput": args.num_prompts / duration,
        "output_throughput": args.num_prompts * n_out / duration,
        "total_output_tokens": args.num_prompts * n_out,
        "mean_ttft_ms": ttft, "median_ttft_ms": ttft * 0.98, "p99_ttft_ms": ttft * 1.6,
        "mean_tpot_ms": tpot, "median_tpot_ms": tpot * 0.99, "median_itl_ms": tpot * 0.99,
        "random_input_len": args.random_input_len, "random_output_len": args.random_output_len,
        "simulated": True,
        "practice_double": "resources/practice/practice_bench_serving.py",
        "practice_config": loaded or "default MoE kernel config",
    }
    print("\n{s:{c}^{n}}".format(s=" Serving Benchmark Result (SIMULATED) ", n=50, c="="))
    print("{:<40} {:<10}".format("Backend:", args.backend))
    print("{:<40} {:<10}".format("Max request concurrency:", args.max_concurrency or "not set"))
    print("{:<40} {:<10}".format("Successful requests:", args.num_prompts))
    print("{:<40} {:<10.2f}".format("Benchmark duration (s):", duration))
    print("{:<40} {:<10.2f}".format("Request throughput (req/s):", m["request_throughput"]))
    print("{:<40} {:<10.2f}".format("Output token throughput (tok/s):", m["output_throughput"]))
    print("{s:{c}^{n}}".format(s="Time to First Token", n=50, c="-"))
    print("{:<40} {:<10.2f}".format("Mean TTFT (ms):", m["mean_ttft_ms"]))
    print("{:<40} {:<10.2f}".format("Median TTFT (ms):", m["median_ttft_ms"]))
    print("{:<40} {:<10.2f}".format("P99 TTFT (ms):", m["p99_ttft_ms"]))
    print("{s:{c}^{n}}".format(s="Time per Output Token (excl. 1st token)", n=50, c="-"))
    print("{:<40} {:<10.2f}".format("Mean TPOT (ms):", m["mean_tpot_ms"]))
    print("{:<40} {:<10.2f}".format("Median TPOT (ms):", m["median_tpot_ms"]))
    print("{:<40} {:<10.2f}".format("Median ITL (ms):", m["median_itl_ms"]))
    print("Config the practice server loaded: %s" % m["practice_config"])
    print("=" * 50)
    if args.output_file:
        with open(args.output_file, "a") as out:
            out.write(json.dumps(m) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
