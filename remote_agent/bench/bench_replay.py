# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 13: the fast strategy's cost and regret on the replayed H200 landscapes (no GPU needed).

    python3 remote_agent/bench/bench_replay.py [--json OUT.json]

For each recorded landscape (bench/replay.py: every sample of exhaustive H200 runs at batch sizes 1,
16, 64, 256, 1024) it runs the whole decision as tunerun/phases.py does (default phase, strategy, checks,
head-to-head against the server's default) with the strategy before issue 13 and now, with 4 anchors
(the default) and with 2 (three sizes reached by transfer between far-apart neighbours), and prints:
units timed, timed replays, strategy phases + head-to-head phases (the sequential rounds), the
MODELLED GPU seconds (replay.py's model: 20 ms per unit + the recorded latency of every replay; not a
measurement), and the regret of the final choice against the exhaustive best (recorded medians).
Then the same counts for all 18 default batch sizes on the SYNTHETIC backend (a simulated landscape:
counts only, no regret; the recordings have no ground truth at the other 13 sizes).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import replay  # noqa: E402
from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.backends.synthetic import SyntheticBackend  # noqa: E402
from moetune_agent.kernel_types import CandidateError, Shape, batch_sizes_default  # noqa: E402
from moetune_agent.strategies import make_strategy  # noqa: E402
from moetune_agent.work import Measurement  # noqa: E402

SYN_SHAPES = {"qwen3": Shape(E=128, N=768, K=2048, topk=8, dtype="bf16"),
              "fp8block": Shape(E=256, N=256, K=7168, topk=8, dtype="fp8_w8a8", block_shape=(128, 128))}


def synthetic_counts(shape, options):
    be = SyntheticBackend(shape)
    sizes = batch_sizes_default()
    space = space_mod.build_space(shape, sizes, ("both",))
    st = make_strategy("fast", space, sizes, ("both",), shape, **options)
    meas, phases = [], 0
    while True:
        ph = st.next_phase(meas)
        if ph is None:
            break
        phases += 1
        for u in ph:
            try:
                meas.append(Measurement(u, be.measure(u.op, u.cfg, u.m, u.replays).samples_us))
            except CandidateError as e:
                meas.append(Measurement(u, None, e.kind, e.message))
    return {"units": len(meas), "replays": sum(x.unit.replays for x in meas), "phases": phases}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write every figure here")
    a = ap.parse_args()
    out = {"replayed": {}, "synthetic_18_sizes": {}}
    print("REPLAYED H200 landscapes (5 recorded sizes); model_gpu_s is a model, not a measurement")
    print("%-9s %-7s %3s %6s %7s %9s %11s %9s %9s  per-size regret" % (
        "shape", "version", "anc", "units", "replays", "phases", "model_gpu_s", "geomean", "worst"))
    for name, path in replay.RECORDINGS.items():
        rec = replay.load_recording(path)
        exh = replay.exhaustive_cost(rec)
        out["replayed"][name] = {"exhaustive": exh}
        for n_anchors in (4, 2):
            for label, opts, h2h in (("before", replay.BEFORE_ISSUE13, replay.BEFORE_ISSUE13_H2H), ("now", {}, {})):
                r = replay.run_pipeline(rec, options=dict(opts, n_anchors=n_anchors), h2h_options=h2h)
                out["replayed"][name]["%s_%d" % (label, n_anchors)] = r
                print("%-9s %-7s %3d %6d %7d %4d + %-4d %11.2f %9.4f %9.4f  %s" % (
                    name, label, n_anchors, r["units"], r["replays"], r["strategy_phases"], r["h2h_phases"],
                    r["model_gpu_s"], r["final_regret_geomean"], r["final_regret_worst"],
                    " ".join("%d:%.4f" % (p["m"], p["final_regret"]) for p in r["per_m"])))
        print("%-9s %-7s %3s %6d %7d %9s %11.2f" % (name, "exhaust", "-", exh["units"], exh["replays"], "1",
                                                     exh["model_gpu_s"]))
    print()
    print("SYNTHETIC landscape (simulated), all 18 default sizes, strategy phases only (no head-to-head)")
    for name, shape in SYN_SHAPES.items():
        for label, opts in (("before", replay.BEFORE_ISSUE13), ("now", {})):
            c = synthetic_counts(shape, opts)
            out["synthetic_18_sizes"]["%s_%s" % (name, label)] = c
            print("%-9s %-7s units %5d  replays %5d  phases %3d" % (name, label, c["units"], c["replays"],
                                                                  c["phases"]))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
