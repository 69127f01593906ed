# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The headroom check (issue 19): before spending a tune's GPU minutes, how much is there to gain?

On the host's GPU, for the spec's shape, in seconds: time what the server runs today (the backend's
default: the server backend asks the server's own lookup - its shipped or existing file, else its
heuristic; the Triton and synthetic backends can only assume the built-in heuristic), a screen of the
candidates most likely to win, and the HBM floor; then say per range of batch sizes what a full tune is
likely to gain.

The screen (HeadroomPlan): per (op, batch size)
  * catalogue: the configs that won (or came within 1% of the winner) in every H200 landscape recorded in
    this repository (bench/headroom_catalogue.py regenerates CATALOGUE), nearest first in tokens per
    expert (M * topk / E: where the regime changes, docs/servers.md section 7) and preferring the same weight
    size, BLOCK_SIZE_M clamped to what the space allows at this size; NEAREST of them, one per GROUP_SIZE_M
    family (the variants time within noise of each other);
  * the default's neighbours: its config with one or two more pipeline stages (at decode sizes the
    default tile is often right and only its pipeline is short);
  then re-timing (retime_units): round 1 the two best screened, round 2 round 1's best (one round's
    medians are noisy: the winner's curse, docs/servers.md section 7), each in a unit paired with the
    default (Unit.pair: the two alternate replay by replay, as in the tune's head-to-head), replays
    scaled to the call's time. Issue 19 on the H200: 231 units and 32 kernels took 18.1 s; this screen
    is ~5 units and ~1.4 kernels per size.
Why this screen (bench/headroom_replay.py on the recorded landscapes): a catalogue chosen by tokens per
expert reaches within 2% of the landscape's best at the recorded sizes where the default's own
neighbourhood does not (the regime change above M ~ 128 moves the winner several axes away), and the
re-timing rounds keep single-replay luck out of the estimate.

Estimate per size: gain = default / best re-timed (1.0 when nothing screened beats the default by more
than TIE: a tune keeps the default then); bound = default / HBM floor (no config can beat the floor).
Verdict per range of consecutive sizes of the same class (none < 1.02 <= small < 1.10 <= large).

Standard library only here; the measuring runs on the scheduler's GPU worker (scheduler.py).
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import options, space as space_mod
from .engine import bytecode
from .backends import AUTO, SERVER, SYNTHETIC, is_simulated
from .kernel_types import KernelConfig, Shape
from .work import Measurement, Unit, median as _median, timed_replays

SCREEN_ROUND = 0
RETIME_ROUND = 1       # rounds 1 and 2: the interleaved re-timing rounds
SCREEN_REPLAYS = 2
RETIME_TOP = 2         # screened configs re-timed in the first round (the second round: the best of them)
NEAREST = 3            # catalogue configs per size
NEAR_TIE = 0.01        # a default within 1% of the best screened is re-timed too (one screening replay pair
                       # can flip a tie either way)
CLEAR = 1.10           # a first-round gain this large is decided there: one round (no second)
TIE = 0.005            # a screened config within 0.5% of the default: the tune would keep the default
NONE_BELOW = 1.02      # gain classes for the verdict
LARGE_FROM = 1.10

# (config key, tokens per expert where it won, weight bytes, source): bench/headroom_catalogue.py
CATALOGUE = (
    ('m16n32k128g16w4s5', 0.0312, 1, 'exhaustive:fp8block'),
    ('m16n32k128g1w4s5', 0.0312, 1, 'exhaustive:fp8block'),
    ('m16n32k128g32w4s5', 0.0312, 1, 'exhaustive:fp8block'),
    ('m16n128k128g16w4s3', 0.5, 1, 'exhaustive:fp8block'),
    ('m16n128k128g1w4s3', 0.5, 1, 'exhaustive:fp8block'),
    ('m16n128k128g32w4s3', 0.5, 1, 'exhaustive:fp8block'),
    ('m16n128k128g64w4s3', 2.0, 1, 'exhaustive:fp8block'),
    ('m16n128k128g32w4s3', 2.0, 1, 'exhaustive:fp8block'),
    ('m16n128k128g16w4s3', 2.0, 1, 'exhaustive:fp8block'),
    ('m16n128k128g64w4s3', 8.0, 1, 'exhaustive:fp8block'),
    ('m16n128k128g32w4s3', 8.0, 1, 'exhaustive:fp8block'),
    ('m16n128k128g16w4s3', 8.0, 1, 'exhaustive:fp8block'),
    ('m64n128k128g16w4s4', 32.0, 1, 'exhaustive:fp8block'),
    ('m64n128k128g16w4s3', 32.0, 1, 'exhaustive:fp8block'),
    ('m64n128k128g32w4s4', 32.0, 1, 'exhaustive:fp8block'),
    ('m16n32k64g16w4s5', 0.0625, 2, 'exhaustive:qwen3'),
    ('m16n32k128g32w4s5', 0.0625, 2, 'exhaustive:qwen3'),
    ('m16n32k64g32w4s5', 0.0625, 2, 'exhaustive:qwen3'),
    ('m16n64k128g1w4s3', 1.0, 2, 'exhaustive:qwen3'),
    ('m16n64k128g64w4s3', 1.0, 2, 'exhaustive:qwen3'),
    ('m16n64k128g1w8s3', 1.0, 2, 'exhaustive:qwen3'),
    ('m16n32k128g16w4s4', 4.0, 2, 'exhaustive:qwen3'),
    ('m16n64k128g1w4s4', 4.0, 2, 'exhaustive:qwen3'),
    ('m16n32k128g1w4s4', 4.0, 2, 'exhaustive:qwen3'),
    ('m32n128k128g1w4s2', 16.0, 2, 'exhaustive:qwen3'),
    ('m32n128k128g16w4s2', 16.0, 2, 'exhaustive:qwen3'),
    ('m32n64k128g16w4s2', 16.0, 2, 'exhaustive:qwen3'),
    ('m128n256k64g1w8s4', 64.0, 2, 'exhaustive:qwen3'),
    ('m128n128k64g1w8s3', 64.0, 2, 'exhaustive:qwen3'),
    ('m128n256k64g16w8s4', 64.0, 2, 'exhaustive:qwen3'),
    ('m16n64k64g1w4s5', 0.0625, 2, 'fast:qwen3'),
    ('m16n32k64g32w4s4', 0.125, 2, 'fast:qwen3'),
    ('m16n64k128g1w4s2', 0.25, 2, 'fast:qwen3'),
    ('m16n64k128g1w4s3', 0.5, 2, 'fast:qwen3'),
    ('m16n32k128g16w4s3', 1.5, 2, 'fast:qwen3'),
    ('m16n64k128g1w4s3', 2.0, 2, 'fast:qwen3'),
    ('m16n32k128g16w4s3', 3.0, 2, 'fast:qwen3'),
    ('m16n64k128g1w8s2', 4.0, 2, 'fast:qwen3'),
    ('m16n128k128g1w8s2', 6.0, 2, 'fast:qwen3'),
    ('m16n128k128g1w8s2', 8.0, 2, 'fast:qwen3'),
    ('m64n128k64g1w8s4', 32.0, 2, 'fast:qwen3'),
    ('m128n256k64g1w8s4', 96.0, 2, 'fast:qwen3'),
    ('m128n256k64g1w8s4', 128.0, 2, 'fast:qwen3'),
    ('m128n256k64g1w8s4', 192.0, 2, 'fast:qwen3'),
    ('m128n256k64g16w8s4', 256.0, 2, 'fast:qwen3'),
    ('m16n64k128g64w4s5', 0.0625, 1, 'fast:fp8block'),
    ('m16n128k128g32w4s4', 0.125, 1, 'fast:fp8block'),
    ('m16n128k128g64w4s4', 0.25, 1, 'fast:fp8block'),
    ('m16n128k128g16w4s2', 0.75, 1, 'fast:fp8block'),
    ('m16n128k128g16w4s2', 1.0, 1, 'fast:fp8block'),
    ('m16n128k128g32w4s3', 1.5, 1, 'fast:fp8block'),
    ('m16n128k128g64w4s3', 3.0, 1, 'fast:fp8block'),
    ('m16n128k128g64w4s3', 4.0, 1, 'fast:fp8block'),
    ('m32n128k128g32w4s3', 16.0, 1, 'fast:fp8block'),
    ('m64n256k128g32w8s4', 48.0, 1, 'fast:fp8block'),
    ('m64n256k128g64w8s4', 64.0, 1, 'fast:fp8block'),
    ('m64n256k128g64w8s4', 96.0, 1, 'fast:fp8block'),
    ('m64n256k128g64w8s4', 128.0, 1, 'fast:fp8block'),
    ('m16n64k64g32w4s4', 0.125, 2, 'server:qwen3'),
    ('m16n64k128g16w4s2', 0.25, 2, 'server:qwen3'),
    ('m16n64k128g1w4s3', 1.5, 2, 'server:qwen3'),
    ('m16n64k128g1w4s4', 3.0, 2, 'server:qwen3'),
    ('m16n64k128g1w4s3', 4.0, 2, 'server:qwen3'),
    ('m16n128k128g1w4s2', 6.0, 2, 'server:qwen3'),
    ('m16n128k128g1w4s2', 8.0, 2, 'server:qwen3'),
    ('m64n128k64g1w8s3', 32.0, 2, 'server:qwen3'),
)


def _wbytes(dtype: Optional[str]) -> int:
    return space_mod.element_bytes(dtype)[1]


def _but_group(c: KernelConfig) -> tuple:
    return (c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K, c.num_warps, c.num_stages)


def tokens_per_expert(shape: Shape, m: int) -> float:
    return float(m) * shape.topk / max(1, shape.E)


class HeadroomPlan(object):
    """The screen and the estimate; a pure function of the measurements (testable on replays)."""

    def __init__(self, shape: Shape, sizes: Sequence[int], ops: Sequence[str],
                 space: Dict[Tuple[str, int], Sequence[KernelConfig]],
                 defaults: Dict[Tuple[str, int], KernelConfig], catalogue: Sequence[tuple] = CATALOGUE,
                 nearest: int = NEAREST, neighbours: bool = True):
        self.shape = shape
        self.sizes = sorted(set(sizes))
        self.ops = tuple(ops)
        self.space = space
        self.defaults = dict(defaults)
        self.catalogue = list(catalogue)
        self.nearest = nearest
        self.neighbours = neighbours
        self._in_space = {k: set(v) for k, v in space.items()}

    # -- candidates ------------------------------------------------------------------------------------
    def _clamp(self, op: str, m: int, cfg: KernelConfig) -> Optional[KernelConfig]:
        allowed = self._in_space.get((op, m), set())
        if cfg in allowed:
            return cfg
        for bm in (256, 128, 64, 32, 16):
            if bm < cfg.BLOCK_SIZE_M:
                c = KernelConfig(bm, cfg.BLOCK_SIZE_N, cfg.BLOCK_SIZE_K, cfg.GROUP_SIZE_M, cfg.num_warps,
                                 cfg.num_stages)
                if c in allowed:
                    return c
        return None

    def candidates(self, op: str, m: int) -> List[KernelConfig]:
        """The screened configs at (op, m), the default excluded: the NEAREST catalogue configs by
        tokens per expert, then the default's two pipeline neighbours (one and two more stages)."""
        d = self.defaults[(op, m)]
        seen = {_but_group(d)}
        out = self._nearest(op, m, seen, self.nearest)
        if self.neighbours:
            base = dataclasses.replace(d, USE_TMA=None)
            for c in (dataclasses.replace(base, num_stages=base.num_stages + 1),
                      dataclasses.replace(base, num_stages=base.num_stages + 2)):
                if c in self._in_space.get((op, m), set()) and _but_group(c) not in seen:
                    seen.add(_but_group(c))
                    out.append(c)
        return out

    def _nearest(self, op: str, m: int, seen: set, count: int) -> List[KernelConfig]:
        """The count catalogue configs nearest to (op, m) by tokens per expert, in the space, none of
        whose GROUP_SIZE_M-less form is in seen (which grows with them)."""
        t = max(tokens_per_expert(self.shape, m), 1e-6)
        wb = _wbytes(self.shape.dtype)
        scored = []
        for i, (key, te, web, _src) in enumerate(self.catalogue):
            dist = abs(math.log2(max(te, 1e-6) / t)) + (0.0 if web == wb else 1.5)
            scored.append((dist, i, key))
        scored.sort()
        out: List[KernelConfig] = []
        # GROUP_SIZE_M variants of one config time within noise of each other in every recorded landscape
        # (e.g. qwen3 M=16: g1, g64, g32 within 0.3%): one of them per screen slot, so the NEAREST slots
        # hold different tiles / pipelines.
        for _dist, _i, key in scored:
            if len(out) >= count:
                break
            c = self._clamp(op, m, KernelConfig.from_key(key))
            if c is not None and _but_group(c) not in seen:
                seen.add(_but_group(c))
                out.append(c)
        return out

    def likely_units(self) -> List[Unit]:
        """Before the server's defaults are known (the GPU worker's early facts: issue 19's start-up):
        the catalogue configs the screen will time whatever the defaults are, the NEAREST at each size
        and one more (the screen skips the one the default stands for), to compile while the GPU worker
        starts. A superset of the screen's catalogue part; defaults and their neighbours come later."""
        units = []
        for m in self.sizes:
            for op in self.ops:
                units.extend(Unit(op, c, m, SCREEN_REPLAYS, SCREEN_ROUND)
                             for c in self._nearest(op, m, set(), self.nearest + 1))
        return units

    def screened_candidates(self) -> Dict[Tuple[str, int], List[KernelConfig]]:
        """(op, m) -> the configs the screen times there (the default excluded): see the module
        function screened_candidates()."""
        return {(op, m): self.candidates(op, m) for m in self.sizes for op in self.ops}

    # -- the work --------------------------------------------------------------------------------------
    def screen_units(self) -> List[Unit]:
        units = []
        for m in self.sizes:
            for op in self.ops:
                units.append(Unit(op, self.defaults[(op, m)], m, SCREEN_REPLAYS, SCREEN_ROUND))
                units.extend(Unit(op, c, m, SCREEN_REPLAYS, SCREEN_ROUND) for c in self.candidates(op, m))
        return units

    def _round_times(self, measured: Sequence[Measurement], op: str, m: int, rnd: int) -> Dict[KernelConfig, float]:
        """config -> its time in round rnd at (op, m). A re-timing round's units are paired with the default
        (Unit.pair): a challenger's time is then its ratio to the default timed beside it, scaled by the
        default's median over the round's pairs, and the default's time is that median, so every ratio
        of the round is a paired one (the head-to-head decides the same way: strategies/headtohead.py)."""
        out = {}
        mine = [x for x in measured if x.unit.round == rnd and x.unit.op == op and x.unit.m == m]
        refs = [x.pair_median_us for x in mine if x.pair_samples_us]
        scale = _median(refs) if refs else None
        for x in mine:
            u = x.unit
            if x.paired and x.pair_median_us > 0 and scale:
                out[u.cfg] = scale * x.median_us / x.pair_median_us
            elif x.ok:
                out[u.cfg] = x.median_us
        if scale and self.defaults[(op, m)] not in out:
            out[self.defaults[(op, m)]] = scale
        return out

    def _screen_ranked(self, measured: Sequence[Measurement], op: str, m: int) -> List[KernelConfig]:
        d = self.defaults[(op, m)]
        scores = {c: t for c, t in self._round_times(measured, op, m, SCREEN_ROUND).items() if c != d}
        return [c for c, _s in sorted(scores.items(), key=lambda kv: (kv[1], kv[0].key()))]

    @staticmethod
    def retime_replays(call_us: Optional[float]) -> int:
        """Timed replays per re-timing unit: the head-to-head's rule (work.timed_replays), so the check
        times the default and its best screened config as the tune's final decision does."""
        return timed_replays(call_us)

    def _keys(self):
        return [(op, m) for m in self.sizes for op in self.ops]

    def retime_units(self, measured: Sequence[Measurement]) -> List[Unit]:
        """The next re-timing round, [] when none is due. Round 1 (RETIME_ROUND): the default and the
        RETIME_TOP best screened, wherever a screened config beat the default or came within NEAR_TIE
        of it. Round 2: the default and round 1's best challenger, where round 1 did not decide (a gain
        below CLEAR): the paired second round is what keeps single-round luck (the winner's curse, small-M
        noise) out of the estimate. Interleaved: every size's round before the next round."""
        done = {x.unit.round for x in measured}
        units = []
        if RETIME_ROUND not in done:
            for op, m in self._keys():
                ranked = self._screen_ranked(measured, op, m)
                if not self._worth_retiming(measured, op, m, ranked):
                    continue
                d = self.defaults[(op, m)]
                st = self._round_times(measured, op, m, SCREEN_ROUND)
                gain = st[d] / st[ranked[0]] if d in st and st[ranked[0]] > 0 else None
                top = ranked[:1] if gain is not None and gain >= CLEAR else ranked[:RETIME_TOP]
                reps = self.retime_replays(st.get(d, st.get(ranked[0])))
                units.extend(Unit(op, c, m, reps, RETIME_ROUND, pair=d) for c in top)
            return units
        if RETIME_ROUND + 1 in done:
            return []
        for op, m in self._keys():
            d = self.defaults[(op, m)]
            r1 = self._round_times(measured, op, m, RETIME_ROUND)
            chal = sorted(((t, c.key(), c) for c, t in r1.items() if c != d))
            if d not in r1 or not chal or r1[d] / chal[0][0] >= CLEAR:
                continue
            reps = next(x.unit.replays for x in measured if x.unit.round == RETIME_ROUND and x.unit.op == op
                        and x.unit.m == m)
            units.append(Unit(op, chal[0][2], m, reps, RETIME_ROUND + 1, pair=d))
        return units

    def _worth_retiming(self, measured: Sequence[Measurement], op: str, m: int,
                        ranked: Optional[List[KernelConfig]] = None) -> bool:
        """Not where the default beat every screened config by more than NEAR_TIE (the estimate is 1.0
        whatever a re-timing says of the others)."""
        ranked = self._screen_ranked(measured, op, m) if ranked is None else ranked
        if not ranked:
            return False
        st = self._round_times(measured, op, m, SCREEN_ROUND)
        d = self.defaults[(op, m)]
        if d not in st:
            return True
        return st[ranked[0]] < st[d] * (1.0 + NEAR_TIE)

    # -- the estimate ----------------------------------------------------------------------------------
    def _best(self, measured: Sequence[Measurement], op: str, m: int):
        """-> (default time, best challenger's time, best challenger, gain) from the deepest evidence:
        round 2 (paired with round 1: the geometric mean of the two rounds' ratios), else round 1, else
        the screen."""
        d = self.defaults[(op, m)]
        r1 = self._round_times(measured, op, m, RETIME_ROUND)
        r2 = self._round_times(measured, op, m, RETIME_ROUND + 1)
        scr = self._round_times(measured, op, m, SCREEN_ROUND)
        for times in (r2, r1, scr):
            if d in times and len(times) > 1:
                break
        else:
            times = r1 if d in r1 else scr
        dt = times.get(d)
        chal = sorted(((t, c.key(), c) for c, t in times.items() if c != d))
        if dt is None:
            return None, (chal[0][0] if chal else None), (chal[0][2] if chal else None), None
        if not chal:
            return dt, None, None, 1.0
        bt, _k, bc = chal[0]
        gain = dt / bt
        if times is r2 and d in r1 and bc in r1:
            gain = math.sqrt(gain * r1[d] / r1[bc])
            dt = math.sqrt(dt * r1[d])
            bt = dt / gain
        return dt, bt, bc, gain

    def estimate(self, measured: Sequence[Measurement],
                 floors: Optional[Dict[Tuple[str, int], Optional[float]]] = None) -> List[dict]:
        """One row per batch size: default_us, best_us (the best re-timed, the default when nothing beat
        it by more than TIE), gain, floor_us, bound (default / floor), screened / failed counts, the
        configs, and the screened configs fastest first (`screened`)."""
        floors = floors or {}
        rows = []
        for m in self.sizes:
            d_sum = 0.0
            b_sum = 0.0
            floor = 0.0
            ok = True
            per_op = {}
            screened = failed = 0
            ranked_all = {}
            for op in self.ops:
                dcfg = self.defaults[(op, m)]
                screened += sum(1 for x in measured if x.unit.op == op and x.unit.m == m
                                and x.unit.round == SCREEN_ROUND)
                failed += sum(1 for x in measured if x.unit.op == op and x.unit.m == m
                              and x.unit.round == SCREEN_ROUND and not x.ok)
                ranked_all[op] = [c.key() for c in self._screen_ranked(measured, op, m)]
                d, best_t, best_c, gain = self._best(measured, op, m)
                if d is None:
                    ok = False
                    per_op[op] = {"default": dcfg.as_dict(), "default_us": None,
                                  "best": best_c.as_dict() if best_c else None, "best_us": best_t}
                    continue
                if best_t is None or gain is None or gain <= 1.0 / (1.0 - TIE):
                    best_t, best_c = d, dcfg
                d_sum += d
                b_sum += best_t
                f = floors.get((op, m))
                floor = floor + f if (f is not None and floor is not None) else None
                per_op[op] = {"default": dcfg.as_dict(), "default_us": d, "best": best_c.as_dict(),
                              "best_us": best_t, "best_is_default": best_c == dcfg}
            row = {"m": m, "ops": per_op, "screened": screened, "failed": failed,
                   "screened_ranked": ranked_all}
            if ok and b_sum > 0:
                row.update(default_us=round(d_sum, 3), best_us=round(b_sum, 3), gain=round(d_sum / b_sum, 4))
            else:
                row.update(default_us=None, best_us=None, gain=None)
            if floor and ok and b_sum > 0:
                row.update(floor_us=round(floor, 3), floor_fraction=round(floor / b_sum, 4),
                           bound=round(d_sum / floor, 4))
            else:
                row.update(floor_us=None, floor_fraction=None, bound=None)
            if len(self.ops) == 1:
                one = per_op.get(self.ops[0]) or {}
                row["default_config"] = one.get("default")
                row["best_config"] = one.get("best")
            rows.append(row)
        return rows


def screened_candidates(shape: Shape, sizes: Sequence[int], ops: Sequence[str],
                        space: Dict[Tuple[str, int], Sequence[KernelConfig]],
                        defaults: Dict[Tuple[str, int], KernelConfig],
                        catalogue: Sequence[tuple] = CATALOGUE) -> Dict[Tuple[str, int], List[KernelConfig]]:
    """(op, m) -> the configs the headroom check screens at that batch size (the default excluded),
    nearest first: a pure function of the shape, the pruned space and the server's defaults (no
    measurement). For a tune to find at least what the check found (issue 19: at M >= 2048 the screen
    beat what the fast strategy reached), a strategy can seed every size with these; the check's own
    ranking of them, fastest first, is each `headroom_size` event's `screened_ranked`."""
    return HeadroomPlan(shape, sizes, ops, space, defaults, catalogue).screened_candidates()


# -- the verdict -------------------------------------------------------------------------------------------
def gain_class(gain: Optional[float]) -> str:
    if gain is None:
        return "unknown"
    if gain < NONE_BELOW:
        return "none"
    return "small" if gain < LARGE_FROM else "large"


def _range_text(lo: int, hi: int, first: int, last: int) -> str:
    if lo == hi:
        return "M = %d" % lo
    if hi == last and lo != first:
        return "M >= %d" % lo
    if lo == first and hi != last:
        return "M <= %d" % hi
    return "M %d-%d" % (lo, hi)


def _geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def verdict(rows: Sequence[dict]) -> dict:
    """-> {"kind": "worth_tuning" | "some_gain" | "little_to_gain" | "unknown", "text", "ranges": [...]}."""
    rows = sorted((r for r in rows), key=lambda r: r["m"])
    if not rows:
        return {"kind": "unknown", "text": "nothing could be timed", "ranges": []}
    first, last = rows[0]["m"], rows[-1]["m"]
    ranges: List[dict] = []
    for r in rows:
        cls = gain_class(r.get("gain"))
        if ranges and ranges[-1]["class"] == cls:
            ranges[-1]["m_to"] = r["m"]
            ranges[-1]["sizes"].append(r["m"])
            if r.get("gain") is not None:
                ranges[-1]["gains"].append(r["gain"])
        else:
            ranges.append({"class": cls, "m_from": r["m"], "m_to": r["m"], "sizes": [r["m"]],
                           "gains": [r["gain"]] if r.get("gain") is not None else []})
    for rg in ranges:
        gs = rg.pop("gains")
        rg["gain"] = round(_geomean(gs), 4) if gs else None
        rg["gain_min"] = round(min(gs), 4) if gs else None
        rg["gain_max"] = round(max(gs), 4) if gs else None
        rg["label"] = _range_text(rg["m_from"], rg["m_to"], first, last)
    classes = {rg["class"] for rg in ranges}
    parts = []
    for rg in ranges:
        if rg["class"] == "large" or rg["class"] == "small":
            parts.append("about %.2fx at %s" % (rg["gain"], rg["label"]))
        elif rg["class"] == "none":
            parts.append("nothing at %s" % rg["label"])
        else:
            parts.append("not measured at %s" % rg["label"])
    if "large" in classes:
        kind = "worth_tuning"
        text = "worth tuning: " + ", ".join(parts)
    elif "small" in classes:
        kind = "some_gain"
        text = "some gain: " + ", ".join(parts)
    elif classes == {"none"}:
        kind = "little_to_gain"
        worst = max(r["gain"] for r in rows)
        text = ("little to gain: the server's config is within %d%% of the best screened at every batch "
                "size (at most %.2fx)" % (round((NONE_BELOW - 1.0) * 100), worst))
    else:
        kind = "unknown"
        text = "could not time the server's config at any batch size"
    return {"kind": kind, "text": text, "ranges": ranges}


# -- the command -------------------------------------------------------------------------------------------
def _assumption(backend: str, framework: str, default_source: Optional[dict], server_error: Optional[str]):
    """What the check could not see, as a sentence (None when the server's own lookup answered)."""
    ds = default_source or {}
    if backend == SYNTHETIC:
        return ("SIMULATED: the synthetic backend models a GPU; the server's config is assumed to be the %s "
                "built-in heuristic%s" % (framework, " (or MOETUNE_SYNTHETIC_DEFAULT_FILE)"
                                          if ds.get("kind") == "file" else ""))
    if backend == SERVER:
        if ds.get("kind") == "file":
            return None
        return None if ds.get("kind") == "heuristic" else "the server's lookup said nothing about its default"
    why = server_error or ("%s is not importable with %s" % (framework, sys.executable))
    return ("the host cannot import the server (%s): its own config file could not be read, so the server's "
            "config is assumed to be the %s built-in heuristic (a shipped file, if any, is not seen)"
            % (why, framework))


def _start_backend(spec: Dict[str, Any], cands: List[str], ops, sizes, cache_dir: str, out,
                   server_error: Optional[str]):
    """Start a one-GPU scheduler on the first candidate backend that proves it can run (one real call per
    op in the worker's info; auto skips one that cannot, with a warning) -> (scheduler, backend name,
    info, why the server cannot be asked, or None). BackendFailed when the last candidate fails."""
    from . import spec as spec_mod
    from .probe import gpu_indices
    from .engine.scheduler import BackendFailed, Scheduler

    asked = spec["backend"]
    sched = None
    try:
        for i, name in enumerate(cands):
            if spec["gpus"] != "all":
                gpus = list(spec["gpus"])[:1]
            else:
                gpus = [0] if name == SYNTHETIC else gpu_indices()[:1]
            desc = {"name": name, "shape": spec_mod.shape_dict(spec), "framework": spec["framework"],
                    "device_name": spec.get("device_name"), "routing_file": spec.get("routing_file"),
                    "bandwidth_probe": "torch"}
            ncpu = os.cpu_count() or 1
            pool = max(0, ncpu - 2) if name != SYNTHETIC and ncpu > 2 else 0
            workers = options.test_hooks(name == SYNTHETIC).precompile_workers
            if workers is not None:
                pool = max(0, workers)
            sched = Scheduler(desc, gpus, cache_dir, pool)
            sched.facts_per_m = name == SERVER
            if name == SERVER:
                from .backends.server_backend import classes_for

                sched.precompile_classes = classes_for(spec["framework"], spec_mod.shape_of(spec))
            sched.on_facts = _early_precompile(spec, ops, sizes, sched)
            sched.start(early_pool=pool > 0)
            try:
                info = sched.info(ops, sizes)
            except BackendFailed as e:
                sched.close()
                sched = None
                if asked != AUTO or i == len(cands) - 1:
                    raise
                if name == SERVER:
                    server_error = "the server backend cannot run here: %s" % e
                out.log("warning", "auto: the %s backend cannot run here (%s); using the %s backend"
                        % (name, e, cands[i + 1]))
                continue
            extra = info.get("extra") or {}
            if extra.get("cpu_compile_info") and extra.get("can_cpu_precompile", True):
                sched.start_precompile(extra["cpu_compile_info"], per_m=(name == SERVER))
            else:
                sched.stop_precompile()
            return sched, name, info, server_error
    except BaseException:
        if sched is not None:
            sched.close()
        raise
    raise BackendFailed("no backend could run")  # not reached: cands is never empty here


def _early_precompile(spec: Dict[str, Any], ops, sizes, sched):
    """The scheduler's on_facts for the check: with the GPU's facts (its shared memory decides the space),
    compile the screen's catalogue configs (HeadroomPlan.likely_units) while the GPU worker still imports
    the server and makes its smoke calls (on SGLang's kernel the screen waited 9.4 s for its compiles
    after a 16 s start-up: issue 19)."""
    from . import spec as spec_mod

    def go(facts: Dict[str, Any]) -> None:
        shape = spec_mod.shape_of(spec)
        space = space_mod.spec_space(spec, shape, sizes, ops, facts.get("smem"))
        if space:
            sched.precompile(HeadroomPlan(shape, sizes, ops, space, {}).likely_units())
    return go


def _measure(plan: "HeadroomPlan", screen: List[Unit], sched, out, t0: float, simulated: bool,
             marks: Dict[str, float]) -> List[Measurement]:
    """The screen's units, then the re-timings the plan asks for until it asks for none (progress events
    meanwhile) -> every measurement; marks gets the time the screen and the re-timing ended."""
    sim = {"simulated": True} if simulated else {}
    measured: List[Measurement] = []
    state = {"done": 0, "total": len(screen), "last": 0.0}

    def record(meas):
        measured.append(meas)
        state["done"] += 1
        now = time.time()
        if now - state["last"] >= 0.25:
            state["last"] = now
            _progress(out, state, t0, sim)

    sched.precompile(precompile_order(screen, per_m=sched.precompile_per_m))
    sched.measure(screen, record, simulated)
    marks["screen"] = time.time()
    while True:
        retime = plan.retime_units(measured)
        if not retime:
            break
        state["total"] += len(retime)
        sched.measure(retime, record, simulated)
    _progress(out, state, t0, sim)
    marks["retime"] = time.time()
    return measured


def run_check(spec: Dict[str, Any], out) -> int:
    """The whole check, events on out (an Emitter): headroom_started, progress, headroom_size per batch
    size, headroom; returns the exit status."""
    from . import spec as spec_mod
    from .backends.factory import BackendUnavailable, auto_candidates, resolve_auto
    from .protocol import EXIT_FAILED, EXIT_OK
    from .runs.compile_cache import check_cache_dir
    from .engine.scheduler import BackendFailed

    from . import profiling

    t0 = time.time()
    profiling.start("headroom")
    shape = spec_mod.shape_of(spec)
    ops = spec_mod.strategy_ops(spec)
    sizes = sorted(set(spec["batch_sizes"]))
    asked = spec["backend"]
    if asked == AUTO:
        cands = auto_candidates(spec["framework"])
        if not cands:
            try:
                resolve_auto(spec["framework"])  # raises with the sentence
            except BackendUnavailable as e:
                out.error("no_backend", str(e))
                return EXIT_FAILED
    else:
        cands = [asked]
    simulated = cands == [SYNTHETIC]
    sim = {"simulated": True} if simulated else {}
    server_error = None
    if asked == AUTO and SERVER not in cands:
        server_error = "%s is not importable with %s" % (spec["framework"], sys.executable)
    from . import prewarm
    stopped = prewarm.stop()  # a prewarm still compiling would compete with this check's measurements
    cache_dir, cache_persistent = check_cache_dir({"name": cands[0], "shape": spec_mod.shape_dict(spec)})
    marks = {"start": t0}
    cache_before = _entries(cache_dir)
    sched = None
    try:
        sched, backend, info, server_error = _start_backend(spec, cands, ops, sizes, cache_dir, out, server_error)
        assert info is not None and backend is not None and sched is not None
        marks["info"] = time.time()
        simulated = is_simulated(backend)
        sim = {"simulated": True} if simulated else {}
        extra = info.get("extra") or {}
        default_source = extra.get("default_source")
        space = space_mod.spec_space(spec, shape, sizes, ops, info["smem_limit"])
        defaults = {(op, m): info["defaults"]["%s|%d" % (op, m)] for op in ops for m in sizes}
        floors = {(op, m): info["roofline"].get("%s|%d" % (op, m)) for op in ops for m in sizes}
        plan = HeadroomPlan(shape, sizes, ops, space, defaults)
        assumed = _assumption(backend, spec["framework"], default_source, server_error)
        screen = plan.screen_units()
        out.emit(dict({"type": "headroom_started", "spec": spec, "backend": backend,
                       "device_name": spec.get("device_name") or info["device_name"],
                       "triton_version": info.get("triton_version"), "default_source": default_source,
                       "server_importable": backend == SERVER or (backend != SYNTHETIC and
                                                                    SERVER in auto_candidates(spec["framework"])),
                       "assumed": assumed, "units": len(screen), "ts": time.time()}, **sim))
        if simulated:
            out.log("warning", "SIMULATED: synthetic backend; every number of this check is simulated, not measured")
        if assumed and not simulated:
            out.log("warning", assumed)
        measured = _measure(plan, screen, sched, out, t0, simulated, marks)
        rows = plan.estimate(measured, floors)
        for r in rows:
            out.emit(dict({"type": "headroom_size"}, **dict(r, **sim)))
        v = verdict(rows)
        if simulated:
            v["text"] = "SIMULATED: " + v["text"]
        wall = round(time.time() - t0, 3)
        pw = _start_prewarm(spec, sched, extra, info, measured, defaults)
        out.emit(dict({"type": "headroom", "verdict": v["text"], "kind": v["kind"], "ranges": v["ranges"],
                       "sizes": rows, "backend": backend, "device_name": spec.get("device_name") or info["device_name"],
                       "default_source": default_source, "assumed": assumed, "framework": spec["framework"],
                       "shape": spec_mod.shape_dict(spec), "ops": list(ops), "units": len(measured),
                       "units_failed": sum(1 for x in measured if not x.ok), "wall_s": wall,
                       "floor_method": "torch copy/read probe" if backend != SYNTHETIC else "simulated",
                       "timings": {"startup_s": round(marks["info"] - t0, 3),
                                   "screen_s": round(marks["screen"] - marks["info"], 3),
                                   "retime_s": round(marks["retime"] - marks["screen"], 3),
                                   "screen_units": len(screen), "retime_units": len(measured) - len(screen),
                                   "distinct_configs": len({(u.op, u.cfg) for u in screen}),
                                   "precompile": dict(sched.precompile_stats),
                                   "info_steps": extra.get("info_steps"),
                                   "compile_cache": cache_dir if cache_persistent else None,
                                   "compile_cache_entries_before": cache_before,
                                   "bytecode_cache": bytecode.stats(sched.pycache, sched.pycache_files_before, sched.pycache_warm),
                                   "kept_graphs": sched.worker_stats(),
                                   "prewarm_stopped": _stopped_brief(stopped)},
                       "prewarm": pw,
                       "ts": time.time()}, **sim))
        if all(r.get("gain") is None for r in rows):
            out.error("backend_failed", "the server's config could not be timed at any batch size")
            return EXIT_FAILED
        return EXIT_OK
    except BackendUnavailable as e:
        out.error("no_backend", str(e))
        return EXIT_FAILED
    except BackendFailed as e:
        out.error("backend_failed", str(e))
        return EXIT_FAILED
    finally:
        if sched is not None:
            sched.close()
        profiling.stop()
        if not cache_persistent:
            shutil.rmtree(cache_dir, ignore_errors=True)


def first_batches(spec: Dict[str, Any], ops: Any, sizes: Any, smem: Optional[int], cap: int,
                  kernel_classes=None) -> Tuple[list, list]:
    """What a tune of spec will measure first, known before the backend's defaults (from the GPU's shared
    memory alone) -> (the strategy's first phase (the fast one's tile screen at its anchors), at most cap
    units; the check's catalogue configs the fast strategy seeds every size with: HeadroomPlan.likely_units).
    kernel_classes: as the run's strategy gets it (strategies.strategy_options)."""
    from . import spec as spec_mod, strategies

    shape = spec_mod.shape_of(spec)
    space = space_mod.spec_space(spec, shape, sizes, ops, smem)
    if not space:
        return [], []
    name = strategies.resolve(spec["strategy"])
    options = strategies.strategy_options(name, kernel_classes)
    units = list(strategies.make_strategy(name, space, sizes, ops, shape, **options).next_phase([]) or [])[:cap]
    seeds = HeadroomPlan(shape, sizes, ops, space, {}).likely_units() if name == "fast" else []
    return units, seeds


SURROGATE_PENALTY = 0.05   # prewarm_plan's surrogate: per unit of config distance from a timed config


def _config_distance(a: KernelConfig, b: KernelConfig) -> float:
    """How far apart two configs are for the surrogate: tile axes by their log2 ratio, warps and stages
    by a half, GROUP_SIZE_M by a quarter (the tile decides most of the time: docs/servers.md section 7)."""
    d = sum(abs(math.log2(getattr(a, k) / getattr(b, k))) for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"))
    d += 0.5 * (a.num_warps != b.num_warps) + 0.5 * (a.num_stages != b.num_stages)
    return d + 0.25 * (a.GROUP_SIZE_M != b.GROUP_SIZE_M)


def surrogate(measured: Sequence[Measurement]):
    """-> est(op, cfg, m): a guessed time of any config from the check's timings, the best over the
    configs it timed at m (else at the nearest size it timed) of time x (1 + SURROGATE_PENALTY x
    distance); None where it timed nothing for op. A guess to plan compiles with, never a measurement."""
    table: Dict[Tuple[str, int], List[Tuple[KernelConfig, float]]] = {}
    for meas in measured:
        u = meas.unit
        if meas.ok and meas.samples_us and u.cfg_down is None:
            table.setdefault((u.op, u.m), []).append((u.cfg, _median(meas.samples_us)))

    def est(op: str, cfg: KernelConfig, m: int) -> Optional[float]:
        near = [mm for (o, mm) in table if o == op]
        if not near:
            return None
        mm = min(near, key=lambda x: (abs(math.log(x / m)), x))
        return min(t * (1.0 + SURROGATE_PENALTY * _config_distance(cfg, c)) for c, t in table[(op, mm)])
    return est


def prewarm_plan(spec: Dict[str, Any], smem: Optional[int], measured: Sequence[Measurement] = (),
                 defaults: Optional[Dict[Tuple[str, int], KernelConfig]] = None,
                 kernel_classes=None) -> Tuple[List[Unit], List[int]]:
    """-> (units, the end of each group in units): what the tune of spec will probably compile, phase by
    phase, for a background compile (prewarm.py) after a check: the strategy's first phase (exact: it
    depends on nothing measured), then every later phase of the strategy run against surrogate(measured)
    (the check's timings, guessed over the configs it did not time), the check's seeds included as the
    tune's strategy gets them (runner.headroom_seeds). A guess that misses costs idle CPU only. A pure
    function of its arguments."""
    from . import spec as spec_mod

    shape = spec_mod.shape_of(spec)
    ops = spec_mod.strategy_ops(spec)
    sizes = spec["batch_sizes"]
    space = space_mod.spec_space(spec, shape, sizes, ops, smem)
    if not space:
        return [], []
    return plan_compiles(shape, sizes, ops, space, spec["strategy"], measured, defaults,
                         kernel_classes=kernel_classes)


def plan_compiles(shape: Shape, sizes: Sequence[int], ops: Sequence[str],
                  space: Dict[Tuple[str, int], Sequence[KernelConfig]], strategy_name: Optional[str],
                  measured: Sequence[Measurement] = (),
                  defaults: Optional[Dict[Tuple[str, int], KernelConfig]] = None,
                  max_phases: int = 64, kernel_classes=None) -> Tuple[List[Unit], List[int]]:
    """prewarm_plan on a given space (also bench/prewarm_replay.py's)."""
    from . import strategies

    name = strategies.resolve(strategy_name)
    options: Dict[str, Any] = strategies.strategy_options(name, kernel_classes)
    if name == "fast" and defaults:
        options["extra_seeds"] = screened_candidates(shape, sizes, ops, space, defaults)
    strategy = strategies.make_strategy(name, space, sizes, ops, shape, **options)
    est = surrogate(measured)
    out: List[Unit] = []
    bounds: List[int] = []
    seen: set = set()
    fake: List[Measurement] = []
    for _ in range(max_phases):
        phase = strategy.next_phase(fake)
        if not phase:
            break
        for u in phase:
            if u.ident() not in seen:
                seen.add(u.ident())
                out.append(u)
            t = est(u.op, u.cfg, u.m)
            fake.append(Measurement(u, [t] * max(1, u.replays)) if t is not None
                        else Measurement(u, None, "other", "no check timing to guess from"))
        bounds.append(len(out))
        if not measured:
            break  # nothing to guess the later phases from: the first phase only
    if name == "fast" and not (measured and defaults):  # the seeds were not in the surrogate run
        seeds = [u for u in HeadroomPlan(shape, sizes, ops, space, {}).likely_units() if u.ident() not in seen]
        out.extend(seeds)
        bounds.append(len(out))
    return out, bounds


def _start_prewarm(spec: Dict[str, Any], sched, extra: Dict[str, Any], info: Dict[str, Any],
                   measured, defaults) -> Optional[Dict[str, Any]]:
    """The tune's first kernels compiled in the background after this check (prewarm.py) -> {"pid",
    "units", "kernels" planned} or None (off, no CPU compile for this backend, no host cache)."""
    from . import prewarm

    facts = extra.get("cpu_compile_info")
    if not prewarm.enabled() or not facts or not extra.get("can_cpu_precompile", True):
        return None
    try:
        units, bounds = prewarm_plan(spec, info.get("smem_limit"), measured, defaults,
                                     kernel_classes=sched.precompile_classes)
        desc = {k: v for k, v in sched.desc.items() if k not in ("pycache_prefix",
                                                                   "early_facts", "bandwidth_probe")}
        desc["cpu_compile"] = dict(facts)
        return prewarm.start(spec, desc, units, bounds)
    except Exception as e:  # noqa: BLE001 - the check's answer stands without it
        sys.stderr.write("moetune-agent: no prewarm: %s: %s\n" % (type(e).__name__, e))
        return None


def _stopped_brief(st: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    if not st or not st.get("stopped_by_us"):
        return None
    return {k: st.get(k) for k in ("state", "kernels", "ok", "failed", "stop_s")}


def _entries(path: str) -> int:
    try:
        return len(os.listdir(path))
    except OSError:
        return 0


def precompile_order(units: Sequence[Unit], per_m: bool = False) -> List[Unit]:
    """The screen's units in the order their kernels go to the precompile pool: the first use of every
    distinct config first (in the screen's order), then, where the backend compiles per batch size (the
    server's kernel specialises on sizes), the other sizes of each config. Submitted in the screen's order,
    the same config at several sizes went to several pool processes at once, each compiling the same
    kernel before any had written it to the shared cache (the server path: 41 s on one H200, issue 19);
    behind every first compile, a later size mostly finds it there."""
    first, rest, seen = [], [], set()
    for u in units:
        k = (u.op, u.cfg)
        if k in seen:
            rest.append(u)
        else:
            seen.add(k)
            first.append(u)
    return first + (rest if per_m else [])


def _progress(out, state, t0, sim):
    el = time.time() - t0
    done, total = state["done"], max(state["total"], state["done"])
    out.emit(dict({"type": "progress", "done": done, "total": total, "phase": 0 if done <= total else 1,
                   "elapsed_s": round(el, 3), "eta_s": None}, **sim))


def headroom_command(args, out) -> int:
    """`headroom SPEC`: the tune spec; under the spec's interpreter when it names one (as a run is)."""
    import json
    import subprocess

    from . import spec as spec_mod
    from .protocol import EXIT_FAILED

    sp = spec_mod.load(args.spec)
    spec_mod.check_routing_file(sp)
    py = sp.get("python")
    if py and sp.get("backend") != SYNTHETIC and os.path.realpath(py) != os.path.realpath(sys.executable):
        if not os.access(py, os.X_OK):
            out.error("not_found", "spec 'python': %s is not an executable interpreter" % py)
            return EXIT_FAILED
        import moetune_agent
        root = os.path.dirname(os.path.dirname(os.path.abspath(moetune_agent.__file__)))
        fd, path = tempfile.mkstemp(prefix="moetune-headroom-spec-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(sp, f)
            code = ("import sys; sys.path.insert(0, sys.argv[1]); from moetune_agent.cli import main; "
                    "sys.exit(main(['_headroom', sys.argv[2]]))")
            sys.stdout.flush()
            rc = subprocess.call([py, "-c", code, root, path])
        finally:
            os.unlink(path)
        out.done_sent = True  # the inner process printed its done
        return rc
    return run_check(sp, out)


def inner_main(spec_path: str, out) -> int:
    """The check in the spec's interpreter (no hello: the outer agent printed it); done last."""
    import json

    from . import spec as spec_mod
    from .protocol import EXIT_FAILED, EXIT_OK

    try:
        with open(spec_path, encoding="utf-8") as f:
            sp = spec_mod.normalise(json.load(f))
        rc = run_check(sp, out)
    except Exception as e:  # noqa: BLE001 - reported as a protocol error, never a bare traceback
        import traceback
        sys.stderr.write(traceback.format_exc())
        out.error("internal", "%s: %s" % (type(e).__name__, e))
        rc = EXIT_FAILED
    out.done("ok" if rc == EXIT_OK else "failed", exit_code=rc)
    return rc
