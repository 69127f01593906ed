# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where one measurement's milliseconds go on the GPU (issue 22): the steps of TritonBackend.measure
timed one at a time, per batch size, for configs whose kernels are in the compile cache but not yet
loaded (as the GPU worker meets them after the CPU precompile) and again once loaded.

    python3 remote_agent/tools/measure_anatomy.py --prepare --cache DIR   # compile the configs into DIR
    python3 remote_agent/tools/measure_anatomy.py --cache DIR [--json OUT] # time the steps

Prints one row per (batch size, step): the median milliseconds. Needs a GPU (torch, Triton).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

SIZES = (1, 64, 1024, 4096)
PER_SIZE = 6


def configs(shape, m, smem):
    from moetune_agent import space as space_mod
    from moetune_agent.backends import defaults as defaults_mod

    sp = space_mod.build_space(shape, [m], ("up",), "sglang", smem)[("up", m)]
    step = max(1, len(sp) // (PER_SIZE - 1))
    out = [defaults_mod.heuristic("sglang", shape, m)] + list(sp[::step])[: PER_SIZE - 1]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    os.environ["TRITON_CACHE_DIR"] = a.cache
    from moetune_agent.backends.triton_backend import GRAPH_CALLS, TritonBackend
    from moetune_agent.kernel_types import Shape

    shape = Shape(128, 768, 2048, 8, "bf16", None, False)
    be = TritonBackend(shape, 0, a.cache)
    t = time.time()
    be._ensure()
    smem = be.shared_memory_per_block()
    w = be.weights()
    torch = be._torch
    torch.cuda.synchronize()
    print("setup (import, CUDA, weights) %.2f s" % (time.time() - t))
    plan = {m: configs(shape, m, smem) for m in SIZES}
    if a.prepare:
        t = time.time()
        for m, cs in plan.items():
            for c in cs:
                try:
                    be.precompile("up", c)
                except Exception as e:  # noqa: BLE001
                    print("precompile failed", c.key(), e)
        print("prepared %d configs in %.1f s" % (sum(len(v) for v in plan.values()), time.time() - t))
        return 0
    be.warm_aux()
    rows = {}

    def clock():
        torch.cuda.synchronize()
        return time.perf_counter()

    for m, cs in plan.items():
        x, logits, inter = be._inputs(m)
        for npass in ("first use", "loaded"):
            steps = {}
            for c in cs:
                t0 = clock()
                moe = be._make(w, m, c, None)
                moe.x.copy_(x)
                moe.poison()
                moe.inter2.copy_(inter)
                moe.logits.copy_(logits[0])
                t1 = clock()
                be._step(moe, "up")
                t2 = clock()
                be._step(moe, "up")
                t2b = clock()
                be._verify("up", m, moe, be._reference("up", m, moe))
                t3 = clock()
                stream = torch.cuda.Stream(be.dev)
                stream.wait_stream(torch.cuda.current_stream())
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, stream=stream):
                    for _ in range(GRAPH_CALLS):
                        be._step(moe, "up")
                t4 = clock()
                g2 = torch.cuda.CUDAGraph()
                with torch.cuda.stream(stream):
                    g2.capture_begin()
                    for _ in range(GRAPH_CALLS):
                        be._step(moe, "up")
                    g2.capture_end()
                t5 = clock()
                st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                for i in range(2):
                    st.record()
                    g.replay()
                    en.record()
                    en.synchronize()
                t6 = clock()
                for i in range(15):
                    moe.logits.copy_(logits[(i + 1) % len(logits)])
                    st.record()
                    g.replay()
                    en.record()
                    en.synchronize()
                t7 = clock()
                g.reset()
                g2.reset()
                del g, g2
                t8 = clock()
                gc.collect()
                t9 = clock()
                torch.cuda.empty_cache()
                t10 = clock()
                for name, v in (("make+prep", t1 - t0), ("eager call (load)", t2 - t1), ("eager call 2", t2b - t2),
                                ("verify", t3 - t2b), ("capture (torch.cuda.graph)", t4 - t3),
                                ("capture (raw)", t5 - t4), ("2 replays", t6 - t5), ("15 replays", t7 - t6),
                                ("reset", t8 - t7), ("gc.collect", t9 - t8), ("empty_cache", t10 - t9)):
                    steps.setdefault(name, []).append(1000.0 * v)
            for c in cs[:3]:  # the agent's own measure(), whole: a screening unit and a head-to-head unit
                for reps, name in ((1, "measure() replays=1"), (10, "measure() replays=10")):
                    t0 = time.perf_counter()
                    be.measure("up", c, m, reps)
                    steps.setdefault(name, []).append(1000.0 * (time.perf_counter() - t0))
            rows["%d|%s" % (m, npass)] = {k: round(statistics.median(v), 3) for k, v in steps.items()}
            print("m=%d %s:" % (m, npass))
            for k, v in rows["%d|%s" % (m, npass)].items():
                print("    %-28s %8.2f ms" % (k, v))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
