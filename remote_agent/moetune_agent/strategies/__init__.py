# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Search strategies: pure functions from measurements to the next phase of work (see work.py).

make_strategy(name, space, batch_sizes, ops, shape) builds one by name; STRATEGIES lists them.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Sequence, Tuple

from ..kernel_types import KernelConfig, Shape
from ..work import Strategy
from .exhaustive import ExhaustiveStrategy
from .fast import FastStrategy

__all__ = [
    "STRATEGIES",
    "DEFAULT_STRATEGY",
    "own_launches",
    "strategy_options",
    "make_strategy",
    "resolve",
]

STRATEGIES = {
    "exhaustive": ExhaustiveStrategy,
    "fast": FastStrategy,
}
DEFAULT_STRATEGY = "fast"


def own_launches(kernel_classes=None) -> bool:
    """Whether configs of one launch (space.launch_key) count as one config: on moetune's own kernel
    (no kernel_classes: GROUP_SIZE_M a run-time argument). The fast strategy (strategy_options) and the
    head-to-head's contenders (tunerun/phases) both follow it."""
    return kernel_classes is None


def strategy_options(name: str, kernel_classes=None) -> Dict[str, Any]:
    """The options a strategy called name takes from the backend: the fast one's kernel_classes (the
    server backends' specialisation classes: strategies/fast.py _screen_gm).
    Every place that builds the tune's strategy (the run, its at-facts precompile, a check's prewarm) passes
    the same, so what they compile is what the run measures."""
    if name != "fast":
        return {}
    if kernel_classes is None:  # moetune's own kernel (or the synthetic one)
        return {"same_launch": True} if own_launches(kernel_classes) else {}
    return {"kernel_classes": kernel_classes}


def make_strategy(
    name: str,
    space: Mapping[Tuple[str, int], Sequence[KernelConfig]],
    batch_sizes: Sequence[int],
    ops: Sequence[str],
    shape: Shape,
    **options,
) -> Strategy:
    """Build the strategy called name; ValueError naming the known ones when it does not exist."""
    try:
        cls = STRATEGIES[name]
    except KeyError:
        raise ValueError("unknown strategy %r; known strategies: %s" % (name, ", ".join(sorted(STRATEGIES))))
    return cls(space, batch_sizes, ops, shape, **options)


def resolve(name: "str | None") -> str:
    """The strategy a spec names (None: the agent's default, "fast"); ValueError for an unknown one."""
    if name is None:
        name = "fast" if "fast" in STRATEGIES else DEFAULT_STRATEGY
    if name not in STRATEGIES:
        raise ValueError("unknown strategy %r; this agent has: %s" % (name, ", ".join(sorted(STRATEGIES))))
    return name
