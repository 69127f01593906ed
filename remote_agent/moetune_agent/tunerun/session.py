# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the phases of one run share (tunerun/phases.py): the spec, the started backend and its scheduler, the
journal and the event log, the search space and the server's defaults; and the three things every phase
does with them: record a finished unit, measure a phase's units, check configs against the reference."""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ..kernel_types import KernelConfig
from ..runs.logs import EventLog, Journal
from ..engine.scheduler import Scheduler
from ..strategies.headtohead import H2H_ROUND
from ..work import Measurement, Unit

__all__ = ["DEFAULT_ROUND", "MAX_PHASES", "Session"]

DEFAULT_ROUND = -1  # the server's default config, timed once per (op, m) for the figures while searching
CHECK_ROUND = -2  # correctness checks of winners and head-to-head contenders
MAX_PHASES = 10000


class Session(object):
    """One run's shared state, built by Run once its backend runs (tunerun/runner.py)."""

    def __init__(
        self,
        run_dir: str,
        run_id: str,
        spec: Dict[str, Any],
        events: EventLog,
        sched: Scheduler,
        journal: Journal,
        t0: float,
    ):
        self.run_dir = run_dir
        self.run_id = run_id
        self.spec = spec
        self.events = events
        self.sched = sched
        self.journal = journal
        self.t0 = t0
        self.simulated = events.simulated
        # Set by Run before the first phase:
        self.backend = ""
        self.gpus: List[int] = []
        self.info: Dict[str, Any] = {}
        self.device = ""
        self.shape: Any = None
        self.ops: Tuple[str, ...] = ()
        self.sizes: List[int] = []
        self.space: Dict[Tuple[str, int], Any] = {}
        self.strategy_name = ""
        self.routing: Dict[str, Any] = {}
        self.default_source: Optional[Dict[str, Any]] = None
        self.cache_files_before: Optional[int] = None
        self.prewarm: Optional[Dict[str, Any]] = None  # what a check's background compile had done (prewarm.py)
        # Kept up to date by the phases:
        self.state: Dict[str, Any] = {
            "done": len(journal),
            "total": len(journal),
            "phase": 0,
            "last_progress": 0.0,
            "from_journal": len(journal),
            "best": {},
        }
        self.defaults_cfg: Dict[Tuple[str, int], KernelConfig] = {}
        self.default_us: Dict[Tuple[str, int], Optional[float]] = {}
        self.banned: Set[Tuple[str, str]] = set()

    @property
    def extra(self) -> Dict[str, Any]:
        return self.info.get("extra") or {}

    def record(self, meas: Measurement) -> None:
        """A finished unit: into the journal, out as an event; a new best of the search as a best event."""
        rec = self.journal.append(meas)
        out = dict(rec)
        out.pop("unit", None)
        self.events.emit(out)
        self.state["done"] += 1
        u = meas.unit
        if meas.ok and u.round == DEFAULT_ROUND and u.cfg_down is None:
            self.default_us[(u.op, u.m)] = meas.median_us  # the search's figures while the defaults time
        if meas.ok and 0 <= u.round < H2H_ROUND and u.cfg_down is None and not u.op.startswith("check:"):
            key = "%s|%d" % (u.op, u.m)
            cur = self.state["best"].get(key)
            if cur is None or meas.median_us < cur:
                self.state["best"][key] = meas.median_us
                d = self.default_us.get((u.op, u.m))
                self.events.emit(
                    {
                        "type": "best",
                        "op": u.op,
                        "m": u.m,
                        "config": u.cfg.as_dict(),
                        "median_us": meas.median_us,
                        "default_us": d,
                        "speedup": (d / meas.median_us) if d else None,
                        "final": False,
                    }
                )
        now = time.time()
        if now - self.state["last_progress"] >= 0.25:
            self.state["last_progress"] = now
            self.progress()

    def run_phase(
        self,
        name: str,
        units: Sequence[Unit],
        also: Iterable[Tuple[str, Sequence[Unit]]] = (),
        lookahead: Optional[Callable[[List[Unit]], Sequence[Unit]]] = None,
        fillers: Sequence[Unit] = (),
    ) -> None:
        """Measure a phase's units not yet in the journal. also: (name, units) of phases measured in the same
        scheduler call (their phase events first): the scheduler then times whichever unit's kernels are
        compiled first. lookahead: the next phase's probable units (Scheduler.measure precompiles them).
        fillers: units timed only while the GPU would wait for compiles (the early head-to-head); those
        timed count into the progress as they come."""
        todo_all = []
        for nm, us in list(also) + [(name, units)]:
            todo = [u for u in us if u.ident() not in self.journal.idents]
            self.state["total"] += len(todo)
            self.events.emit(
                {
                    "type": "phase",
                    "index": self.state["phase"],
                    "name": nm,
                    "units": len(us),
                    "already_measured": len(us) - len(todo),
                }
            )
            self.state["phase"] += 1
            todo_all.extend(todo)
        self.sched.precompile(todo_all)
        spare = [u for u in fillers if u.ident() not in self.journal.idents]
        spare_ids = {u.ident() for u in spare}

        def record(meas: Measurement) -> None:
            if meas.unit.ident() in spare_ids:
                self.state["total"] += 1
            self.record(meas)

        self.sched.measure(todo_all, record, self.simulated, lookahead=lookahead, fillers=spare)
        self.progress()

    def run_checks(self, items: Sequence[Tuple[str, int, KernelConfig]]) -> Set[Tuple[str, str]]:
        """items: (op, m, cfg); checks not yet in the journal run; returns the (op, cfg key)s that failed."""
        journal = self.journal
        todo = [
            (op, m, cfg)
            for op, m, cfg in items
            if Unit("check:" + op, cfg, m, 0, CHECK_ROUND).ident() not in journal.idents
        ]
        res = self.sched.check([(op, cfg, m) for op, m, cfg in todo])
        for (op, m, cfg), (status, payload) in zip(todo, res):
            u = Unit("check:" + op, cfg, m, 0, CHECK_ROUND)
            if status == "ok":
                journal.append(Measurement(u, [float(payload[0])], simulated=self.simulated))
            else:
                kind, msg = payload if status == "cand" else ("crash", str(payload))
                self.record(Measurement(u, None, kind, msg, simulated=self.simulated))
        return set(
            (r["op"][len("check:") :], KernelConfig.from_dict(r["config"]).key())
            for r in journal.records
            if r["op"].startswith("check:") and r["type"] != "measurement"
        )

    def strategy_view(self) -> List[Measurement]:
        """The measurements the search strategy reads (never the defaults', checks' or head-to-head's)."""
        return [
            x for x in self.journal.measurements if 0 <= x.unit.round < H2H_ROUND and not x.unit.op.startswith("check:")
        ]

    def unbanned_view(self) -> List[Measurement]:
        """strategy_view without the configs that failed their correctness check."""
        return [x for x in self.strategy_view() if (x.unit.op, x.unit.cfg.key()) not in self.banned]

    def h2h_view(self) -> List[Measurement]:
        return [x for x in self.journal.measurements if x.unit.round >= H2H_ROUND]

    def warn(self, message: str) -> None:
        self.events.emit({"type": "log", "level": "warning", "message": message})

    def progress(self) -> None:
        el = time.time() - self.t0
        done, total = self.state["done"], max(self.state["total"], self.state["done"])
        eta = (el / done * (total - done)) if done else None
        self.events.emit(
            {
                "type": "progress",
                "done": done,
                "total": total,
                "phase": max(0, self.state["phase"] - 1),
                "elapsed_s": round(el, 3),
                "eta_s": round(eta, 3) if eta is not None else None,
            }
        )
