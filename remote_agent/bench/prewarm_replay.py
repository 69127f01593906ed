# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""How much of a tune's compile work the check's prewarm guesses, on REPLAYED H200 landscapes (no GPU).

For each recorded landscape (tests/data/h200_*_exhaustive.json.gz served back by replay.ReplayBackend, a
TEST DOUBLE for the GPU; 5 batch sizes): the headroom check runs on it (SGLang's heuristic as the server's
config, as bench/headroom_replay.py), firstphase.plan_compiles() plans the prewarm from the check's timings,
then the tune's fast strategy runs on the same landscape with the check's seeds (as runner.py gives them).
Printed per landscape and per plan:
  kernels   distinct binaries the plan compiles (moetune's own kernel: one per tile, warps and stages;
            GROUP_SIZE_M is a run-time argument) and their summed space.compile_cost (relative)
  covered   of the binaries the tune measures, those the plan compiled before it: all, in the tune's
            first phase, in its later phases; and the compile cost of the tune's binaries left to
            compile (what the tune's pool still has to do), as a fraction of the whole
Plans: "phase1" (the tune's first phase and the check's seeds only) and "surrogate" (every phase of the
strategy run against the check's timings). Counts of the replayed run; no time is measured.

    python3 remote_agent/bench/prewarm_replay.py [--json OUT]
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from headroom_replay import standin  # noqa: E402
from replay import RECORDINGS, ReplayBackend, load_recording, measure_all  # noqa: E402
from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.strategies import firstphase, screen
from moetune_agent.strategies import make_strategy  # noqa: E402


def binary(u):
    c = u.cfg
    return (u.op, c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K, c.num_warps, c.num_stages)


def cost(keys):
    from moetune_agent.kernel_types import KernelConfig
    return sum(space_mod.compile_cost(KernelConfig(k[1], k[2], k[3], 1, k[4], k[5])) for k in keys)


def evaluate(name):
    rec = load_recording(RECORDINGS[name])
    be = ReplayBackend(rec)
    sizes = sorted(int(m) for m in rec["samples"])
    ops = ("both",)
    space = space_mod.build_space(be.shape, sizes, ops)
    defaults = {("both", m): standin(be, space, m, "heuristic") for m in sizes}
    plan = screen.HeadroomPlan(be.shape, sizes, ops, space, defaults)
    checked = measure_all(be, plan.screen_units())
    while True:
        more = plan.retime_units(checked)
        if not more:
            break
        checked += measure_all(be, more)
    # the tune, phase by phase, with the check's seeds
    st = make_strategy("fast", space, sizes, ops, be.shape,
                       extra_seeds=screen.screened_candidates(be.shape, sizes, ops, space, defaults))
    measured, first = [], None
    while True:
        phase = st.next_phase(measured)
        if phase is None:
            break
        if first is None:
            first = {binary(u) for u in phase}
        measured += measure_all(be, phase)
    tune = {binary(x.unit) for x in measured}
    later = tune - first
    out = {"landscape": name, "sizes": sizes, "tune_kernels": len(tune), "tune_cost": round(cost(tune)),
           "check_units": len(checked), "plans": {}}
    for label, meas in (("phase1", []), ("surrogate", checked)):
        units, bounds = firstphase.plan_compiles(be.shape, sizes, ops, space, "fast", meas,
                                               defaults if meas else None)
        planned = {binary(u) for u in units}
        left = tune - planned
        out["plans"][label] = {
            "kernels": len(planned), "cost": round(cost(planned)), "groups": len(bounds),
            "covered": len(tune & planned), "covered_first": len(first & planned),
            "covered_later": len(later & planned), "later": len(later),
            "left_cost_fraction": round(cost(left) / max(1.0, cost(tune)), 3),
            "wasted": len(planned - tune)}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write every figure here")
    a = ap.parse_args()
    rows = [evaluate(n) for n in sorted(RECORDINGS)]
    print("REPLAYED H200 landscapes (5 sizes); counts of binaries, no time measured")
    print("%-9s %-10s %7s %7s | %-24s %8s %6s %9s" % ("landscape", "plan", "kernels", "wasted", "tune's covered "
                                                     "(all/first/later)", "of", "left", "cost left"))
    for r in rows:
        for label, p in r["plans"].items():
            print("%-9s %-10s %7d %7d | %8d %7d %7d %8d %6d %8.0f%%" % (
                r["landscape"], label, p["kernels"], p["wasted"], p["covered"], p["covered_first"],
                p["covered_later"], r["tune_kernels"], r["tune_kernels"] - p["covered"],
                100 * p["left_cost_fraction"]))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
