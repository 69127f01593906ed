# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run store (PROTOCOL.md section 4): run folders under the home folder, their ids, state, pid
liveness and listing."""

from __future__ import annotations

import datetime
import os
import stat
from typing import Iterator, List, Optional

from .. import options
from ..protocol import RunError
from ..safefile import read_text, write_atomic

__all__ = [
    "TERMINAL",
    "check_private_dir",
    "effective_state",
    "get_pid",
    "get_state",
    "home_dir",
    "list_run_folders",
    "list_runs",
    "new_run_id",
    "pid_alive",
    "private_dir",
    "private_runs_dir",
    "private_subdir",
    "resolve",
    "run_alive",
    "run_folder_of",
    "runs_dir",
    "set_state",
]

STATES = ("starting", "running", "finished", "failed", "cancelled")
TERMINAL = ("finished", "failed", "cancelled")


def home_dir(override: Optional[str] = None) -> str:
    if override:
        return os.path.abspath(override)
    env = options.host().home
    if env:
        return os.path.abspath(env)
    return os.path.join(os.path.expanduser("~"), ".cache", "moetune")


def runs_dir(home=None):
    return os.path.join(home_dir(home), "runs")


# The agent's home holds code it loads (bytecode, Triton's compiled kernels, the prewarm's job) and the
# runs it reports: a folder someone else can write into is a way to run their code as this user (a .pyc
# planted in a group-writable pycache ran inside the GPU worker). So every folder of the home is created
# 0700 and checked before it is used: a real folder (not a symbolic link), owned by this user, writable
# by nobody else; its parents owned by this user or root and writable by nobody else unless sticky
# (/tmp). A folder that fails is refused with RunError("unsafe_folder"), never used, never repaired.
UNSAFE = "unsafe_folder"


def _whose(uid: int) -> str:
    try:
        import pwd

        return "%s (uid %d)" % (pwd.getpwuid(uid).pw_name, uid)
    except (ImportError, KeyError):
        return "uid %d" % uid


def unsafe_reason(path: str, st: os.stat_result) -> Optional[str]:
    """Why a folder of the home (lstat result st) must not be used, or None."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != os.geteuid():
        return "is owned by %s, not by the user the agent runs as (%s)" % (_whose(st.st_uid), _whose(os.geteuid()))
    if st.st_mode & 0o022:
        return "is writable by %s (mode %04o)" % (
            "its group" if st.st_mode & 0o020 and not st.st_mode & 0o002 else "other users",
            stat.S_IMODE(st.st_mode),
        )
    return None


def _refuse(path: str, why: str, what: str):
    return RunError(
        UNSAFE,
        "%s %s %s: refusing to use it, since another user could put code there that the "
        "agent would run. Remove it (the agent creates it again, private to you) or make "
        "it yours alone (chown, chmod 700)." % (what, path, why),
    )


def check_private_dir(path: str, what: str = "the agent's folder") -> str:
    """path when it is a folder fit to load code from (unsafe_reason), else RunError(unsafe_folder)."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise RunError("io", "cannot read %s %s: %s" % (what, path, e.strerror or e))
    why = unsafe_reason(path, st)
    if why:
        raise _refuse(path, why, what)
    return path


def private_dir(path: str, what: str = "the agent's folder") -> str:
    """path, created 0700 when missing (parents too, each 0700), then checked (check_private_dir)."""
    missing = []
    p = os.path.abspath(path)
    while not os.path.lexists(p):
        missing.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass  # made meanwhile by another process: checked below like any folder found
        except OSError as e:
            raise RunError(
                "permission_denied" if isinstance(e, PermissionError) else "io",
                "cannot create %s %s: %s" % (what, d, e.strerror or e),
            )
    return check_private_dir(path, what)


def _check_parents(path: str) -> None:
    """The home's parents: owned by this user or root, writable by nobody else unless sticky (/tmp)."""
    d = os.path.dirname(os.path.realpath(path))
    while True:
        try:
            st = os.stat(d)
        except OSError:
            st = None
        if st is not None:
            if st.st_uid not in (0, os.geteuid()):
                raise _refuse(d, "is owned by %s" % _whose(st.st_uid), "the folder above the agent's home")
            if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
                raise _refuse(
                    d,
                    "is writable by other users (mode %04o) and not sticky" % stat.S_IMODE(st.st_mode),
                    "the folder above the agent's home",
                )
        parent = os.path.dirname(d)
        if parent == d:
            return
        d = parent


def private_home(home: Optional[str] = None) -> str:
    """The agent's home (home_dir), created 0700 where missing and checked with its parents: RunError
    (unsafe_folder) where another user could write into it."""
    path = home_dir(home)
    _check_parents(path)
    return private_dir(path, "the agent's home")


def private_subdir(name: str, home: Optional[str] = None, what: str = "the agent's folder") -> str:
    """<home>/<name> (name may hold '/'), each folder created 0700 and checked, the home first."""
    path = private_home(home)
    for part in name.split("/"):
        path = private_dir(os.path.join(path, part), what)
    return path


def private_runs_dir(home: Optional[str] = None) -> str:
    return private_subdir("runs", home, "the run store")


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
            os.path.exists(os.path.join(d, "events.jsonl")) or os.path.exists(os.path.join(d, "state"))
        ):
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
