# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Leave one shape out (issue 43 point 2): what the agent's prior knowledge gives a user whose shape it has
never seen, replayed on the CPU over the recorded exhaustive landscapes (bench/replay.py: ReplayBackend, a
TEST DOUBLE serving recorded H200 samples back).

The prior knowledge is screen.CATALOGUE: the fast strategy seeds every size with the headroom check's
screen (tunerun/runner.headroom_seeds), and the check screens the catalogue's nearest configs. For each
recorded landscape and each catalogue variant:
  shipped        the catalogue as shipped (it holds this landscape's own winners: in-sample);
  leave-one-out  every entry recorded on this shape removed (what a user with a new shape gets);
  leave-one-out-bytes  the same entries, each re-indexed by weight bytes: an entry recorded at another weight
                 size has its BLOCK_SIZE_K scaled by recorded bytes / target bytes (the same bytes per K step:
                 fp8 BK 128 stands for bf16 BK 64) and counts as the same weight size (an experiment of issue
                 43's "change how it is indexed"; the shipped check does not do this);
  none           no catalogue (the strategy's own search, and the check's default neighbours alone);
it prints
  seed    the best catalogue seed's recorded median over the landscape's best, per size (does the
          catalogue point at the winner?);
  tune    the replayed fast tune (default phase, strategy with the seeds, head-to-head: replay.run_pipeline)
          final config's recorded median over the landscape's best: the regret a user gets;
  check   the headroom check's estimate against the true gain, SGLang's default stand-in
          (bench/headroom_replay.py's "heuristic"), within 2 percentage points.
The strategy's constants were fitted on these same two landscapes; they are not left out here (they are
code, not data), which RESULTS.md says.

    python3 remote_agent/bench/heldout/leave_one_out.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, BENCH)

from replay import RECORDINGS, ReplayBackend, geomean, load_recording, measure_all, run_pipeline  # noqa: E402
from moetune_agent import space as space_mod  # noqa: E402  # pylint: disable=wrong-import-order
from moetune_agent.strategies import screen
from moetune_agent.kernel_types import KernelConfig  # noqa: E402  # pylint: disable=wrong-import-order

VARIANTS = ("shipped", "leave-one-out", "leave-one-out-bytes", "none")
OPS = ("both",)


def source_shape(entry: tuple) -> str:
    """The recorded shape a catalogue entry came from ('exhaustive:qwen3' -> 'qwen3')."""
    return entry[3].split(":", 1)[1]


def catalogue_for(name: str, variant: str, catalogue: Sequence[tuple] = screen.CATALOGUE) -> Tuple[tuple, ...]:
    """The catalogue a tune of recorded shape `name` sees under variant."""
    if variant == "shipped":
        return tuple(catalogue)
    if variant == "leave-one-out":
        return tuple(e for e in catalogue if source_shape(e) != name)
    if variant == "leave-one-out-bytes":
        return tuple(e for e in catalogue if source_shape(e) != name)   # re-indexed per target: by_bytes
    if variant == "none":
        return ()
    raise ValueError("unknown variant %r" % variant)


def by_bytes(catalogue: Sequence[tuple], target_wbytes: int) -> Tuple[tuple, ...]:
    """Entries recorded at another weight size re-indexed for target_wbytes: BLOCK_SIZE_K x recorded bytes /
    target bytes (kept within 32-256), and the entry's weight size set to the target's (HeadroomPlan then
    ranks it by tokens per expert alone)."""
    out = []
    for key, t, wb, src in catalogue:
        if wb != target_wbytes:
            c = KernelConfig.from_key(key)
            bk = max(32, min(256, c.BLOCK_SIZE_K * wb // target_wbytes))
            key = KernelConfig(c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, bk, c.GROUP_SIZE_M, c.num_warps, c.num_stages).key()
        out.append((key, t, target_wbytes, src))
    return tuple(out)


def seeds_for(be: ReplayBackend, sizes: Sequence[int], catalogue: Sequence[tuple]) -> Dict[Tuple[str, int], List[KernelConfig]]:
    """The fast strategy's extra seeds (runner.headroom_seeds) for this catalogue: the check's screen."""
    space = space_mod.build_space(be.shape, sizes, OPS)
    defaults = {(op, m): be.default_config(op, m) for op in OPS for m in sizes}
    return screen.screened_candidates(be.shape, sizes, OPS, space, defaults, catalogue)


class _Seeded(object):
    """run_pipeline's options with the seeds of one catalogue (as Run._strategy passes them)."""

    def __init__(self, seeds):
        self.options = {"same_launch": True, "extra_seeds": seeds}


def seed_regret(be: ReplayBackend, sizes: Sequence[int], seeds) -> Dict[int, Optional[float]]:
    """Per size: the best recorded seed's median over the landscape's best (None: no seed recorded)."""
    space = space_mod.build_space(be.shape, sizes, OPS)
    out: Dict[int, Optional[float]] = {}
    for m in sizes:
        best = be.best_truth(space, m)
        got = [be.truth(m, c) for c in seeds.get(("both", m), []) if (m, c.key()) in be.samples]
        out[m] = round(min(got) / best, 4) if got else None
    return out


def check_accuracy(name: str, rec: dict, catalogue: Sequence[tuple]) -> dict:
    """The headroom check replayed with this catalogue, SGLang's default stand-in (headroom_replay)."""
    from headroom_replay import standin  # pylint: disable=import-outside-toplevel

    be = ReplayBackend(rec)
    sizes = sorted(int(m) for m in rec["samples"])
    space = space_mod.build_space(be.shape, sizes, OPS)
    defaults = {("both", m): standin(be, space, m, "heuristic") for m in sizes}
    plan = screen.HeadroomPlan(be.shape, sizes, OPS, space, defaults, catalogue=catalogue)
    measured = measure_all(be, plan.screen_units())
    while True:
        more = plan.retime_units(measured)
        if not more:
            break
        measured += measure_all(be, more)
    rows = []
    for r in plan.estimate(measured):
        m = r["m"]
        true = be.truth(m, defaults[("both", m)]) / be.best_truth(space, m)
        rows.append({"m": m, "true_gain": round(true, 4), "estimate": r["gain"], "error_pp": round(100 * (r["gain"] - true), 2)})
    return {"landscape": name, "rows": rows, "within_2pp": sum(1 for r in rows if abs(r["error_pp"]) <= 2.0),
            "sizes": len(rows), "units": be.calls}


def evaluate(name: str, variant: str, catalogue: Sequence[tuple] = screen.CATALOGUE) -> dict:
    """One recorded landscape under one catalogue variant: seed regret, the replayed tune's regret, the check."""
    rec = load_recording(RECORDINGS[name])
    be = ReplayBackend(rec)
    sizes = sorted(int(m) for m in rec["samples"])
    cat = catalogue_for(name, variant, catalogue)
    if variant == "leave-one-out-bytes":
        cat = by_bytes(cat, space_mod.element_bytes(be.shape.dtype)[1])
    seeds = seeds_for(be, sizes, cat)
    res = run_pipeline(rec, "fast", _Seeded(seeds).options)
    per_m = [{"m": r["m"], "final_cfg": r["final_cfg"], "final_regret": round(r["final_regret"], 4),
              "strategy_regret": round(r["strategy_regret"], 4)} for r in res["per_m"]]
    sr = seed_regret(be, sizes, seeds)
    for r in per_m:
        r["seed_regret"] = sr.get(r["m"])
    chk = check_accuracy(name, rec, cat)
    return {"landscape": name, "variant": variant, "catalogue_entries": len(cat), "sizes": sizes, "per_m": per_m,
            "tune_regret_geomean": round(geomean([r["final_regret"] for r in per_m]), 4),
            "tune_regret_worst": round(max(r["final_regret"] for r in per_m), 4),
            "seed_regret_geomean": round(geomean([r["seed_regret"] for r in per_m if r["seed_regret"]]), 4)
            if any(r["seed_regret"] for r in per_m) else None,
            "units": res["units"], "model_gpu_s": res["model_gpu_s"],
            "check_within_2pp": chk["within_2pp"], "check_sizes": chk["sizes"], "check_rows": chk["rows"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    out = []
    for name in sorted(RECORDINGS):
        for variant in VARIANTS:
            r = evaluate(name, variant)
            out.append(r)
            print("%-8s %-13s catalogue %2d entries | tune regret geomean %.4f worst %.4f (%d units, model GPU %.1f s)"
                  " | seed regret geomean %s | check within 2 pp %d of %d" % (
                      name, variant, r["catalogue_entries"], r["tune_regret_geomean"], r["tune_regret_worst"],
                      r["units"], r["model_gpu_s"], r["seed_regret_geomean"], r["check_within_2pp"], r["check_sizes"]))
            print("    " + "  ".join("m=%d tune %.4f seed %s" % (p["m"], p["final_regret"], p["seed_regret"])
                                   for p in r["per_m"]))
            print("    check error pp: " + "  ".join("m=%d %+.1f" % (c["m"], c["error_pp"]) for c in r["check_rows"]),
                  flush=True)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
