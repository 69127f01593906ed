# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Opt-in profiles of the agent's processes, for finding where a run's seconds go on a real host.

MOETUNE_PROFILE_DIR=<folder>: the run process and each GPU worker run under cProfile and write
<folder>/<name>-<pid>.prof when they end (pstats format: `python3 -m pstats FILE`), beside
<folder>/<name>-<pid>.marks.json, the wall-clock milestones the process passed (mark()). Unset (the
default), every function here is a no-op that costs one environment lookup.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, List, Optional, Tuple

from . import options

__all__ = ["enabled", "start", "mark", "stop"]

_state: dict = {"prof": None, "name": None, "marks": []}


def enabled() -> bool:
    return bool(options.host().profile_dir)


def start(name: str) -> None:
    """Profile this process from now on as `name` (once per process)."""
    if not enabled() or _state["prof"] is not None:
        return
    import cProfile

    prof = cProfile.Profile()
    _state.update(prof=prof, name=name, marks=[("start", time.time())])
    prof.enable()


def mark(what: str) -> None:
    if _state["prof"] is not None:
        marks: List[Tuple[str, float]] = _state["marks"]
        marks.append((what, time.time()))


def stop() -> Optional[str]:
    """Write the profile and the milestones; -> the .prof path (None when not profiling)."""
    prof: Any = _state["prof"]
    if prof is None:
        return None
    prof.disable()
    _state["prof"] = None
    folder = options.host().profile_dir or "."
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, "%s-%d" % (_state["name"], os.getpid()))
    # written aside and renamed: a process killed while it writes leaves no truncated profile
    prof.dump_stats(base + ".prof.tmp")
    os.replace(base + ".prof.tmp", base + ".prof")
    marks = _state["marks"] + [("stop", time.time())]
    with open(base + ".marks.json", "w", encoding="utf-8") as f:
        json.dump([{"what": w, "ts": t} for w, t in marks], f)
    return base + ".prof"
