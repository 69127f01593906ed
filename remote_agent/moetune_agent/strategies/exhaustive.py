# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ground truth: every surviving config at every batch size, timed the reference way."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..kernel_types import KernelConfig
from ..work import Measurement, Strategy, Unit
from .common import Book, choose_winners

__all__ = ["ExhaustiveStrategy"]


class ExhaustiveStrategy(Strategy):
    """One phase holding every (op, m, config) with the reference's 10 timed replays.

    Units are ordered config-major (all batch sizes of one config together) so a worker reuses the
    compiled kernel instead of cycling through the whole space per batch size.
    """

    name = "exhaustive"

    def __init__(
        self,
        space: Mapping[Tuple[str, int], Sequence[KernelConfig]],
        batch_sizes: Sequence[int],
        ops: Sequence[str],
        shape,
        replays: int = 10,
    ):
        super().__init__(space, batch_sizes, ops, shape)
        self.replays = replays

    def all_units(self) -> List[Unit]:
        units = []
        for op in self.ops:
            order: Dict[str, List[Unit]] = {}
            for m in self.batch_sizes:
                for cfg in self.space.get((op, m), ()):
                    order.setdefault(cfg.key(), []).append(Unit(op, cfg, m, self.replays, 0))
            for k in sorted(order):
                units.extend(order[k])
        return units

    def next_phase(self, measured: Sequence[Measurement]) -> Optional[List[Unit]]:
        done = {meas.unit.ident() for meas in measured}
        todo = [u for u in self.all_units() if u.ident() not in done]
        return todo or None

    def winners(self, measured: Sequence[Measurement]) -> Dict[Tuple[str, int], KernelConfig]:
        return choose_winners(Book(measured), self.batch_sizes, self.ops, self.space)
