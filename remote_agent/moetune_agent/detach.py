# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Starting an agent process that outlives the command that started it (a run, a prewarm)."""

from __future__ import annotations

import os
import signal

from . import safefile

__all__ = ["agent_path", "spawn_detached"]


def agent_path():
    """sys.path entry holding the moetune_agent package (the .pyz itself when run from the zipapp)."""
    import moetune_agent

    return os.path.dirname(os.path.dirname(os.path.abspath(moetune_agent.__file__)))


def spawn_detached(python, run_dir, command="_run"):
    """Double fork + setsid: the run survives the SSH session (no controlling tty, own process group,
    reparented to init), with stdout/stderr in the run folder. command: the internal command the
    process runs on run_dir (_run, or prewarm.CMD) -> its pid (None where it could not be read)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # first child
        try:
            os.close(r)
            os.setsid()
            pid2 = os.fork()
            if pid2 != 0:
                os.write(w, str(pid2).encode())
                os._exit(0)
            os.close(w)
            os.setpgid(0, 0)  # lead our own process group: cancel signals the run and its workers at once
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
            o = os.open(os.path.join(run_dir, "stdout.log"), flags, 0o644)
            e = os.open(os.path.join(run_dir, "stderr.log"), flags, 0o644)
            os.dup2(o, 1)
            os.dup2(e, 2)
            for fd in (devnull, o, e):
                if fd > 2:
                    os.close(fd)
            os.chdir(run_dir)
            code = (
                "import sys; sys.path.insert(0, sys.argv[1]); from moetune_agent.cli import main; "
                "sys.exit(main([sys.argv[3], sys.argv[2]]))"
            )
            os.execv(python, [python, "-c", code, agent_path(), run_dir, command])
        except BaseException:
            os._exit(127)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 64)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    if data.strip().isdigit():
        # Recorded before the child writes it itself, so cancel works from the first instant.
        safefile.write_atomic(os.path.join(run_dir, "pid"), data.strip() + b"\n")
        return int(data.strip())
    return None
