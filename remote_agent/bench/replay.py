# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Replaying recorded H200 landscapes through the whole decision pipeline (no GPU needed).

tests/data/h200_*_exhaustive.json.gz hold every sample of exhaustive runs of moetune's Triton kernel on
an NVIDIA H200 (bench_h200.py, op "both", 10 timed graph replays per config, batch sizes 1, 16, 64,
256, 1024). ReplayBackend is a TEST DOUBLE standing in for the GPU: it serves those recorded samples
back, so a strategy faces the real landscape and its real noise. run_pipeline() drives what a run does
after start-up, in the runner's order: the default phase, the strategy's phases, the head-to-head
against the server's default (strategies/headtohead.py, the same contender choice as tunerun/phases.py), and
counts the work. Used by tests/test_strategies_replay.py and bench_replay.py.

Cost figures: units and timed replays are exact counts. "model_gpu_s" is a MODEL, not a measurement:
per unit UNIT_OVERHEAD_S (issue 3's H200 run: 21.9 ms per mostly 2-replay unit at M=1, whose replays
take ~2 ms) plus (warm-up + timed replays) x GRAPH_CALLS x the recorded median latency of that config.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import sys
import zlib
from typing import Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
if AGENT_ROOT not in sys.path:
    sys.path.insert(0, AGENT_ROOT)

from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.backends.base import Backend  # noqa: E402
from moetune_agent.kernel_types import CandidateError, Shape, Timing  # noqa: E402
from moetune_agent.strategies import make_strategy  # noqa: E402
from moetune_agent.strategies.common import Book  # noqa: E402
from moetune_agent.strategies.headtohead import FINALISTS, HeadToHead, pick_contenders  # noqa: E402
from moetune_agent.work import Measurement, Unit, measure_unit  # noqa: E402

DATA = os.path.join(AGENT_ROOT, "tests", "data")
RECORDINGS = {"qwen3": os.path.join(DATA, "h200_qwen3_exhaustive.json.gz"),
              "fp8block": os.path.join(DATA, "h200_fp8block_exhaustive.json.gz")}
# The fast strategy as it was before issue 13 (two screening replays, two finalist rounds, 6 tiles,
# 6 seeds, finalists re-timed at every size): what the new defaults are compared with.
BEFORE_ISSUE13 = {"screen_replays": 2, "final_rounds": 2, "top_tiles": 6, "seeds": 6, "level_final": True}
BEFORE_ISSUE13_H2H = {"first_rounds": 5}   # the head-to-head then: 5 rounds before any decision
UNIT_OVERHEAD_S = 0.020   # model constant (see the module comment)
from moetune_agent.backends.triton_backend import (  # noqa: E402  (no torch at import)
    GRAPH_CALLS, SCREEN_GRAPH_CALLS, SCREEN_MAX_REPLAYS, screen_calls, sized_launches, warmup_replays)


def load_recording(path: str) -> dict:
    with gzip.open(path, "rt") as f:
        return json.load(f)


class ReplayBackend(Backend):
    """Test double: serves recorded H200 samples (see the module comment); marked simulated."""

    name = "replay"
    simulated = True

    def __init__(self, rec: dict):
        f = rec["shape"]
        bs = tuple(f["block_shape"]) if f.get("block_shape") else None
        super().__init__(Shape(E=f["E"], N=f["N"], K=f["K"], topk=f["topk"], dtype=f["dtype"], block_shape=bs))
        self.samples = {(int(m), k): v for m, d in rec["samples"].items() for k, v in d.items()}
        self.calls = 0
        self.replays = 0
        self.model_s = 0.0
        self.seq: Dict[tuple, int] = {}

    def device_name(self):
        return "NVIDIA_H200"

    def shared_memory_per_block(self):
        return space_mod.HOPPER_SMEM_LIMIT

    def measure(self, op, cfg, m, replays=10, cfg_down=None):
        self.calls += 1
        self.model_s += UNIT_OVERHEAD_S
        rec = self.samples.get((m, cfg.key()))
        if rec is None:
            raise CandidateError("other", "not recorded: %s at %d" % (cfg.key(), m))
        self.replays += replays
        warm = warmup_replays(replays)
        truth = self.truth(m, cfg)
        if replays <= SCREEN_MAX_REPLAYS:  # launches sized by the call's time (triton_backend.sized_launches)
            calls = SCREEN_GRAPH_CALLS * sized_launches(screen_calls(self.shape, op, m) // SCREEN_GRAPH_CALLS, truth)
        else:
            calls = GRAPH_CALLS
        self.model_s += (warm + replays) * calls * truth * 1e-6
        # which recorded samples a call gets depends on the call's identity only (deterministic replays)
        k = (m, cfg.key(), replays)
        self.seq[k] = self.seq.get(k, 0) + 1
        start = zlib.crc32(("%s|%d|%d|%d" % (cfg.key(), m, replays, self.seq[k])).encode()) % len(rec)
        return Timing([rec[(start + i) % len(rec)] for i in range(replays)])

    def check(self, op, cfg, m):
        return 0.0

    def default_config(self, op, m):
        return space_mod.server_default_config(self.shape, m)

    def truth(self, m, cfg) -> float:
        """The recorded median: the ground truth a regret is measured against."""
        s = sorted(self.samples[(m, cfg.key())])
        return 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2]) if len(s) % 2 == 0 else s[len(s) // 2]

    def best_truth(self, space, m) -> float:
        return min(self.truth(m, c) for c in space[("both", m)] if (m, c.key()) in self.samples)


def measure_all(backend: ReplayBackend, units: Sequence[Unit]) -> List[Measurement]:
    out = []
    for u in units:
        out.append(measure_unit(backend, u))
    return out


def drive(strategy, backend: ReplayBackend, phases: Optional[list] = None) -> List[Measurement]:
    """The strategy alone, phase after phase; phases (if given) gets (units, timed replays) per phase."""
    measured: List[Measurement] = []
    while True:
        phase = strategy.next_phase(measured)
        if phase is None:
            return measured
        if phases is not None:
            phases.append((len(phase), sum(u.replays for u in phase)))
        measured.extend(measure_all(backend, phase))


def geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def run_pipeline(rec: dict, strategy: str = "fast", options: Optional[dict] = None,
                 sizes: Optional[Sequence[int]] = None, finalists: int = FINALISTS,
                 h2h_options: Optional[dict] = None) -> dict:
    """One replayed run after start-up (default phase, strategy, checks, head-to-head) -> figures."""
    be = ReplayBackend(rec)
    sizes = sorted(sizes or (int(m) for m in rec["samples"]))
    ops = ("both",)
    space = space_mod.build_space(be.shape, sizes, ops)
    st = make_strategy(strategy, space, sizes, ops, be.shape, **(options or {}))
    stages = {}

    def account(name, before):
        stages[name] = {"units": be.calls - before[0], "replays": be.replays - before[1],
                        "model_gpu_s": round(be.model_s - before[2], 3)}

    snap = (be.calls, be.replays, be.model_s)
    defaults = {(op, m): be.default_config(op, m) for op in ops for m in sizes}
    dmeas = measure_all(be, [Unit(op, defaults[(op, m)], m, 10, -1) for op in ops for m in sizes])
    call_us = {(x.unit.op, x.unit.m): (x.median_us if x.ok else None) for x in dmeas}
    account("default", snap)

    snap = (be.calls, be.replays, be.model_s)
    phases: list = []
    measured = drive(st, be, phases)
    account("strategy", snap)
    winners = st.winners(measured)

    # as tunerun/phases._head_to_head_plan: one launch is one contender where the strategy counts it as one
    contenders = pick_contenders(Book(measured), winners, ops, sizes, finalists=finalists,
                                 launch_shape=be.shape if (options or {}).get("same_launch") else None)
    checks = sum(len(cs) for cs in contenders.values())   # one correctness check per contender
    snap = (be.calls, be.replays, be.model_s)
    h2h = HeadToHead(ops, sizes, defaults, contenders, **dict({"call_us": call_us, "paired": True}, **(h2h_options or {})))
    h2h_meas: List[Measurement] = []
    h2h_phases = 0
    while True:
        units = h2h.next_units(h2h_meas)
        if not units:
            break
        h2h_phases += 1
        h2h_meas.extend(measure_all(be, units))
    account("head_to_head", snap)
    final = h2h.winners(h2h_meas)
    decisions = h2h.decisions(h2h_meas)

    per_m = []
    for m in sizes:
        best = be.best_truth(space, m)
        w = winners.get(("both", m))
        f = final.get(("both", m))
        per_m.append({"m": m, "strategy_cfg": w.key() if w else None, "final_cfg": f.key() if f else None,
                      "strategy_regret": be.truth(m, w) / best if w else float("inf"),
                      "final_regret": be.truth(m, f) / best if f else float("inf"),
                      "decision": decisions[m]["decision"], "rounds": decisions[m]["rounds"],
                      "space": len(space[("both", m)]),
                      "strategy_units": sum(1 for x in measured if x.unit.m == m)})
    sr = [r["strategy_regret"] for r in per_m]
    fr = [r["final_regret"] for r in per_m]
    return {"shape": rec["shape"], "strategy": strategy, "options": options or {}, "sizes": sizes,
            "stages": stages, "checks": checks, "strategy_phases": len(phases), "h2h_phases": h2h_phases,
            "phase_sizes": phases,
            "units": be.calls + checks, "replays": be.replays, "model_gpu_s": round(be.model_s, 3),
            "strategy_regret_geomean": geomean(sr), "strategy_regret_worst": max(sr),
            "final_regret_geomean": geomean(fr), "final_regret_worst": max(fr), "per_m": per_m}


def exhaustive_cost(rec: dict, sizes: Optional[Sequence[int]] = None) -> dict:
    """What the exhaustive strategy times over the same space (for the cost ratios)."""
    be = ReplayBackend(rec)
    sizes = sorted(sizes or (int(m) for m in rec["samples"]))
    space = space_mod.build_space(be.shape, sizes, ("both",))
    st = make_strategy("exhaustive", space, sizes, ("both",), be.shape)
    drive(st, be)
    return {"units": be.calls, "replays": be.replays, "model_gpu_s": round(be.model_s, 3)}
