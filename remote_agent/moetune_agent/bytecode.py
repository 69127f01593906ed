# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A bytecode cache for hosts whose Python packages have none (issue 22).

Python imports a module from its compiled bytecode (``__pycache__/*.pyc``) when that is present and
matches the source; otherwise it compiles the source, and writes the result only where it may. Images
built with ``PYTHONDONTWRITEBYTECODE=1`` or ``pip install --no-compile``, read-only package folders and
copied trees whose files changed their timestamps leave every process to compile the same sources again.
On the H200 host the agent is measured on, each GPU worker and each precompile process compiled ~2300
modules (torch's compiler stack, sympy, networkx and the server's fused-MoE code, which imports them) in
~11 s of its ~40 s start-up (tools/server_anatomy.py, cProfile of the processes).

Where the installed packages' bytecode is missing or stale, the agent's workers read and write bytecode
under the agent's home instead (``sys.pycache_prefix``, Python >= 3.8): the first run on a host fills
it, every later process on that host imports from it. Packages with valid bytecode of their own are
left alone (the prefix is only set when a probe module lacks it). Nothing is written into the host's
package folders. MOETUNE_PYCACHE=0 turns it off, =1 forces it; a PYTHONPYCACHEPREFIX the user set wins.
Standard library only.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Dict, Optional, Sequence

PYCACHE = "pycache"  # the folder under the agent's home
# Top-level modules whose bytecode says whether the host's packages have any: torch and Triton (every
# GPU process), and what the servers' fused-MoE code imports on top (torch's compiler stack pulls sympy).
PROBE_MODULES = ("torch", "triton", "sympy", "torch._dynamo")


def valid_bytecode(source: str) -> bool:
    """Whether the bytecode Python would use for this source file (in its __pycache__, for this
    interpreter) exists and matches the source, as the import system checks it (magic number, then the
    source's mtime and size, or a hash-based pyc, which it trusts here)."""
    try:
        saved = getattr(sys, "pycache_prefix", None)
        sys.pycache_prefix = None  # type: ignore[attr-defined]  # the package's own __pycache__
        try:
            pyc = importlib.util.cache_from_source(source)
        finally:
            sys.pycache_prefix = saved  # type: ignore[attr-defined]
        with open(pyc, "rb") as f:
            head = f.read(16)
        st = os.stat(source)
    except (OSError, ValueError, NotImplementedError):
        return False
    if len(head) < 16 or head[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(head[4:8], "little")
    if flags & 1:  # hash-based pyc (PEP 552)
        return True
    return (int.from_bytes(head[8:12], "little") == (int(st.st_mtime) & 0xFFFFFFFF)
            and int.from_bytes(head[12:16], "little") == (st.st_size & 0xFFFFFFFF))


def _origin(name: str) -> Optional[str]:
    """The source file of a module without importing it (a submodule's parent is imported by find_spec,
    so only top-level names and submodules of packages already imported are looked up)."""
    parent = name.rpartition(".")[0]
    if parent and parent not in sys.modules:
        top = _origin(parent)
        if top is None or not top.endswith("__init__.py"):
            return None
        path = os.path.join(os.path.dirname(top), *name.split(".")[len(parent.split(".")):])
        for cand in (os.path.join(path, "__init__.py"), path + ".py"):
            if os.path.isfile(cand):
                return cand
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    origin = getattr(spec, "origin", None) if spec is not None else None
    return origin if origin and origin.endswith(".py") and os.path.isfile(origin) else None


def missing(modules: Sequence[str] = PROBE_MODULES) -> Dict[str, bool]:
    """{module: True where its installed bytecode is missing or stale} for the probe modules installed."""
    out = {}
    for name in modules:
        src = _origin(name)
        if src is not None:
            out[name] = not valid_bytecode(src)
    return out


def host_prefix(home: Optional[str], modules: Sequence[str] = PROBE_MODULES) -> Optional[str]:
    """The agent's bytecode folder for this host when the workers should use it (created), else None:
    MOETUNE_PYCACHE=0, a PYTHONPYCACHEPREFIX of the user's, or every probe module's bytecode valid."""
    flag = os.environ.get("MOETUNE_PYCACHE", "")
    if flag == "0" or os.environ.get("PYTHONPYCACHEPREFIX"):
        return None
    if flag != "1" and not any(missing(modules).values()):
        return None
    from .runs.store import home_dir

    path = os.path.join(home_dir(home), PYCACHE)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    if os.path.islink(path) or not os.access(path, os.W_OK):
        return None
    return path


def enable(prefix: Optional[str]) -> None:
    """In a worker process, before its heavy imports: bytecode read from and written to prefix (and
    written even where the environment says not to write any: it goes to the agent's own folder)."""
    if not prefix:
        return
    sys.pycache_prefix = prefix  # type: ignore[attr-defined]
    sys.dont_write_bytecode = False


def count_files(prefix: Optional[str]) -> Optional[int]:
    if not prefix:
        return None
    n = 0
    for _dir, _subdirs, files in os.walk(prefix):
        n += sum(1 for f in files if f.endswith(".pyc"))
    return n


def stats(prefix: Optional[str], files_before: Optional[int]) -> Optional[Dict[str, object]]:
    """For a run's timings: the bytecode folder the workers used, its .pyc files before and after."""
    if not prefix:
        return None
    return {"dir": prefix, "files_at_start": files_before, "files_at_end": count_files(prefix)}
