# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A small in-process runner for the benchmark: drives a Strategy over real GPUs without the agent's
scheduler (so the benchmark does not depend on it).

* compile workers: a process pool (spawn) of CPU workers that precompile GEMM kernels into the run's
  private TRITON_CACHE_DIR through triton's warmup (no kernel launch, so they never disturb a timing);
  a work queue, one (op, tile, warps, stages) per task. GROUP_SIZE_M is a runtime argument of the
  kernel, so it is not part of the compile key.
* GPU workers: one process per GPU pulling units from a shared queue as soon as their kernels are
  compiled: compiling and timing overlap.

Every process is started fresh for each run (a new cache, no warm in-memory kernel cache), and that
start-up is part of the run's wall time.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import queue
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from moetune_agent.kernel_types import CandidateError, KernelConfig, Shape  # noqa: E402
from moetune_agent.work import Measurement, Unit, measure_unit  # noqa: E402

CompileKey = Tuple[str, int, int, int, int, int]


def compile_keys(u: Unit) -> List[Tuple[CompileKey, str, KernelConfig]]:
    def key(op, c):
        return (op, c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K, c.num_warps, c.num_stages)
    if u.op == "both":
        d = u.cfg_down or u.cfg
        return [(key("up", u.cfg), "up", u.cfg), (key("down", d), "down", d)]
    return [(key(u.op, u.cfg), u.op, u.cfg)]


# -- compile worker ----------------------------------------------------------------------------------
_CW = {}


def make_backend(kind: str, shape: Shape, device: int, cache_dir: str):
    if kind == "synthetic":  # CPU-only test double of the runner's own tests
        from moetune_agent.backends.synthetic import SyntheticBackend
        return SyntheticBackend(shape, device, cache_dir)
    from moetune_agent.backends.triton_backend import TritonBackend
    return TritonBackend(shape, device, cache_dir)


def _compile_init(kind: str, shape: Shape, cache_dir: str, device: int):
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    _CW["be"] = make_backend(kind, shape, device, cache_dir)
    if hasattr(_CW["be"], "_ensure"):
        _CW["be"]._ensure()


def _compile_task(args):
    key, op, cfg = args
    t0 = time.perf_counter()
    try:
        _CW["be"].precompile(op, cfg)
        return key, None, None, time.perf_counter() - t0
    except CandidateError as e:
        return key, e.kind, e.message, time.perf_counter() - t0


# -- GPU worker --------------------------------------------------------------------------------------
def _gpu_worker(kind: str, gpu: int, shape: Shape, cache_dir: str, bw: Optional[dict], task_q, result_q):
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    try:
        be = make_backend(kind, shape, gpu, cache_dir)
        for prep in ("weights", "warm_aux"):
            if hasattr(be, prep):
                getattr(be, prep)()
        if bw and hasattr(be, "set_bandwidth"):
            be.set_bandwidth(bw)
        result_q.put(("ready", gpu, None, 0.0))
        while True:
            item = task_q.get()
            if item is None:
                break
            kind, payload = item
            t0 = time.perf_counter()
            if kind == "unit":
                u = payload
                meas = measure_unit(be, u, gpu=gpu)
                result_q.put(("meas", gpu, meas, time.perf_counter() - t0))
            elif kind == "call":
                name, args = payload
                try:
                    res = getattr(be, name)(*args)
                except CandidateError as e:
                    res = e
                result_q.put(("call", gpu, res, time.perf_counter() - t0))
    except Exception as e:  # noqa: BLE001 - report the worker's death instead of hanging the run
        import traceback
        result_q.put(("dead", gpu, "%s\n%s" % (e, traceback.format_exc()), 0.0))


@dataclasses.dataclass
class RunStats:
    wall_s: float = 0.0
    startup_s: float = 0.0
    compile_tasks: int = 0
    compile_failed: int = 0
    compile_cpu_s: float = 0.0
    units: int = 0
    gpu_busy_s: float = 0.0
    phases: int = 0
    unit_secs_by_m: Dict[int, Dict[str, float]] = dataclasses.field(default_factory=dict)

    def as_dict(self):
        d = dataclasses.asdict(self)
        d["unit_secs_by_m"] = {str(k): dict(v) for k, v in self.unit_secs_by_m.items()}
        return d


class Runner:
    """Fresh compile pool + GPU workers for one strategy run; use as a context manager."""

    def __init__(self, shape: Shape, gpus: Sequence[int] = (0,), compile_workers: Optional[int] = None,
                 cache_dir: Optional[str] = None, bw: Optional[dict] = None, log=None, backend: str = "triton"):
        self.kind = backend
        self.shape = shape
        self.gpus = list(gpus)
        self.nworkers = compile_workers or max(1, (os.cpu_count() or 2) - len(self.gpus) - 1)
        self.cache_dir = cache_dir or tempfile.mkdtemp(prefix="moetune-triton-")
        self.bw = bw
        self.log = log or (lambda *a: None)
        self.stats = RunStats()
        self.compiled: Dict[CompileKey, Optional[Tuple[str, str]]] = {}
        self.compile_log: List[dict] = []

    def __enter__(self):
        t0 = time.perf_counter()
        self._t0 = t0
        ctx = mp.get_context("spawn")
        self.ctx = ctx
        self.task_q = ctx.Queue()
        self.result_q = ctx.Queue()
        self.procs = [ctx.Process(target=_gpu_worker, args=(self.kind, g, self.shape, self.cache_dir, self.bw, self.task_q,
                                                            self.result_q), daemon=True) for g in self.gpus]
        for p in self.procs:
            p.start()
        self.pool = ctx.Pool(self.nworkers, initializer=_compile_init,
                             initargs=(self.kind, self.shape, self.cache_dir, self.gpus[0]))
        ready = 0
        while ready < len(self.gpus):
            kind, gpu, payload, _ = self.result_q.get(timeout=600)
            if kind == "dead":
                raise RuntimeError("GPU worker %d died: %s" % (gpu, payload))
            ready += kind == "ready"
        self.stats.startup_s = time.perf_counter() - t0
        return self

    def __exit__(self, *exc):
        for _ in self.procs:
            self.task_q.put(None)
        for p in self.procs:
            p.join(timeout=60)
        self.pool.terminate()
        self.pool.join()
        self.stats.wall_s = time.perf_counter() - self._t0

    def call(self, name: str, *args):
        """Run a backend method on the first GPU worker (nothing else must be in flight)."""
        self.task_q.put(("call", (name, args)))
        kind, gpu, res, _ = self.result_q.get(timeout=900)
        if kind == "dead":
            raise RuntimeError("GPU worker %d died: %s" % (gpu, res))
        return res

    def run_phase(self, units: Sequence[Unit]) -> List[Measurement]:
        """Compile what the units need (in parallel) and time each unit as soon as its kernels exist."""
        out: List[Measurement] = []
        waiting: Dict[CompileKey, List[Unit]] = {}
        need: Dict[CompileKey, Tuple[str, KernelConfig]] = {}
        ready: List[Unit] = []
        blocked: Dict[int, set] = {}
        for i, u in enumerate(units):
            keys = compile_keys(u)
            missing = {k for k, _, _ in keys if k not in self.compiled}
            failed = [self.compiled[k] for k, _, _ in keys if self.compiled.get(k)]
            if failed:
                out.append(Measurement(u, None, failed[0][0], failed[0][1]))
                continue
            if not missing:
                ready.append(u)
                continue
            blocked[i] = missing
            for k, op, c in keys:
                if k in missing:
                    need.setdefault(k, (op, c))
                    waiting.setdefault(k, []).append(i)
        outstanding = 0
        for u in ready:
            self.task_q.put(("unit", u))
            outstanding += 1
        it = None
        pending_compiles = len(need)
        if need:
            it = self.pool.imap_unordered(_compile_task, [(k, op, c) for k, (op, c) in need.items()])
            self.stats.compile_tasks += len(need)
        while pending_compiles or outstanding:
            if pending_compiles:
                try:
                    key, kind, msg, secs = it.next(timeout=0.002 if outstanding else 0.5)
                    pending_compiles -= 1
                    self.compile_log.append({"key": list(key), "error": kind, "s": round(secs, 4)})
                    self.stats.compile_cpu_s += secs
                    self.compiled[key] = (kind, msg) if kind else None
                    if kind:
                        self.stats.compile_failed += 1
                    for i in waiting.get(key, ()):
                        if i not in blocked:
                            continue
                        if kind:
                            out.append(Measurement(units[i], None, kind, msg))
                            del blocked[i]
                            continue
                        blocked[i].discard(key)
                        if not blocked[i]:
                            del blocked[i]
                            self.task_q.put(("unit", units[i]))
                            outstanding += 1
                except mp.TimeoutError:
                    pass
            if outstanding:
                try:
                    kind, gpu, meas, secs = self.result_q.get(timeout=0.002 if pending_compiles else 60)
                    if kind == "dead":
                        raise RuntimeError("GPU worker %d died: %s" % (gpu, meas))
                    outstanding -= 1
                    self.stats.gpu_busy_s += secs
                    self.stats.units += 1
                    bym = self.stats.unit_secs_by_m.setdefault(meas.unit.m, {"s": 0.0, "n": 0})
                    bym["s"] += secs
                    bym["n"] += 1
                    out.append(meas)
                except queue.Empty:
                    pass
        return out

    def run_strategy(self, strategy, measured: Optional[List[Measurement]] = None) -> List[Measurement]:
        measured = list(measured or [])
        while True:
            phase = strategy.next_phase(measured)
            if phase is None:
                return measured
            self.stats.phases += 1
            t0 = time.perf_counter()
            got = self.run_phase(phase)
            self.log("  phase %d: %d units, %.1f s" % (self.stats.phases, len(phase), time.perf_counter() - t0))
            measured.extend(got)
