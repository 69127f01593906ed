# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The shipped catalogue judged on the held-out landscapes (issue 43; evaluation only, nothing is fitted):
for each held-out shape and size measured by heldout_bench.py (rows.json: every launch of the space timed
against the server's default in a paired unit), where the headroom check's screen (screen.screened_candidates
with the shipped CATALOGUE: what the fast strategy is seeded with) lands in that landscape, against the same
screen without a catalogue (the default's pipeline neighbours alone).

Per size: seed = the best screened config's landscape ratio over that of the re-timing's winner (reference();
1.0: the screen holds the winner, below 1: it holds a config the landscape timed faster, within its noise), rank =
its rank among the landscape's launches. The landscape ratios are 2-replay paired medians
(noisy: heldout_bench.py's re-timing is what the regret uses); this says whether the prior points near the
winner on shapes it has never seen, not the tuner's regret.

    python3 remote_agent/bench/heldout/catalogue_heldout.py [RUN_DIR ...]   # default: recordings/h100-heldout/call*
"""

from __future__ import annotations

import glob
import json
import os
import sys
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, os.path.dirname(BENCH))
sys.path.insert(0, HERE)

from heldout_bench import geomean, shape_of  # noqa: E402  # pylint: disable=wrong-import-position,import-error
from moetune_agent import space as space_mod  # noqa: E402  # pylint: disable=wrong-import-position
from moetune_agent.strategies import screen
from moetune_agent.kernel_types import KernelConfig  # noqa: E402  # pylint: disable=wrong-import-position

OPS = ("both",)


def reference(r: dict) -> float:
    """The landscape ratio of the re-timing's winner (heldout_bench's regret reference: the landscape's best
    unless a re-timed candidate beat it), so one lucky 2-replay unit does not become the yardstick."""
    land = r["landscape"]
    key, low = r["best"], 1.0
    for k, v in (r.get("retimed") or {}).items():
        if v < low and k in land:
            key, low = k, v
    return land[key]


def screen_in_landscape(entry: dict, m: int, land: Dict[str, float], default_key: str,
                        catalogue, ref: Optional[float] = None) -> Tuple[Optional[float], Optional[int], int]:
    """-> (best screened config's ratio over the landscape's best, its rank, configs screened): configs are
    matched to the landscape by launch (space.launch_key); None where none of the screen was timed."""
    shape = shape_of(entry)
    space = space_mod.build_space(shape, [m], OPS)
    default = KernelConfig.from_key(default_key)
    screened = screen.screened_candidates(shape, [m], OPS, space, {("both", m): default}, catalogue)[("both", m)]
    by_launch = {space_mod.launch_key(KernelConfig.from_key(k), shape, m): v for k, v in land.items()}
    got = [by_launch[space_mod.launch_key(c, shape, m)] for c in screened
           if space_mod.launch_key(c, shape, m) in by_launch]
    if not got:
        return None, None, len(screened)
    best = ref if ref is not None else min(land.values())
    ratio = min(got)
    rank = 1 + sum(1 for v in land.values() if v < ratio)
    return ratio / best, rank, len(screened)


def evaluate(folders: List[str]) -> List[dict]:
    rows = []
    for d in folders:
        with open(os.path.join(d, "rows.json"), encoding="utf-8") as f:
            detail = json.load(f)
        for name, res in detail["shapes"].items():
            for r in res.get("per_m") or []:
                land = r.get("landscape") or {}
                if not land:
                    continue
                row = {"shape": name, "m": r["m"], "launches": len(land)}
                for label, cat in (("shipped", screen.CATALOGUE), ("none", ())):
                    seed, rank, n = screen_in_landscape(res["entry"], r["m"], land, r["default"], cat, reference(r))
                    row[label] = {"seed": round(seed, 4) if seed else None, "rank": rank, "screened": n}
                rows.append(row)
    return rows


def main(argv=None) -> int:
    folders = (argv if argv is not None else sys.argv[1:]) or sorted(
        glob.glob(os.path.join(BENCH, "recordings", "h100-heldout", "call*")))
    rows = evaluate(folders)
    for r in rows:
        print("%-28s m=%5d  shipped: seed %s (rank %s of %d, %d screened)   none: seed %s (rank %s, %d screened)" % (
            r["shape"], r["m"], r["shipped"]["seed"], r["shipped"]["rank"], r["launches"], r["shipped"]["screened"],
            r["none"]["seed"], r["none"]["rank"], r["none"]["screened"]))
    for label in ("shipped", "none"):
        seeds = [r[label]["seed"] for r in rows if r[label]["seed"]]
        print("%-8s seed geomean %s over %d of %d sizes; within 2%% of the reference at %d" % (
            label, round(geomean(seeds), 4) if seeds else None, len(seeds), len(rows),
            sum(1 for s in seeds if s <= 1.02)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
