# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""After a headroom check: the tune's first kernels compiled in the background (issue 22).

A user checks whether a tune is worth it, reads the verdict, then starts the tune. On a host's first
tune the GPU waits for the precompile pool, mostly in the first phase (the tile screen, one batch of
kernels the strategy cannot start without; figures: bench/RESULTS.md, "Moved from the agent's
docstrings"). The check knows everything that phase needs
(the spec, the GPU's compile target, its shared memory) and ends seconds after its verdict, leaving the
host's cores idle while the user reads it. So the check starts a detached process that compiles, with
one pool process per core and no GPU (cpu_compile.py), into the host's compile cache
(runs/compile_cache.py) what the tune will probably compile
(strategies/firstphase.prewarm_plan says what, phase by phase): the tune's first phase (the fast strategy's tile screen,
which depends on nothing measured), then every later phase of the strategy as it runs against a surrogate
of the landscape built from the check's timings (firstphase.surrogate: the time of the nearest config the
check timed, plus a penalty per unit of distance). On the replayed H200 landscapes the plan held 174 of
the 180 binaries a tune then measured (qwen3) and 110 of 110 (fp8 block), against 103 and 56 for the first
phase and the seeds alone (bench/prewarm_replay.py). Within a phase the costly kernels go first
(space.compile_cost).

Nothing here touches a GPU or any file but the compile cache and this folder; the process runs at a
lower priority (nice 10) and at most CAP_S seconds. A tune or another check
stops it first (stop(): SIGTERM to its process group, SIGKILL after 3 s), so it never competes with a
measurement for the CPU; whatever it compiled by then is in the cache, and the tune compiles the rest.
MOETUNE_PREWARM=0 turns it off. Its state is <agent home>/prewarm/status.json; the tune's result.json
records what it found (timings.prewarm).
"""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import signal
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

from . import options, safefile, spec as spec_mod
from .backends import SERVER, SYNTHETIC, TRITON
from .detach import spawn_detached
from .engine import bytecode
from .engine.pool import longest_first, precompile_init, precompile_key, precompile_task, terminate_pool
from .kernel_types import KernelConfig
from .protocol import RunError
from .runs.compile_cache import host_compile_cache
from .runs.store import check_private_dir, home_dir, private_subdir
from .work import Unit

__all__ = ["CMD", "enabled", "main", "read_status", "running", "start", "state_dir", "stop"]

DIR_NAME = "prewarm"
CMD = "_prewarm"
STOP_GRACE_S = 3.0
CAP_S = 300.0  # the longest a prewarm compiles


def enabled() -> bool:
    return options.host().prewarm


def state_dir(home: Optional[str] = None) -> str:
    return os.path.join(home_dir(home), DIR_NAME)


def _private_state_dir(home: Optional[str] = None) -> str:
    """state_dir, created 0700 and checked (runs.store.private_subdir): the job file there says what the
    prewarm compiles and where it loads from. RunError(unsafe_folder) otherwise."""
    return private_subdir(DIR_NAME, home, "the prewarm's folder")


# At most one prewarm per home (issue 42): the prewarm process holds RUNNING_LOCK (flock, exclusive) for
# its life, and a prewarm that cannot take it exits at once; start() and stop() hold START_LOCK while they
# stop the running one and start the next, so two checks ending together leave one prewarm, not two.
RUNNING_LOCK = "running.lock"
START_LOCK = "start.lock"


def _lock(d: str, name: str, blocking: bool) -> Optional[int]:
    """An fd holding an exclusive flock on d/name (a regular file, never through a link), or None where
    another process holds it (blocking=False)."""
    fd = os.open(os.path.join(d, name), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | safefile.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        if blocking:
            raise
        return None
    return fd


def running(home: Optional[str] = None) -> bool:
    """Whether a prewarm process of this home is alive (it holds RUNNING_LOCK)."""
    d = state_dir(home)
    if not os.path.isdir(d):
        return False
    try:
        fd = _lock(d, RUNNING_LOCK, blocking=False)
    except OSError:
        return False
    if fd is None:
        return True
    os.close(fd)
    return False


def read_status(home: Optional[str] = None) -> Optional[Dict[str, Any]]:
    try:
        text = safefile.read_text(os.path.join(state_dir(home), "status.json"), "")
        st = json.loads(text or "null")
        return st if isinstance(st, dict) else None
    except (OSError, ValueError, RecursionError):
        return None


def _write_status(d: str, st: Dict[str, Any]) -> None:
    try:
        safefile.write_atomic(os.path.join(d, "status.json"), (json.dumps(st) + "\n").encode())
    except OSError:
        pass


def _unit_to_json(u: Unit) -> list:
    return [u.op, u.cfg.key(), int(u.m)]


def _unit_from_json(x: Any) -> Unit:
    op, key, m = x
    return Unit(str(op), KernelConfig.from_key(str(key)), int(m), 1, 0)


# -- the controller's side: start and stop ------------------------------------------------------------
def start(
    spec: Dict[str, Any],
    desc: Dict[str, Any],
    units: Sequence[Unit],
    bounds: Optional[Sequence[int]] = None,
    home: Optional[str] = None,
    python: Optional[str] = None,
) -> Optional[Dict[str, Any]]:
    """Start the detached prewarm of units (compiled group by group, bounds as plan() gives them) for the
    backend desc (with its cpu_compile facts) -> {"pid", "units"}, or None where there is nothing to do
    (off, no units, no CPU compile, no host cache)."""
    if not enabled() or not units or not desc.get("cpu_compile"):
        return None
    if host_compile_cache(desc, home) is None:
        return None  # a private cache dies with its run: nothing a later tune could use
    lock = None
    try:
        d = _private_state_dir(home)
        lock = _lock(d, START_LOCK, blocking=True)
        stop(home, _locked=True)
        job = {
            "spec": spec,
            "desc": desc,
            "home": home,
            "units": [_unit_to_json(u) for u in units],
            "bounds": [int(b) for b in (bounds or [len(units)])],
            "created": time.time(),
        }
        safefile.write_atomic(os.path.join(d, "job.json"), (json.dumps(job) + "\n").encode(), 0o600)
        _write_status(d, {"state": "starting", "units": len(units), "created": job["created"]})
        pid = spawn_detached(python or sys.executable, d, command=CMD)
        # Hold the start lock until the new process holds its own lock (or is gone): a stop() meanwhile
        # then finds it by its lock, not only by the pid file.
        t0 = time.time()
        while pid and _alive(pid) and not running(home) and time.time() - t0 < 10:
            time.sleep(0.01)
    except (OSError, RunError) as e:
        sys.stderr.write("moetune-agent: no prewarm: %s\n" % (e.message if isinstance(e, RunError) else e))
        return None
    finally:
        if lock is not None:
            os.close(lock)
    return {"pid": pid, "units": len(units)}


def _cmdline(pid: int) -> str:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (our own child not yet reaped) is gone for our purpose
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            return f.read().split(b")")[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def stop(home: Optional[str] = None, _locked: bool = False) -> Optional[Dict[str, Any]]:
    """Stop a running prewarm of this agent home (its whole process group) -> its last status with
    "stopped_by_us" and "stop_s", or None where none was there. Only a process whose command line is
    this agent's prewarm is signalled: a pid file that names another process (stale, or planted) is
    ignored, never killed. Under the start lock (unless the caller holds it: start()), so a prewarm
    being started meanwhile is stopped too, not left behind."""
    d = state_dir(home)
    if not _locked:
        if not os.path.isdir(d) or os.path.islink(d):
            return None
        try:
            lock = _lock(d, START_LOCK, blocking=True)
        except OSError:
            return _stop(home)
        try:
            return _stop(home)
        finally:
            os.close(lock)
    return _stop(home)


def _stop(home: Optional[str]) -> Optional[Dict[str, Any]]:
    d = state_dir(home)
    try:
        text = safefile.read_text(os.path.join(d, "pid"), "") or ""
    except OSError:
        text = ""
    st = read_status(home)
    if not text.strip().isdigit():
        return st
    pid = int(text.strip())
    if pid <= 1 or pid == os.getpid() or not _alive(pid) or CMD not in _cmdline(pid):
        return st
    t0 = time.time()
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return st
    while _alive(pid) and time.time() - t0 < STOP_GRACE_S:
        time.sleep(0.02)
    if _alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        t1 = time.time()
        while _alive(pid) and time.time() - t1 < STOP_GRACE_S:
            time.sleep(0.02)
    st = dict(read_status(home) or {})
    st["stopped_by_us"] = True
    st["stop_s"] = round(time.time() - t0, 3)
    return st


# -- the detached process ---------------------------------------------------------------------------
def main(d: str) -> int:
    """The prewarm process (cli's _prewarm; cwd and logs in the prewarm folder d)."""

    t0 = time.time()
    try:
        check_private_dir(d, "the prewarm's folder")  # before its job file says what to load
    except RunError as e:
        sys.stderr.write("moetune-agent: prewarm: %s\n" % e.message)
        return 1
    held = _lock(d, RUNNING_LOCK, blocking=False)
    while held is None and time.time() - t0 < 5:  # a stopped one may still be exiting
        time.sleep(0.05)
        held = _lock(d, RUNNING_LOCK, blocking=False)
    if held is None:  # another prewarm of this home runs: one at a time
        sys.stderr.write("moetune-agent: prewarm: another prewarm of this home is running; this one ends\n")
        return 0
    safefile.write_atomic(os.path.join(d, "pid"), ("%d\n" % os.getpid()).encode())
    try:
        job = json.loads(safefile.read_text(os.path.join(d, "job.json"), "") or "{}")
        units = [_unit_from_json(x) for x in job.get("units", [])]
        bounds = [int(b) for b in job.get("bounds") or []]
        spec, desc, home = dict(job.get("spec") or {}), dict(job.get("desc") or {}), job.get("home")
    except (OSError, ValueError, TypeError, AttributeError, RecursionError) as e:
        _write_status(
            d,
            {
                "state": "damaged",
                "pid": os.getpid(),
                "started": t0,
                "ended": time.time(),
                "first_error": "job.json: %s: %s" % (type(e).__name__, str(e)[:200]),
            },
        )
        return 1
    cap_s = CAP_S
    st: Dict[str, Any] = {
        "state": "running",
        "pid": os.getpid(),
        "started": t0,
        "units": len(units),
        "kernels": 0,
        "ok": 0,
        "failed": 0,
        "first_error": None,
    }
    pool = None

    def finish(state: str, code: int) -> None:
        st["state"] = state
        st["ended"] = time.time()
        st["wall_s"] = round(st["ended"] - t0, 3)
        if pool is not None:
            terminate_pool(pool, 2.0)
        _write_status(d, st)
        os._exit(code)

    signal.signal(signal.SIGTERM, lambda *_a: finish("stopped", 0))
    try:
        os.nice(10)
    except OSError:
        pass
    cache_dir = host_compile_cache(desc, home)
    if cache_dir is None or not units:
        finish("nothing", 0)
    if desc.get("name") != SYNTHETIC or options.host().bytecode_cache == options.ON:
        prefix = bytecode.host_prefix(home)
        if prefix:
            desc["pycache_prefix"] = prefix
    classes = None
    if desc.get("name") == SERVER:
        from .backends.server_backend import classes_for

        classes = classes_for(spec.get("framework") or desc.get("framework") or "sglang", spec_mod.shape_of(spec))
    per_m = desc.get("name") == SERVER
    ncpu = os.cpu_count() or 1
    workers = max(1, ncpu - 1) if desc.get("name") != SYNTHETIC else 2
    hooked = options.test_hooks(desc.get("name") == SYNTHETIC).precompile_workers
    if hooked is not None:
        workers = max(1, hooked)
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(workers, initializer=precompile_init, initargs=(desc, cache_dir, os.getpid()))
    # Phase by phase, costly kernels first within each, keyed as the tune's pool keys them
    # (Scheduler.precompile)
    ordered: List[Unit] = []
    lo = 0
    for hi in bounds + [len(units)]:
        ordered.extend(longest_first(units[lo:hi]))
        lo = max(lo, hi)
    seen = set()
    results = []
    for u in ordered:
        key = precompile_key(u.op, u.cfg, u.m, per_m, classes, gm_at_run_time=desc.get("name") == TRITON)
        if key in seen:
            continue
        seen.add(key)
        results.append(pool.apply_async(precompile_task, (u.op, u.cfg, u.m if per_m else None, desc)))
    st["kernels"] = len(results)
    _write_status(d, st)
    deadline = t0 + cap_s
    pending = list(results)
    while pending:
        if time.time() > deadline:
            finish("capped", 0)
        still = []
        for r in pending:
            if r.ready():
                err = r.get()
                if err is None:
                    st["ok"] += 1
                else:
                    st["failed"] += 1
                    st["first_error"] = st["first_error"] or str(err)[:200]
            else:
                still.append(r)
        if len(still) != len(pending):
            _write_status(d, st)
        pending = still
        time.sleep(0.05)
    finish("done", 0)
    return 0
