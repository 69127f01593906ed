# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Dispatch: runs units of work on one worker process per GPU (engine/worker.py), with an optional CPU
precompile pool (engine/pool.py) that compiles the kernels ahead of the GPU.

The dispatcher is the shared queue: whichever worker is idle gets the next unit, one at a time, so the
main process always knows which unit a worker holds. A CandidateError is a failed measurement; a worker
that dies (segfault, GPU fault, OOM kill) is detected, its unit recorded as failed with kind "crash", and
the worker restarted.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection as mp_connection
import os
import shutil
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .. import options
from ..backends import SYNTHETIC
from ..kernel_types import KernelConfig
from ..runs.compile_cache import host_compile_cache
from ..work import Measurement, Unit
from . import bytecode
from .pool import POOL_EXIT_S, precompile_init
from .precompiler import Precompiler
from .worker import exit_grace, worker_main

__all__ = ["Scheduler", "Cancelled", "BackendFailed"]


class Cancelled(Exception):
    pass


class BackendFailed(Exception):
    """A worker's backend cannot start or describe the device: the run cannot measure anything."""


class Scheduler(Precompiler):
    PREFETCH = 2  # units queued per worker
    COMPILE_WAIT_S = 10.0  # longest wait without a finished compile before a worker compiles itself

    def __init__(
        self,
        desc: Dict[str, Any],
        gpus: Sequence[int],
        cache_dir: Optional[str],
        precompile_workers: int = 0,
        home: Optional[str] = None,
    ) -> None:
        """cache_dir: the caller's private compile folder, used only where the host has no persistent
        compile cache (runs.compile_cache.host_compile_cache: tune and the headroom check both come through here, so
        both reuse every kernel either compiled before on this host with this Triton)."""
        self.desc = desc
        self.gpus = list(gpus)
        # The host's packages without bytecode: the workers read and write it under the agent's home
        # (bytecode.py; ~11 s of every server-backend process's start-up on the H200 host)
        self.pycache = (
            bytecode.host_prefix(home)
            if desc.get("name") != SYNTHETIC or options.host().bytecode_cache == options.ON
            else None
        )
        if self.pycache:
            self.desc = dict(desc, pycache_prefix=self.pycache)
        self.pycache_files_before = bytecode.count_files(self.pycache)
        self.pycache_warm: Optional[Dict[str, Any]] = None  # what start()'s bytecode.warm did
        shared = host_compile_cache(desc, home)
        self.private_cache_dir = cache_dir
        self.cache_dir = shared or cache_dir
        self.host_cache = shared is not None
        self.ctx = multiprocessing.get_context("spawn")
        self.workers: Dict[int, Tuple[Any, Any, Any]] = {}
        self.busy: Dict[int, Tuple[int, str, Any]] = {}
        self.next_tid = 0
        self.stop = False
        self.precompile_workers = precompile_workers
        self._pool: Any = None
        self._precompiled = {}  # (op, cfg key) -> AsyncResult
        self.crashes = 0
        # A unit that runs longer than this is a hung kernel or GPU: the worker is killed and replaced.
        self.unit_timeout_s = options.host().unit_timeout_s
        self._started: Dict[int, float] = {}
        self.precompile_per_m = False  # the kernel specialises on batch sizes: one compile per (op, cfg, m)
        # ... or, with this, one per (op, cfg, class): (op, cfg, m) -> the batch-size class of the kernel's
        # specialisation (server_backend.specialisation_class), None where unknown (then per m)
        self.precompile_classes: Optional[Callable[[str, Any, int], Any]] = None
        self.precompile_stats = {
            "submitted": 0,
            "ok": 0,
            "failed": 0,
            "first_error": None,
            "lookahead": 0,
            "lookahead_used": 0,
            "wait_s": 0.0,
        }
        self._speculative: set = set()  # precompile keys submitted by a lookahead and not yet measured
        self._pool_early = False
        self._pc_desc: Optional[Dict[str, Any]] = None
        self._warm_desc: Optional[Dict[str, Any]] = None  # the early facts' desc the pool was warmed with
        self._t_start: Optional[float] = None
        self._facts_dir: Optional[str] = None  # where an early pool finds the facts (await_facts)
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
        p = self.ctx.Process(
            target=worker_main,
            args=(desc, gpu, self.cache_dir, q, w, os.getpid()),
            name="moetune-gpu%d" % gpu,
            daemon=True,
        )
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
            self._facts_dir = tempfile.mkdtemp(prefix="moetune-pool-")
            self._pool = self.ctx.Pool(
                self.precompile_workers,
                initializer=precompile_init,
                initargs=(dict(self.desc), self.cache_dir, os.getpid(), os.path.join(self._facts_dir, "facts.pkl")),
            )

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
            pool_end = threading.Thread(
                target=self._pool_ended, args=(self._pool,), name="moetune-pool-close", daemon=True
            )
            pool_end.start()
        deadline = time.time() + exit_grace(self.WORKER_EXIT_S)
        for _g, (p, q, r) in list(self.workers.items()):
            p.join(max(0.1, deadline - time.time()))
            if p.is_alive():
                p.kill()
                p.join(1)
            r.close()
        self.workers.clear()
        self.close_s["workers"] = round(time.time() - t0, 3)
        if pool_end is not None:
            pool_end.join(exit_grace(POOL_EXIT_S) + 3)
            self._pool = None
            if self._pool_killed:
                self.close_s["pool_killed"] = True
        self.close_s["all"] = round(time.time() - t0, 3)
        if self._facts_dir is not None:
            shutil.rmtree(self._facts_dir, ignore_errors=True)
            self._facts_dir = None

    # -- running -------------------------------------------------------------------------------
    def _run(
        self,
        tasks: List[Tuple[str, Any]],
        on_done: Callable[[int, int, str, Any], None],
        fillers: Sequence[Tuple[str, Any]] = (),
    ) -> None:
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
                raise BackendFailed(
                    "the worker for GPU %d could not start the %s backend: %s" % (gpu, self.desc["name"], payload)
                )
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
                    drain(g)  # results it sent before dying are real results
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
                for tid in reversed(rest):  # not started: back to the front of the queue (a filler to its own)
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
            self.precompile_stats["wait_s"] = round(
                self.precompile_stats["wait_s"] + time.time() - self._waiting_since, 3
            )
            self._waiting_since = None

    def info(self, ops, sizes):
        out = {}

        def done(i, gpu, status, payload):
            if status != "ok":
                msg = payload[1] if isinstance(payload, (tuple, list)) and len(payload) > 1 else payload
                raise BackendFailed(
                    "the %s backend on GPU %d failed to describe the device: %s" % (self.desc["name"], gpu, msg)
                )
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

    def measure(
        self,
        units: Sequence[Unit],
        on_measurement: Callable[[Measurement], None],
        simulated: bool = False,
        lookahead: Optional[Callable[[List[Unit]], Sequence[Unit]]] = None,
        fillers: Sequence[Unit] = (),
    ) -> None:
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
                [n_units, round(self.precompile_stats["wait_s"] - wait0, 2)]
            )

    def check(self, items: Sequence[Tuple[str, KernelConfig, int]]) -> List[Tuple[str, Any]]:
        res: List[Tuple[str, Any]] = [("", None)] * len(items)

        def done(i, gpu, status, payload):
            res[i] = (status, payload)

        self._run([("check", it) for it in items], done)
        return res
