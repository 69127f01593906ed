# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The default strategy: reach the exhaustive answer with a small fraction of the measurements.

What it exploits (docs/servers.md section 7): the tile shape (BLOCK_SIZE_M/N/K) decides most of the latency,
warps/stages/GROUP_SIZE_M refine it; neighbouring batch sizes share near-best configs except where
the regime changes; single cheap timings are noisy (winner's curse), so leaders are re-timed.

Plan (each step is one phase; every step only reads the results of earlier steps, so the strategy is a
pure function of the measurements and a resumed run repeats nothing):
  anchors (a few batch sizes spread on a log scale, smallest and largest included):
    A  tile screen: every tile of the space with 4 and 8 warps, one timed replay after one warm-up
    B  warps x stages sweep of the best tiles
    C  GROUP_SIZE_M sweep of the leaders
    D  local refinement: every one-axis neighbour of the leaders, twice (hill climbing)
    F  finalists re-timed with the reference's replays, one round (they seed the other sizes)
  the other batch sizes, by bisection between sizes already tuned:
    S  seeds: the leaders of both tuned neighbours (BLOCK_SIZE_M clamped to this size's space)
    D  one-axis neighbours of the best seed, then of the new best if that moved (hill climbing)
Winners are the re-timed finalists at anchors and the screening leaders elsewhere; the run's final
decision is the head-to-head that follows (strategies/headtohead.py: the two best and the server's
default in >= 5 interleaved rounds of 10 replays), which is why no size re-times its finalists twice
(level_final=True adds F at the other sizes). With separate up/down ops the finalists of both ops
include the leaders of the BLOCK_SIZE_M that is best for the pair, and the winners share it.

Cost on the replayed H200 landscapes (bench/bench_replay.py; issue 13): one timed screening replay
instead of two, one finalist round instead of two, 4 tiles instead of 6 in B, 4 seeds per neighbour
instead of 6 and no F at the other sizes cut the modelled GPU time by 23-29% at the same regret.
Issue 22: D at the other sizes starts from the best seed alone (LEVEL_LEADERS; it was the best two). The
second seed's neighbours were the largest phase of a tune (383 of 903 units of an 18-size synthetic `up`
tune, 372 of 1007 and 809 of 2239 in the H100 own `up` and `up+down` tunes of stop 37), and on the replayed
H200 landscapes with their three middle sizes tuned as other sizes (n_anchors 2) the regret stayed or fell
(qwen3 geomean 1.0040 -> 1.0026, fp8 block 1.0011 -> 1.0011) with 14% / 6% fewer units
(bench/level_leaders_replay.py). level_leaders=2 restores the two.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .. import space as space_mod
from ..kernel_types import KernelConfig
from ..work import Measurement, Strategy, Unit
from .common import TIER, Book, choose_winners

__all__ = ["AXES", "FastStrategy", "LEVEL_LEADERS", "SCREEN_BM_FLOOR_DIV", "wide_tile"]

LEVEL_LEADERS = 1
AXES = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages")
FINAL_ROUND = 100
# Wide tiles (BLOCK_SIZE_M >= 64 and BLOCK_SIZE_N >= 256) are screened with 8 warps only: their 4-warp
# kernels never beat the 8-warp ones at any size of the two recorded H200 landscapes (Qwen3 bf16, fp8
# block; 128x256x64 with 4 warps ran 3.1x slower at M = 1024), and they are the slowest kernels to compile
# (int4_w4a16 4.3 s on average against 1.1 s with 8 warps, 22% of the compile time of 120 sampled
# kernels from 8 of them; bf16 1.16 against 0.49 s: recordings/h200-bytecode-warm/call6_*). A wide tile
# that leads still gets its 4-warp configs timed by the warps x stages sweep (B) and the one-axis
# neighbours (D). wide_tiles_w8=False screens them with both.
WIDE_BLOCK_M = 64
WIDE_BLOCK_N = 256
# The tile screen skips BLOCK_SIZE_M below a quarter of the largest of the size's space (space.block_m_cap:
# about twice an expert's rows): such a tile walks every expert's rows in four or more M tiles, streaming
# its weights as often. On the recorded H200 landscapes the best tile with BLOCK_SIZE_M 16 was 1.57x (Qwen3
# bf16) and 1.23x (fp8 block) the best at M = 1024, where the cap is 128 and 64; it only removes tiles at
# sizes whose cap is 64 or more. The one-axis neighbours (phase D) still reach a smaller BLOCK_SIZE_M.
# On the servers' kernels those tiles share their binaries with the smaller sizes of their class (SGLang
# main: 200 first-phase kernels with or without the floor): there it saves GPU time, not compiles.
SCREEN_BM_FLOOR_DIV = 4


def wide_tile(t: Tuple[int, int, int]) -> bool:
    return t[0] >= WIDE_BLOCK_M and t[1] >= WIDE_BLOCK_N


def _tile(c: KernelConfig) -> Tuple[int, int, int]:
    return (c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K)


def _vec(c: KernelConfig) -> Tuple[int, ...]:
    return tuple(getattr(c, a) for a in AXES)


class FastStrategy(Strategy):
    name = "fast"

    def __init__(
        self,
        space: Mapping[Tuple[str, int], Sequence[KernelConfig]],
        batch_sizes: Sequence[int],
        ops: Sequence[str],
        shape,
        n_anchors: int = 4,
        screen_replays: int = 1,
        final_replays: int = 10,
        final_rounds: int = 1,
        top_tiles: int = 4,
        leaders: int = 3,
        finalists: int = 4,
        seeds: int = 4,
        screen_both_warps: bool = True,
        level_leaders: Optional[int] = None,
        level_final: bool = False,
        extra_seeds: Optional[Mapping[Tuple[str, int], Sequence[KernelConfig]]] = None,
        kernel_classes: Optional[Callable[[str, KernelConfig, int], Any]] = None,
        wide_tiles_w8: bool = True,
        screen_bm_floor: bool = True,
        same_launch: bool = False,
    ):
        """kernel_classes: (op, cfg, m) -> the batch-size class of cfg's compiled kernel, for a kernel that
        compiles GROUP_SIZE_M in and shares its binaries between the sizes of a class (the servers' kernels:
        backends/server_backend.specialisation_class); the tile screen then gives an anchor the
        GROUP_SIZE_M that the largest anchor of the same class screens with, so both time one binary per
        tile (see _screen_gm). None (moetune's own kernel, GROUP_SIZE_M a run-time argument): each anchor
        screens with its own.
        extra_seeds: (op, m) -> configs screened with the first phase at m (the anchors' tile screen,
        the other sizes' seeds), e.g. the headroom check's screen (runner.headroom_seeds): the search
        then starts from, and refines around, at least what the check times (the check's screen can find
        faster configs than the whole search: bench/RESULTS.md, "Moved from the agent's docstrings")."""
        super().__init__(space, batch_sizes, ops, shape)
        self.level_final = level_final
        if level_leaders is None:
            level_leaders = LEVEL_LEADERS
        self.level_leaders = max(1, level_leaders)
        self.screen_both_warps = screen_both_warps
        self.batch_sizes = sorted(set(self.batch_sizes))
        self.screen_replays = screen_replays
        self.final_replays = final_replays
        self.final_rounds = final_rounds
        self.top_tiles = top_tiles
        self.n_leaders = leaders
        self.n_finalists = finalists
        self.n_seeds = seeds
        self.anchors = self._pick_anchors(n_anchors)
        self.kernel_classes = kernel_classes
        self.wide_tiles_w8 = wide_tiles_w8
        self.screen_bm_floor = screen_bm_floor
        self.same_launch = same_launch
        self._by_vec = {k: {_vec(c): c for c in v} for k, v in space.items()}
        self._axis_index: Dict[Tuple[str, int], Dict[tuple, List[Tuple[int, KernelConfig]]]] = {}
        self._reps: Dict[Tuple[str, int], List[KernelConfig]] = {}
        self.extra_seeds: Dict[Tuple[str, int], List[KernelConfig]] = {}
        for k, v in (extra_seeds or {}).items():  # only what the space holds at that size, once
            table = self._by_vec.get(k, {})
            got = [table[_vec(c)] for c in v if _vec(c) in table]
            self.extra_seeds[k] = [c for i, c in enumerate(got) if c not in got[:i]]

    # -- structure -----------------------------------------------------------------------------------
    def _pick_anchors(self, k: int) -> List[int]:
        bs = self.batch_sizes
        if len(bs) <= k:
            return list(bs)
        lo, hi = math.log(bs[0]), math.log(bs[-1])
        out = []
        for i in range(k):
            target = lo + (hi - lo) * i / (k - 1)
            m = min(bs, key=lambda b: (abs(math.log(b) - target), b))
            if m not in out:
                out.append(m)
        return sorted(out)

    def _levels(self) -> List[List[int]]:
        """Batch sizes after the anchors, by bisection of the gaps between tuned sizes."""
        idx = {m: i for i, m in enumerate(self.batch_sizes)}
        done = sorted(idx[m] for m in self.anchors)
        levels = []
        while len(done) < len(self.batch_sizes):
            level = []
            for a, b in zip(done, done[1:]):
                if b - a > 1:
                    level.append((a + b) // 2)
            if not level:  # sizes outside the anchors' range cannot happen (smallest/largest are anchors)
                level = [i for i in range(len(self.batch_sizes)) if i not in done]
            levels.append([self.batch_sizes[i] for i in level])
            done = sorted(set(done) | set(level))
        return levels

    def _neighbours_done(self, m: int, done: Sequence[int]) -> List[int]:
        lower = [d for d in done if d < m]
        upper = [d for d in done if d > m]
        out = []
        if lower:
            out.append(max(lower))
        if upper:
            out.append(min(upper))
        return out

    def _space(self, op: str, m: int) -> Sequence[KernelConfig]:
        return self.space.get((op, m), ())

    def _unit(self, op: str, cfg: KernelConfig, m: int, replays: int, rnd: int) -> Unit:
        return Unit(op, cfg, m, replays, rnd)

    # -- choices ---------------------------------------------------------------------------------------
    def _gm_for(self, m: int, bm: int, values: Sequence[int]) -> int:
        """GROUP_SIZE_M only matters once an expert has several M tiles: 1 below that, else ~16."""
        tpe = m * self.shape.topk / max(1, self.shape.E)
        want = 16 if tpe > bm else 1
        return min(values, key=lambda v: (abs(v - want), v))

    def _tile_reps(self, op: str, m: int) -> List[KernelConfig]:
        """Representatives per tile: both warps counts (default; a wide tile 8 only: wide_tile), 3 stages,
        the GROUP_SIZE_M of _gm_for. screen_both_warps=False keeps only a size-based warps guess: measured
        on an H200 it misses the fp8 block-quant winner at M=1024 (64x128 tiles want 4 warps there),
        regret 1.057."""
        key = (op, m)
        if key not in self._reps:
            self._reps[key] = self._tile_reps_of(op, m)
        return self._reps[key]

    def _tile_reps_of(self, op: str, m: int) -> List[KernelConfig]:
        by_tile: Dict[Tuple[int, int, int], List[KernelConfig]] = {}
        for c in self._space(op, m):
            by_tile.setdefault(_tile(c), []).append(c)
        floor = self._screen_bm_floor(op, m)
        by_tile = {t: cs for t, cs in by_tile.items() if t[0] >= floor}
        out = []
        for t, cs in sorted(by_tile.items()):
            gm = self._screen_gm(op, m, cs)
            pref = 8 if t[0] * t[1] >= 8192 else 4
            both: Tuple[int, ...] = (4, 8)
            if self.wide_tiles_w8 and wide_tile(t) and any(c.num_warps == 8 for c in cs):
                both = (8,)
            for warps in both if self.screen_both_warps else (pref, 12 - pref):
                pool = [c for c in cs if c.num_warps == warps and c.GROUP_SIZE_M == gm] or [
                    c for c in cs if c.num_warps == warps
                ]
                if not pool:
                    continue
                out.append(
                    min(
                        pool,
                        key=lambda c: (
                            abs(c.num_stages - 3) + (0.5 if c.num_stages < 3 else 0),
                            abs(c.GROUP_SIZE_M - gm),
                            c.key(),
                        ),
                    )
                )
                if not self.screen_both_warps:
                    break  # the other warps count only when the preferred one does not fit
        return out

    def _screen_bm_floor(self, op: str, m: int) -> int:
        """The smallest BLOCK_SIZE_M the tile screen times at m: a quarter of the largest in m's space
        (SCREEN_BM_FLOOR_DIV), 0 (every one) with screen_bm_floor=False. See SCREEN_BM_FLOOR_DIV."""
        if not self.screen_bm_floor:
            return 0
        bms = [c.BLOCK_SIZE_M for c in self._space(op, m)]
        return max(bms) // SCREEN_BM_FLOOR_DIV if bms else 0

    def _screen_gm(self, op: str, m: int, cs: Sequence[KernelConfig]) -> int:
        """The GROUP_SIZE_M a tile (its configs cs at m) is screened with: _gm_for(m), or, with
        kernel_classes, _gm_for at the largest anchor whose binary for this tile is m's. Where that differs
        from m's own choice, m has at most one M tile per expert (_gm_for: 1), so the grouping hardly
        matters there, and the GROUP_SIZE_M sweep of the leaders (phase C) times m's own choice anyway
        (issue 22: SGLang main's first phase, 18 sizes, 272 binaries -> 208)."""
        values = sorted({c.GROUP_SIZE_M for c in cs})
        at = m
        if self.kernel_classes is not None and m in self.anchors:
            probe, own = cs[0], None
            try:
                own = self.kernel_classes(op, probe, m)
                same = [a for a in self.anchors if a > at and self.kernel_classes(op, probe, a) == own]
            except Exception:  # noqa: BLE001 - an unknown class: the size's own choice
                same = []
            if own is not None and same:
                at = max(same)
        return self._gm_for(at, cs[0].BLOCK_SIZE_M, values)

    def _seeds_at(self, op: str, m: int) -> List[KernelConfig]:
        return list(self.extra_seeds.get((op, m), ()))

    def _ranked(self, book: Book, op: str, m: int, tier: Optional[int] = None) -> List[KernelConfig]:
        return [c for _, c in book.ranked(op, m, tier=tier)]

    def _one_axis_neighbours(self, op: str, m: int, cfg: KernelConfig) -> List[KernelConfig]:
        """The configs of the space at (op, m) that differ from cfg in exactly one axis, in space order.
        Indexed once per (op, m): the plan is re-derived from the measurements at every phase, and a
        scan of the space per leader cost seconds of GPU idle time per run (issue 13)."""
        key = (op, m)
        index = self._axis_index.get(key)
        if index is None:
            index = {}
            for pos, c in enumerate(self._space(op, m)):
                v = _vec(c)
                for i in range(len(AXES)):
                    index.setdefault((i, v[:i] + v[i + 1 :]), []).append((pos, c))
            self._axis_index[key] = index
        v = _vec(cfg)
        found = {}
        for i in range(len(AXES)):
            for pos, c in index.get((i, v[:i] + v[i + 1 :]), ()):
                if _vec(c) != v:
                    found[pos] = c
        return [found[pos] for pos in sorted(found)]

    def _clamp(self, op: str, m: int, cfg: KernelConfig) -> Optional[KernelConfig]:
        """cfg itself if it is in the space at m, else the same config with the largest BLOCK_SIZE_M
        (at most cfg's) that is."""
        table = self._by_vec.get((op, m), {})
        v = list(_vec(cfg))
        for bm in sorted({c.BLOCK_SIZE_M for c in self._space(op, m)}, reverse=True):
            if bm > cfg.BLOCK_SIZE_M:
                continue
            v[0] = bm
            c = table.get(tuple(v))
            if c is not None:
                return c
        return None

    def _finalists(self, book: Book, m: int) -> Dict[str, List[KernelConfig]]:
        out = {op: self._ranked(book, op, m, tier=0)[: self.n_finalists] for op in self.ops}
        if set(self.ops) == {"up", "down"}:
            best: Dict[Any, Any] = {}
            for op in ("up", "down"):
                for s, c in book.ranked("up" if op == "up" else "down", m, tier=0):
                    best.setdefault((op, c.BLOCK_SIZE_M), s)
            shared = {b for (o, b) in best if o == "up"} & {b for (o, b) in best if o == "down"}
            if shared:
                bm = min(shared, key=lambda b: (best[("up", b)] + best[("down", b)], b))
                for op in ("up", "down"):
                    extra = [c for c in self._ranked(book, op, m, tier=0) if c.BLOCK_SIZE_M == bm][:2]
                    for c in extra:
                        if c not in out[op]:
                            out[op].append(c)
        return out

    def _final_units(self, book: Book, sizes: Sequence[int]) -> List[Unit]:
        units = []
        fin = {m: self._finalists(book, m) for m in sizes}
        for r in range(self.final_rounds):  # interleaved: every finalist once per round
            for m in sizes:
                for op in self.ops:
                    for c in fin[m][op]:
                        units.append(self._unit(op, c, m, self.final_replays, FINAL_ROUND + r))
        return units

    # -- the plan ------------------------------------------------------------------------------------
    def _plan(self, book: Book) -> Iterator[List[Unit]]:
        sr = self.screen_replays
        A = self.anchors
        yield [
            self._unit(op, c, m, sr, 0)
            for m in A
            for op in self.ops
            for c in self._tile_reps(op, m) + self._seeds_at(op, m)
        ]

        units = []
        for m in A:
            for op in self.ops:
                tiles = []
                for c in self._ranked(book, op, m, tier=0):
                    if _tile(c) not in tiles:
                        tiles.append(_tile(c))
                tiles = tiles[: self.top_tiles]
                reps = self._tile_reps(op, m)
                for t in tiles:
                    gm = next((c.GROUP_SIZE_M for c in reps if _tile(c) == t), 1)
                    # every warps x stages variant of the leading tiles
                    for c in self._space(op, m):
                        if _tile(c) == t and c.GROUP_SIZE_M == gm and not book.has(op, m, c):
                            units.append(self._unit(op, c, m, sr, 1))
        yield units

        units = []
        for m in A:
            for op in self.ops:
                for lead in self._ranked(book, op, m, tier=0)[: self.n_leaders + 1]:
                    for c in self._one_axis_neighbours(op, m, lead):
                        if c.GROUP_SIZE_M != lead.GROUP_SIZE_M and not book.has(op, m, c):
                            units.append(self._unit(op, c, m, sr, 2))
        yield units

        for rnd in (3, 4):
            yield self._refine(book, A, sr, rnd)
        yield self._final_units(book, A)

        done = list(A)
        for level in self._levels():
            units = []
            for m in level:
                for op in self.ops:
                    seen = set()
                    for nb in self._neighbours_done(m, done):
                        ranked = self._ranked(book, op, nb, tier=1) + self._ranked(book, op, nb, tier=0)
                        taken = 0
                        for c in ranked:
                            if taken >= self.n_seeds:
                                break
                            cc = self._clamp(op, m, c)
                            if cc is None or cc in seen:
                                continue
                            seen.add(cc)
                            taken += 1
                            if not book.has(op, m, cc):
                                units.append(self._unit(op, cc, m, sr, 10))
                    for c in self._seeds_at(op, m):
                        if c not in seen and not book.has(op, m, c):
                            seen.add(c)
                            units.append(self._unit(op, c, m, sr, 10))
            yield units
            yield self._refine(book, level, sr, 11, leaders=self.level_leaders)
            yield self._refine(book, level, sr, 12, leaders=1)
            if self.level_final:
                yield self._final_units(book, level)
            done = sorted(set(done) | set(level))

    def _refine(
        self, book: Book, sizes: Sequence[int], replays: int, rnd: int, leaders: Optional[int] = None
    ) -> List[Unit]:
        units = []
        for m in sizes:
            for op in self.ops:
                for lead in self._ranked(book, op, m, tier=0)[: leaders or self.n_leaders]:
                    for c in self._one_axis_neighbours(op, m, lead):
                        if not book.has(op, m, c):
                            units.append(self._unit(op, c, m, replays, rnd))
        # one unit per (op, m, config) even when two leaders share a neighbour
        uniq: Dict[Any, Any] = {}
        for u in units:
            uniq.setdefault(u.ident(), u)
        return list(uniq.values())

    # -- Strategy ------------------------------------------------------------------------------------
    def _pending_step(self, book: Book) -> Tuple[Optional[int], List[Unit]]:
        """(index in _plan, its units not measured yet) of the first step with any; (None, []) when done.
        With same_launch, a unit is left out where another config of the same launch (space.launch_key) is
        measured at its size in its tier, or comes earlier in the step: timing it would time that launch
        again (issue 22: 45-52 of ~1050 units of an own-kernel `up` tune on the H100, the GROUP_SIZE_M
        sweeps at M <= 4, and 9-19 head-to-head units between two contenders of one launch)."""
        launched = self._launches(book) if self.same_launch else None
        for i, step in enumerate(self._plan(book)):
            todo: Dict[str, Unit] = {}
            mine: Dict[tuple, str] = {}
            for u in step:  # leaders sharing a neighbour propose it twice: measure it once
                if u.ident() in book.done:
                    continue
                if launched is not None:
                    k = u.cfg.key()
                    lk = (u.op, u.m, u.round // TIER, space_mod.launch_key(u.cfg, self.shape, u.m))
                    measured_twins = launched.get(lk, set()) - {k}
                    if measured_twins or mine.setdefault(lk, k) != k:  # timed, or earlier in this step
                        continue
                todo.setdefault(u.ident(), u)
            if todo:
                return i, list(todo.values())
        return None, []

    def _launches(self, book: Book) -> Dict[tuple, set]:
        """(op, m, tier, launch key) -> the keys of the configs measured with that launch (space.launch_key)."""
        out: Dict[tuple, set] = {}
        for (op, m, k), rounds in book.rounds.items():
            cfg = book.cfgs[k]
            lk = space_mod.launch_key(cfg, self.shape, m)
            for tier in {r // TIER for r in rounds}:
                out.setdefault((op, m, tier, lk), set()).add(k)
        return out

    def next_phase(self, measured: Sequence[Measurement]) -> Optional[List[Unit]]:
        return self._pending_step(Book(measured))[1] or None

    def _step_sizes(self) -> List[List[int]]:
        """The batch sizes of each step of _plan, in its order (the steps are fixed; their units are not)."""
        steps = [list(self.anchors)] * 6  # tile screen, B, C, D (rounds 3, 4), F
        for level in self._levels():
            steps.extend([level] * (4 if self.level_final else 3))  # S, D (rounds 11, 12)[, F]
        return steps

    def settled(self, measured: Sequence[Measurement]) -> List[int]:
        """Sizes whose last step of the plan is behind the step the next phase comes from: the anchors
        once their finalists are timed, a level's sizes once its refinement is done."""
        current, _todo = self._pending_step(Book(measured))
        if current is None:
            return list(self.batch_sizes)
        last: Dict[int, int] = {}
        for i, sizes in enumerate(self._step_sizes()):
            for m in sizes:
                last[m] = i
        return [m for m in self.batch_sizes if last.get(m, -1) < current]

    def winners(self, measured: Sequence[Measurement]) -> Dict[Tuple[str, int], KernelConfig]:
        book = Book(measured)
        out = choose_winners(book, self.batch_sizes, self.ops, tier=1)
        missing = [m for m in self.batch_sizes if any((op, m) not in out for op in self.ops)]
        if missing:  # sizes without re-timed finalists (or whose finalists all failed): screening results
            out.update({k: v for k, v in choose_winners(book, missing, self.ops, tier=0).items() if k not in out})
        return out
