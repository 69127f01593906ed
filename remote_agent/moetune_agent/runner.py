# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run process: replays the journal, drives the strategy phase by phase on the scheduler, and
writes the result. Runs detached (cli.py starts it) or in the foreground."""

import json
import os
import signal
import sys
import time
import traceback
from typing import Any, Dict, Optional, Tuple

from . import safefile, space as space_mod, spec as spec_mod
from .backends import AUTO, SERVER, SYNTHETIC, is_simulated
from .backends.factory import BackendUnavailable, auto_candidates, resolve_auto
from .backends.base import KernelConfig
from .probe import gpu_indices
from .protocol import AGENT_VERSION
from .runs import compile_cache, logs, store
from .results import build_result, latest_score, share_block_m, write_files, write_result
from .scheduler import BackendFailed, Cancelled, Scheduler
from .strategies.common import Book
from .strategies.headtohead import FINALISTS as H2H_FINALISTS, H2H_ROUND, HeadToHead, pick_contenders
from .work import Measurement, Unit

DEFAULT_ROUND = -1   # the server's default config, timed once per (op, m) for the figures while searching
CHECK_ROUND = -2     # correctness checks of winners and head-to-head contenders
MAX_PHASES = 10000


def pick_strategy(name):
    # type: (Optional[str]) -> Tuple[Any, str]
    """-> (make_strategy, resolved name). name None means the agent's default: "fast" when present."""
    from . import strategies
    known = strategies.STRATEGIES
    if name is None:
        name = "fast" if "fast" in known else getattr(strategies, "DEFAULT_STRATEGY", sorted(known)[0])
    if name not in known:
        raise spec_mod.SpecError("spec: unknown strategy %r; this agent has: %s" % (name, ", ".join(sorted(known))),
                                 "strategy")
    return strategies.make_strategy, name


def headroom_seeds(shape, sizes, ops, space, defaults):
    # type: (Any, Any, Any, Dict[Tuple[str, int], Any], Dict[Tuple[str, int], KernelConfig]) -> Dict[Tuple[str, int], list]
    """The headroom check's screened candidates per (op, m), the fast strategy's quality guard: a tune
    measures at least what the check times, so it never ends slower than the check's screen (issue 22).
    A pure function of the shape, the space and the defaults (a resumed run derives the same seeds);
    {} with a headroom module that does not offer its screen."""
    try:
        from . import headroom
    except ImportError:
        return {}
    fn = getattr(headroom, "screened_candidates", None)
    try:
        if fn is not None:
            return dict(fn(shape, sizes, ops, space, defaults))
        plan = headroom.HeadroomPlan(shape, sizes, ops, space, defaults)
        return {(op, m): plan.candidates(op, m) for op in ops for m in sizes}
    except (AttributeError, KeyError, TypeError, ValueError):
        return {}


class Run(object):
    def __init__(self, run_dir, echo=None):
        self.run_dir = os.path.abspath(run_dir)
        self.run_id = os.path.basename(self.run_dir)
        with open(os.path.join(self.run_dir, "spec.json"), encoding="utf-8") as f:
            self.spec = spec_mod.normalise(json.load(f))
        self.echo = echo
        self.sched = None  # type: Optional[Scheduler]
        self.events = None  # type: Optional[logs.EventLog]
        self.cancelled = False

    def _on_term(self, signum, frame):
        self.cancelled = True
        if self.sched is not None:
            self.sched.stop = True
        else:
            raise Cancelled()

    def main(self):
        # type: () -> int
        signal.signal(signal.SIGTERM, self._on_term)
        safefile.write_atomic(os.path.join(self.run_dir, "pid"), ("%d\n" % os.getpid()).encode())
        store.set_state(self.run_dir, "running")
        spec = self.spec
        backend = spec["backend"]
        simulated = is_simulated(backend)
        self.events = logs.EventLog(self.run_dir, self.run_id, simulated, self.echo)
        t0 = time.time()
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
            self.events.emit({"type": "error", "code": "internal", "message": "run failed: %s: %s"
                              % (type(e).__name__, e), "detail": tb[-2000:]})
            status = "failed"
        finally:
            if self.sched is not None:
                self.sched.close()
        if self.cancelled:
            status = "cancelled"
        state = {"ok": "finished"}.get(status, status)
        store.set_state(self.run_dir, state)
        self.events.emit({"type": "done", "status": status, "wall_s": round(time.time() - t0, 3)})
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
            desc = {"name": backend, "shape": spec_mod.shape_dict(spec), "framework": spec["framework"],
                    "device_name": spec.get("device_name"), "routing_file": spec.get("routing_file")}
            ncpu = os.cpu_count() or 1
            precompile = 0
            if backend != SYNTHETIC and ncpu > 2:
                precompile = max(0, ncpu - 1 - len(gpus))
            if os.environ.get("MOETUNE_PRECOMPILE_WORKERS"):  # an explicit pool size (tests, benchmarks)
                precompile = max(0, int(os.environ["MOETUNE_PRECOMPILE_WORKERS"]))
            self.sched = Scheduler(desc, gpus, cache_dir, precompile,
                                   home=os.path.dirname(os.path.dirname(self.run_dir)))
            self.sched.start(early_pool=precompile > 0 and os.environ.get("MOETUNE_EARLY_POOL", "1") != "0")
            try:
                info = self.sched.info(ops, sizes)
            except BackendFailed as e:
                self.sched.close()
                self.sched = None
                if asked != AUTO or i == len(cands) - 1:
                    raise
                ev.emit({"type": "log", "level": "warning", "message": "auto: the %s backend cannot run here (%s); "
                         "using the %s backend" % (backend, e, cands[i + 1])})
                continue
            extra = info.get("extra") or {}
            if extra.get("cpu_compile_info") and extra.get("can_cpu_precompile", True):
                self.sched.start_precompile(extra["cpu_compile_info"], per_m=(backend == SERVER))
            else:
                self.sched.stop_precompile()
            if precompile and not self.sched.precompiling:
                ev.emit({"type": "log", "level": "info", "message": "no CPU precompile for the %s backend here: "
                         "each kernel compiles on its GPU worker on first use" % backend})
            return backend, gpus, info
        raise BackendUnavailable("no backend could run")  # not reached: the loop returns or raises

    def _run(self, t0):
        spec = self.spec
        ev = self.events
        assert ev is not None
        shape = spec_mod.shape_of(spec)
        ops = spec_mod.strategy_ops(spec)
        sizes = spec["batch_sizes"]
        make_strategy, strategy_name = pick_strategy(spec["strategy"])
        cache_dir = os.path.join(self.run_dir, "triton_cache")
        os.makedirs(cache_dir, exist_ok=True)
        backend, gpus, info = self._start_backend(spec, ops, sizes, cache_dir)
        assert self.sched is not None
        cache_files_before = compile_cache.count_files(self.sched.cache_dir) if self.sched.host_cache else None
        simulated = is_simulated(backend)
        ev.simulated = simulated
        journal = logs.Journal(self.run_dir, simulated)
        resumed = len(journal) > 0 or os.path.getsize(ev.path) > 0
        extra = info.get("extra") or {}
        device = spec.get("device_name") or info["device_name"]
        spec_mod.check_device_name(device)  # the backend's name goes into the file names too
        spec_mod.check_file_names(spec, device, self.run_dir)
        smem = int(spec["space"].get("smem_limit") or info["smem_limit"])
        space = space_mod.build_space(shape, sizes, ops, spec["framework"], smem, spec["space"])
        t_info = info.get("triton_version")
        routing = extra.get("routing_info") or {"kind": "random", "path": None, "tokens": None}
        if spec.get("routing_file") and routing.get("kind") != "recorded":
            routing = {"kind": "random", "path": None, "tokens": None,
                       "note": "the %s backend cannot replay %s" % (backend, spec["routing_file"])}
        default_source = extra.get("default_source")
        ev.emit({"type": "run_started", "run_dir": self.run_dir, "pid": os.getpid(), "resumed": resumed,
                 "journal_entries": len(journal), "spec": spec, "strategy": strategy_name, "backend": backend,
                 "device_name": device, "gpus": gpus, "triton_version": t_info,
                 "space_size": {op: len(space.get((op, max(sizes)), ())) for op in ops},
                 "default_source": default_source, "routing": routing, "server": extra.get("describe")})
        if simulated:
            ev.emit({"type": "log", "level": "warning",
                     "message": "synthetic backend: every number of this run is simulated, not measured"})
        if spec.get("routing_file") and routing.get("kind") != "recorded":
            ev.emit({"type": "log", "level": "warning", "message": "the %s backend cannot replay recorded "
                     "routing: timing with fresh random routing instead of %s" % (backend, spec["routing_file"])})
        if default_source:
            ev.emit({"type": "log", "level": "info", "message": "default = what %s runs with no new file: %s%s"
                     % (default_source.get("framework"), "its config file " + str(default_source.get("path") or
                        default_source.get("file_name")) if default_source.get("kind") == "file"
                        else "its built-in heuristic", "" if not default_source.get("note") else
                        " (%s)" % default_source["note"])})

        down_src = (default_source or {}).get("down") or {}
        if ops == ("both",) and down_src.get("kind") == "file":
            ev.emit({"type": "log", "level": "warning", "message": "%s also reads %s for the down GEMM, which a "
                     "single (ops \"up\") file does not replace: these timings use the up config for both "
                     "GEMMs; tune with ops \"up+down\" to account for it"
                     % (default_source.get("framework"), down_src.get("path") or down_src.get("file_name"))})

        state = {"done": len(journal), "total": len(journal), "phase": 0, "last_progress": 0.0,
                 "from_journal": len(journal),
                 "best": {}}  # type: Dict[str, Any]
        defaults_cfg = {}  # type: Dict[Tuple[str, int], KernelConfig]
        for op in ops:
            for m in sizes:
                defaults_cfg[(op, m)] = info["defaults"]["%s|%d" % ("both" if op == "both" else op, m)]
        default_us = {}  # type: Dict[Tuple[str, int], Optional[float]]
        options = {}  # type: Dict[str, Any]
        if strategy_name == "fast":
            options["extra_seeds"] = headroom_seeds(shape, sizes, ops, space, defaults_cfg)
        strategy = make_strategy(strategy_name, space, sizes, ops, shape, **options)

        def record(meas):
            # type: (Measurement) -> None
            rec = journal.append(meas)
            out = dict(rec)
            out.pop("unit", None)
            ev.emit(out)
            state["done"] += 1
            u = meas.unit
            if meas.ok and u.round == DEFAULT_ROUND and u.cfg_down is None:
                default_us[(u.op, u.m)] = meas.median_us  # the search's figures while the defaults time
            if meas.ok and 0 <= u.round < H2H_ROUND and u.cfg_down is None and not u.op.startswith("check:"):
                key = "%s|%d" % (u.op, u.m)
                cur = state["best"].get(key)
                if cur is None or meas.median_us < cur:
                    state["best"][key] = meas.median_us
                    d = default_us.get((u.op, u.m))
                    ev.emit({"type": "best", "op": u.op, "m": u.m, "config": u.cfg.as_dict(),
                             "median_us": meas.median_us, "default_us": d,
                             "speedup": (d / meas.median_us) if d else None, "final": False})
            now = time.time()
            if now - state["last_progress"] >= 0.25:
                state["last_progress"] = now
                self._progress(state, t0)

        def run_phase(name, units, also=()):
            """also: (name, units) of phases measured in the same scheduler call (their phase events
            first): the scheduler then times whichever unit's kernels are compiled first."""
            todo_all = []
            for nm, us in list(also) + [(name, units)]:
                todo = [u for u in us if u.ident() not in journal.idents]
                state["total"] += len(todo)
                ev.emit({"type": "phase", "index": state["phase"], "name": nm, "units": len(us),
                         "already_measured": len(us) - len(todo)})
                state["phase"] += 1
                todo_all.extend(todo)
            self.sched.precompile(todo_all)
            self.sched.measure(todo_all, record, simulated)
            self._progress(state, t0)

        # The first strategy phase's kernels go to the precompile pool now, so they compile while the GPU
        # times the defaults (the H200 run of issue 13 spent 18 of its 72 s in a first phase waiting for
        # compiles). The strategy is a pure function of the measurements: the loop below derives the same
        # phase again, and precompile() skips what was submitted.
        default_units = [Unit(op, defaults_cfg[(op, m)], m, 10, DEFAULT_ROUND) for op in ops for m in sizes]
        first = strategy.next_phase([x for x in journal.measurements if 0 <= x.unit.round < H2H_ROUND
                                     and not x.unit.op.startswith("check:")])
        self.sched.precompile([u for u in default_units + list(first or []) if u.ident() not in journal.idents])

        # Phase: the server's default config at every size (the speedup figures shown while searching;
        # the final figures come from the head-to-head), measured in one scheduler call with the first
        # strategy phase (issue 22): a phase of its own had the GPU wait for the defaults' compiles while
        # the strategy's first kernels were already compiled. The strategy never reads the defaults'
        # timings (round -1), so its plan is the same either way.
        defaults_pending = [True]

        def finish_defaults():
            defaults_pending[0] = False
            for op in ops:
                for m in sizes:
                    default_us[(op, m)] = latest_score(journal.measurements, op, m, defaults_cfg[(op, m)])

        def strategy_view():
            return [x for x in journal.measurements if 0 <= x.unit.round < H2H_ROUND
                    and not x.unit.op.startswith("check:")]

        budget = spec.get("time_budget_s")
        budget_hit = False
        for n_phase in range(MAX_PHASES):
            # The first strategy phase always runs, so even a tiny budget yields an answer.
            if budget and n_phase > 0 and time.time() - t0 > budget:
                budget_hit = True
                ev.emit({"type": "log", "level": "warning", "message":
                         "time budget of %gs reached: writing the best configs found so far" % budget})
                break
            phase = strategy.next_phase(strategy_view())
            if not phase:
                break
            if all(u.ident() in journal.idents for u in phase):
                ev.emit({"type": "log", "level": "warning",
                         "message": "strategy proposed only units already measured; stopping the search"})
                break
            if defaults_pending[0]:
                run_phase(getattr(strategy, "phase_name", None) or strategy_name, phase,
                          also=[("default", default_units)])
                finish_defaults()
            else:
                run_phase(getattr(strategy, "phase_name", None) or strategy_name, phase)
        if defaults_pending[0]:  # a strategy with nothing (left) to measure: the defaults alone
            run_phase("default", default_units)
            finish_defaults()

        searched = [r for r in journal.records if 0 <= r["round"] < H2H_ROUND and not r["op"].startswith("check:")]
        if searched and not any(r["type"] == "measurement" for r in searched):
            first = searched[0]
            raise BackendFailed("every one of the %d candidates failed; the first (%s at m=%d, %s): %s: %s"
                                % (len(searched), first["op"], first["m"],
                                   KernelConfig.from_dict(first["config"]).key(), first.get("kind"),
                                   first.get("message")))

        banned = set()  # type: set

        def run_checks(items):
            """items: (op, m, cfg); checks not yet in the journal run; returns the (op, cfg key)s that failed."""
            todo = [(op, m, cfg) for op, m, cfg in items
                    if Unit("check:" + op, cfg, m, 0, CHECK_ROUND).ident() not in journal.idents]
            res = self.sched.check([(op, cfg, m) for op, m, cfg in todo])
            for (op, m, cfg), (status, payload) in zip(todo, res):
                u = Unit("check:" + op, cfg, m, 0, CHECK_ROUND)
                if status == "ok":
                    journal.append(Measurement(u, [float(payload[0])], simulated=simulated))
                else:
                    kind, msg = (payload if status == "cand" else ("crash", str(payload)))
                    record(Measurement(u, None, kind, msg, simulated=simulated))
            return set((r["op"][len("check:"):], KernelConfig.from_dict(r["config"]).key())
                       for r in journal.records if r["op"].startswith("check:") and r["type"] != "measurement")

        # Correctness: a winner must match the reference before it may win.
        winners = {}  # type: Dict[Tuple[str, int], KernelConfig]
        for _attempt in range(4):
            view = [x for x in strategy_view() if (x.unit.op, x.unit.cfg.key()) not in banned]
            winners = strategy.winners(view)
            # Each winner is checked at the batch size it won, against the backend's torch reference.
            items = sorted(((op, m, cfg) for (op, m), cfg in winners.items()), key=lambda t: (t[0], t[1]))
            bad = run_checks(items)
            if not (set((op, cfg.key()) for op, _m, cfg in items) & bad):
                break
            banned |= bad
        view = [x for x in strategy_view() if (x.unit.op, x.unit.cfg.key()) not in banned]
        if ops == ("up", "down"):
            winners, fixed = share_block_m(winners, view, sizes)
            if fixed:
                ev.emit({"type": "log", "level": "warning", "message": "up/down winners disagreed on "
                         "BLOCK_SIZE_M at m=%s; chose the best shared BLOCK_SIZE_M" % ",".join(map(str, fixed))})

        # The final decision: the finalists and the server's default, interleaved in the same rounds.
        contenders = pick_contenders(Book(view), winners, ops, sizes, banned, bool(info.get("supports_tma")),
                                     H2H_FINALISTS)
        extra_checks = [(op, m, c) for (op, m), cs in sorted(contenders.items()) for c in cs
                        if winners.get((op, m)) != c]
        if extra_checks:
            bad = run_checks(extra_checks)
            banned |= bad
            contenders = {k: [c for c in cs if (k[0], c.key()) not in bad] for k, cs in contenders.items()}
        h2h = HeadToHead(ops, sizes, defaults_cfg, contenders)

        def h2h_view():
            return [x for x in journal.measurements if x.unit.round >= H2H_ROUND]

        for _n in range(MAX_PHASES):
            units = h2h.next_units(h2h_view())
            if not units:
                break
            run_phase("head-to-head", units)
        h2h_rows = h2h.report(h2h_view())
        winners = h2h.winners(h2h_view())
        op_us = h2h.op_medians(h2h_view())
        for op in ops:
            for m in sizes:
                cfg = winners.get((op, m))
                if cfg is None:
                    ev.emit({"type": "log", "level": "warning", "message": "no config for %s at m=%d: every "
                             "candidate and the default failed" % (op, m)})
                    continue
                med = op_us.get((op, m, cfg.key()))
                d = op_us.get((op, m, defaults_cfg[(op, m)].key()))
                ev.emit({"type": "best", "op": op, "m": m, "config": cfg.as_dict(), "median_us": med,
                         "default_us": d, "speedup": (d / med) if d and med else None, "final": True,
                         "default": cfg == defaults_cfg[(op, m)]})
        # vLLM cannot take a _down file: when tuned separately it gets the up winners.
        triton_version = t_info
        files = write_files(self.run_dir, spec, device, winners, triton_version)
        roof = {}
        for op in ops:
            for m in sizes:
                roof[(op, m)] = info["roofline"].get("%s|%d" % (op, m))
        failed = sum(1 for r in journal.records if r["type"] != "measurement" and r["round"] >= 0)
        ctx = {"run_id": self.run_id, "agent_version": AGENT_VERSION, "simulated": simulated,
               "created_at": os.path.getmtime(os.path.join(self.run_dir, "spec.json")), "finished_at": time.time(),
               "framework": spec["framework"], "backend": backend, "device_name": device, "gpus": gpus,
               "triton_version": triton_version, "strategy": strategy_name, "ops": list(ops), "batch_sizes": sizes,
               "shape": spec_mod.shape_dict(spec), "budget_hit": budget_hit, "default_source": default_source,
               "routing": routing, "server": extra.get("describe")}
        timings = {"wall_s": round(time.time() - t0, 3), "units_measured": len(journal), "units_failed": failed,
                   "units_from_journal": state.get("from_journal", 0), "worker_crashes": self.sched.crashes,
                   "precompile": dict(self.sched.precompile_stats),
                   "compile_cache": {"host": self.sched.host_cache, "dir": self.sched.cache_dir,
                                     "files_at_start": cache_files_before,
                                     "files_at_end": compile_cache.count_files(self.sched.cache_dir)
                                     if self.sched.host_cache else None}}
        defaults = {k: (defaults_cfg[k], op_us.get((k[0], k[1], defaults_cfg[k].key()))) for k in defaults_cfg}
        winner_us = {k: op_us.get((k[0], k[1], c.key())) for k, c in winners.items()}
        result = build_result(ctx, journal.records, view, winners, defaults, roof, files, timings,
                              winner_us=winner_us, head_to_head=h2h_rows)
        path, digest = write_result(self.run_dir, result)
        for f in files:
            ev.emit({"type": "result_written", "kind": f["kind"], "path": f["path"], "file_name": f["file_name"],
                     "sha256": f["sha256"]})
        ev.emit({"type": "result_written", "kind": "result", "path": path, "file_name": "result.json",
                 "sha256": digest})
        journal.close()
        if not winners:
            raise BackendFailed("no configuration could be measured at any batch size (see result.json)")
        return "ok"

    def _progress(self, state, t0):
        el = time.time() - t0
        done, total = state["done"], max(state["total"], state["done"])
        eta = (el / done * (total - done)) if done else None
        assert self.events is not None
        self.events.emit({"type": "progress", "done": done, "total": total, "phase": max(0, state["phase"] - 1),
                          "elapsed_s": round(el, 3), "eta_s": round(eta, 3) if eta is not None else None})
