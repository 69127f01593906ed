# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 22: the fast strategy's refinement at the sizes between the anchors (strategies/fast.py, step D
of the other sizes) from the best two seeds against the best one (LEVEL_LEADERS), on the CPU.

    python3 remote_agent/bench/level_leaders_replay.py [--json OUT.json]

1. Quality. The whole decision (strategy, head-to-head) on the replayed H200 landscapes (bench/replay.py:
   recorded samples at M = 1, 16, 64, 256, 1024). With the default 4 anchors only one of those five sizes is
   tuned as an "other size"; with n_anchors 2 (anchors 1 and 1024) three are (64, then 16 and 256), which
   is what the step decides at 14 of a real tune's 18 sizes. Per setting: units, modelled GPU seconds (a
   model, see replay.py) and the regret against the exhaustive best per size.
2. Work. The fast strategy driven on the SYNTHETIC backend (a simulated landscape: counts only) for the
   own kernel's `up` and `up+down` tunes at the 18 default sizes: units per setting and per round.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import replay  # noqa: E402
from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.backends.synthetic import SyntheticBackend  # noqa: E402
from moetune_agent.kernel_types import CandidateError, Shape, batch_sizes_default  # noqa: E402
from moetune_agent.strategies import make_strategy  # noqa: E402
from moetune_agent.work import Measurement  # noqa: E402

BF16 = Shape(E=128, N=768, K=2048, topk=8, dtype="bf16")
LEADERS = (2, 1)


def synthetic_units(ops, leaders: int) -> dict:
    sizes = list(batch_sizes_default())
    space = space_mod.build_space(BF16, sizes, ops)
    st = make_strategy("fast", space, sizes, ops, BF16, level_leaders=leaders, same_launch=True)
    be = SyntheticBackend(BF16)
    meas = []
    while True:
        ph = st.next_phase(meas)
        if ph is None:
            break
        for u in ph:
            try:
                meas.append(Measurement(u, be.measure(u.op, u.cfg, u.m, u.replays).samples_us))
            except CandidateError as e:
                meas.append(Measurement(u, None, e.kind, e.message))
    rounds = Counter(x.unit.round for x in meas)
    return {"units": len(meas), "per_round": {str(k): v for k, v in sorted(rounds.items())}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write every figure here")
    a = ap.parse_args()
    out: dict = {"replayed": {}, "synthetic": {}}
    print("REPLAYED H200 landscapes (model_gpu_s is a model, not a measurement)")
    print("%-9s %-9s %-7s %6s %11s %9s %9s  per-size regret" % ("shape", "anchors", "leaders", "units", "model_gpu_s",
                                                                "geomean", "worst"))
    for rec_name, path in replay.RECORDINGS.items():
        rec = replay.load_recording(path)
        for anchors in (4, 2):
            for leaders in LEADERS:
                r = replay.run_pipeline(rec, options={"n_anchors": anchors, "level_leaders": leaders,
                                                      "same_launch": True})
                out["replayed"]["%s|%d|%d" % (rec_name, anchors, leaders)] = {
                    k: r[k] for k in ("units", "model_gpu_s", "final_regret_geomean", "final_regret_worst")}
                print("%-9s %-9d %-7d %6d %11.2f %9.4f %9.4f  %s" % (
                    rec_name, anchors, leaders, r["units"], r["model_gpu_s"], r["final_regret_geomean"],
                    r["final_regret_worst"], " ".join("%d:%.4f" % (p["m"], p["final_regret"]) for p in r["per_m"])))
    print()
    print("SYNTHETIC 18-size tunes (simulated landscape: unit counts only)")
    for ops in (("up",), ("up", "down")):
        for leaders in LEADERS:
            r = synthetic_units(ops, leaders)
            out["synthetic"]["%s|%d" % ("+".join(ops), leaders)] = r
            print("%-8s leaders %d: %5d units  per round %s" % ("+".join(ops), leaders, r["units"], r["per_round"]))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
