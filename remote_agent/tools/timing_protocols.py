# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Does the way a config is timed change what a tune decides? (issues 19 and 22, one H200)

1. ratios: the server default against the headroom check's screened configs at a few batch sizes, timed
   with each protocol (warm-up replays, timed replays, calls per CUDA graph, a sync per replay or one at
   the end), in interleaved rounds: the default/best ratio per protocol. The head-to-head's protocol
   (5 warm-ups, 10 replays of 10 calls) is the reference the headroom estimate is judged against.
2. screen: the same configs' screening time with 10 calls per replay and with fewer, per batch size: the
   per-call bias and whether the ranking (top 4) stays.
3. start-up: `import torch`, `import triton`, CUDA init in a fresh process, alone and with 14 other
   processes importing torch at the same time (what the precompile pool does while the GPU worker starts).

    python3 remote_agent/tools/timing_protocols.py [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

RATIO_SIZES = (24, 256, 1024, 3072, 4096)
SCREEN_SIZES = (64, 1024, 4096)
ROUNDS = 6
# name: (warm-up replays, timed replays, calls per graph, sync after every replay)
PROTOCOLS = {
    "h2h 5w+10r x10": (5, 10, 10, True),
    "headroom 3w+3r x10": (3, 3, 10, True),
    "2w+3r x10": (2, 3, 10, True),
    "2w+10r x10": (2, 10, 10, True),
    "5w+10r x10 async": (5, 10, 10, False),
    "2w+3r x3": (2, 3, 3, True),
}

STARTUP = r"""
import time, json
t0 = time.time()
import torch
t1 = time.time()
import triton
t2 = time.time()
torch.cuda.init(); x = torch.zeros(1, device="cuda"); torch.cuda.synchronize()
t3 = time.time()
print(json.dumps({"torch": t1 - t0, "triton": t2 - t1, "cuda_init": t3 - t2}))
"""


class Timer(object):
    def __init__(self, be, m, cfg):
        torch = be._torch
        self.be, self.torch, self.m = be, torch, m
        w = be.weights()
        x, logits, _inter = be._inputs(m)
        self.logits = logits
        self.moe = be._make(w, m, cfg, None)
        self.moe.x.copy_(x)
        self.moe.logits.copy_(logits[0])
        be._step(self.moe, "up")
        torch.cuda.synchronize()
        self.graphs = {}

    def graph(self, calls):
        torch = self.torch
        if calls not in self.graphs:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=s):
                for _ in range(calls):
                    self.be._step(self.moe, "up")
            torch.cuda.synchronize()
            self.graphs[calls] = g
        return self.graphs[calls]

    def time(self, warm, reps, calls, sync_each):
        torch = self.torch
        g = self.graph(calls)
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(warm + reps)]
        for i, (a, b) in enumerate(evs):
            self.moe.logits.copy_(self.logits[(i + 1) % len(self.logits)])
            a.record()
            g.replay()
            b.record()
            if sync_each:
                b.synchronize()
        evs[-1][1].synchronize()
        samples = [a.elapsed_time(b) * 1000.0 / calls for a, b in evs[warm:]]
        return statistics.median(samples)


def startup(others):
    procs = [subprocess.Popen([sys.executable, "-c", "import torch, triton"], env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
             for _ in range(others)]
    t = time.time()
    out = subprocess.run([sys.executable, "-c", STARTUP], capture_output=True, text=True, check=False)
    wall = time.time() - t
    for p in procs:
        p.wait()
    try:
        res = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res = {"error": out.stderr[-500:]}
    res["wall"] = wall
    return res


def server_units(framework, shape):
    """Wall milliseconds of the server backend's measure() (a screening unit: 1 replay) per batch size:
    the first use of a config (its kernel compiles on this GPU process) and again once loaded."""
    from moetune_agent.backends import defaults as defaults_mod
    from moetune_agent.backends.server_backend import ServerBackend

    be = ServerBackend(shape, 0, os.environ.get("TRITON_CACHE_DIR"), framework=framework)
    out = {}
    for m in (1, 64, 1024, 4096):
        cfg = defaults_mod.heuristic("sglang", shape, m)
        row = {}
        for what in ("first use", "loaded", "loaded again"):
            t = time.perf_counter()
            be.measure("up", cfg, m, 1)
            row[what] = round(1000.0 * (time.perf_counter() - t), 1)
        t = time.perf_counter()
        be.measure("up", cfg, m, 10)
        row["replays=10"] = round(1000.0 * (time.perf_counter() - t), 1)
        out[m] = row
        print("server %s m=%d measure() ms: %s" % (framework, m, json.dumps(row)), flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--server", default=None, help="sglang or vllm (its tree on PYTHONPATH): one measure() of "
                    "the server backend timed whole, first use and loaded")
    ap.add_argument("--only-server", action="store_true")
    a = ap.parse_args(argv)
    if a.only_server:
        from moetune_agent.kernel_types import Shape

        print(json.dumps(server_units(a.server, Shape(128, 768, 2048, 8, "bf16", None, False))))
        return 0
    report = {"startup": {"alone": startup(0), "with 14 importing": startup(14), "alone again": startup(0)}}
    print("start-up:", json.dumps(report["startup"]), flush=True)

    from moetune_agent import space as space_mod
    from moetune_agent.strategies import screen
    from moetune_agent.backends import defaults as defaults_mod
    from moetune_agent.backends.triton_backend import TritonBackend
    from moetune_agent.kernel_types import Shape

    shape = Shape(128, 768, 2048, 8, "bf16", None, False)
    be = TritonBackend(shape, 0, os.environ.get("TRITON_CACHE_DIR"))
    be._ensure()
    be.warm_aux()
    smem = be.shared_memory_per_block()
    sizes = sorted(set(RATIO_SIZES) | set(SCREEN_SIZES))
    space = space_mod.build_space(shape, sizes, ("up",), "sglang", smem)
    defaults = {("up", m): defaults_mod.heuristic("sglang", shape, m) for m in sizes}
    plan = screen.HeadroomPlan(shape, sizes, ("up",), space, defaults)
    report["ratios"] = {}
    for m in RATIO_SIZES:
        cfgs = [defaults[("up", m)]] + plan.candidates("up", m)[:3]
        timers = [Timer(be, m, c) for c in cfgs]
        res = {p: [[] for _ in cfgs] for p in PROTOCOLS}
        for _r in range(ROUNDS):
            for p, (w, r, calls, sync_each) in PROTOCOLS.items():
                for i, t in enumerate(timers):
                    res[p][i].append(t.time(w, r, calls, sync_each))
        ref = res["h2h 5w+10r x10"]
        best = min(range(1, len(cfgs)), key=lambda i: statistics.median(ref[i]))
        row = {"default": cfgs[0].key(), "best": cfgs[best].key()}
        for p in PROTOCOLS:
            meds = [statistics.median(v) for v in res[p]]
            row[p] = {"default_us": round(meds[0], 2), "best_us": round(meds[best], 2),
                      "ratio": round(meds[0] / meds[best], 4)}
        report["ratios"][m] = row
        print("m=%d default %s best %s: " % (m, row["default"], row["best"]) +
              "; ".join("%s %.4f" % (p, row[p]["ratio"]) for p in PROTOCOLS), flush=True)
        for t in timers:
            t.graphs.clear()
        del timers
    report["screen"] = {}
    for m in SCREEN_SIZES:
        sp = space[("up", m)]
        step = max(1, len(sp) // 12)
        cfgs = list(sp[::step])[:12]
        rows = []
        for c in cfgs:
            try:
                t = Timer(be, m, c)
            except Exception:  # noqa: BLE001 - a config that does not fit: left out
                continue
            v10 = statistics.median([t.time(1, 1, 10, True) for _ in range(3)])
            v3 = statistics.median([t.time(1, 1, 3, True) for _ in range(3)])
            v10b = statistics.median([t.time(1, 1, 10, True) for _ in range(3)])
            rows.append((c.key(), v10, v3, v10b))
            t.graphs.clear()
        top = lambda k: {r[0] for r in sorted(rows, key=lambda r: r[k])[:4]}  # noqa: E731
        bias = statistics.median([r[2] / r[1] for r in rows])
        noise = statistics.median([abs(r[3] / r[1] - 1) for r in rows])
        report["screen"][m] = {"configs": len(rows), "bias_3_over_10": round(bias, 4),
                               "repeat_noise_10": round(noise, 4), "top4_same_10_vs_3": len(top(1) & top(2)),
                               "top4_same_10_vs_10": len(top(1) & top(3)), "rows": rows}
        print("screen m=%d: %d configs, 3-call/10-call %.4f, 10-call repeat noise %.4f, top-4 overlap 10 vs 3: %d, "
              "10 vs 10: %d" % (m, len(rows), bias, noise, len(top(1) & top(2)), len(top(1) & top(3))), flush=True)
    if a.server:
        report["server"] = server_units(a.server, shape)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
