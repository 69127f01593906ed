# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""How many replays, calls and launches a unit times: warm-up replays by kind of unit, launches per screening sample
scaled so each sample is long enough to time, and the bytes one call must move at least (its floor)."""

from __future__ import annotations

import math
from typing import Optional

from ..kernel_types import Shape

__all__ = [
    "NOMINAL_HBM_GBPS",
    "RETIME_WARMUP_REPLAYS",
    "SCREEN_GRAPH_CALLS",
    "SCREEN_MAX_LAUNCHES",
    "SCREEN_MAX_REPLAYS",
    "SCREEN_TARGET_US",
    "WARMUP_REPLAYS",
    "expected_experts_hit",
    "floor_bytes",
    "nominal_floor_us",
    "screen_calls",
    "screen_launches",
    "sized_launches",
    "warmup_replays",
]


WARMUP_REPLAYS = 5  # a screening unit's warm-up: as many replays as it times, at most this
# A re-timing unit's warm-up (the head-to-head's rounds, the headroom check's re-timing, the finalists'):
# the reference tuners' 5 replays were 57% of the head-to-head's GPU time (M >= 749 us calls time 3 replays
# and warmed up 5). The re-timing units run back to back, so the GPU is already busy and clocked up when one
# starts; what a fresh graph's first launches cost (its upload, cold instruction and TLB caches) is gone
# after the first; 2 replays leave one to spare. (5 before stop 35: bench/RESULTS.md).
RETIME_WARMUP_REPLAYS = 2
SCREEN_MAX_REPLAYS = 2  # units timing at most this many replays are screening units
SCREEN_GRAPH_CALLS = 2  # calls captured in a screening unit's graph
SCREEN_TARGET_US = 500.0  # GPU time per screening sample: launches = this / (calls x the call's floor)
SCREEN_MAX_LAUNCHES = 5
NOMINAL_HBM_GBPS = 4800.0  # for the launch count only (an H200's HBM3e): a slower GPU just times longer


def warmup_replays(replays: int) -> int:
    """Warm-up replays before a unit's timed ones: a screening unit (<= SCREEN_MAX_REPLAYS) as many as it
    times, a re-timing unit RETIME_WARMUP_REPLAYS."""
    if replays <= SCREEN_MAX_REPLAYS:
        return min(WARMUP_REPLAYS, max(1, replays))
    return RETIME_WARMUP_REPLAYS


def screen_launches(floor_us: Optional[float]) -> int:
    """Back-to-back launches of a screening unit's graph per sample, from the call's floor (None:
    unknown, the most)."""
    if not floor_us or floor_us <= 0:
        return SCREEN_MAX_LAUNCHES
    n = int(math.ceil(SCREEN_TARGET_US / (SCREEN_GRAPH_CALLS * floor_us)))
    return max(1, min(SCREEN_MAX_LAUNCHES, n))


def sized_launches(nominal: int, call_us: Optional[float]) -> int:
    """A screening unit's launches per sample once its first warm-up replay (one launch) has timed the
    call: never more than the floor's count (nominal), fewer where the call runs far above the floor.
    The floor assumes the weights stream at NOMINAL_HBM_GBPS; int4_w4a16's dequantising calls ran 30-300x
    above their (quarter-size) floor, so every screening sample launched the graph 5 times, ~17 ms of GPU
    time a sample against the 0.5 ms aimed at (stop 35, H100: 1,170 samples, 20.3 s of the GPU worker's
    time in one 3-size int4 tune). (bench/RESULTS.md, stop 35)."""
    if nominal <= 1 or not call_us or call_us <= 0:
        return nominal
    return max(1, min(nominal, screen_launches(call_us)))


def floor_bytes(s: Shape, op: str, m: int) -> float:
    """Bytes one call must move at least once: the weights of the experts a uniform random routing is
    expected to hit, plus reading x and writing the output."""
    hit = expected_experts_hit(s.E, s.topk, m)
    wbytes = {"fp8_w8a8": 1, "int8_w8a8": 1, "int8_w8a16": 1, "int4_w4a16": 0.5}.get(s.dtype, 2)
    per_expert: float = 0
    if op in ("both", "up"):
        per_expert += 2 * s.N * s.K * wbytes
    if op in ("both", "down"):
        per_expert += s.K * s.N * wbytes
    act = 2 * m * s.K * 2
    return hit * per_expert + act


def nominal_floor_us(shape: Shape, op: str, m: int) -> float:
    """floor_bytes at NOMINAL_HBM_GBPS, in microseconds."""
    return floor_bytes(shape, op, m) / (NOMINAL_HBM_GBPS * 1e9) * 1e6


def screen_calls(shape: Shape, op: str, m: int) -> int:
    """Calls timed per sample of a screening unit (SCREEN_GRAPH_CALLS x the launches)."""
    return SCREEN_GRAPH_CALLS * screen_launches(nominal_floor_us(shape, op, m))


def expected_experts_hit(E: int, topk: int, m: int) -> float:
    """Distinct experts a uniform random top-k routing of m tokens is expected to hit."""
    return E * (1.0 - (1.0 - topk / E) ** m) if E else 0.0
