# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""How a running server was launched: its environment's config switches, container, supervisor and log file
(launch_facts), its owner, and whether a path it names is safe to trust (trusted_path_problem)."""

from __future__ import annotations

import os
import pwd
import re
import stat
from typing import Any, Dict, Optional

__all__ = [
    "cgroup_facts",
    "launch_facts",
    "parent_pid",
    "process_owner",
    "read_text",
    "trusted_path_problem",
    "user_name",
]


_SERVER_ENV = (
    "CUDA_VISIBLE_DEVICES",
    "SGLANG_MOE_CONFIG_DIR",
    "VLLM_TUNED_CONFIG_FOLDER",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "PATH",
    "TMUX",
    "STY",
)
_CONTAINER_RE = re.compile(r"(?:docker[-/]|cri-containerd-|libpod-|crio-)([0-9a-f]{64})")


def _readlink(path):
    try:
        return os.readlink(path)
    except OSError:
        return None


def read_text(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def parent_pid(pid):
    st = read_text("/proc/%d/stat" % pid)
    if not st or ")" not in st:
        return None
    fields = st.rsplit(")", 1)[1].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def _comm(pid):
    c = read_text("/proc/%d/comm" % pid)
    return c.strip() if c else None


def cgroup_facts(text: Optional[str]) -> Dict[str, Any]:
    """systemd unit (system or user) and container id from the text of /proc/PID/cgroup."""
    out: Dict[str, Any] = {"cgroup": None, "systemd_unit": None, "systemd_user": False, "container_id": None}
    if not text:
        return out
    paths = [line.split(":", 2)[2] for line in text.splitlines() if line.count(":") >= 2]
    path = next((p for p in paths if p and p != "/"), None)
    out["cgroup"] = path
    for p in paths:
        m = _CONTAINER_RE.search(p)
        if m:
            out["container_id"] = m.group(1)
            return out
    if path:
        parts = [x for x in path.split("/") if x]
        units = [x for x in parts if x.endswith(".service") and not x.startswith("user@")]
        if units:
            out["systemd_unit"] = units[-1]
            out["systemd_user"] = any(x.startswith("user@") for x in parts)
    return out


def _log_file(pid):
    # A regular file on stdout or stderr is the server's log (nohup ... > server.log 2>&1).
    for fd in (1, 2):
        target = _readlink("/proc/%d/fd/%d" % (pid, fd))
        if (
            target
            and target.startswith("/")
            and not target.startswith(("/dev/", "/proc/"))
            and os.path.isfile(target.replace(" (deleted)", ""))
        ):
            return target
    return None


def _supervisor(pid, env):
    # The tmux/screen session or nohup that keeps the process alive, walking up to 12 parents.
    if env.get("TMUX"):
        return "tmux"
    if env.get("STY"):
        return "screen"
    cur = pid
    for _ in range(12):
        cur = parent_pid(cur)
        if not cur or cur <= 1:
            break
        comm = (_comm(cur) or "").lower()
        if comm.startswith("tmux"):
            return "tmux"
        if comm.startswith("screen"):
            return "screen"
    status = read_text("/proc/%d/status" % pid) or ""
    m = re.search(r"^SigIgn:\s*([0-9a-fA-F]+)", status, re.M)
    if m and int(m.group(1), 16) & 1:  # SIGHUP (bit 0) ignored: nohup
        return "nohup"
    return None


def launch_facts(pid: int) -> Dict[str, Any]:
    env = {}
    raw = read_text("/proc/%d/environ" % pid)
    if raw:
        for item in raw.split("\0"):
            k, sep, v = item.partition("=")
            if sep and k in _SERVER_ENV:
                env[k] = v
    d = {
        "ppid": parent_pid(pid),
        "exe": _readlink("/proc/%d/exe" % pid),
        "cwd": _readlink("/proc/%d/cwd" % pid),
        "log_file": _log_file(pid),
        "supervisor": _supervisor(pid, env),
        "env": env if raw is not None else None,
    }
    d.update(cgroup_facts(read_text("/proc/%d/cgroup" % pid)))
    return d


def user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return "uid %d" % uid


def process_owner(pid: int) -> Optional[int]:
    """The real user of a process (its /proc folder's owner), None when it is gone."""
    try:
        return os.stat("/proc/%d" % pid).st_uid
    except OSError:
        return None


def trusted_path_problem(path: Optional[str], uid: Optional[int] = None) -> Optional[str]:
    """None when `path` is an executable file that no one but `uid` (default: the user the agent runs as)
    and root can replace: the file and every folder on the way to it, every link followed and the folder
    each link lies in, are owned by that user or root and not writable by group or others. A folder others
    may write is accepted only with the sticky bit (/tmp), where an entry can be replaced only by its owner,
    which is checked next. Else a sentence saying which part fails: an interpreter is never run from there,
    because whoever can write it would run their code with this user's rights."""
    me = os.geteuid() if uid is None else uid
    if not path or not os.path.isabs(path):
        return "%r is not an absolute path" % path
    trusted = {me, 0}

    def bad(p, st, what):
        if st.st_uid not in trusted:
            return "%s %s belongs to %s, not to %s or root" % (what, p, user_name(st.st_uid), user_name(me))
        writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if writable and not (stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX):
            return "%s %s can be written by %s (mode %04o)" % (
                what,
                p,
                "others" if st.st_mode & stat.S_IWOTH else "its group",
                stat.S_IMODE(st.st_mode),
            )
        return None

    pending = [c for c in path.split("/") if c]
    cur = "/"
    hops = 0
    try:
        why = bad("/", os.lstat("/"), "the folder")
        if why:
            return why
        while pending:
            name = pending.pop(0)
            if name == ".":
                continue
            if name == "..":
                cur = os.path.dirname(cur)
                continue
            nxt = os.path.join(cur, name)
            st = os.lstat(nxt)
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > 40:
                    return "%s has too many levels of links" % path
                if st.st_uid not in trusted:  # a link's own mode means nothing; its owner may replace it
                    return "the link %s belongs to %s, not to %s or root" % (nxt, user_name(st.st_uid), user_name(me))
                target = os.readlink(nxt)
                if target.startswith("/"):
                    cur = "/"
                pending = [c for c in target.split("/") if c] + pending
                continue
            why = bad(nxt, st, "the folder" if pending else "the file")
            if why:
                return why
            if pending and not stat.S_ISDIR(st.st_mode):
                return "%s is not a folder" % nxt
            cur = nxt
        st = os.stat(cur)
        if not stat.S_ISREG(st.st_mode) or not os.access(cur, os.X_OK):
            return "%s is not an executable file" % cur
    except OSError as e:
        return "cannot check %s: %s" % (path, e.strerror or e)
    return None
