# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU worker process: one per GPU, spawned with CUDA_VISIBLE_DEVICES set to its GPU and
TRITON_CACHE_DIR to the run's compile folder before torch or Triton load; it builds the backend, reports
what it found (describe), then measures the units and checks the scheduler (engine/scheduler.py) sends it,
one at a time. It dies with its parent (die_with_parent), and keeps its profile on SIGTERM when profiled."""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import sys
import time
import traceback
from typing import Any, Dict

from .. import options, profiling
from ..backends import SYNTHETIC
from ..backends.factory import make_backend
from ..kernel_types import CandidateError
from ..work import Unit, measure_unit
from . import bytecode

__all__ = ["worker_main", "describe", "die_with_parent", "profile_on_sigterm", "exit_grace"]


PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """A worker must not outlive its run: when the run process is SIGKILLed (the OOM killer), an
    orphaned worker would hold its GPU memory forever (and keep multiprocessing's resource tracker
    alive). Linux's parent-death signal kills it with the parent; a watcher thread covers a parent that
    died before prctl ran and systems without prctl."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass
    if os.getppid() != parent_pid:
        os._exit(0)

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent_pid:
                os._exit(0)

    t = threading.Thread(target=watch, name="moetune-parent-watch", daemon=True)
    t.start()


def profile_on_sigterm() -> None:
    """A profiled process writes its profile on SIGTERM, then exits. Further SIGTERMs are ignored while it
    writes: a cancel signals the whole process group and the run's close() terminates the workers again,
    and that second signal cut the H200 GPU worker's profile short (a .prof.tmp left)."""

    def on_term(*_a):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        profiling.stop()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)


def worker_main(desc, gpu, cache_dir, task_q, result_conn, parent_pid=None):
    # Runs in the spawned worker: pin the GPU before anything can import torch.
    t_proc = time.time()
    bytecode.enable(desc.get("pycache_prefix"))
    t_facts = None
    profiling.start("worker-gpu%d" % gpu)
    if profiling.enabled():  # a cancelled run terminates its workers: keep what was profiled
        profile_on_sigterm()
    if parent_pid is not None:
        die_with_parent(parent_pid)
    options.set_env(
        CUDA_VISIBLE_DEVICES=str(gpu) if desc["name"] != SYNTHETIC else options.host_env("CUDA_VISIBLE_DEVICES") or ""
    )
    if cache_dir:
        options.set_env(TRITON_CACHE_DIR=cache_dir)
    try:
        backend = make_backend(desc, gpu if desc["name"] == SYNTHETIC else 0, cache_dir)
    except Exception as e:
        result_conn.send((gpu, -1, "fatal", "%s: %s" % (type(e).__name__, e)))
        return
    profiling.mark("backend_made")
    if desc.get("early_facts"):
        # What the precompile pool compiles for (capability, name, shared memory), sent before the slow
        # part of the start-up (the server's import, the roofline probe, the smoke calls): an early pool
        # builds its backends meanwhile, importing the server there too (Scheduler._on_facts).
        facts = None
        try:
            fn = getattr(backend, "cpu_compile_info", None)
            facts = fn() if fn is not None else None
        except Exception:  # noqa: BLE001 - the info call says what is wrong, with its own message
            facts = None
        result_conn.send((gpu, -2, "facts", facts))
        t_facts = round(time.time() - t_proc, 3)
        profiling.mark("facts_sent")
    hooks = options.test_hooks(desc["name"] == SYNTHETIC)
    crash_key = hooks.crash_unit  # test hook: die hard on this unit ident
    hang_key = hooks.hang_unit  # test hook: hang on this unit ident
    while True:
        task = task_q.get()
        if task is None:
            break
        tid, kind, payload = task
        try:
            if kind == "measure":
                unit: Unit = payload
                if crash_key and unit.ident() == crash_key and desc["name"] == SYNTHETIC:
                    os._exit(17)
                if hang_key and unit.ident() == hang_key and desc["name"] == SYNTHETIC:
                    time.sleep(3600)
                meas = measure_unit(backend, unit, gpu)
                pair = {"pair": meas.pair_samples_us, "pair_error": meas.pair_error}
                if meas.ok:
                    result_conn.send((gpu, tid, "ok", dict(pair, samples=meas.samples_us)))
                else:
                    result_conn.send((gpu, tid, "cand", (meas.error_kind, meas.error, pair)))
            elif kind == "check":
                op, cfg, m = payload
                result_conn.send((gpu, tid, "ok", [float(backend.check(op, cfg, m))]))
            elif kind == "stats":
                result_conn.send((gpu, tid, "ok", dict(getattr(backend, "kept_stats", None) or {})))
            elif kind == "info":
                ops, sizes = payload
                result_conn.send(
                    (
                        gpu,
                        tid,
                        "ok",
                        describe(
                            backend,
                            desc,
                            ops,
                            sizes,
                            {"info_at_s": round(time.time() - t_proc, 3), "facts_at_s": t_facts},
                        ),
                    )
                )
        except CandidateError as e:
            result_conn.send((gpu, tid, "cand", (e.kind, e.message)))
        except Exception as e:  # a backend bug on one candidate must not end the run
            result_conn.send(
                (gpu, tid, "cand", ("other", "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc(limit=3))))
            )
    try:
        backend.close()
    except Exception:
        pass
    profiling.stop()
    result_conn.close()


def describe(backend, desc, ops, sizes, steps: Dict[str, Any]) -> Dict[str, Any]:
    """The GPU worker's info: roofline, defaults, one real call per op, the backend's extras; steps gets
    the seconds of each (where a start-up goes) and goes into extra["info_steps"]."""
    t_step = time.time()
    roof = {}
    for op in ops:
        for m in sizes:
            try:
                roof["%s|%d" % (op, m)] = backend.roofline_us(op, m)
            except Exception:
                roof["%s|%d" % (op, m)] = None
    steps["roofline_s"] = round(time.time() - t_step, 3)
    t_step = time.time()
    defaults = {}
    for op in ops:
        for m in sizes:
            defaults["%s|%d" % (op, m)] = backend.default_config(op, m)
    steps["defaults_s"] = round(time.time() - t_step, 3)
    tv = None
    if desc["name"] != SYNTHETIC:
        try:
            import triton  # type: ignore

            tv = triton.__version__
        except Exception:
            tv = None
    # One real call per op with the default config at the smallest size: a backend that cannot run
    # (an API it does not know, a TypeError in the call) fails here, at once.
    t_step = time.time()
    make_weights = getattr(backend, "weights", None)
    if make_weights is not None and desc["name"] != SYNTHETIC:
        make_weights()  # the smoke call's first need, timed apart (where the smoke's time goes)
    steps["weights_s"] = round(time.time() - t_step, 3)
    t_step = time.time()
    smoke = {}
    for op in ops:
        m0 = min(sizes)
        smoke[op] = backend.check(op, defaults["%s|%d" % (op, m0)], m0)
    steps["smoke_s"] = round(time.time() - t_step, 3)
    t_step = time.time()
    extra = {}
    for name in ("default_source", "routing_info", "describe", "cpu_compile_info", "can_cpu_precompile"):
        fn = getattr(backend, name, None)
        if fn is not None:
            extra[name] = fn()
    steps["extra_s"] = round(time.time() - t_step, 3)
    steps["pycache_prefix"] = getattr(sys, "pycache_prefix", None)  # the worker's bytecode folder (bytecode.py)
    extra["info_steps"] = steps
    return {
        "device_name": backend.device_name(),
        "smem_limit": backend.shared_memory_per_block(),
        "roofline": roof,
        "defaults": defaults,
        "simulated": bool(backend.simulated),
        "triton_version": tv,
        "supports_tma": bool(backend.supports_tma),
        "smoke": smoke,
        "extra": extra,
    }


def exit_grace(seconds: float) -> float:
    """A terminated process's time to be gone before SIGKILL: longer where it writes its profile on
    SIGTERM (MOETUNE_PROFILE_DIR: a GPU worker's took over 2 s on the H200 and was lost)."""

    return max(seconds, 30.0) if profiling.enabled() else seconds
