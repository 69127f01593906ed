# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The contract between search strategies and the scheduler that runs their work on the GPUs.

A strategy never touches a GPU. It proposes *phases*: lists of independent ``Unit``s (one config, one op,
one batch size, a number of replays). The scheduler runs a phase's units on every GPU worker in any
order (a shared queue, one worker process per GPU), appends each ``Measurement`` to the run's journal,
and hands the measurements back. The strategy then proposes the next phase from everything measured so
far, until it returns ``None``. Because a strategy is a pure function of the measurements it was given,
a resumed run replays the journal into it and only the units missing from the journal are measured
again.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

from .kernel_types import KernelConfig, Shape


@dataclasses.dataclass(frozen=True)
class Unit:
    op: str                 # "up" | "down" | "both"
    cfg: KernelConfig
    m: int                  # batch size (tokens)
    replays: int = 10       # timed graph replays
    round: int = 0          # strategy phase / re-timing round; part of the identity
    cfg_down: Optional[KernelConfig] = None   # for op "both" with separate up/down configs

    def ident(self) -> str:
        """Stable identity used by the journal to skip work already done on resume."""
        s = "%s|%s|%d|%d|%d" % (self.op, self.cfg.key(), self.m, self.replays, self.round)
        if self.cfg_down is not None:
            s += "|" + self.cfg_down.key()
        return s


@dataclasses.dataclass
class Measurement:
    unit: Unit
    samples_us: Optional[List[float]] = None   # None when the candidate failed
    error_kind: Optional[str] = None            # CandidateError.kind when it failed
    error: Optional[str] = None
    gpu: int = 0
    simulated: bool = False

    @property
    def ok(self) -> bool:
        return self.samples_us is not None

    @property
    def median_us(self) -> float:
        s = sorted(self.samples_us or [float("inf")])
        n = len(s)
        return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


class Strategy(abc.ABC):
    """Search strategy over a pruned space.

    space maps (op, m) -> the candidate configs that survived pruning for that op at that batch size.
    ops is ("both",) for a fused up+down file, or ("up", "down") when tuning separately (then the final
    winners must share BLOCK_SIZE_M per batch size, as SGLang requires).
    """

    name = "abstract"

    def __init__(self, space: Dict[Tuple[str, int], Sequence[KernelConfig]], batch_sizes: Sequence[int],
                 ops: Sequence[str], shape: Shape):
        self.space = space
        self.batch_sizes = list(batch_sizes)
        self.ops = list(ops)
        self.shape = shape

    @abc.abstractmethod
    def next_phase(self, measured: Sequence[Measurement]) -> Optional[List[Unit]]:
        """Units to measure next, given every measurement so far (in journal order); None when done."""

    @abc.abstractmethod
    def winners(self, measured: Sequence[Measurement]) -> Dict[Tuple[str, int], KernelConfig]:
        """The chosen config per (op, m) from the measurements."""
