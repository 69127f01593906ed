# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The phases of a run, in the order Run._run calls them (tunerun/runner.py), each on the run's Session:

1. announce: the run_started event and what the run cannot do as asked (routing, the down GEMM's file);
2. search: the server's default config at every size, measured with the strategy's first phase, then
   the strategy's phases until it stops or the time budget is spent;
3. checked_winners: the strategy's winners checked against the reference (a failed config is banned and
   the next best tried), up/down winners sharing BLOCK_SIZE_M;
4. head_to_head: the finalists and the default in interleaved rounds, the final decision per (op, size);
5. write_outputs: the SGLang/vLLM files and result.json, announced as result_written events.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..engine import bytecode
from ..kernel_types import KernelConfig
from ..protocol import AGENT_VERSION
from ..runs.compile_cache import count_files
from ..engine.scheduler import BackendFailed, Cancelled
from ..spec import shape_dict
from ..strategies import own_launches
from ..strategies.common import Book
from ..strategies.headtohead import FINALISTS as H2H_FINALISTS, H2H_ROUND, HeadToHead, pick_contenders
from ..work import Measurement, Strategy, Unit
from .results import build_result, latest_score, share_block_m, write_files, write_result
from .session import DEFAULT_ROUND, MAX_PHASES, Session

__all__ = ["Winners", "announce", "checked_winners", "head_to_head", "search", "write_outputs"]

Winners = Dict[Tuple[str, int], KernelConfig]


def announce(s: Session, resumed: bool) -> None:
    """run_started, then a log line for each thing the run does other than asked or worth knowing."""
    ev, spec, extra = s.events, s.spec, s.extra
    ev.emit(
        {
            "type": "run_started",
            "run_dir": s.run_dir,
            "pid": os.getpid(),
            "resumed": resumed,
            "journal_entries": len(s.journal),
            "spec": spec,
            "strategy": s.strategy_name,
            "backend": s.backend,
            "device_name": s.device,
            "gpus": s.gpus,
            "triton_version": s.info.get("triton_version"),
            "space_size": {op: len(s.space.get((op, max(s.sizes)), ())) for op in s.ops},
            "default_source": s.default_source,
            "routing": s.routing,
            "server": extra.get("describe"),
        }
    )
    if s.simulated:
        s.warn("synthetic backend: every number of this run is simulated, not measured")
    if spec.get("routing_file") and s.routing.get("kind") != "recorded":
        s.warn(
            "the %s backend cannot replay recorded routing: timing with fresh random routing instead of %s"
            % (s.backend, spec["routing_file"])
        )
    src = s.default_source
    if src:
        ev.emit(
            {
                "type": "log",
                "level": "info",
                "message": "default = what %s runs with no new file: %s%s"
                % (
                    src.get("framework"),
                    "its config file " + str(src.get("path") or src.get("file_name"))
                    if src.get("kind") == "file"
                    else "its built-in heuristic",
                    "" if not src.get("note") else " (%s)" % src["note"],
                ),
            }
        )
    down_src = (src or {}).get("down") or {}
    if s.ops == ("both",) and down_src.get("kind") == "file":
        s.warn(
            '%s also reads %s for the down GEMM, which a single (ops "up") file does not replace: these '
            'timings use the up config for both GEMMs; tune with ops "up+down" to account for it'
            % (src.get("framework"), down_src.get("path") or down_src.get("file_name"))
        )


def search(s: Session, strategy: Strategy) -> bool:
    """The default-config phase and the strategy's phases; -> whether the time budget cut the search short.

    The server's default config is timed at every size (the speedup figures shown while searching; the
    final figures come from the head-to-head), in one scheduler call with the first strategy phase
    (issue 22): a phase of its own had the GPU wait for the defaults' compiles while the strategy's first
    kernels were already compiled. The strategy never reads the defaults' timings (round -1), so its plan
    is the same either way."""
    journal = s.journal
    default_units = [Unit(op, s.defaults_cfg[(op, m)], m, 10, DEFAULT_ROUND) for op in s.ops for m in s.sizes]
    # The first strategy phase's kernels go to the precompile pool now, so they compile while the GPU
    # times the defaults (the H200 run of issue 13 spent 18 of its 72 s in a first phase waiting for
    # compiles). The strategy is a pure function of the measurements: the loop below derives the same
    # phase again, and precompile() skips what was submitted.
    first = strategy.next_phase(s.strategy_view())
    s.sched.precompile([u for u in default_units + list(first or []) if u.ident() not in journal.idents])
    budget = s.spec.get("time_budget_s")
    defaults_pending = True
    budget_hit = False
    early = _early_head_to_head(s, strategy)
    for n_phase in range(MAX_PHASES):
        # The first strategy phase always runs, so even a tiny budget yields an answer.
        if budget and n_phase > 0 and time.time() - s.t0 > budget:
            budget_hit = True
            s.warn("time budget of %gs reached: writing the best configs found so far" % budget)
            break
        phase = strategy.next_phase(s.strategy_view())
        if not phase:
            break
        if all(u.ident() in journal.idents for u in phase):
            s.warn("strategy proposed only units already measured; stopping the search")
            break
        phase_name = getattr(strategy, "phase_name", None) or s.strategy_name
        if defaults_pending:
            s.run_phase(phase_name, phase, also=[("default", default_units)], lookahead=_lookahead(s, strategy))
            _defaults_timed(s)
            defaults_pending = False
        else:
            s.run_phase(
                phase_name, phase, lookahead=_lookahead(s, strategy), fillers=early() if early is not None else ()
            )
    if defaults_pending:  # a strategy with nothing (left) to measure: the defaults alone
        s.run_phase("default", default_units)
        _defaults_timed(s)
    _require_a_measurement(s)
    return budget_hit


def _early_head_to_head(s: Session, strategy: Strategy) -> Optional[Callable[[], List[Unit]]]:
    """-> () -> the head-to-head's next rounds at the sizes the strategy has settled (Strategy.settled),
    their winners and contenders checked as checked_winners and head_to_head check them: fillers of the
    next phase, timed only while the GPU would wait for the pool's compiles (Scheduler.measure). The
    head-to-head is a function of its measurements, so head_to_head() later goes on from the rounds these
    timed, instead of waiting for the pool and then running the head-to-head after the search
    (bench/RESULTS.md, issue 22). None without a precompile pool (no waits)."""
    if not getattr(s.sched, "precompile_workers", 0):
        return None

    broken: List[str] = []

    def fillers() -> List[Unit]:
        if broken:
            return []
        try:
            settled = [m for m in strategy.settled(s.strategy_view()) if m in s.sizes]
            if not settled:
                return []
            winners, view = checked_winners(s, strategy, settled, quiet=True)
            h2h = _head_to_head_plan(s, winners, view, settled)
            return list(h2h.next_units(s.h2h_view()) or ())
        except (BackendFailed, Cancelled):
            raise
        except Exception as e:  # noqa: BLE001 - a speed-up only: the head-to-head then runs after the search
            broken.append("%s: %s" % (type(e).__name__, e))
            s.warn("the early head-to-head is off for this run (%s); it runs after the search" % broken[0][:300])
            return []

    return fillers


def _lookahead(s: Session, strategy: Strategy) -> Optional[Callable[[List[Unit]], List[Unit]]]:
    """The strategy's next phase as it would be if the units of this phase not measured yet had failed:
    the units whose kernels the precompile pool compiles while this phase is timed (Scheduler._speculate).
    A guess only: the phase the loop above runs is derived from the real measurements, as always."""

    def guess(remaining: List[Unit]) -> List[Unit]:
        ghosts = [
            Measurement(u, None, "other", "not measured yet (precompile lookahead)", simulated=s.simulated)
            for u in remaining
            if 0 <= u.round < H2H_ROUND and not u.op.startswith("check:")
        ]
        return list(strategy.next_phase(s.strategy_view() + ghosts) or ())

    return guess


def _defaults_timed(s: Session) -> None:
    for op in s.ops:
        for m in s.sizes:
            s.default_us[(op, m)] = latest_score(s.journal.measurements, op, m, s.defaults_cfg[(op, m)])


def _require_a_measurement(s: Session) -> None:
    """BackendFailed when the search measured candidates and every one of them failed."""
    searched = [r for r in s.journal.records if 0 <= r["round"] < H2H_ROUND and not r["op"].startswith("check:")]
    if searched and not any(r["type"] == "measurement" for r in searched):
        first = searched[0]
        raise BackendFailed(
            "every one of the %d candidates failed; the first (%s at m=%d, %s): %s: %s"
            % (
                len(searched),
                first["op"],
                first["m"],
                KernelConfig.from_dict(first["config"]).key(),
                first.get("kind"),
                first.get("message"),
            )
        )


def checked_winners(
    s: Session, strategy: Strategy, sizes: Optional[List[int]] = None, quiet: bool = False
) -> Tuple[Winners, List[Measurement]]:
    """The strategy's winners, each checked at the batch size it won against the backend's torch reference
    (a winner must match it before it may win; a failed one is banned and the next best tried);
    -> (winners, the search's measurements without the banned configs). sizes: those only (the early
    head-to-head's settled sizes), quiet: no warning (it comes again for every size at the end)."""
    winners: Winners = {}
    for _attempt in range(4):
        winners = strategy.winners(s.unbanned_view())
        if sizes is not None:
            winners = {k: v for k, v in winners.items() if k[1] in sizes}
        items = sorted(((op, m, cfg) for (op, m), cfg in winners.items()), key=lambda t: (t[0], t[1]))
        bad = s.run_checks(items)
        if not (set((op, cfg.key()) for op, _m, cfg in items) & bad):
            break
        s.banned |= bad
    view = s.unbanned_view()
    if s.ops == ("up", "down"):
        winners, fixed = share_block_m(winners, view, s.sizes if sizes is None else sizes)
        if fixed and not quiet:
            s.warn(
                "up/down winners disagreed on BLOCK_SIZE_M at m=%s; chose the best shared BLOCK_SIZE_M"
                % ",".join(map(str, fixed))
            )
    return winners, view


def _head_to_head_plan(s: Session, winners: Winners, view: List[Measurement], sizes: List[int]) -> HeadToHead:
    """The head-to-head at sizes: the finalists (each checked) and the server's default."""
    own = own_launches(getattr(s.sched, "precompile_classes", None))
    contenders = pick_contenders(
        Book(view),
        winners,
        s.ops,
        sizes,
        s.banned,
        bool(s.info.get("supports_tma")),
        H2H_FINALISTS,
        launch_shape=s.shape if own else None,
    )
    extra_checks = [(op, m, c) for (op, m), cs in sorted(contenders.items()) for c in cs if winners.get((op, m)) != c]
    if extra_checks:
        bad = s.run_checks(extra_checks)
        s.banned |= bad
        contenders = {k: [c for c in cs if (k[0], c.key()) not in bad] for k, cs in contenders.items()}
    return HeadToHead(s.ops, sizes, s.defaults_cfg, contenders, call_us=dict(s.default_us), paired=True)


def head_to_head(s: Session, winners: Winners, view: List[Measurement]):
    """The final decision: the finalists (checked first) and the server's default, interleaved in the same
    rounds; -> (winners, the head-to-head's report rows, median per (op, m, config key)). Rounds the
    early head-to-head timed during the search (_early_head_to_head) are in the journal already: the
    head-to-head goes on from them."""
    h2h = _head_to_head_plan(s, winners, view, list(s.sizes))
    for _n in range(MAX_PHASES):
        units = h2h.next_units(s.h2h_view())
        if not units:
            break
        s.run_phase("head-to-head", units)
    rows = h2h.report(s.h2h_view())
    winners = h2h.winners(s.h2h_view())
    op_us = h2h.op_medians(s.h2h_view())
    _final_best(s, winners, op_us)
    return winners, rows, op_us


def _final_best(s: Session, winners: Winners, op_us: Dict[Tuple[str, int, str], Optional[float]]) -> None:
    """The final best event per (op, m), against the default's time in the same rounds."""
    for op in s.ops:
        for m in s.sizes:
            cfg = winners.get((op, m))
            if cfg is None:
                s.warn("no config for %s at m=%d: every candidate and the default failed" % (op, m))
                continue
            med = op_us.get((op, m, cfg.key()))
            d = op_us.get((op, m, s.defaults_cfg[(op, m)].key()))
            s.events.emit(
                {
                    "type": "best",
                    "op": op,
                    "m": m,
                    "config": cfg.as_dict(),
                    "median_us": med,
                    "default_us": d,
                    "speedup": (d / med) if d and med else None,
                    "final": True,
                    "default": cfg == s.defaults_cfg[(op, m)],
                }
            )


def write_outputs(s: Session, winners: Winners, view: List[Measurement], op_us, h2h_rows, budget_hit: bool) -> None:
    """The server config files (vLLM cannot take a _down file: when tuned separately it gets the up
    winners) and result.json, each announced by a result_written event."""
    spec, journal, sched = s.spec, s.journal, s.sched
    triton_version = s.info.get("triton_version")
    files = write_files(s.run_dir, spec, s.device, winners, triton_version)
    roof = {(op, m): s.info["roofline"].get("%s|%d" % (op, m)) for op in s.ops for m in s.sizes}
    failed = sum(1 for r in journal.records if r["type"] != "measurement" and r["round"] >= 0)
    ctx = {
        "run_id": s.run_id,
        "agent_version": AGENT_VERSION,
        "simulated": s.simulated,
        "created_at": os.path.getmtime(os.path.join(s.run_dir, "spec.json")),
        "finished_at": time.time(),
        "framework": spec["framework"],
        "backend": s.backend,
        "device_name": s.device,
        "gpus": s.gpus,
        "triton_version": triton_version,
        "strategy": s.strategy_name,
        "ops": list(s.ops),
        "batch_sizes": s.sizes,
        "shape": shape_dict(spec),
        "budget_hit": budget_hit,
        "default_source": s.default_source,
        "routing": s.routing,
        "server": s.extra.get("describe"),
    }
    timings = {
        "wall_s": round(time.time() - s.t0, 3),
        "units_measured": len(journal),
        "units_failed": failed,
        "units_from_journal": s.state.get("from_journal", 0),
        "worker_crashes": sched.crashes,
        "precompile": dict(sched.precompile_stats),
        "info_steps": s.extra.get("info_steps"),
        "compile_cache": {
            "host": sched.host_cache,
            "dir": sched.cache_dir,
            "files_at_start": s.cache_files_before,
            "files_at_end": count_files(sched.cache_dir) if sched.host_cache else None,
        },
        "bytecode_cache": bytecode.stats(sched.pycache, sched.pycache_files_before, sched.pycache_warm),
        "kept_graphs": sched.worker_stats(),
        "prewarm": s.prewarm,
    }
    defaults: Dict[Tuple[str, int], Any] = {k: (c, op_us.get((k[0], k[1], c.key()))) for k, c in s.defaults_cfg.items()}
    winner_us = {k: op_us.get((k[0], k[1], c.key())) for k, c in winners.items()}
    result = build_result(
        ctx, journal.records, view, winners, defaults, roof, files, timings, winner_us=winner_us, head_to_head=h2h_rows
    )
    path, digest = write_result(s.run_dir, result)
    for f in files:
        s.events.emit(
            {
                "type": "result_written",
                "kind": f["kind"],
                "path": f["path"],
                "file_name": f["file_name"],
                "sha256": f["sha256"],
            }
        )
    s.events.emit(
        {"type": "result_written", "kind": "result", "path": path, "file_name": "result.json", "sha256": digest}
    )
