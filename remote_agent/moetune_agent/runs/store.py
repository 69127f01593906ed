# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run store (PROTOCOL.md section 4): run folders under the home folder, their ids, state, pid
liveness and listing."""

from __future__ import annotations

import datetime
import os
from typing import Iterator, List, Optional

from ..protocol import RunError
from ..safefile import read_text, write_atomic

STATES = ("starting", "running", "finished", "failed", "cancelled")
TERMINAL = ("finished", "failed", "cancelled")


def home_dir(override: Optional[str] = None) -> str:
    if override:
        return os.path.abspath(override)
    env = os.environ.get("MOETUNE_HOME")
    if env:
        return os.path.abspath(env)
    return os.path.join(os.path.expanduser("~"), ".cache", "moetune")


def runs_dir(home=None):
    return os.path.join(home_dir(home), "runs")


def new_run_id(spec_hash: str, home: Optional[str] = None) -> str:
    base = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S") + "-" + spec_hash[:6]
    rid, n = base, 1
    while os.path.exists(os.path.join(runs_dir(home), rid)):
        n += 1
        rid = "%s-%d" % (base, n)
    return rid


def resolve(run: str, home: Optional[str] = None) -> str:
    """A run id or a run folder path -> the run folder (absolute). Raises RunError(run_not_found)."""
    if run and ("/" in run or run in (".", "..")):
        path = os.path.abspath(run)
    else:
        if not run or run.startswith("."):
            raise RunError("run_not_found", "no run called %r" % (run,))
        path = os.path.join(runs_dir(home), run)
    if not os.path.isfile(os.path.join(path, "spec.json")):
        raise RunError("run_not_found", "no run at %s (no spec.json); `runs` lists the runs" % path)
    return path


def set_state(run_dir, state):
    write_atomic(os.path.join(run_dir, "state"), (state + "\n").encode())


def get_state(run_dir):
    return (read_text(os.path.join(run_dir, "state"), "") or "").strip() or "starting"


def get_pid(run_dir: str) -> Optional[int]:
    t = (read_text(os.path.join(run_dir, "pid"), "") or "").strip()
    return int(t) if t.isdigit() else None


def pid_alive(pid: Optional[int], run_dir: Optional[str] = None) -> bool:
    """True when pid runs and (if run_dir is given and /proc is readable) is that run's process,
    so a recycled pid after a reboot is not mistaken for the run."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            if f.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                return False  # a zombie has finished its work
    except OSError:
        pass
    if run_dir is not None:
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read()
            return os.path.basename(run_dir.rstrip("/")).encode() in cmd
        except OSError:
            return True
    return True


def run_alive(run_dir):
    return pid_alive(get_pid(run_dir), run_dir)


def effective_state(run_dir):
    """The state word, or "dead" for a starting/running run whose process is gone."""
    st = get_state(run_dir)
    if st not in TERMINAL and not run_alive(run_dir):
        return "dead"
    return st


def run_folder_of(path: str) -> Optional[str]:
    """The run folder that holds path (itself, or up to two levels up: run/<dialect>/<file>), or None."""
    d = os.path.abspath(path)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
    for _ in range(3):
        if os.path.isfile(os.path.join(d, "spec.json")) and (
                os.path.exists(os.path.join(d, "events.jsonl")) or os.path.exists(os.path.join(d, "state"))):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


def list_runs(home: Optional[str] = None) -> Iterator[str]:
    d = runs_dir(home)
    try:
        names = sorted(os.listdir(d), reverse=True)
    except FileNotFoundError:
        return iter(())
    return iter(os.path.join(d, n) for n in names if os.path.isfile(os.path.join(d, n, "spec.json")))


def list_run_folders(home: Optional[str] = None) -> List[str]:
    """Every folder in the run store, newest first, damaged ones (no spec.json) included."""
    d = runs_dir(home)
    try:
        names = sorted(os.listdir(d), reverse=True)
    except FileNotFoundError:
        return []
    return [os.path.join(d, n) for n in names if not n.startswith(".") and os.path.isdir(os.path.join(d, n))]

