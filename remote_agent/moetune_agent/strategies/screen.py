# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The catalogue screen (HeadroomPlan): the configs most likely to beat the server's default at each batch
size, chosen without measuring, and how their timings turn into a gain estimate. The headroom check
(headroom.py) times it; the tune's fast strategy seeds every size with the same configs
(screened_candidates), so a tune finds at least what the check found.

Per (op, batch size):
  * catalogue: the configs that won (or came within 1% of the winner) in every H200 landscape recorded in
    this repository (bench/headroom_catalogue.py regenerates CATALOGUE), nearest first in tokens per
    expert (M * topk / E: where the regime changes, docs/servers.md section 7) and preferring the same weight
    size, BLOCK_SIZE_M clamped to what the space allows at this size; NEAREST of them, one per GROUP_SIZE_M
    family (the variants time within noise of each other);
  * the default's neighbours: its config with one or two more pipeline stages;
  then re-timing (retime_units): round 1 the two best screened, round 2 round 1's best, each in a unit
  paired with the default (Unit.pair: the two alternate replay by replay, as in the tune's head-to-head),
  replays scaled to the call's time. Why this screen, and what it costs: bench/RESULTS.md, issue 19.

Estimate per size: gain = default / best re-timed (1.0 when nothing screened beats the default by more
than TIE: a tune keeps the default then); bound = default / HBM floor (no config can beat the floor).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .. import space as space_mod
from ..kernel_types import KernelConfig, Shape
from ..work import Measurement, Unit, median as _median, timed_replays

__all__ = [
    "HeadroomPlan",
    "screened_candidates",
    "tokens_per_expert",
    "CATALOGUE",
    "NEAREST",
    "TIE",
    "SCREEN_ROUND",
    "RETIME_ROUND",
    "SCREEN_REPLAYS",
]

SCREEN_ROUND = 0
RETIME_ROUND = 1  # rounds 1 and 2: the interleaved re-timing rounds
SCREEN_REPLAYS = 2
RETIME_TOP = 2  # screened configs re-timed in the first round (the second round: the best of them)
NEAREST = 3  # catalogue configs per size
NEAR_TIE = 0.01  # a default within 1% of the best screened is re-timed too (one screening replay pair
# can flip a tie either way)
CLEAR = 1.10  # a first-round gain this large is decided there: one round (no second)
TIE = 0.005  # a screened config within 0.5% of the default: the tune would keep the default

# (config key, tokens per expert where it won, weight bytes, source): bench/headroom_catalogue.py
CATALOGUE = (
    ("m16n32k128g16w4s5", 0.0312, 1, "exhaustive:fp8block"),
    ("m16n32k128g1w4s5", 0.0312, 1, "exhaustive:fp8block"),
    ("m16n32k128g32w4s5", 0.0312, 1, "exhaustive:fp8block"),
    ("m16n128k128g16w4s3", 0.5, 1, "exhaustive:fp8block"),
    ("m16n128k128g1w4s3", 0.5, 1, "exhaustive:fp8block"),
    ("m16n128k128g32w4s3", 0.5, 1, "exhaustive:fp8block"),
    ("m16n128k128g64w4s3", 2.0, 1, "exhaustive:fp8block"),
    ("m16n128k128g32w4s3", 2.0, 1, "exhaustive:fp8block"),
    ("m16n128k128g16w4s3", 2.0, 1, "exhaustive:fp8block"),
    ("m16n128k128g64w4s3", 8.0, 1, "exhaustive:fp8block"),
    ("m16n128k128g32w4s3", 8.0, 1, "exhaustive:fp8block"),
    ("m16n128k128g16w4s3", 8.0, 1, "exhaustive:fp8block"),
    ("m64n128k128g16w4s4", 32.0, 1, "exhaustive:fp8block"),
    ("m64n128k128g16w4s3", 32.0, 1, "exhaustive:fp8block"),
    ("m64n128k128g32w4s4", 32.0, 1, "exhaustive:fp8block"),
    ("m16n32k64g16w4s5", 0.0625, 2, "exhaustive:qwen3"),
    ("m16n32k128g32w4s5", 0.0625, 2, "exhaustive:qwen3"),
    ("m16n32k64g32w4s5", 0.0625, 2, "exhaustive:qwen3"),
    ("m16n64k128g1w4s3", 1.0, 2, "exhaustive:qwen3"),
    ("m16n64k128g64w4s3", 1.0, 2, "exhaustive:qwen3"),
    ("m16n64k128g1w8s3", 1.0, 2, "exhaustive:qwen3"),
    ("m16n32k128g16w4s4", 4.0, 2, "exhaustive:qwen3"),
    ("m16n64k128g1w4s4", 4.0, 2, "exhaustive:qwen3"),
    ("m16n32k128g1w4s4", 4.0, 2, "exhaustive:qwen3"),
    ("m32n128k128g1w4s2", 16.0, 2, "exhaustive:qwen3"),
    ("m32n128k128g16w4s2", 16.0, 2, "exhaustive:qwen3"),
    ("m32n64k128g16w4s2", 16.0, 2, "exhaustive:qwen3"),
    ("m128n256k64g1w8s4", 64.0, 2, "exhaustive:qwen3"),
    ("m128n128k64g1w8s3", 64.0, 2, "exhaustive:qwen3"),
    ("m128n256k64g16w8s4", 64.0, 2, "exhaustive:qwen3"),
    ("m16n64k64g1w4s5", 0.0625, 2, "fast:qwen3"),
    ("m16n32k64g32w4s4", 0.125, 2, "fast:qwen3"),
    ("m16n64k128g1w4s2", 0.25, 2, "fast:qwen3"),
    ("m16n64k128g1w4s3", 0.5, 2, "fast:qwen3"),
    ("m16n32k128g16w4s3", 1.5, 2, "fast:qwen3"),
    ("m16n64k128g1w4s3", 2.0, 2, "fast:qwen3"),
    ("m16n32k128g16w4s3", 3.0, 2, "fast:qwen3"),
    ("m16n64k128g1w8s2", 4.0, 2, "fast:qwen3"),
    ("m16n128k128g1w8s2", 6.0, 2, "fast:qwen3"),
    ("m16n128k128g1w8s2", 8.0, 2, "fast:qwen3"),
    ("m64n128k64g1w8s4", 32.0, 2, "fast:qwen3"),
    ("m128n256k64g1w8s4", 96.0, 2, "fast:qwen3"),
    ("m128n256k64g1w8s4", 128.0, 2, "fast:qwen3"),
    ("m128n256k64g1w8s4", 192.0, 2, "fast:qwen3"),
    ("m128n256k64g16w8s4", 256.0, 2, "fast:qwen3"),
    ("m16n64k128g64w4s5", 0.0625, 1, "fast:fp8block"),
    ("m16n128k128g32w4s4", 0.125, 1, "fast:fp8block"),
    ("m16n128k128g64w4s4", 0.25, 1, "fast:fp8block"),
    ("m16n128k128g16w4s2", 0.75, 1, "fast:fp8block"),
    ("m16n128k128g16w4s2", 1.0, 1, "fast:fp8block"),
    ("m16n128k128g32w4s3", 1.5, 1, "fast:fp8block"),
    ("m16n128k128g64w4s3", 3.0, 1, "fast:fp8block"),
    ("m16n128k128g64w4s3", 4.0, 1, "fast:fp8block"),
    ("m32n128k128g32w4s3", 16.0, 1, "fast:fp8block"),
    ("m64n256k128g32w8s4", 48.0, 1, "fast:fp8block"),
    ("m64n256k128g64w8s4", 64.0, 1, "fast:fp8block"),
    ("m64n256k128g64w8s4", 96.0, 1, "fast:fp8block"),
    ("m64n256k128g64w8s4", 128.0, 1, "fast:fp8block"),
    ("m16n64k64g32w4s4", 0.125, 2, "server:qwen3"),
    ("m16n64k128g16w4s2", 0.25, 2, "server:qwen3"),
    ("m16n64k128g1w4s3", 1.5, 2, "server:qwen3"),
    ("m16n64k128g1w4s4", 3.0, 2, "server:qwen3"),
    ("m16n64k128g1w4s3", 4.0, 2, "server:qwen3"),
    ("m16n128k128g1w4s2", 6.0, 2, "server:qwen3"),
    ("m16n128k128g1w4s2", 8.0, 2, "server:qwen3"),
    ("m64n128k64g1w8s3", 32.0, 2, "server:qwen3"),
)


def _wbytes(dtype: Optional[str]) -> int:
    return space_mod.element_bytes(dtype)[1]


def _but_group(c: KernelConfig) -> tuple:
    return (c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K, c.num_warps, c.num_stages)


def tokens_per_expert(shape: Shape, m: int) -> float:
    return float(m) * shape.topk / max(1, shape.E)


class HeadroomPlan(object):
    """The screen and the estimate; a pure function of the measurements (testable on replays)."""

    def __init__(
        self,
        shape: Shape,
        sizes: Sequence[int],
        ops: Sequence[str],
        space: Mapping[Tuple[str, int], Sequence[KernelConfig]],
        defaults: Dict[Tuple[str, int], KernelConfig],
        catalogue: Sequence[tuple] = CATALOGUE,
        nearest: int = NEAREST,
        neighbours: bool = True,
    ):
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
                c = KernelConfig(
                    bm, cfg.BLOCK_SIZE_N, cfg.BLOCK_SIZE_K, cfg.GROUP_SIZE_M, cfg.num_warps, cfg.num_stages
                )
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
            for c in (
                dataclasses.replace(base, num_stages=base.num_stages + 1),
                dataclasses.replace(base, num_stages=base.num_stages + 2),
            ):
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
        units: List[Unit] = []
        for m in self.sizes:
            for op in self.ops:
                units.extend(
                    Unit(op, c, m, SCREEN_REPLAYS, SCREEN_ROUND) for c in self._nearest(op, m, set(), self.nearest + 1)
                )
        return units

    def screened_candidates(self) -> Dict[Tuple[str, int], List[KernelConfig]]:
        """(op, m) -> the configs the screen times there (the default excluded): see the module
        function screened_candidates()."""
        return {(op, m): self.candidates(op, m) for m in self.sizes for op in self.ops}

    # -- the work --------------------------------------------------------------------------------------
    def screen_units(self) -> List[Unit]:
        units: List[Unit] = []
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
        units: List[Unit] = []
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
            reps = next(
                x.unit.replays for x in measured if x.unit.round == RETIME_ROUND and x.unit.op == op and x.unit.m == m
            )
            units.append(Unit(op, chal[0][2], m, reps, RETIME_ROUND + 1, pair=d))
        return units

    def _worth_retiming(
        self, measured: Sequence[Measurement], op: str, m: int, ranked: Optional[List[KernelConfig]] = None
    ) -> bool:
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

    def estimate(
        self, measured: Sequence[Measurement], floors: Optional[Dict[Tuple[str, int], Optional[float]]] = None
    ) -> List[dict]:
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
                screened += sum(
                    1 for x in measured if x.unit.op == op and x.unit.m == m and x.unit.round == SCREEN_ROUND
                )
                failed += sum(
                    1
                    for x in measured
                    if x.unit.op == op and x.unit.m == m and x.unit.round == SCREEN_ROUND and not x.ok
                )
                ranked_all[op] = [c.key() for c in self._screen_ranked(measured, op, m)]
                d, best_t, best_c, gain = self._best(measured, op, m)
                if d is None:
                    ok = False
                    per_op[op] = {
                        "default": dcfg.as_dict(),
                        "default_us": None,
                        "best": best_c.as_dict() if best_c else None,
                        "best_us": best_t,
                    }
                    continue
                if best_t is None or gain is None or gain <= 1.0 / (1.0 - TIE):
                    best_t, best_c = d, dcfg
                d_sum += d
                b_sum += best_t
                f = floors.get((op, m))
                floor = floor + f if (f is not None and floor is not None) else None
                per_op[op] = {
                    "default": dcfg.as_dict(),
                    "default_us": d,
                    "best": best_c.as_dict(),
                    "best_us": best_t,
                    "best_is_default": best_c == dcfg,
                }
            row = {"m": m, "ops": per_op, "screened": screened, "failed": failed, "screened_ranked": ranked_all}
            if ok and b_sum > 0:
                row.update(default_us=round(d_sum, 3), best_us=round(b_sum, 3), gain=round(d_sum / b_sum, 4))
            else:
                row.update(default_us=None, best_us=None, gain=None)
            if floor and ok and b_sum > 0:
                row.update(
                    floor_us=round(floor, 3), floor_fraction=round(floor / b_sum, 4), bound=round(d_sum / floor, 4)
                )
            else:
                row.update(floor_us=None, floor_fraction=None, bound=None)
            if len(self.ops) == 1:
                one = per_op.get(self.ops[0]) or {}
                row["default_config"] = one.get("default")
                row["best_config"] = one.get("best")
            rows.append(row)
        return rows


def screened_candidates(
    shape: Shape,
    sizes: Sequence[int],
    ops: Sequence[str],
    space: Mapping[Tuple[str, int], Sequence[KernelConfig]],
    defaults: Dict[Tuple[str, int], KernelConfig],
    catalogue: Sequence[tuple] = CATALOGUE,
) -> Dict[Tuple[str, int], List[KernelConfig]]:
    """(op, m) -> the configs the headroom check screens at that batch size (the default excluded),
    nearest first: a pure function of the shape, the pruned space and the server's defaults (no
    measurement). For a tune to find at least what the check found (issue 19: at M >= 2048 the screen
    beat what the fast strategy reached), a strategy can seed every size with these; the check's own
    ranking of them, fastest first, is each `headroom_size` event's `screened_ranked`."""
    return HeadroomPlan(shape, sizes, ops, space, defaults, catalogue).screened_candidates()
