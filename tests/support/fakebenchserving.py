#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""TEST DOUBLE: a stand-in for `python3 -m sglang.bench_serving` (tests/support/fakebenchserving.py).

It is NOT SGLang's benchmark. Installed as `sglang/bench_serving.py` of a fake SGLang tree, it takes the
options moetune passes to the real tool (docs/servers.md section 10), sends --num-prompts random prompts of
--random-input-len words with --max-concurrency in flight to an OpenAI-compatible server's
/v1/completions (streamed; the real tool's `--backend sglang` uses SGLang's /generate, its `sglang-oai`
/v1/completions), measures TTFT, inter-token latency and TPOT per request as the real tool does, prints
the real tool's "Serving Benchmark Result" block and appends one JSON line with the real tool's key names
to --output-file. Standard library only.
"""

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
import urllib.request

LABEL = "moetune TEST DOUBLE: fake sglang.bench_serving (tests/support/fakebenchserving.py)"


def one_request(url, model, prompt, max_tokens):
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": max_tokens, "stream": True,
                       "ignore_eos": True, "temperature": 0.0}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    ttft = None
    last = start
    itls = []
    tokens = 0
    with urllib.request.urlopen(req, timeout=600) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            now = time.perf_counter()
            if json.loads(data)["choices"][0].get("text"):
                tokens += 1
                if ttft is None:
                    ttft = now - start
                else:
                    itls.append(now - last)
                last = now
    latency = time.perf_counter() - start
    return {"ttft": ttft, "latency": latency, "itls": itls, "output_len": tokens}


def percentile(values, q):
    s = sorted(values)
    if not s:
        return 0.0
    k = (len(s) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main(argv=None):
    p = argparse.ArgumentParser(description="TEST DOUBLE of sglang.bench_serving (see the module docstring)")
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
    args = p.parse_args(argv)
    print(LABEL)
    base = args.base_url or "http://%s:%d" % (args.host, args.port)
    model = args.model
    if not model:
        with urllib.request.urlopen(base + "/v1/models", timeout=30) as r:
            model = json.load(r)["data"][0]["id"]
    rng = random.Random(args.seed)
    prompts = []
    for _ in range(args.num_prompts):
        lo = max(1, int(args.random_input_len * args.random_range_ratio))
        n_in = rng.randint(lo, args.random_input_len)
        prompts.append(" ".join("w%d" % rng.randint(0, 50000) for _ in range(n_in)))
    conc = args.max_concurrency or args.num_prompts
    results = []
    errors = []
    todo = list(enumerate(prompts))
    # Test double's switch: a file FAKEBENCH_FAIL_REQUESTS beside this module holding N makes the first N
    # requests fail (not sent), as a server that drops requests would; the result counts only the others.
    fail_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "FAKEBENCH_FAIL_REQUESTS")
    fail_first = 0
    if os.path.exists(fail_file):
        with open(fail_file) as f:
            fail_first = int(f.read().strip() or "0")
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                index, prompt = todo.pop(0)
            if index < fail_first:
                with lock:
                    errors.append("HTTP 500 (test double: failed on purpose)")
                continue
            try:
                r = one_request(base + "/v1/completions", model, prompt, args.random_output_len)
                with lock:
                    results.append(r)
            except Exception as e:  # pylint: disable=broad-except  # counted as failed, as the tool does
                with lock:
                    errors.append(str(e))

    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(min(conc, len(prompts)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    duration = time.perf_counter() - start
    ok = [r for r in results if r["ttft"] is not None]
    ttfts = [r["ttft"] * 1000 for r in ok]
    tpots = [(r["latency"] - r["ttft"]) / (r["output_len"] - 1) * 1000 for r in ok if r["output_len"] > 1]
    itls = [x * 1000 for r in ok for x in r["itls"]]
    out_tokens = sum(r["output_len"] for r in ok)
    if not ok:
        print("All requests failed: %s" % (errors[:1] or ["no request"]), file=sys.stderr)
        return 1
    m = {
        "backend": args.backend, "dataset_name": args.dataset_name, "max_concurrency": args.max_concurrency,
        "completed": len(ok), "duration": duration, "request_throughput": len(ok) / duration,
        "output_throughput": out_tokens / duration, "total_output_tokens": out_tokens,
        "mean_ttft_ms": statistics.mean(ttfts), "median_ttft_ms": statistics.median(ttfts),
        "p99_ttft_ms": percentile(ttfts, 99),
        "mean_tpot_ms": statistics.mean(tpots) if tpots else 0.0,
        "median_tpot_ms": statistics.median(tpots) if tpots else 0.0,
        "median_itl_ms": statistics.median(itls) if itls else 0.0,
        "random_input_len": args.random_input_len, "random_output_len": args.random_output_len,
    }
    print("\n{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="="))
    print("{:<40} {:<10}".format("Backend:", args.backend))
    print("{:<40} {:<10}".format("Max request concurrency:", args.max_concurrency or "not set"))
    print("{:<40} {:<10}".format("Successful requests:", len(ok)))
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
    print("=" * 50)
    if args.output_file:
        with open(args.output_file, "a") as f:
            f.write(json.dumps(m) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
