# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a tune will measure first, known before it measures anything: the strategy's first phase and the
catalogue screen's seeds (first_batches; the tune's early precompile and the check's prewarm compile them
ahead), and a guess of the later phases from a headroom check's timings (prewarm_plan, surrogate), which the
check's background compile (prewarm.py) works through. Pure functions of their arguments."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .. import space as space_mod
from ..kernel_types import KernelConfig, Shape, shape_of, strategy_ops
from ..work import Measurement, Unit, median as _median
from . import make_strategy, resolve, strategy_options
from .screen import HeadroomPlan, screened_candidates

__all__ = ["first_batches", "prewarm_plan", "plan_compiles", "surrogate"]


def first_batches(
    spec: Dict[str, Any], ops: Any, sizes: Any, smem: Optional[int], cap: int, kernel_classes=None
) -> Tuple[list, list]:
    """What a tune of spec will measure first, known before the backend's defaults (from the GPU's shared
    memory alone) -> (the strategy's first phase (the fast one's tile screen at its anchors), at most cap
    units; the check's catalogue configs the fast strategy seeds every size with: HeadroomPlan.likely_units).
    kernel_classes: as the run's strategy gets it (strategies.strategy_options)."""
    shape = shape_of(spec)
    space = space_mod.spec_space(spec, shape, sizes, ops, smem)
    if not space:
        return [], []
    name = resolve(spec["strategy"])
    options = strategy_options(name, kernel_classes)
    units = list(make_strategy(name, space, sizes, ops, shape, **options).next_phase([]) or [])[:cap]
    seeds = HeadroomPlan(shape, sizes, ops, space, {}).likely_units() if name == "fast" else []
    return units, seeds


SURROGATE_PENALTY = 0.05  # prewarm_plan's surrogate: per unit of config distance from a timed config


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


def prewarm_plan(
    spec: Dict[str, Any],
    smem: Optional[int],
    measured: Sequence[Measurement] = (),
    defaults: Optional[Dict[Tuple[str, int], KernelConfig]] = None,
    kernel_classes=None,
) -> Tuple[List[Unit], List[int]]:
    """-> (units, the end of each group in units): what the tune of spec will probably compile, phase by
    phase, for a background compile (prewarm.py) after a check: the strategy's first phase (exact: it
    depends on nothing measured), then every later phase of the strategy run against surrogate(measured)
    (the check's timings, guessed over the configs it did not time), the check's seeds included as the
    tune's strategy gets them (runner.headroom_seeds). A guess that misses costs idle CPU only. A pure
    function of its arguments."""
    shape = shape_of(spec)
    ops = strategy_ops(spec)
    sizes = spec["batch_sizes"]
    space = space_mod.spec_space(spec, shape, sizes, ops, smem)
    if not space:
        return [], []
    return plan_compiles(shape, sizes, ops, space, spec["strategy"], measured, defaults, kernel_classes=kernel_classes)


def plan_compiles(
    shape: Shape,
    sizes: Sequence[int],
    ops: Sequence[str],
    space: Mapping[Tuple[str, int], Sequence[KernelConfig]],
    strategy_name: Optional[str],
    measured: Sequence[Measurement] = (),
    defaults: Optional[Dict[Tuple[str, int], KernelConfig]] = None,
    max_phases: int = 64,
    kernel_classes=None,
) -> Tuple[List[Unit], List[int]]:
    """prewarm_plan on a given space (also bench/prewarm_replay.py's)."""
    name = resolve(strategy_name)
    options: Dict[str, Any] = strategy_options(name, kernel_classes)
    if name == "fast" and defaults:
        options["extra_seeds"] = screened_candidates(shape, sizes, ops, space, defaults)
    strategy = make_strategy(name, space, sizes, ops, shape, **options)
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
            fake.append(
                Measurement(u, [t] * max(1, u.replays))
                if t is not None
                else Measurement(u, None, "other", "no check timing to guess from")
            )
        bounds.append(len(out))
        if not measured:
            break  # nothing to guess the later phases from: the first phase only
    if name == "fast" and not (measured and defaults):  # the seeds were not in the surrogate run
        seeds = [u for u in HeadroomPlan(shape, sizes, ops, space, {}).likely_units() if u.ident() not in seen]
        out.extend(seeds)
        bounds.append(len(out))
    return out, bounds
