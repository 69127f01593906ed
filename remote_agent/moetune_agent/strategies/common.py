# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers shared by the search strategies: pooling measurements and choosing winners.

Pure functions over ``Measurement`` lists (standard library only), so a resumed run that replays its
journal reaches exactly the same decisions.
"""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..kernel_types import KernelConfig
from ..work import Measurement

__all__ = ["Book", "Pool", "TIER", "choose_winners", "median"]

# (op, m, config key) -> the pooled samples of every successful measurement of that triple.
Pool = Dict[Tuple[str, int, str], List[float]]


def median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return float("inf")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


TIER = 100  # rounds 0-99 are cheap screening timings, 100+ the re-timing of finalists


class Book:
    """Everything measured so far, indexed for the strategies.

    Scores are medians of per-measurement medians within one tier (round // 100): screening timings
    (tier 0) rank candidates, re-timings of finalists (tier 1, interleaved, more replays) pick winners,
    so a lucky first sample cannot carry a config to the top (winner's curse).
    """

    def __init__(self, measured: Iterable[Measurement]):
        self.cfgs: Dict[str, KernelConfig] = {}
        self.rounds: Dict[Tuple[str, int, str], Dict[int, List[float]]] = {}
        self.failed: Dict[Tuple[str, int, str], str] = {}
        self.failed_cfg: Dict[Tuple[str, str], str] = {}  # (op, key) failing for a batch-independent reason
        self.done: set = set()
        self.touched: set = set()
        self.by_key: Dict[Tuple[str, int], List[str]] = {}  # (op, m) -> config keys measured ok, in order
        self._ranked: Dict[Tuple[str, int, Optional[int]], List[Tuple[float, KernelConfig]]] = {}
        for meas in measured:
            u = meas.unit
            self.done.add(u.ident())
            if u.cfg_down is not None:
                continue  # combined up+down timings are reported, not used for choosing
            k = u.cfg.key()
            self.cfgs[k] = u.cfg
            t = (u.op, u.m, k)
            self.touched.add(t)
            if not meas.ok:
                self.failed[t] = meas.error_kind or "other"
                if meas.error_kind in ("compile", "resources"):
                    self.failed_cfg[(u.op, k)] = meas.error_kind
                continue
            if t not in self.rounds:
                self.by_key.setdefault((u.op, u.m), []).append(k)
            self.rounds.setdefault(t, {}).setdefault(u.round, []).append(median(meas.samples_us or []))

    def has(self, op: str, m: int, cfg: KernelConfig) -> bool:
        """Measured (or failed) at (op, m) in any round, or failing everywhere."""
        k = cfg.key()
        return (op, m, k) in self.touched or (op, k) in self.failed_cfg

    def is_failed(self, op: str, m: int, cfg: KernelConfig) -> bool:
        k = cfg.key()
        return (op, m, k) in self.failed or (op, k) in self.failed_cfg

    def score(self, op: str, m: int, cfg: KernelConfig, tier: Optional[int] = None) -> float:
        r = self.rounds.get((op, m, cfg.key()))
        if not r:
            return float("inf")
        if tier is None:
            tier = max(r) // TIER
        vals = [v for rnd, vs in r.items() if rnd // TIER == tier for v in vs]
        return median(vals) if vals else float("inf")

    def measured_cfgs(self, op: str, m: int) -> List[KernelConfig]:
        return [self.cfgs[k] for k in self.by_key.get((op, m), ())]

    def ranked(
        self, op: str, m: int, cfgs: Optional[Iterable[KernelConfig]] = None, tier: Optional[int] = None
    ) -> List[Tuple[float, KernelConfig]]:
        """Configs measured at (op, m) (in tier, when given), fastest first; failed ones left out."""
        if cfgs is None:  # the strategies ask the same question many times per phase: answer it once
            key = (op, m, tier)
            if key not in self._ranked:
                self._ranked[key] = self.ranked(op, m, self.measured_cfgs(op, m), tier)
            return list(self._ranked[key])
        pool = list(cfgs)
        out = []
        for c in pool:
            if self.is_failed(op, m, c):
                continue
            s = self.score(op, m, c, tier)
            if math.isfinite(s):
                out.append((s, c))
        out.sort(key=lambda t: (t[0], t[1].key()))
        return out


def choose_winners(
    book: Book,
    batch_sizes: Sequence[int],
    ops: Sequence[str],
    candidates: Optional[Mapping[Tuple[str, int], Sequence[KernelConfig]]] = None,
    tier: Optional[int] = None,
) -> Dict[Tuple[str, int], KernelConfig]:
    """Fastest measured config per (op, m). With separate up/down ops the two winners of one batch size
    share BLOCK_SIZE_M (SGLang asserts it): the BLOCK_SIZE_M minimising best-up + best-down wins."""
    out: Dict[Tuple[str, int], KernelConfig] = {}
    for m in batch_sizes:
        ranked = {}
        for op in ops:
            cands = candidates.get((op, m)) if candidates is not None else None
            ranked[op] = book.ranked(op, m, cands, tier)
        if set(ops) != {"up", "down"}:
            for op in ops:
                if ranked[op]:
                    out[(op, m)] = ranked[op][0][1]
            continue
        best_by_bm: Dict[str, Dict[int, Tuple[float, KernelConfig]]] = {"up": {}, "down": {}}
        for op in ("up", "down"):
            for s, c in ranked[op]:
                best_by_bm[op].setdefault(c.BLOCK_SIZE_M, (s, c))
        shared = set(best_by_bm["up"]) & set(best_by_bm["down"])
        if not shared:
            continue
        bm = min(shared, key=lambda b: (best_by_bm["up"][b][0] + best_by_bm["down"][b][0], b))
        out[("up", m)] = best_by_bm["up"][bm][1]
        out[("down", m)] = best_by_bm["down"][bm][1]
    return out
