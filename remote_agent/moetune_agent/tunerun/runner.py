# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run process: replays the journal, drives the strategy phase by phase on the scheduler, and
writes the result. Runs detached (cli.py starts it) or in the foreground. The phases themselves are
tunerun/phases.py's, on the run's Session (tunerun/session.py)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from typing import Any, Dict, Optional, Tuple

from .. import options, prewarm, profiling, safefile, space as space_mod, spec as spec_mod
from ..backends import AUTO, SERVER, SYNTHETIC, is_simulated
from ..backends.factory import BackendUnavailable, auto_candidates, resolve_auto
from ..kernel_types import KernelConfig
from ..hostfacts import gpu_indices
from ..runs import logs, store
from ..runs.compile_cache import count_files
from ..engine.scheduler import BackendFailed, Cancelled, Scheduler
from ..strategies import firstphase, make_strategy, resolve, strategy_options
from ..strategies.screen import screened_candidates
from ..work import Strategy
from . import phases
from .session import Session

__all__ = ["Run", "first_batches", "first_units", "headroom_seeds", "pick_strategy"]


def pick_strategy(name: Optional[str]) -> Tuple[Any, str]:
    """-> (make_strategy, resolved name). name None means the agent's default: "fast" when present."""
    try:
        return make_strategy, resolve(name)
    except ValueError as e:
        raise spec_mod.SpecError("spec: %s" % e, "strategy")


def first_batches(
    spec: Dict[str, Any], ops: Any, sizes: Any, smem: Optional[int], cap: int, kernel_classes=None
) -> Tuple[list, list]:
    """strategies.firstphase.first_batches (the first phase, the check's seeds), the spec's strategy checked
    first."""
    pick_strategy(spec["strategy"])
    return firstphase.first_batches(spec, ops, sizes, smem, cap, kernel_classes=kernel_classes)


def first_units(spec: Dict[str, Any], ops: Any, sizes: Any, smem: Optional[int], cap: int, kernel_classes=None) -> list:
    """first_batches in one list: the first phase, then the seeds."""
    units, seeds = first_batches(spec, ops, sizes, smem, cap, kernel_classes=kernel_classes)
    return units + seeds


def _early_precompile(spec: Dict[str, Any], ops: Any, sizes: Any, sched: Scheduler):
    """The scheduler's on_facts for a run: compile first_units while the GPU worker still starts (imports
    the server, probes the roofline, makes its smoke calls). A cold own-kernel run's first phase waited
    12.5 s for its ~150 kernels after the start-up (issue 22). The whole first phase goes to the pool
    before the seeds, which later phases measure: with the phase capped at 12 units per pool process (168
    of the own kernel's 231), its last units queued behind ~100 seed kernels."""

    def go(facts: Dict[str, Any]) -> None:
        units, seeds = first_batches(
            spec,
            ops,
            sizes,
            facts.get("smem"),
            48 * max(1, sched.precompile_workers),
            kernel_classes=sched.precompile_classes,
        )
        sched.precompile(units)
        sched.precompile(seeds)

    return go


def headroom_seeds(
    shape: Any, sizes: Any, ops: Any, space: Dict[Tuple[str, int], Any], defaults: Dict[Tuple[str, int], KernelConfig]
) -> Dict[Tuple[str, int], list]:
    """The headroom check's screened candidates per (op, m), the fast strategy's quality guard: a tune
    measures at least what the check times, so it never ends slower than the check's screen (issue 22).
    A pure function of the shape, the space and the defaults (a resumed run derives the same seeds)."""
    return dict(screened_candidates(shape, sizes, ops, space, defaults))


class Run(object):
    def __init__(self, run_dir, echo=None):
        self.run_dir = os.path.abspath(run_dir)
        self.run_id = os.path.basename(self.run_dir)
        with open(os.path.join(self.run_dir, "spec.json"), encoding="utf-8") as f:
            self.spec = spec_mod.normalise(json.load(f))
        self.echo = echo
        self.sched: Optional[Scheduler] = None
        self.events: Optional[logs.EventLog] = None
        self.cancelled = False

    def _on_term(self, signum, frame):
        self.cancelled = True
        if self.sched is not None:
            self.sched.stop = True
        else:
            raise Cancelled()

    def main(self) -> int:
        signal.signal(signal.SIGTERM, self._on_term)
        safefile.write_atomic(os.path.join(self.run_dir, "pid"), ("%d\n" % os.getpid()).encode())
        store.set_state(self.run_dir, "running")
        spec = self.spec
        backend = spec["backend"]
        simulated = is_simulated(backend)
        self.events = logs.EventLog(self.run_dir, self.run_id, simulated, self.echo)
        t0 = time.time()
        profiling.start("run")
        try:
            status = self._run(t0)
        except Cancelled:
            status = "cancelled"
        except spec_mod.SpecError as e:
            self.events.emit({"type": "error", "code": "spec_invalid", "message": str(e), "detail": e.key})
            status = "failed"
        except BackendUnavailable as e:
            self.events.emit({"type": "error", "code": "no_backend", "message": str(e)})
            status = "failed"
        except BackendFailed as e:
            self.events.emit({"type": "error", "code": "backend_failed", "message": str(e)})
            status = "failed"
        except Exception as e:
            tb = traceback.format_exc()
            sys.stderr.write(tb)
            self.events.emit(
                {
                    "type": "error",
                    "code": "internal",
                    "message": "run failed: %s: %s" % (type(e).__name__, e),
                    "detail": tb[-2000:],
                }
            )
            status = "failed"
        finally:
            if self.sched is not None:
                self.sched.close()
            profiling.stop()
        if self.cancelled:
            status = "cancelled"
        state = {"ok": "finished"}.get(status, status)
        store.set_state(self.run_dir, state)
        done = {"type": "done", "status": status, "wall_s": round(time.time() - t0, 3)}
        if self.sched is not None and self.sched.close_s:
            done["close_s"] = dict(self.sched.close_s)
        if self.sched is not None:  # also where no result says it (a cancelled or failed run)
            done["precompile"] = dict(self.sched.precompile_stats)
        self.events.emit(done)
        self.events.close()
        return 0 if status == "ok" else 1

    def _start_backend(self, spec, ops, sizes, cache_dir):
        """Start the scheduler on the spec's backend (auto: on the first candidate that proves it can run,
        one real call per op in the worker's info) -> (backend name, gpus, info)."""
        ev = self.events
        assert ev is not None
        asked = spec["backend"]
        if asked == AUTO:
            cands = auto_candidates(spec["framework"])
            if not cands:
                resolve_auto(spec["framework"])  # raises BackendUnavailable with the sentence
        else:
            cands = [asked]
        for i, backend in enumerate(cands):
            simulated = is_simulated(backend)
            if spec["gpus"] != "all":
                gpus = list(spec["gpus"])
            elif simulated:
                gpus = [0]
            else:
                gpus = gpu_indices()
            desc = {
                "name": backend,
                "shape": spec_mod.shape_dict(spec),
                "framework": spec["framework"],
                "device_name": spec.get("device_name"),
                "routing_file": spec.get("routing_file"),
            }
            ncpu = os.cpu_count() or 1
            precompile = 0
            if backend != SYNTHETIC and ncpu > 2:
                precompile = max(0, ncpu - 1 - len(gpus))
            workers = options.test_hooks(desc["name"] == SYNTHETIC).precompile_workers
            if workers is not None:  # an explicit pool size (tests, benchmarks)
                precompile = max(0, workers)
            self.sched = Scheduler(
                desc, gpus, cache_dir, precompile, home=os.path.dirname(os.path.dirname(self.run_dir))
            )
            self.sched.facts_per_m = backend == SERVER
            if backend == SERVER:
                from ..backends.server_backend import classes_for

                self.sched.precompile_classes = classes_for(spec["framework"], spec_mod.shape_of(spec))
            self.sched.on_facts = _early_precompile(spec, ops, sizes, self.sched)
            self.sched.start(early_pool=precompile > 0)
            try:
                info = self.sched.info(ops, sizes)
            except BackendFailed as e:
                self.sched.close()
                self.sched = None
                if asked != AUTO or i == len(cands) - 1:
                    raise
                ev.emit(
                    {
                        "type": "log",
                        "level": "warning",
                        "message": "auto: the %s backend cannot run here (%s); "
                        "using the %s backend" % (backend, e, cands[i + 1]),
                    }
                )
                continue
            extra = info.get("extra") or {}
            if extra.get("cpu_compile_info") and extra.get("can_cpu_precompile", True):
                self.sched.start_precompile(extra["cpu_compile_info"], per_m=(backend == SERVER))
            else:
                self.sched.stop_precompile()
            if precompile and not self.sched.precompiling:
                ev.emit(
                    {
                        "type": "log",
                        "level": "info",
                        "message": "no CPU precompile for the %s backend here: "
                        "each kernel compiles on its GPU worker on first use" % backend,
                    }
                )
            return backend, gpus, info
        raise BackendUnavailable("no backend could run")  # not reached: the loop returns or raises

    def _run(self, t0: float) -> str:
        """The phases in order (tunerun/phases.py); -> "ok", or an exception main() turns into the status."""
        s, make_strategy = self._session(t0)
        strategy = self._strategy(s, make_strategy)
        budget_hit = phases.search(s, strategy)
        winners, view = phases.checked_winners(s, strategy)
        winners, h2h_rows, op_us = phases.head_to_head(s, winners, view)
        phases.write_outputs(s, winners, view, op_us, h2h_rows, budget_hit)
        s.journal.close()
        if not winners:
            raise BackendFailed("no configuration could be measured at any batch size (see result.json)")
        return "ok"

    def _session(self, t0: float) -> Tuple[Session, Any]:
        """Start the backend, open the journal, check the file names against the device, build the space,
        announce the run -> (the session, make_strategy)."""
        spec = self.spec
        ev = self.events
        assert ev is not None
        shape = spec_mod.shape_of(spec)
        ops = spec_mod.strategy_ops(spec)
        sizes = spec["batch_sizes"]
        make_strategy, strategy_name = pick_strategy(spec["strategy"])
        cache_dir = os.path.join(self.run_dir, "triton_cache")
        os.makedirs(cache_dir, exist_ok=True)
        # A check's background compile (prewarm.py) ends before this run's processes start: what it
        # compiled is in the host's cache, and it must not compete with the measurements for the CPU.

        pw = prewarm.stop(os.path.dirname(os.path.dirname(self.run_dir)))
        backend, gpus, info = self._start_backend(spec, ops, sizes, cache_dir)
        sched = self.sched
        assert sched is not None
        cache_files_before = count_files(sched.cache_dir) if sched.host_cache else None
        ev.simulated = is_simulated(backend)
        journal = logs.Journal(self.run_dir, ev.simulated)
        resumed = len(journal) > 0 or os.path.getsize(ev.path) > 0
        s = Session(self.run_dir, self.run_id, spec, ev, sched, journal, t0)
        s.backend, s.gpus, s.info, s.ops, s.sizes = backend, gpus, info, ops, sizes
        s.strategy_name, s.cache_files_before = strategy_name, cache_files_before
        s.prewarm = (
            {
                k: pw.get(k)
                for k in ("state", "units", "kernels", "ok", "failed", "wall_s", "ended", "stopped_by_us", "stop_s")
            }
            if pw
            else None
        )
        s.shape = shape
        s.device = spec.get("device_name") or info["device_name"]
        spec_mod.check_device_name(s.device)  # the backend's name goes into the file names too
        spec_mod.check_file_names(spec, s.device, self.run_dir)
        s.space = space_mod.spec_space(spec, s.shape, sizes, ops, info["smem_limit"])
        s.routing = s.extra.get("routing_info") or {"kind": "random", "path": None, "tokens": None}
        if spec.get("routing_file") and s.routing.get("kind") != "recorded":
            s.routing = {
                "kind": "random",
                "path": None,
                "tokens": None,
                "note": "the %s backend cannot replay %s" % (backend, spec["routing_file"]),
            }
        s.default_source = s.extra.get("default_source")
        phases.announce(s, resumed)
        for op in ops:
            for m in sizes:
                s.defaults_cfg[(op, m)] = info["defaults"]["%s|%d" % ("both" if op == "both" else op, m)]
        return s, make_strategy

    @staticmethod
    def _strategy(s: Session, make_strategy) -> Strategy:
        """The spec's strategy on the run's space; the fast one also measures the headroom check's screen."""

        options: Dict[str, Any] = strategy_options(s.strategy_name, s.sched.precompile_classes)
        if s.strategy_name == "fast":
            options["extra_seeds"] = headroom_seeds(s.shape, s.sizes, s.ops, s.space, s.defaults_cfg)
        return make_strategy(s.strategy_name, s.space, s.sizes, s.ops, s.shape, **options)
