# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scheduler's precompile side (a mixin of engine/scheduler.py's Scheduler): starting the CPU pool
(engine/pool.py) early or once the GPU worker has said what to compile for, submitting each kernel once
(precompile), guessing the next phase's kernels while a phase is timed (_speculate), ending the pool, and
the workers' bytecode warm-up before the pool's processes import torch."""

from __future__ import annotations

import os
import pickle
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..backends import SERVER
from ..work import Unit
from . import bytecode
from .pool import longest_first, precompile_init, precompile_key, precompile_task, terminate_pool

__all__ = ["Precompiler"]


class Precompiler(object):
    """The pool's state lives on the Scheduler (its __init__ sets every attribute declared here)."""

    desc: Dict[str, Any]
    ctx: Any
    cache_dir: Optional[str]
    pycache: Optional[str]
    precompile_workers: int
    precompile_per_m: bool
    precompile_classes: Optional[Callable[[str, Any, int], Any]]
    precompile_stats: Dict[str, Any]
    facts_per_m: bool
    on_facts: Optional[Callable[[Dict[str, Any]], None]]
    _pool: Any
    _pool_early: bool
    _pool_killed: bool
    _pc_desc: Optional[Dict[str, Any]]
    _warm_desc: Optional[Dict[str, Any]]
    _provisional: bool
    _precompiled: Dict[Tuple, Any]
    _speculative: set
    _facts_dir: Optional[str]
    _t_start: Optional[float]
    _last_compiled: Optional[float]

    def _warm_bytecode(self) -> Optional[Dict[str, Any]]:
        if not self.pycache:
            return None

        pkgs = list(bytecode.WARM_PACKAGES)
        if self.desc.get("name") == SERVER and self.desc.get("framework"):
            pkgs.append(str(self.desc["framework"]))
        try:
            return bytecode.warm(self.pycache, pkgs)
        except Exception as e:  # noqa: BLE001 - without it every process compiles what it imports, as before
            return {"error": "%s: %s" % (type(e).__name__, str(e)[:200])}

    def _write_facts(self, desc: Dict[str, Any]) -> None:
        """What the early pool's processes wait for (await_facts): written aside, then renamed."""
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
        if (
            not facts
            or self._pool is None
            or not self._pool_early
            or self._pc_desc is not None
            or self._warm_desc is not None
        ):
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
            self._pool = self.ctx.Pool(
                self.precompile_workers, initializer=precompile_init, initargs=(desc, self.cache_dir, os.getpid())
            )
            return
        if not self._pool_early or (self._pc_desc is not None and not self._provisional):
            return
        if self._warm_desc is not None and (
            self._warm_desc.get("cpu_compile") != desc["cpu_compile"]
            or (self._provisional and per_m != self.precompile_per_m)
        ):
            # Warmed (and perhaps compiling) for other facts than the backend now reports: start afresh.
            self._end_pool()
            self.precompile_per_m = per_m
            self._pool = self.ctx.Pool(
                self.precompile_workers, initializer=precompile_init, initargs=(desc, self.cache_dir, os.getpid())
            )
            return
        if self._warm_desc is None:
            self._write_facts(desc)  # no early facts came: the pool's processes start now
        self.precompile_per_m = per_m
        self._pc_desc = desc  # sent with every task: built once per worker process
        self._provisional = False

    def _end_pool(self) -> None:
        """Terminate the pool and forget what it was asked (a task of a terminated pool never answers)."""
        if self._pool is not None:
            terminate_pool(self._pool)
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
        self._pool_killed = not terminate_pool(pool)

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
            first: List[Unit] = []
            rest: List[Unit] = []
            seen: set = set()
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
                self._precompiled[key] = self._pool.apply_async(precompile_task, args, callback=self._precompile_done)
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
            if any(
                c is not None and self._pc_key(u.op, c, u.m) not in self._precompiled
                for c in (u.cfg, u.cfg_down, u.pair)
            ):
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
