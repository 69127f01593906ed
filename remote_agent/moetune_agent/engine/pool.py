# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The CPU precompile pool's side: what each pool process runs (precompile_init once, precompile_task per
kernel), the key a compile is known by (precompile_key), the order kernels go to the pool (longest_first),
and ending a pool that may hang (terminate_pool). The scheduler (engine/scheduler.py) and the check's
background compile (prewarm.py) both drive a pool through these."""

from __future__ import annotations

import dataclasses
import pickle
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .. import options, profiling
from ..backends import SYNTHETIC
from ..backends.factory import make_backend
from ..kernel_types import CandidateError
from ..space import compile_cost
from ..work import Unit
from . import bytecode
from .worker import die_with_parent, exit_grace, profile_on_sigterm

__all__ = ["precompile_init", "precompile_task", "precompile_key", "longest_first", "terminate_pool", "POOL_EXIT_S"]


_PRECOMPILE_BACKEND = None
_PRECOMPILE_ARGS: Optional[Tuple[Dict[str, Any], Optional[str]]] = None


def precompile_init(desc, cache_dir, parent_pid=None, facts_path=None):
    global _PRECOMPILE_ARGS
    bytecode.enable(desc.get("pycache_prefix"))
    # A precompile worker sees no GPU (desc["cpu_compile"]: it compiles for the GPU's target without a
    # CUDA context, weights or launches on the GPU being timed).
    options.set_env(CUDA_VISIBLE_DEVICES="")
    profiling.start("precompile")
    if profiling.enabled():  # the pool is terminated when the run ends: keep what was profiled
        profile_on_sigterm()
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
            desc = await_facts(facts_path)
            _PRECOMPILE_ARGS = (desc, cache_dir)
    if desc.get("cpu_compile"):
        precompile_warm(desc)


def await_facts(path: str) -> Dict[str, Any]:
    """An early pool process, once torch and Triton are in: wait for the GPU worker's facts (the
    backend description with its cpu_compile, written by the scheduler: Scheduler._write_facts), so the
    backend is built, and the server imported, before the first compile is asked for. Waits as long as
    the pool lives (the scheduler ends a pool that gets no facts; a process the pool starts later finds
    the file there)."""
    while True:
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except FileNotFoundError:
            time.sleep(0.02)


def precompile_backend(desc):
    global _PRECOMPILE_BACKEND
    if _PRECOMPILE_BACKEND is None:
        _PRECOMPILE_BACKEND = make_backend(desc, 0, _PRECOMPILE_ARGS[1] if _PRECOMPILE_ARGS else None)
    return _PRECOMPILE_BACKEND


def precompile_warm(desc):
    """Build this pool process's backend and let it load what its compiles need (the server's modules),
    before any task. -> None, or why it failed (the tasks then fail with their own error)."""
    try:
        be = precompile_backend(desc)
        warm = getattr(be, "warm_precompile", None)
        if warm is not None:
            warm()
        return None
    except Exception as e:  # noqa: BLE001
        return "%s: %s" % (type(e).__name__, e)


def precompile_key(
    op: str,
    cfg: Any,
    m: int,
    per_m: bool,
    classes: Optional[Callable[[str, Any, int], Any]] = None,
    gm_at_run_time: bool = False,
) -> Tuple:
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
    return sorted(units, key=lambda u: -sum(compile_cost(c) for c in (u.cfg, u.cfg_down, u.pair) if c is not None))


def precompile_task(op, cfg, m=None, desc=None):
    """desc: the backend description with the GPU worker's cpu_compile facts, for a pool started before
    they were known (the backend is built on the first task, once per process)."""
    try:
        be = precompile_backend(desc or (_PRECOMPILE_ARGS or ({}, None))[0])
        if m is None:
            be.precompile(op, cfg)
        else:
            be.precompile(op, cfg, m)
        return None
    except CandidateError as e:
        return "%s: %s" % (e.kind, e.message[:200])
    except Exception as e:
        return "other: %s" % e


POOL_EXIT_S = 3.0  # a terminated pool's time to be gone before its processes are killed


def terminate_pool(pool: Any, wait_s: Optional[float] = None) -> bool:
    """Pool.terminate() within wait_s, else its processes SIGKILLed -> whether terminate() ended. A
    pool process killed while it waited for a task (a cancel signals the whole process group) dies
    holding the task queue's lock, and terminate() waits for that lock forever (the H200's capped
    runs ended only by the cancel's SIGKILL, 15 s after their SIGTERM)."""
    procs = list(getattr(pool, "_pool", None) or [])
    t = threading.Thread(target=pool.terminate, name="moetune-pool-end", daemon=True)
    t.start()
    t.join(exit_grace(POOL_EXIT_S) if wait_s is None else wait_s)
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
