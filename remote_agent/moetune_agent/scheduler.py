# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs units of work on one worker process per GPU, plus an optional CPU precompile pool.

Each GPU worker is a spawned process with CUDA_VISIBLE_DEVICES set to its GPU and TRITON_CACHE_DIR set
to the run's private cache (shared by that run's workers so a kernel compiled by the precompile pool or
another GPU is reused). The dispatcher is the shared queue: whichever worker is idle gets the next unit,
one at a time, so the main process always knows which unit a worker holds. A CandidateError is a
failed measurement; a worker that dies (segfault, GPU fault, OOM kill) is detected, its unit recorded
as failed with kind "crash", and the worker restarted.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import multiprocessing.connection as mp_connection
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import options
from .backends import SERVER, SYNTHETIC
from .kernel_types import CandidateError, KernelConfig
from .work import Measurement, Unit, measure_unit


PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """A worker must not outlive its run: when the run process is SIGKILLed (the OOM killer), an
    orphaned worker would hold its GPU memory forever (and keep multiprocessing's resource tracker
    alive). Linux's parent-death signal kills it with the parent; a watcher thread covers a parent that
    died before prctl ran and systems without prctl."""
    try:
        import ctypes

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


def _profile_on_sigterm() -> None:
    """A profiled process writes its profile on SIGTERM, then exits. Further SIGTERMs are ignored while it
    writes: a cancel signals the whole process group and the run's close() terminates the workers again,
    and that second signal cut the H200 GPU worker's profile short (a .prof.tmp left)."""
    from . import profiling

    def on_term(*_a):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        profiling.stop()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)


def _worker_main(desc, gpu, cache_dir, task_q, result_conn, parent_pid=None):
    # Runs in the spawned worker: pin the GPU before anything can import torch.
    t_proc = time.time()
    from . import bytecode
    bytecode.enable(desc.get("pycache_prefix"))
    t_facts = None
    from . import profiling
    profiling.start("worker-gpu%d" % gpu)
    if profiling.enabled():  # a cancelled run terminates its workers: keep what was profiled
        _profile_on_sigterm()
    if parent_pid is not None:
        die_with_parent(parent_pid)
    options.set_env(CUDA_VISIBLE_DEVICES=str(gpu) if desc["name"] != SYNTHETIC else
                    options.host_env("CUDA_VISIBLE_DEVICES") or "")
    if cache_dir:
        options.set_env(TRITON_CACHE_DIR=cache_dir)
    from .backends.factory import make_backend
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
    hang_key = hooks.hang_unit    # test hook: hang on this unit ident
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
                result_conn.send((gpu, tid, "ok", _describe(backend, desc, ops, sizes,
                                                            {"info_at_s": round(time.time() - t_proc, 3),
                                                             "facts_at_s": t_facts})))
        except CandidateError as e:
            result_conn.send((gpu, tid, "cand", (e.kind, e.message)))
        except Exception as e:  # a backend bug on one candidate must not end the run
            result_conn.send((gpu, tid, "cand", ("other", "%s: %s\n%s" % (type(e).__name__, e,
                                                                     traceback.format_exc(limit=3)))))
    try:
        backend.close()
    except Exception:
        pass
    profiling.stop()
    result_conn.close()


def _describe(backend, desc, ops, sizes, steps: Dict[str, Any]) -> Dict[str, Any]:
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
    return {"device_name": backend.device_name(), "smem_limit": backend.shared_memory_per_block(),
            "roofline": roof, "defaults": defaults, "simulated": bool(backend.simulated), "triton_version": tv,
            "supports_tma": bool(backend.supports_tma), "smoke": smoke, "extra": extra}


_PRECOMPILE_BACKEND = None
_PRECOMPILE_ARGS: Optional[Tuple[Dict[str, Any], Optional[str]]] = None


def _precompile_init(desc, cache_dir, parent_pid=None, facts_path=None):
    global _PRECOMPILE_ARGS
    from . import bytecode
    bytecode.enable(desc.get("pycache_prefix"))
    # A precompile worker sees no GPU (desc["cpu_compile"]: it compiles for the GPU's target without a
    # CUDA context, weights or launches on the GPU being timed).
    options.set_env(CUDA_VISIBLE_DEVICES="")
    from . import profiling
    profiling.start("precompile")
    if profiling.enabled():  # the pool is terminated when the run ends: keep what was profiled
        _profile_on_sigterm()
    if parent_pid is not None:
        die_with_parent(parent_pid)
    if cache_dir:
        options.set_env(TRITON_CACHE_DIR=cache_dir)
    _PRECOMPILE_ARGS = (desc, cache_dir)
    if not desc.get("cpu_compile"):
        if desc["name"] != SYNTHETIC:
            # Started with the GPU worker, before it has said what to compile for: import the heavy modules
            # now (seconds per process), so they load while the GPU worker starts instead of after it.
            try:
                import torch  # type: ignore  # noqa: F401  # pylint: disable=unused-import
                import triton  # type: ignore  # noqa: F401  # pylint: disable=unused-import
            except Exception:
                pass
        if facts_path:
            desc = _await_facts(facts_path)
            _PRECOMPILE_ARGS = (desc, cache_dir)
    if desc.get("cpu_compile"):
        _precompile_warm(desc)


def _await_facts(path: str) -> Dict[str, Any]:
    """An early pool process, once torch and Triton are in: wait for the GPU worker's facts (the
    backend description with its cpu_compile, written by the scheduler: Scheduler._write_facts), so the
    backend is built, and the server imported, before the first compile is asked for. Waits as long as
    the pool lives (the scheduler ends a pool that gets no facts; a process the pool starts later finds
    the file there)."""
    import pickle

    while True:
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except FileNotFoundError:
            time.sleep(0.02)


def _precompile_backend(desc):
    global _PRECOMPILE_BACKEND
    if _PRECOMPILE_BACKEND is None:
        from .backends.factory import make_backend
        _PRECOMPILE_BACKEND = make_backend(desc, 0, _PRECOMPILE_ARGS[1] if _PRECOMPILE_ARGS else None)
    return _PRECOMPILE_BACKEND


def _precompile_warm(desc):
    """Build this pool process's backend and let it load what its compiles need (the server's modules),
    before any task. -> None, or why it failed (the tasks then fail with their own error)."""
    try:
        be = _precompile_backend(desc)
        warm = getattr(be, "warm_precompile", None)
        if warm is not None:
            warm()
        return None
    except Exception as e:  # noqa: BLE001
        return "%s: %s" % (type(e).__name__, e)


def precompile_key(op: str, cfg: Any, m: int, per_m: bool,
                   classes: Optional[Callable[[str, Any, int], Any]] = None, gm_at_run_time: bool = False) -> Tuple:
    """What one precompile compiles: (op, config) where the kernel does not specialise on batch sizes,
    else (op, config, "class", the size's specialisation class) or, the class unknown, (op, config, m).
    gm_at_run_time: GROUP_SIZE_M is a run-time argument of the kernel (moetune's own), so configs that
    differ only in it share a key."""
    if gm_at_run_time:
        cfg = dataclasses.replace(cfg, GROUP_SIZE_M=1)
    if not per_m:
        return (op, cfg.key())
    cls = None
    if classes is not None:
        try:
            cls = classes(op, cfg, m)
        except Exception:  # noqa: BLE001 - an unknown class is a compile per size
            cls = None
    return (op, cfg.key(), m) if cls is None else (op, cfg.key(), "class", cls)


def longest_first(units: Sequence[Unit]) -> List[Unit]:
    """units with the costliest kernels first (space.compile_cost; stable among equals), so a batch's
    makespan on the pool is not set by a slow kernel submitted last (int4: 0.3-8 s a kernel on the
    H200)."""
    from .space import compile_cost
    return sorted(units, key=lambda u: -sum(compile_cost(c) for c in (u.cfg, u.cfg_down, u.pair) if c is not None))


def _precompile_task(op, cfg, m=None, desc=None):
    """desc: the backend description with the GPU worker's cpu_compile facts, for a pool started before
    they were known (the backend is built on the first task, once per process)."""
    try:
        be = _precompile_backend(desc or (_PRECOMPILE_ARGS or ({}, None))[0])
        if m is None:
            be.precompile(op, cfg)
        else:
            be.precompile(op, cfg, m)
        return None
    except CandidateError as e:
        return "%s: %s" % (e.kind, e.message[:200])
    except Exception as e:
        return "other: %s" % e


def _exit_grace(seconds: float) -> float:
    """A terminated process's time to be gone before SIGKILL: longer where it writes its profile on
    SIGTERM (MOETUNE_PROFILE_DIR: a GPU worker's took over 2 s on the H200 and was lost)."""
    from . import profiling

    return max(seconds, 30.0) if profiling.enabled() else seconds


class Cancelled(Exception):
    pass


class BackendFailed(Exception):
    """A worker's backend cannot start or describe the device: the run cannot measure anything."""


class Scheduler(object):
    PREFETCH = 2  # units queued per worker
    COMPILE_WAIT_S = 10.0  # longest wait without a finished compile before a worker compiles itself
    def __init__(self, desc: Dict[str, Any], gpus: Sequence[int], cache_dir: Optional[str], precompile_workers: int = 0,
                 home: Optional[str] = None) -> None:
        """cache_dir: the caller's private compile folder, used only where the host has no persistent
        compile cache (runs.compile_cache.host_compile_cache: tune and the headroom check both come through here, so
        both reuse every kernel either compiled before on this host with this Triton)."""
        self.desc = desc
        self.gpus = list(gpus)
        # The host's packages without bytecode: the workers read and write it under the agent's home
        # (bytecode.py; ~11 s of every server-backend process's start-up on the H200 host)
        from . import bytecode
        self.pycache = bytecode.host_prefix(home) if desc.get("name") != SYNTHETIC or \
            options.host().bytecode_cache == options.ON else None
        if self.pycache:
            self.desc = dict(desc, pycache_prefix=self.pycache)
        self.pycache_files_before = bytecode.count_files(self.pycache)
        self.pycache_warm: Optional[Dict[str, Any]] = None  # what start()'s bytecode.warm did
        from .runs.compile_cache import host_compile_cache
        shared = host_compile_cache(desc, home)
        self.private_cache_dir = cache_dir
        self.cache_dir = shared or cache_dir
        self.host_cache = shared is not None
        self.ctx = multiprocessing.get_context("spawn")
        self.workers: Dict[int, Tuple[Any, Any]] = {}
        self.busy: Dict[int, Tuple[int, str, Any]] = {}
        self.next_tid = 0
        self.stop = False
        self.precompile_workers = precompile_workers
        self._pool: Any = None
        self._precompiled: Dict[Tuple[str, str], Any] = {}  # (op, cfg key) -> AsyncResult
        self.crashes = 0
        # A unit that runs longer than this is a hung kernel or GPU: the worker is killed and replaced.
        self.unit_timeout_s = options.host().unit_timeout_s
        self._started: Dict[int, float] = {}
        self.precompile_per_m = False   # the kernel specialises on batch sizes: one compile per (op, cfg, m)
        # ... or, with this, one per (op, cfg, class): (op, cfg, m) -> the batch-size class of the kernel's
        # specialisation (server_backend.specialisation_class), None where unknown (then per m)
        self.precompile_classes: Optional[Callable[[str, Any, int], Any]] = None
        self.precompile_stats = {"submitted": 0, "ok": 0, "failed": 0, "first_error": None, "lookahead": 0,
                                 "lookahead_used": 0, "wait_s": 0.0}
        self._speculative: set = set()  # precompile keys submitted by a lookahead and not yet measured
        self._pool_early = False
        self._pc_desc: Optional[Dict[str, Any]] = None
        self._warm_desc: Optional[Dict[str, Any]] = None  # the early facts' desc the pool was warmed with
        self._t_start: Optional[float] = None
        self._facts_dir: Optional[str] = None  # where an early pool finds the facts (_await_facts)
        self._provisional = False  # compiling for the early facts, not yet confirmed by start_precompile
        # Called with the early facts once the pool has them: it may precompile() what it will measure
        # for sure (the headroom check's screen), while the GPU worker finishes its start-up.
        self.on_facts: Optional[Callable[[Dict[str, Any]], None]] = None
        self.facts_per_m = False  # precompile_per_m for what on_facts submits
        self._waiting_since: Optional[float] = None
        self.close_s: Dict[str, float] = {}  # close(): seconds to end the GPU workers, and everything
        self._wait_gave_up = False
        self._last_compiled: Optional[float] = None  # when the pool last finished a compile (_precompile_done)
        self._pool_killed = False  # close(): the pool's terminate() hung and its processes were killed

    # -- lifecycle -----------------------------------------------------------------------------
    def _spawn(self, gpu):
        desc = dict(self.desc, early_facts=True) if self._pool_early else self.desc
        q = self.ctx.Queue()
        # Results come back on a pipe per worker: a send is complete when it returns, so whatever a
        # worker reported before crashing is still readable after it died.
        r, w = self.ctx.Pipe(duplex=False)
        p = self.ctx.Process(target=_worker_main, args=(desc, gpu, self.cache_dir, q, w, os.getpid()),
                             name="moetune-gpu%d" % gpu, daemon=True)
        p.start()
        w.close()
        self.workers[gpu] = (p, q, r)

    def start(self, early_pool=False):
        """The GPU workers; early_pool also starts the precompile pool now, whose processes import torch
        and Triton while the GPU worker starts up (issue 13: start-up was ~12 s of a 67-85 s run), and
        learn what to compile for from the GPU worker's first message (its facts, sent before the rest of
        its start-up: _on_facts), so they build their backends, and import the server, meanwhile."""
        self._t_start = time.time()
        early = early_pool and self.precompile_workers > 0 and self._pool is None
        if early:
            self._pool_early = True
        for g in self.gpus:
            self._spawn(g)
        # A host's first run without bytecode: every core compiles the packages' sources once, while the
        # GPU worker starts, before the pool's processes import them (bytecode.warm; skipped once done).
        self.pycache_warm = self._warm_bytecode()
        if early:
            import tempfile

            self._facts_dir = tempfile.mkdtemp(prefix="moetune-pool-")
            self._pool = self.ctx.Pool(self.precompile_workers, initializer=_precompile_init,
                                       initargs=(dict(self.desc), self.cache_dir, os.getpid(),
                                                 os.path.join(self._facts_dir, "facts.pkl")))

    def _warm_bytecode(self) -> Optional[Dict[str, Any]]:
        if not self.pycache:
            return None
        from . import bytecode

        pkgs = list(bytecode.WARM_PACKAGES)
        if self.desc.get("name") == SERVER and self.desc.get("framework"):
            pkgs.append(str(self.desc["framework"]))
        try:
            return bytecode.warm(self.pycache, pkgs)
        except Exception as e:  # noqa: BLE001 - without it every process compiles what it imports, as before
            return {"error": "%s: %s" % (type(e).__name__, str(e)[:200])}

    def _write_facts(self, desc: Dict[str, Any]) -> None:
        """What the early pool's processes wait for (_await_facts): written aside, then renamed."""
        import pickle

        if self._facts_dir is None:
            return
        path = os.path.join(self._facts_dir, "facts.pkl")
        with open(path + ".tmp", "wb") as f:
            pickle.dump(desc, f)
        os.replace(path + ".tmp", path)

    def _on_facts(self, facts: Optional[Dict[str, Any]]) -> None:
        """A GPU worker's early facts (what a CPU compile targets), sent before the rest of its start-up:
        every process of the early pool builds its backend with them now, not at its first compile (for
        the server backend that is the server's import, seconds per process, which the SGLang check's first
        compiles waited 9.4 s behind: issue 19). The first facts count; a restarted worker's are ignored."""
        if not facts or self._pool is None or not self._pool_early or self._pc_desc is not None \
                or self._warm_desc is not None:
            return
        self._warm_desc = dict(self.desc, cpu_compile=dict(facts))
        self._write_facts(self._warm_desc)
        if self._t_start is not None:
            self.precompile_stats["facts_s"] = round(time.time() - self._t_start, 3)
        if self.on_facts is not None:
            # Compiling starts now, provisionally (start_precompile confirms it, or ends it when the
            # backend's own info says otherwise): the caller submits what it will surely measure.
            self._pc_desc = self._warm_desc
            self._provisional = True
            self.precompile_per_m = self.facts_per_m
            try:
                self.on_facts(dict(facts))
            except Exception as e:  # noqa: BLE001 - costs only the compiles it did not submit
                self.precompile_stats["at_facts_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
            self.precompile_stats["at_facts"] = self.precompile_stats["submitted"]

    def start_precompile(self, cpu_compile: Optional[Dict[str, Any]], per_m: bool = False) -> None:
        """The CPU precompile pool, once the GPU worker has said what to compile for (cpu_compile:
        capability, name, shared memory); none without that (a worker never compiles on the GPU). An
        early pool that already compiles provisionally (on_facts) goes on, unless the facts differ."""
        if self.precompile_workers <= 0 or not cpu_compile:
            self.stop_precompile()
            return
        desc = dict(self.desc)
        desc["cpu_compile"] = dict(cpu_compile)
        if self._pool is None:
            self.precompile_per_m = per_m
            self._pool = self.ctx.Pool(self.precompile_workers, initializer=_precompile_init,
                                       initargs=(desc, self.cache_dir, os.getpid()))
            return
        if not self._pool_early or (self._pc_desc is not None and not self._provisional):
            return
        if self._warm_desc is not None and (self._warm_desc.get("cpu_compile") != desc["cpu_compile"]
                                            or (self._provisional and per_m != self.precompile_per_m)):
            # Warmed (and perhaps compiling) for other facts than the backend now reports: start afresh.
            self._end_pool()
            self.precompile_per_m = per_m
            self._pool = self.ctx.Pool(self.precompile_workers, initializer=_precompile_init,
                                       initargs=(desc, self.cache_dir, os.getpid()))
            return
        if self._warm_desc is None:
            self._write_facts(desc)  # no early facts came: the pool's processes start now
        self.precompile_per_m = per_m
        self._pc_desc = desc  # sent with every task: built once per worker process
        self._provisional = False

    POOL_EXIT_S = 3.0

    @classmethod
    def _terminate_pool(cls, pool, wait_s: Optional[float] = None) -> bool:
        """Pool.terminate() within wait_s, else its processes SIGKILLed -> whether terminate() ended. A
        pool process killed while it waited for a task (a cancel signals the whole process group) dies
        holding the task queue's lock, and terminate() waits for that lock forever (the H200's capped
        runs ended only by the cancel's SIGKILL, 15 s after their SIGTERM)."""
        procs = list(getattr(pool, "_pool", None) or [])
        t = threading.Thread(target=pool.terminate, name="moetune-pool-end", daemon=True)
        t.start()
        t.join(_exit_grace(cls.POOL_EXIT_S) if wait_s is None else wait_s)
        if not t.is_alive():
            pool.join()
            return True
        for p in procs + list(getattr(pool, "_pool", None) or []):  # with any the pool started since
            try:
                p.kill()
            except Exception:  # noqa: BLE001 - gone already
                pass
        for p in procs:
            p.join(1)
        return False

    def _end_pool(self) -> None:
        """Terminate the pool and forget what it was asked (a task of a terminated pool never answers)."""
        if self._pool is not None:
            self._terminate_pool(self._pool)
        self._pool = None
        self._pool_early = False
        self._pc_desc = None
        self._warm_desc = None
        self._provisional = False
        self._precompiled.clear()
        self._speculative.clear()
        st = self.precompile_stats
        st["submitted"] = st["ok"] = st["failed"] = 0

    def stop_precompile(self):
        """No precompile after all (the backend cannot compile without its GPU): end an early pool, and
        what it compiled provisionally."""
        if self._pool is not None and (self._pc_desc is None or self._provisional):
            self._end_pool()

    @property
    def precompiling(self) -> bool:
        return self._pool is not None and (not self._pool_early or self._pc_desc is not None)

    def _pool_ended(self, pool) -> None:
        self._pool_killed = not self._terminate_pool(pool)

    WORKER_EXIT_S = 2.0  # after SIGTERM, a GPU worker's time to be gone before SIGKILL

    def close(self):
        """End the GPU workers and the pool, all at once; close_s says where the time went. The workers
        have nothing left to save (kernels and bytecode are written when made, a profile by their SIGTERM
        handler), so they are terminated rather than asked to exit: a GPU worker that exits by itself frees
        its graphs, empties torch's cache and runs Python's finalisation first (a SGLang check's process
        ended ~3.6 s after its verdict on the H200, a tune's shutdown took 2.3 s, 17 s before the pool and
        the workers ended together)."""
        t0 = time.time()
        for _g, (p, q, r) in list(self.workers.items()):
            try:
                q.cancel_join_thread()  # nothing queued for a worker that is going is worth waiting for
            except Exception:
                pass
            if p.is_alive():
                p.terminate()
        pool_end = None
        if self._pool is not None:  # its processes stop while the GPU workers exit
            pool_end = threading.Thread(target=self._pool_ended, args=(self._pool,), name="moetune-pool-close",
                                        daemon=True)
            pool_end.start()
        deadline = time.time() + _exit_grace(self.WORKER_EXIT_S)
        for _g, (p, q, r) in list(self.workers.items()):
            p.join(max(0.1, deadline - time.time()))
            if p.is_alive():
                p.kill()
                p.join(1)
            r.close()
        self.workers.clear()
        self.close_s["workers"] = round(time.time() - t0, 3)
        if pool_end is not None:
            pool_end.join(_exit_grace(self.POOL_EXIT_S) + 3)
            self._pool = None
            if self._pool_killed:
                self.close_s["pool_killed"] = True
        self.close_s["all"] = round(time.time() - t0, 3)
        if self._facts_dir is not None:
            import shutil

            shutil.rmtree(self._facts_dir, ignore_errors=True)
            self._facts_dir = None

    # -- precompile ----------------------------------------------------------------------------
    def precompile(self, units: Sequence[Unit]) -> List[Tuple]:
        """Submit the kernels of units not submitted before; -> their precompile keys."""
        if not self.precompiling:
            return []
        if self.precompile_per_m:
            # The first size of every config first: submitted in the phase's order, one config at several
            # sizes went to several pool processes at once, each compiling the same kernel before any had
            # written it to the shared cache (the server's kernel: the headroom check's 41 s, issue 19);
            # behind the first compiles the other sizes mostly find their kernel there.
            first, rest, seen = [], [], set()
            for u in units:
                k = (u.op, u.cfg.key(), u.cfg_down.key() if u.cfg_down else None)
                (rest if k in seen else first).append(u)
                seen.add(k)
            units = first + rest
        else:
            first, rest = list(units), []
        units = longest_first(first) + rest  # the other sizes of a config stay behind
        new = []
        for u in units:
            for c in (u.cfg, u.cfg_down, u.pair):
                if c is None:
                    continue
                key = self._pc_key(u.op, c, u.m)
                if key in self._precompiled:
                    continue
                args = (u.op, c, u.m if self.precompile_per_m else None, self._pc_desc)
                self.precompile_stats["submitted"] += 1
                self._precompiled[key] = self._pool.apply_async(_precompile_task, args,
                                                                callback=self._precompile_done)
                new.append(key)
        return new

    LOOKAHEAD_AT = (0.25, 0.5, 0.75, 0.9)  # fractions of a phase measured at which the next phase is guessed

    def _outstanding(self) -> int:
        st = self.precompile_stats
        return st["submitted"] - st["ok"] - st["failed"]

    def _speculate(self, lookahead: Callable[[List[Unit]], Sequence[Unit]], remaining: List[Unit]) -> None:
        """Precompile what the next phase will probably measure (lookahead: the strategy's next phase as if
        the remaining units of this one had failed), while the pool has nothing left to compile: a phase
        waits for its kernels only where the guess was wrong (issue 22: with compiles submitted phase by
        phase, a cold own-kernel run's GPU waited 18 of its 50 s for the pool, whose processes were idle
        for 30 s). At most a few tasks per pool process per guess, so a wrong guess delays the next
        phase's real compiles by little."""
        if self._outstanding() > 2 * self.precompile_workers:
            return
        try:
            guess = list(lookahead(remaining) or ())
        except Exception as e:  # noqa: BLE001 - a guess that fails costs nothing but its compiles
            if not self.precompile_stats.get("lookahead_error"):
                sys.stderr.write("moetune-agent: precompile lookahead failed: %s: %s\n" % (type(e).__name__, e))
            self.precompile_stats["lookahead_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
            return
        cap = 6 * max(1, self.precompile_workers)
        todo = []
        for u in guess:
            if any(c is not None and self._pc_key(u.op, c, u.m) not in self._precompiled
                   for c in (u.cfg, u.cfg_down, u.pair)):
                todo.append(u)
            if len(todo) >= cap:
                break
        new = self.precompile(todo)
        self._speculative.update(new)
        self.precompile_stats["lookahead"] += len(new)

    def _pc_key(self, op, cfg, m):
        return precompile_key(op, cfg, m, self.precompile_per_m, self.precompile_classes)

    def _precompile_done(self, res):
        self._last_compiled = time.time()  # the pool's result thread: one float, read by _pick
        if res is None:
            self.precompile_stats["ok"] += 1
        else:
            self.precompile_stats["failed"] += 1
            if self.precompile_stats["first_error"] is None:
                self.precompile_stats["first_error"] = str(res)[:300]

    # -- running -------------------------------------------------------------------------------
    def _run(self, tasks: List[Tuple[str, Any]], on_done: Callable[[int, int, str, Any], None],
             fillers: Sequence[Tuple[str, Any]] = ()) -> None:
        """tasks: list of (kind, payload). on_done(index, gpu, status, payload) per task, as they end;
        status is "ok" | "cand" | "crash".

        Each worker holds up to PREFETCH units (it works through them in order), so it never idles
        waiting for this process; the first one held is the one running, which is what a crash or a
        hang is charged to; the others go back to the queue.

        fillers: optional tasks (indices len(tasks)...), handed to a worker only when it holds nothing and
        no task is ready (_pick: the pool still compiles them), one at a time; the call returns once the
        tasks are done, whatever fillers are left."""
        n_tasks = len(tasks)
        tasks = list(tasks) + list(fillers)
        pending = list(range(n_tasks))
        pending.reverse()
        spare = list(range(n_tasks, len(tasks)))
        spare.reverse()
        tid_to_index: Dict[int, int] = {}
        held: Dict[int, List[int]] = {}  # gpu -> tids in the order the worker runs them

        dead: set = set()

        def dispatch():
            for g in self.gpus:
                if g not in self.workers or g in dead:
                    continue
                q = held.setdefault(g, [])
                if n_tasks < len(tasks) and any(tid_to_index.get(t, 0) >= n_tasks for t in q):
                    continue  # busy with a filler: the next pick when it is done (no wait counted meanwhile)
                while pending and len(q) < self.PREFETCH:
                    pos = self._pick(tasks, pending)
                    if pos is None:  # nothing compiled yet: the pool is faster than this worker alone
                        pos = self._pick_filler(tasks, spare) if not q else None
                        if pos is None:
                            break
                        i = spare.pop(pos)  # a filler, while the tasks wait for the pool: no idle GPU
                        self._end_wait()
                        self.precompile_stats["fillers"] = self.precompile_stats.get("fillers", 0) + 1
                    else:
                        i = pending.pop(pos)
                    tid = self.next_tid
                    self.next_tid += 1
                    tid_to_index[tid] = i
                    if not q:
                        self._started[g] = time.time()
                    q.append(tid)
                    self.workers[g][1].put((tid, tasks[i][0], tasks[i][1]))
                    if i >= n_tasks:
                        break  # one filler at a time: the next pick comes when it is done
                self._sync_busy(held)

        def handle(gpu, tid, status, payload):
            if status == "facts":
                self._on_facts(payload)
                return
            if status == "fatal":
                raise BackendFailed("the worker for GPU %d could not start the %s backend: %s"
                                    % (gpu, self.desc["name"], payload))
            q = held.get(gpu) or []
            if q and q[0] == tid:
                q.pop(0)
                self._started[gpu] = time.time()
                # Refill before recording this result (journal fsync, events): the GPU never waits.
                dispatch()
                on_done(tid_to_index.pop(tid), gpu, status, payload)
            # else: a late answer from a worker already written off

        def drain(g):
            """Everything worker g sent, in order; False once its pipe is closed (it exited)."""
            conn = self.workers[g][2]
            while True:
                try:
                    if not conn.poll():
                        return True
                    item = conn.recv()
                except (EOFError, OSError):
                    return False
                handle(*item)

        def check_workers():
            if self.stop:
                # A cancel signals the run's whole process group: a worker dead by it is no crash of
                # the unit it held (a resumed run would skip that config) and is not restarted.
                raise Cancelled()
            for g in list(held):
                if not held[g]:
                    continue
                p = self.workers[g][0]
                if not p.is_alive():
                    dead.add(g)  # nothing more is handed to it while its last results are read
                    drain(g)     # results it sent before dying are real results
                    q = held[g]
                    if not q:
                        continue
                else:
                    q = held[g]
                hung = p.is_alive() and time.time() - self._started.get(g, time.time()) > self.unit_timeout_s
                if hung:
                    p.kill()
                    p.join(5)
                elif p.is_alive():
                    continue
                self.crashes += 1
                culprit, rest = q[0], q[1:]
                held[g] = []
                for tid in reversed(rest):   # not started: back to the front of the queue (a filler to its own)
                    i = tid_to_index.pop(tid)
                    (spare if i >= n_tasks else pending).append(i)
                self._sync_busy(held)
                if hung:
                    why = "timed out after %.0f s (hung kernel?); worker restarted" % self.unit_timeout_s
                else:
                    why = "worker process died (exit code %s)" % p.exitcode
                sys.stderr.write("moetune-agent: GPU %d: %s\n" % (g, why))
                self.workers[g][2].close()
                self._spawn(g)
                dead.discard(g)
                on_done(tid_to_index.pop(culprit), g, "crash", why)

        last_check = time.time()
        while pending or any(held.values()):
            if self.stop:
                raise Cancelled()
            dispatch()
            conns = {self.workers[g][2]: g for g in self.gpus if g in self.workers}
            ready = mp_connection.wait(list(conns), timeout=0.02 if self._waiting_since is not None else 0.2)
            closed = False
            for conn in ready:
                closed = not drain(conns[conn]) or closed
            if closed or not ready or time.time() - last_check > 0.5:
                last_check = time.time()
                check_workers()
        self._sync_busy(held)

    def _sync_busy(self, held):
        self.busy = {g: q[0] for g, q in held.items() if q}

    def _compiled(self, unit: Unit) -> bool:
        for c in (unit.cfg, unit.cfg_down, unit.pair):
            if c is not None:
                r = self._precompiled.get(self._pc_key(unit.op, c, unit.m))
                if r is not None and not r.ready():
                    return False
        return True

    def _pick(self, tasks: List[Tuple[str, Any]], pending: List[int]) -> Optional[int]:
        """Position in pending (a reversed list) of the next task: with a precompile pool, the first of
        the next few units whose kernels are already compiled, so the GPU times while the CPUs compile.
        When none is ready: None (wait) while the pool is still compiling them, until it has finished
        no compile for COMPILE_WAIT_S, else simply the next one. A pool that makes progress is waited
        for however long its kernels take (int4_w4a16: 0.3-8 s a kernel, a first phase's waits 13 s in
        all); before, one wait past COMPILE_WAIT_S left the worker compiling every kernel it met itself
        for the rest of the run, one at a time. A worker that compiled the unit itself would compile
        one kernel at a time beside a pool compiling many (a cold host's first units: ~4 s of the
        worker's start-up compiled serially, issue 22), and the pool's copy of that kernel too."""
        if not self._precompiled:
            return len(pending) - 1
        for pos in range(len(pending) - 1, max(-1, len(pending) - 1 - 256), -1):
            kind, payload = tasks[pending[pos]]
            if kind != "measure" or self._compiled(payload):
                self._end_wait()
                return pos
        if not self.precompiling or self._wait_gave_up:
            return len(pending) - 1
        now = time.time()
        if self._waiting_since is None:
            self._waiting_since = now
        if now - max(self._waiting_since, self._last_compiled or 0.0) < self.COMPILE_WAIT_S:
            return None
        # A pool that finished nothing for this long while a worker waited lost its tasks (a pool process
        # that died mid-compile never answers): no more waiting on it in this run, the worker compiles.
        self._end_wait()
        self._wait_gave_up = True
        return len(pending) - 1

    def _pick_filler(self, tasks: List[Tuple[str, Any]], spare: List[int]) -> Optional[int]:
        """Position in spare (reversed) of the next filler whose kernels are compiled, or None."""
        for pos in range(len(spare) - 1, -1, -1):
            kind, payload = tasks[spare[pos]]
            if kind != "measure" or self._compiled(payload):
                return pos
        return None

    def _end_wait(self) -> None:
        """A wait for the pool's compiles is over: its length goes into precompile_stats["wait_s"] (the
        seconds a worker had nothing compiled to time; a worker with units still queued was not idle for
        all of it)."""
        if self._waiting_since is not None:
            self.precompile_stats["wait_s"] = round(self.precompile_stats["wait_s"] + time.time()
                                                    - self._waiting_since, 3)
            self._waiting_since = None

    def info(self, ops, sizes):
        out = {}

        def done(i, gpu, status, payload):
            if status != "ok":
                msg = payload[1] if isinstance(payload, (tuple, list)) and len(payload) > 1 else payload
                raise BackendFailed("the %s backend on GPU %d failed to describe the device: %s"
                                    % (self.desc["name"], gpu, msg))
            out["info"] = payload

        saved = self.gpus
        self.gpus = saved[:1]
        try:
            self._run([("info", (list(ops), list(sizes)))], done)
        finally:
            self.gpus = saved
        return out["info"]

    def worker_stats(self) -> Dict[str, int]:
        """The GPU workers' counters (the kept re-timing graphs: hits, kept, evicted), summed; {} where
        a worker cannot answer."""
        out: Dict[str, int] = {}

        def done(_i, _gpu, status, payload):
            if status == "ok" and isinstance(payload, dict):
                for k, v in payload.items():
                    out[k] = out.get(k, 0) + int(v)

        try:
            self._run([("stats", None) for _ in self.gpus], done)
        except Exception:  # noqa: BLE001 - diagnostics only
            return {}
        return out

    def measure(self, units: Sequence[Unit], on_measurement: Callable[[Measurement], None],
                simulated: bool = False,
                lookahead: Optional[Callable[[List[Unit]], Sequence[Unit]]] = None,
                fillers: Sequence[Unit] = ()) -> None:
        """lookahead(units not measured yet) -> the units the next phase will probably hold: precompiled
        while this phase is timed (_speculate), at LOOKAHEAD_AT of it. fillers: units timed only while
        the GPU would otherwise wait for the pool's compiles (_run), those left over are not timed."""
        units = list(units) + list(fillers)
        n_units = len(units) - len(fillers)
        finished: set = set()  # the units (not fillers) done
        wait0 = self.precompile_stats["wait_s"]
        marks = [int(f * n_units) for f in self.LOOKAHEAD_AT] if lookahead is not None else []

        def done(i, gpu, status, payload):
            u = units[i]
            if i < n_units:
                finished.add(i)
            if self._speculative:
                for c in (u.cfg, u.cfg_down, u.pair):
                    key = self._pc_key(u.op, c, u.m) if c is not None else None
                    if key in self._speculative:
                        self._speculative.discard(key)
                        self.precompile_stats["lookahead_used"] += 1
            if status == "ok":
                meas = Measurement(u, [float(x) for x in payload["samples"]], gpu=gpu, simulated=simulated)
            elif status == "cand":
                meas = Measurement(u, None, payload[0], payload[1], gpu, simulated)
            else:
                meas = Measurement(u, None, "crash", str(payload), gpu, simulated)
            # a paired unit's default (work.measure_unit): in the "ok" dict, or third in a "cand" tuple
            pair = payload if status == "ok" else (payload[2] if status == "cand" and len(payload) > 2 else {})
            if pair.get("pair") is not None:
                meas.pair_samples_us = [float(x) for x in pair["pair"]]
            meas.pair_error = pair.get("pair_error")
            on_measurement(meas)
            if marks and len(finished) >= marks[0] and self.precompiling:
                while marks and len(finished) >= marks[0]:
                    marks.pop(0)
                self._speculate(lookahead, [x for j, x in enumerate(units[:n_units]) if j not in finished])

        self._run([("measure", u) for u in units[:n_units]], done, [("measure", u) for u in units[n_units:]])
        if self._precompiled:  # per scheduler call (a phase): units and the seconds waited for compiles
            self.precompile_stats.setdefault("waits", []).append(
                [n_units, round(self.precompile_stats["wait_s"] - wait0, 2)])

    def check(self, items: Sequence[Tuple[str, KernelConfig, int]]) -> List[Tuple[str, Any]]:
        res: List[Tuple[str, Any]] = [("", None)] * len(items)

        def done(i, gpu, status, payload):
            res[i] = (status, payload)

        self._run([("check", it) for it in items], done)
        return res
