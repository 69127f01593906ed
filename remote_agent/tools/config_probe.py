# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A few configs of one shape at one batch size, timed in a fresh process by every protocol the agent uses
(issue 19: at fp8 block M = 32 the headroom check timed m16n128k128g16w4s2 at 281 us, paired with the
default at 357 us, while the tune's screen timed it at 354 us in three H200 calls: which one is right?).

    python3 remote_agent/tools/config_probe.py --shape fp8block --m 32 \\
        --configs m64n128k128g32w4s3,m16n128k128g16w4s2,m16n128k128g16w4s4 [--cache DIR] [--rounds 3]

The first config is the reference (the default). Per round and config: an unpaired unit of 1 replay (the
tune's screen), of 10 replays, and one paired with the reference (the check's re-timing, the head-to-head).
--cache: a TRITON_CACHE_DIR to load the kernels from (e.g. the check's, compiled by its CPU pool); without
it a private folder, so this process compiles them on the GPU. Needs a GPU (torch, Triton).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

SHAPES = {
    "qwen3": {"E": 128, "N": 768, "K": 2048, "topk": 8},
    "fp8block": {"E": 256, "N": 256, "K": 7168, "topk": 8, "dtype": "fp8_w8a8", "block_shape": [128, 128]},
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=sorted(SHAPES), default="fp8block")
    ap.add_argument("--m", type=int, default=32)
    ap.add_argument("--configs", required=True, help="comma list of config keys, the reference first")
    ap.add_argument("--cache", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    os.environ["TRITON_CACHE_DIR"] = a.cache or tempfile.mkdtemp(prefix="moetune-probe-")
    from moetune_agent.backends.triton_backend import TritonBackend
    from moetune_agent.kernel_types import KernelConfig, Shape

    d = SHAPES[a.shape]
    shape = Shape(d["E"], d["N"], d["K"], d["topk"], d.get("dtype", "bf16"), tuple(d["block_shape"]) if d.get("block_shape") else None)
    be = TritonBackend(shape, 0, os.environ["TRITON_CACHE_DIR"])
    cfgs = [KernelConfig.from_key(k) for k in a.configs.split(",")]
    ref = cfgs[0]
    rows = {c.key(): {"r1": [], "r10": [], "paired": [], "paired_ref": []} for c in cfgs}
    for _c in cfgs:  # load every kernel once before timing anything
        be.measure("both", _c, a.m, replays=1)
    for rnd in range(a.rounds):
        order = cfgs if rnd % 2 == 0 else list(reversed(cfgs))
        for c in order:
            r = rows[c.key()]
            r["r1"].append(be.measure("both", c, a.m, replays=1).median_us)
            r["r10"].append(be.measure("both", c, a.m, replays=10).median_us)
            if c != ref:
                mine, theirs, _err = be.measure_pair("both", c, ref, a.m, replays=10)
                r["paired"].append(mine.median_us)
                r["paired_ref"].append(theirs.median_us if theirs else float("nan"))
    # The screen's protocol sample by sample (16 timed replays, each with the next of the 16 routings),
    # after 1 and after 5 warm-up replays: a slow sample that follows a routing is the routing's, one that
    # stays first is the warm-up's.
    series = {}
    for c in cfgs:
        calls, launches, _warm = be._protocol("both", a.m, 1)  # pylint: disable=protected-access
        for warm in (1, 5):
            moe, graph = be._prepare("both", c, a.m, calls)  # pylint: disable=protected-access
            try:
                got = be._replays([(moe, graph)], a.m, 16, calls, launches, warm)[0]  # pylint: disable=protected-access
            finally:
                be._release([graph])  # pylint: disable=protected-access
            series["%s warm %d" % (c.key(), warm)] = [round(x, 1) for x in got]
    print("screen protocol, 16 samples; sample i uses routing (i + warm + 1) mod 16:")
    for k, v in series.items():
        print("  %-30s %s" % (k, " ".join("%6.1f" % x for x in v)))
    print("config probe %s M=%d (%s cache), %d rounds; medians over rounds, us" % (
        a.shape, a.m, "given" if a.cache else "private", a.rounds))
    out = {}
    for c in cfgs:
        r = rows[c.key()]
        med = {k: round(statistics.median(v), 2) for k, v in r.items() if v}
        out[c.key()] = dict(med, samples=r, screen_series={k: v for k, v in series.items() if k.startswith(c.key())})
        ratio = ("  paired ratio to the reference %.3f" % (med["paired"] / med["paired_ref"])
                 if "paired" in med else "  (the reference)")
        print("  %-22s 1 replay %8.2f  10 replays %8.2f%s" % (c.key(), med["r1"], med["r10"], ratio))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
