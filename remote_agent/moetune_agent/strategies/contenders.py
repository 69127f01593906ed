# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tuned side of each key's head-to-head: the strategy's winner and the next best configs, up to FINALISTS per
(op, m), with a TMA twin for a down GEMM where the backend has one."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple
import dataclasses

from ..kernel_types import KernelConfig, Shape
from ..space import same_launch
from .common import TIER, Book

__all__ = ["FINALISTS", "pick_contenders"]


FINALISTS = 2  # tuned contenders per (op, m) (plus the default, plus a TMA twin of the first down)


def pick_contenders(
    book: Book,
    winners: Dict[Tuple[str, int], KernelConfig],
    ops: Sequence[str],
    sizes: Sequence[int],
    banned: Optional[set] = None,
    tma: bool = False,
    finalists: int = FINALISTS,
    launch_shape: Optional[Shape] = None,
) -> Dict[Tuple[str, int], List[KernelConfig]]:
    """The tuned side of every key's head-to-head: the strategy's winner, then the next best by the
    highest tier measured at that key (re-timings when the strategy made them), up to finalists; a
    down GEMM also gets its first contender with USE_TMA where the backend supports it. launch_shape (moetune's
    own kernel: strategies.own_launches): a next best of the same launch (space.launch_key at that shape)
    as a contender already in is passed over (the H100's own `up` tunes spent 9-19
    head-to-head units timing one launch against itself)."""
    banned = banned or set()
    out: Dict[Tuple[str, int], List[KernelConfig]] = {}
    for op in ops:
        for m in sizes:
            cands: List[KernelConfig] = []
            if (op, m) in winners:
                cands.append(winners[(op, m)])
            tiers = [rnd // TIER for (o, mm, _k), rs in book.rounds.items() if o == op and mm == m for rnd in rs]
            for _s, c in book.ranked(op, m, tier=max(tiers) if tiers else None):
                if len(cands) >= finalists:
                    break
                if (
                    c not in cands
                    and (op, c.key()) not in banned
                    and not (launch_shape is not None and any(same_launch(c, x, launch_shape, m) for x in cands))
                ):
                    cands.append(c)
            if op == "down" and tma:
                for c in list(cands[:1]):
                    twin = dataclasses.replace(c, USE_TMA=True)
                    if twin not in cands:
                        cands.append(twin)
            out[(op, m)] = cands
    return out
