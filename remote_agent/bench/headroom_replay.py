# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The headroom estimator on REPLAYED H200 landscapes (no GPU): estimate vs the landscape's true gain.

For each recorded landscape (tests/data/h200_*_exhaustive.json.gz, served back by replay.ReplayBackend,
a TEST DOUBLE for the GPU) and each recorded batch size, "the server's config" is a stand-in chosen from
the recorded configs (the recordings hold only the pruned space, where the servers' heuristics mostly
are not):
  heuristic  SGLang's built-in config where it was recorded, else the recorded config nearest to it
             (fewest differing axes) - the figure the issue asks for;
  p50 / p90 / rank3 / best   the landscape's median config, its 90th-percentile-fast one, the 3rd
             fastest and the fastest (nothing to gain): the estimator over the whole range of gains.
True gain = recorded median of the stand-in / recorded median of the landscape's best; the estimate is
HeadroomPlan's from the replayed samples. Within 2 percentage points: |estimate - true| <= 0.02.
--leave-out builds the catalogue without the landscape under test (its own winners excluded): the
figure for a shape the catalogue has never seen.

    python3 remote_agent/bench/headroom_replay.py [--leave-out] [--json OUT]
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from replay import RECORDINGS, ReplayBackend, load_recording, measure_all  # noqa: E402
from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.strategies import screen as screen_mod  # noqa: E402
from moetune_agent.kernel_types import CONFIG_KEYS, KernelConfig  # noqa: E402

STANDINS = ("heuristic", "p50", "p90", "rank3", "best")


def _axes_apart(a, b):
    return sum(1 for k in CONFIG_KEYS if getattr(a, k) != getattr(b, k))


def standin(be, space, m, kind):
    cs = sorted((c for c in space[("both", m)] if (m, c.key()) in be.samples), key=lambda c: (be.truth(m, c), c.key()))
    if kind == "heuristic":
        h = space_mod.server_default_config(be.shape, m)
        if (m, h.key()) in be.samples:
            return h
        return min(cs, key=lambda c: (_axes_apart(c, h), abs(c.BLOCK_SIZE_K - h.BLOCK_SIZE_K), c.key()))
    if kind == "best":
        return cs[0]
    if kind == "rank3":
        return cs[2]
    if kind == "p90":
        return cs[len(cs) // 10]
    return cs[len(cs) // 2]


def catalogue_without(name):
    if name is None:
        return screen_mod.CATALOGUE
    tag = {"qwen3": ("qwen3",), "fp8block": ("fp8block",)}[name]
    return tuple(e for e in screen_mod.CATALOGUE if not any(e[3].endswith(":" + t) for t in tag))


def evaluate(name, kind, leave_out=False, plan_options=None):
    rec = load_recording(RECORDINGS[name])
    be = ReplayBackend(rec)
    sizes = sorted(int(m) for m in rec["samples"])
    space = space_mod.build_space(be.shape, sizes, ("both",))
    defaults = {("both", m): standin(be, space, m, kind) for m in sizes}
    plan = screen_mod.HeadroomPlan(be.shape, sizes, ("both",), space, defaults,
                                     catalogue=catalogue_without(name if leave_out else None), **(plan_options or {}))
    screen = plan.screen_units()
    measured = measure_all(be, screen)
    while True:
        retime = plan.retime_units(measured)
        if not retime:
            break
        measured += measure_all(be, retime)
    rows = plan.estimate(measured)
    out = []
    for r in rows:
        m = r["m"]
        best = be.best_truth(space, m)
        true = be.truth(m, defaults[("both", m)]) / best
        out.append({"m": m, "default": defaults[("both", m)].key(), "true_gain": round(true, 4),
                    "estimate": r["gain"], "error_pp": round(100 * (r["gain"] - true), 2),
                    "best_screened": (r.get("best_config") and KernelConfig.from_dict(r["best_config"]).key()),
                    "units": sum(1 for x in measured if x.unit.m == m)})
    return {"landscape": name, "default": kind, "rows": out, "units": be.calls, "replays": be.replays,
            "model_gpu_s": round(be.model_s, 3), "sizes": len(sizes)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--leave-out", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    allres = []
    for name in sorted(RECORDINGS):
        for kind in STANDINS:
            res = evaluate(name, kind, a.leave_out)
            allres.append(res)
            within = sum(1 for r in res["rows"] if abs(r["error_pp"]) <= 2.0)
            print("%-8s default=%-9s within 2pp %d/%d  units %d  model GPU %.2f s" % (
                name, kind, within, len(res["rows"]), res["units"], res["model_gpu_s"]))
            for r in res["rows"]:
                print("    m=%5d default %-18s true %.3fx est %.3fx (%+.1f pp) best screened %s" % (
                    r["m"], r["default"], r["true_gain"], r["estimate"], r["error_pp"], r["best_screened"]))
    for kind in STANDINS:
        rows = [r for res in allres if res["default"] == kind for r in res["rows"]]
        print("TOTAL default=%-9s within 2 pp: %d of %d sizes" % (
            kind, sum(1 for r in rows if abs(r["error_pp"]) <= 2.0), len(rows)))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(allres, f, indent=1)


if __name__ == "__main__":
    main()
