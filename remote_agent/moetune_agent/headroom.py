# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The headroom check (issue 19): before spending a tune's GPU minutes, how much is there to gain?

On the host's GPU, for the spec's shape, in seconds: time what the server runs today (the backend's
default: the server backend asks the server's own lookup - its shipped or existing file, else its
heuristic; the Triton and synthetic backends can only assume the built-in heuristic), a screen of the
candidates most likely to win, and the HBM floor; then say per range of batch sizes what a full tune is
likely to gain.

The screen (HeadroomPlan): per (op, batch size)
  * catalogue: the configs that won (or came within 1% of the winner) in every H200 landscape recorded in
    this repository (bench/headroom_catalogue.py regenerates CATALOGUE), nearest first in tokens per
    expert (M * topk / E: where the regime changes, docs/servers.md section 7) and preferring the same weight
    size, BLOCK_SIZE_M clamped to what the space allows at this size; NEAREST of them, one per GROUP_SIZE_M
    family (the variants time within noise of each other);
  * the default's neighbours: its config with one or two more pipeline stages (at decode sizes the
    default tile is often right and only its pipeline is short);
  then re-timing (retime_units): round 1 the two best screened, round 2 round 1's best (one round's
    medians are noisy: the winner's curse, docs/servers.md section 7), each in a unit paired with the
    default (Unit.pair: the two alternate replay by replay, as in the tune's head-to-head), replays
    scaled to the call's time: a few units and kernels per size (against the first version's cost:
    bench/RESULTS.md, "Moved from the agent's docstrings").
Why this screen (bench/headroom_replay.py on the recorded landscapes): a catalogue chosen by tokens per
expert reaches within 2% of the landscape's best at the recorded sizes where the default's own
neighbourhood does not (the regime change above M ~ 128 moves the winner several axes away), and the
re-timing rounds keep single-replay luck out of the estimate.

Estimate per size: gain = default / best re-timed (1.0 when nothing screened beats the default by more
than TIE: a tune keeps the default then); bound = default / HBM floor (no config can beat the floor).
Verdict per range of consecutive sizes of the same class (none < 1.02 <= small < 1.10 <= large).

Standard library only here; the measuring runs on the scheduler's GPU worker (scheduler.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any, Dict, List, Optional, Sequence

from . import options, prewarm, profiling, space as space_mod, spec as spec_mod
from .backends import AUTO, SERVER, SYNTHETIC, is_simulated
from .backends.factory import BackendUnavailable, auto_candidates, resolve_auto
from .engine import bytecode
from .engine.scheduler import BackendFailed, Scheduler
from .hostfacts import gpu_indices
from .protocol import EXIT_FAILED, EXIT_OK
from .runs.compile_cache import check_cache_dir
from .strategies.firstphase import prewarm_plan
from .strategies.screen import HeadroomPlan
from .work import Measurement, Unit
from .verdict import verdict

__all__ = ["headroom_command", "inner_main", "precompile_order", "run_check", "verdict"]


# -- the command -------------------------------------------------------------------------------------------
def _assumption(backend: str, framework: str, default_source: Optional[dict], server_error: Optional[str]):
    """What the check could not see, as a sentence (None when the server's own lookup answered)."""
    ds = default_source or {}
    if backend == SYNTHETIC:
        return (
            "SIMULATED: the synthetic backend models a GPU; the server's config is assumed to be the %s "
            "built-in heuristic%s"
            % (framework, " (or MOETUNE_SYNTHETIC_DEFAULT_FILE)" if ds.get("kind") == "file" else "")
        )
    if backend == SERVER:
        if ds.get("kind") == "file":
            return None
        return None if ds.get("kind") == "heuristic" else "the server's lookup said nothing about its default"
    why = server_error or ("%s is not importable with %s" % (framework, sys.executable))
    return (
        "the host cannot import the server (%s): its own config file could not be read, so the server's "
        "config is assumed to be the %s built-in heuristic (a shipped file, if any, is not seen)" % (why, framework)
    )


def _start_backend(
    spec: Dict[str, Any], cands: List[str], ops, sizes, cache_dir: str, out, server_error: Optional[str]
):
    """Start a one-GPU scheduler on the first candidate backend that proves it can run (one real call per
    op in the worker's info; auto skips one that cannot, with a warning) -> (scheduler, backend name,
    info, why the server cannot be asked, or None). BackendFailed when the last candidate fails."""

    asked = spec["backend"]
    sched = None
    try:
        for i, name in enumerate(cands):
            if spec["gpus"] != "all":
                gpus = list(spec["gpus"])[:1]
            else:
                gpus = [0] if name == SYNTHETIC else gpu_indices()[:1]
            desc = {
                "name": name,
                "shape": spec_mod.shape_dict(spec),
                "framework": spec["framework"],
                "device_name": spec.get("device_name"),
                "routing_file": spec.get("routing_file"),
                "bandwidth_probe": "torch",
            }
            ncpu = os.cpu_count() or 1
            pool = max(0, ncpu - 2) if name != SYNTHETIC and ncpu > 2 else 0
            workers = options.test_hooks(name == SYNTHETIC).precompile_workers
            if workers is not None:
                pool = max(0, workers)
            sched = Scheduler(desc, gpus, cache_dir, pool)
            sched.facts_per_m = name == SERVER
            if name == SERVER:
                from .backends.server_backend import classes_for

                sched.precompile_classes = classes_for(spec["framework"], spec_mod.shape_of(spec))
            sched.on_facts = _early_precompile(spec, ops, sizes, sched)
            sched.start(early_pool=pool > 0)
            try:
                info = sched.info(ops, sizes)
            except BackendFailed as e:
                sched.close()
                sched = None
                if asked != AUTO or i == len(cands) - 1:
                    raise
                if name == SERVER:
                    server_error = "the server backend cannot run here: %s" % e
                out.log(
                    "warning",
                    "auto: the %s backend cannot run here (%s); using the %s backend" % (name, e, cands[i + 1]),
                )
                continue
            extra = info.get("extra") or {}
            if extra.get("cpu_compile_info") and extra.get("can_cpu_precompile", True):
                sched.start_precompile(extra["cpu_compile_info"], per_m=(name == SERVER))
            else:
                sched.stop_precompile()
            return sched, name, info, server_error
    except BaseException:
        if sched is not None:
            sched.close()
        raise
    raise BackendFailed("no backend could run")  # not reached: cands is never empty here


def _early_precompile(spec: Dict[str, Any], ops, sizes, sched):
    """The scheduler's on_facts for the check: with the GPU's facts (its shared memory decides the space),
    compile the screen's catalogue configs (HeadroomPlan.likely_units) while the GPU worker still imports
    the server and makes its smoke calls (on SGLang's kernel the screen waited 9.4 s for its compiles
    after a 16 s start-up: issue 19)."""

    def go(facts: Dict[str, Any]) -> None:
        shape = spec_mod.shape_of(spec)
        space = space_mod.spec_space(spec, shape, sizes, ops, facts.get("smem"))
        if space:
            sched.precompile(HeadroomPlan(shape, sizes, ops, space, {}).likely_units())

    return go


def _measure(
    plan: "HeadroomPlan", screen: List[Unit], sched, out, t0: float, simulated: bool, marks: Dict[str, float]
) -> List[Measurement]:
    """The screen's units, then the re-timings the plan asks for until it asks for none (progress events
    meanwhile) -> every measurement; marks gets the time the screen and the re-timing ended."""
    sim = {"simulated": True} if simulated else {}
    measured: List[Measurement] = []
    state = {"done": 0, "total": len(screen), "last": 0.0}

    def record(meas):
        measured.append(meas)
        state["done"] += 1
        now = time.time()
        if now - state["last"] >= 0.25:
            state["last"] = now
            _progress(out, state, t0, sim)

    sched.precompile(precompile_order(screen, per_m=sched.precompile_per_m))
    sched.measure(screen, record, simulated)
    marks["screen"] = time.time()
    while True:
        retime = plan.retime_units(measured)
        if not retime:
            break
        state["total"] += len(retime)
        sched.measure(retime, record, simulated)
    _progress(out, state, t0, sim)
    marks["retime"] = time.time()
    return measured


def run_check(spec: Dict[str, Any], out) -> int:
    """The whole check, events on out (an Emitter): headroom_started, progress, headroom_size per batch
    size, headroom; returns the exit status."""

    t0 = time.time()
    profiling.start("headroom")
    shape = spec_mod.shape_of(spec)
    ops = spec_mod.strategy_ops(spec)
    sizes = sorted(set(spec["batch_sizes"]))
    asked = spec["backend"]
    if asked == AUTO:
        cands = auto_candidates(spec["framework"])
        if not cands:
            try:
                resolve_auto(spec["framework"])  # raises with the sentence
            except BackendUnavailable as e:
                out.error("no_backend", str(e))
                return EXIT_FAILED
    else:
        cands = [asked]
    simulated = cands == [SYNTHETIC]
    sim = {"simulated": True} if simulated else {}
    server_error = None
    if asked == AUTO and SERVER not in cands:
        server_error = "%s is not importable with %s" % (spec["framework"], sys.executable)
    stopped = prewarm.stop()  # a prewarm still compiling would compete with this check's measurements
    cache_dir, cache_persistent = check_cache_dir({"name": cands[0], "shape": spec_mod.shape_dict(spec)})
    marks = {"start": t0}
    cache_before = _entries(cache_dir)
    sched = None
    try:
        sched, backend, info, server_error = _start_backend(spec, cands, ops, sizes, cache_dir, out, server_error)
        assert info is not None and backend is not None and sched is not None
        marks["info"] = time.time()
        simulated = is_simulated(backend)
        sim = {"simulated": True} if simulated else {}
        extra = info.get("extra") or {}
        default_source = extra.get("default_source")
        space = space_mod.spec_space(spec, shape, sizes, ops, info["smem_limit"])
        defaults = {(op, m): info["defaults"]["%s|%d" % (op, m)] for op in ops for m in sizes}
        floors = {(op, m): info["roofline"].get("%s|%d" % (op, m)) for op in ops for m in sizes}
        plan = HeadroomPlan(shape, sizes, ops, space, defaults)
        assumed = _assumption(backend, spec["framework"], default_source, server_error)
        screen = plan.screen_units()
        out.emit(
            dict(
                {
                    "type": "headroom_started",
                    "spec": spec,
                    "backend": backend,
                    "device_name": spec.get("device_name") or info["device_name"],
                    "triton_version": info.get("triton_version"),
                    "default_source": default_source,
                    "server_importable": backend == SERVER
                    or (backend != SYNTHETIC and SERVER in auto_candidates(spec["framework"])),
                    "assumed": assumed,
                    "units": len(screen),
                    "ts": time.time(),
                },
                **sim,
            )
        )
        if simulated:
            out.log("warning", "SIMULATED: synthetic backend; every number of this check is simulated, not measured")
        if assumed and not simulated:
            out.log("warning", assumed)
        measured = _measure(plan, screen, sched, out, t0, simulated, marks)
        rows = plan.estimate(measured, floors)
        for r in rows:
            out.emit(dict({"type": "headroom_size"}, **dict(r, **sim)))
        v = verdict(rows)
        if simulated:
            v["text"] = "SIMULATED: " + v["text"]
        wall = round(time.time() - t0, 3)
        pw = _start_prewarm(spec, sched, extra, info, measured, defaults)
        out.emit(
            dict(
                {
                    "type": "headroom",
                    "verdict": v["text"],
                    "kind": v["kind"],
                    "ranges": v["ranges"],
                    "sizes": rows,
                    "backend": backend,
                    "device_name": spec.get("device_name") or info["device_name"],
                    "default_source": default_source,
                    "assumed": assumed,
                    "framework": spec["framework"],
                    "shape": spec_mod.shape_dict(spec),
                    "ops": list(ops),
                    "units": len(measured),
                    "units_failed": sum(1 for x in measured if not x.ok),
                    "wall_s": wall,
                    "floor_method": "torch copy/read probe" if backend != SYNTHETIC else "simulated",
                    "timings": {
                        "startup_s": round(marks["info"] - t0, 3),
                        "screen_s": round(marks["screen"] - marks["info"], 3),
                        "retime_s": round(marks["retime"] - marks["screen"], 3),
                        "screen_units": len(screen),
                        "retime_units": len(measured) - len(screen),
                        "distinct_configs": len({(u.op, u.cfg) for u in screen}),
                        "precompile": dict(sched.precompile_stats),
                        "info_steps": extra.get("info_steps"),
                        "compile_cache": cache_dir if cache_persistent else None,
                        "compile_cache_entries_before": cache_before,
                        "bytecode_cache": bytecode.stats(sched.pycache, sched.pycache_files_before, sched.pycache_warm),
                        "kept_graphs": sched.worker_stats(),
                        "prewarm_stopped": _stopped_brief(stopped),
                    },
                    "prewarm": pw,
                    "ts": time.time(),
                },
                **sim,
            )
        )
        if all(r.get("gain") is None for r in rows):
            out.error("backend_failed", "the server's config could not be timed at any batch size")
            return EXIT_FAILED
        return EXIT_OK
    except BackendUnavailable as e:
        out.error("no_backend", str(e))
        return EXIT_FAILED
    except BackendFailed as e:
        out.error("backend_failed", str(e))
        return EXIT_FAILED
    finally:
        if sched is not None:
            sched.close()
        profiling.stop()
        if not cache_persistent:
            shutil.rmtree(cache_dir, ignore_errors=True)


def _start_prewarm(
    spec: Dict[str, Any], sched, extra: Dict[str, Any], info: Dict[str, Any], measured, defaults
) -> Optional[Dict[str, Any]]:
    """The tune's first kernels compiled in the background after this check (prewarm.py) -> {"pid",
    "units", "kernels" planned} or None (off, no CPU compile for this backend, no host cache)."""

    facts = extra.get("cpu_compile_info")
    if not prewarm.enabled() or not facts or not extra.get("can_cpu_precompile", True):
        return None
    try:
        units, bounds = prewarm_plan(
            spec, info.get("smem_limit"), measured, defaults, kernel_classes=sched.precompile_classes
        )
        desc = {k: v for k, v in sched.desc.items() if k not in ("pycache_prefix", "early_facts", "bandwidth_probe")}
        desc["cpu_compile"] = dict(facts)
        return prewarm.start(spec, desc, units, bounds)
    except Exception as e:  # noqa: BLE001 - the check's answer stands without it
        sys.stderr.write("moetune-agent: no prewarm: %s: %s\n" % (type(e).__name__, e))
        return None


def _stopped_brief(st: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    if not st or not st.get("stopped_by_us"):
        return None
    return {k: st.get(k) for k in ("state", "kernels", "ok", "failed", "stop_s")}


def _entries(path: str) -> int:
    try:
        return len(os.listdir(path))
    except OSError:
        return 0


def precompile_order(units: Sequence[Unit], per_m: bool = False) -> List[Unit]:
    """The screen's units in the order their kernels go to the precompile pool: the first use of every
    distinct config first (in the screen's order), then, where the backend compiles per batch size (the
    server's kernel specialises on sizes), the other sizes of each config. Submitted in the screen's order,
    the same config at several sizes went to several pool processes at once, each compiling the same
    kernel before any had written it to the shared cache (the server path: 41 s on one H200, issue 19);
    behind every first compile, a later size mostly finds it there."""
    first, rest, seen = [], [], set()
    for u in units:
        k = (u.op, u.cfg)
        if k in seen:
            rest.append(u)
        else:
            seen.add(k)
            first.append(u)
    return first + (rest if per_m else [])


def _progress(out, state, t0, sim):
    el = time.time() - t0
    done, total = state["done"], max(state["total"], state["done"])
    out.emit(
        dict(
            {
                "type": "progress",
                "done": done,
                "total": total,
                "phase": 0 if done <= total else 1,
                "elapsed_s": round(el, 3),
                "eta_s": None,
            },
            **sim,
        )
    )


def headroom_command(args, out) -> int:
    """`headroom SPEC`: the tune spec; under the spec's interpreter when it names one (as a run is)."""

    sp = spec_mod.load(args.spec)
    spec_mod.check_routing_file(sp)
    py = sp.get("python")
    if py and sp.get("backend") != SYNTHETIC and os.path.realpath(py) != os.path.realpath(sys.executable):
        if not os.access(py, os.X_OK):
            out.error("not_found", "spec 'python': %s is not an executable interpreter" % py)
            return EXIT_FAILED
        import moetune_agent

        root = os.path.dirname(os.path.dirname(os.path.abspath(moetune_agent.__file__)))
        fd, path = tempfile.mkstemp(prefix="moetune-headroom-spec-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(sp, f)
            code = (
                "import sys; sys.path.insert(0, sys.argv[1]); from moetune_agent.cli import main; "
                "sys.exit(main(['_headroom', sys.argv[2]]))"
            )
            sys.stdout.flush()
            rc = subprocess.call([py, "-c", code, root, path])
        finally:
            os.unlink(path)
        out.done_sent = True  # the inner process printed its done
        return rc
    return run_check(sp, out)


def inner_main(spec_path: str, out) -> int:
    """The check in the spec's interpreter (no hello: the outer agent printed it); done last."""

    try:
        with open(spec_path, encoding="utf-8") as f:
            sp = spec_mod.normalise(json.load(f))
        rc = run_check(sp, out)
    except Exception as e:  # noqa: BLE001 - reported as a protocol error, never a bare traceback
        sys.stderr.write(traceback.format_exc())
        out.error("internal", "%s: %s" % (type(e).__name__, e))
        rc = EXIT_FAILED
    out.done("ok" if rc == EXIT_OK else "failed", exit_code=rc)
    return rc
