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
import math
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .kernel_types import KernelConfig, Shape

__all__ = [
    "GRAPH_CALLS",
    "Measurement",
    "Strategy",
    "TIMED_MAX_REPLAYS",
    "TIMED_MIN_REPLAYS",
    "Unit",
    "measure_unit",
    "median",
    "timed_replays",
]


GRAPH_CALLS = 10  # calls per timed replay of a full (non-screening) unit: backends/triton_backend.py
TIMED_TARGET_US = 20000.0  # timed GPU time of a re-timing unit (the head-to-head's, the headroom check's)
TIMED_MIN_REPLAYS = 3
TIMED_MAX_REPLAYS = 10


def timed_replays(call_us: Optional[float], unknown: int = TIMED_MIN_REPLAYS) -> int:
    """Timed replays for a re-timing unit of a call taking call_us: about TIMED_TARGET_US of timed GPU
    time, 3 to 10 replays. A small-M call is cheap and noisy, so it gets 10; a large-M call (10 calls of
    ~1 ms a replay at M = 4096) is steady within a round and its spread comes from the GPU's clock across
    rounds, which more replays within one round do not remove (issue 22, tools/timing_protocols.py).
    One rule for the head-to-head and the headroom check, so that the check estimates what the tune's
    decision measures (issue 19). unknown: replays when the call's time is not known."""
    if not call_us or call_us <= 0 or math.isinf(call_us) or math.isnan(call_us):
        return unknown
    n = int(math.ceil(TIMED_TARGET_US / (GRAPH_CALLS * call_us)))
    return max(TIMED_MIN_REPLAYS, min(TIMED_MAX_REPLAYS, n))


@dataclasses.dataclass(frozen=True)
class Unit:
    op: str  # "up" | "down" | "both"
    cfg: KernelConfig
    m: int  # batch size (tokens)
    replays: int = 10  # timed graph replays
    round: int = 0  # strategy phase / re-timing round; part of the identity
    cfg_down: Optional[KernelConfig] = None  # for op "both" with separate up/down configs
    pair: Optional[KernelConfig] = None  # a paired unit: this config (the reference, the server's
    # default) is timed in the same unit, replay by replay
    # alternating with cfg (Measurement.pair_samples_us)

    def ident(self) -> str:
        """Stable identity used by the journal to skip work already done on resume."""
        s = "%s|%s|%d|%d|%d" % (self.op, self.cfg.key(), self.m, self.replays, self.round)
        if self.cfg_down is not None:
            s += "|" + self.cfg_down.key()
        if self.pair is not None:
            s += "|pair:" + self.pair.key()
        return s


@dataclasses.dataclass
class Measurement:
    unit: Unit
    samples_us: Optional[List[float]] = None  # None when the candidate failed
    error_kind: Optional[str] = None  # CandidateError.kind when it failed
    error: Optional[str] = None
    gpu: int = 0
    simulated: bool = False
    pair_samples_us: Optional[List[float]] = None  # a paired unit's reference, replay by replay with
    # samples_us; None when it failed (pair_error says why)
    pair_error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.samples_us is not None

    @property
    def paired(self) -> bool:
        """Both sides of a paired unit were timed (the ratio of the two is then free of the drift and
        clock changes that move unpaired units apart: issue 19)."""
        return self.ok and self.pair_samples_us is not None

    @property
    def pair_median_us(self) -> float:
        return median(self.pair_samples_us or [float("inf")])

    @property
    def median_us(self) -> float:
        return median(self.samples_us or [float("inf")])


def measure_unit(backend, unit: Unit, gpu: int = 0, simulated: bool = False) -> Measurement:
    """Run one unit on a backend (kernel_types.CandidateError becomes a failed Measurement): a paired
    unit through backend.measure_pair, every other through backend.measure."""
    from .kernel_types import CandidateError

    try:
        if unit.pair is not None:
            t, tp, why = backend.measure_pair(unit.op, unit.cfg, unit.pair, unit.m, unit.replays)
            return Measurement(
                unit,
                list(t.samples_us),
                gpu=gpu,
                simulated=simulated,
                pair_samples_us=list(tp.samples_us) if tp is not None else None,
                pair_error=why,
            )
        t = backend.measure(unit.op, unit.cfg, unit.m, unit.replays, unit.cfg_down)
        return Measurement(unit, list(t.samples_us), gpu=gpu, simulated=simulated)
    except CandidateError as e:
        meas = Measurement(unit, None, e.kind, e.message, gpu, simulated)
        if unit.pair is not None:  # the default is still timed: the head-to-head keeps its round
            try:
                meas.pair_samples_us = list(backend.measure(unit.op, unit.pair, unit.m, unit.replays).samples_us)
            except CandidateError as e2:
                meas.pair_error = "%s: %s" % (e2.kind, e2.message)
        return meas


def median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


class Strategy(abc.ABC):
    """Search strategy over a pruned space.

    space maps (op, m) -> the candidate configs that survived pruning for that op at that batch size.
    ops is ("both",) for a fused up+down file, or ("up", "down") when tuning separately (then the final
    winners must share BLOCK_SIZE_M per batch size, as SGLang requires).
    """

    name = "abstract"

    def __init__(
        self,
        space: Mapping[Tuple[str, int], Sequence[KernelConfig]],
        batch_sizes: Sequence[int],
        ops: Sequence[str],
        shape: Shape,
    ):
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

    def settled(self, measured: Sequence[Measurement]) -> List[int]:
        """The batch sizes no later phase will measure at (their winners are final), given the
        measurements so far: the head-to-head may start there while the search goes on elsewhere.
        None by default (a strategy that cannot tell): the head-to-head then waits for the search."""
        return []
