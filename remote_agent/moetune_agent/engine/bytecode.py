# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A bytecode cache for hosts whose Python packages have none (issue 22).

Python imports a module from its compiled bytecode (``__pycache__/*.pyc``) when that is present and
matches the source; otherwise it compiles the source, and writes the result only where it may. Images
built with ``PYTHONDONTWRITEBYTECODE=1`` or ``pip install --no-compile``, read-only package folders and
copied trees whose files changed their timestamps leave every process to compile the same sources again:
torch's compiler stack, sympy, networkx and the server's fused-MoE code, in every GPU worker and precompile
process (what that cost: bench/RESULTS.md, "Moved from the agent's docstrings").

Where the installed packages' bytecode is missing or stale, the agent's workers read and write bytecode
under the agent's home instead (``sys.pycache_prefix``, Python >= 3.8): the first run on a host fills
it, every later process on that host imports from it. Packages with valid bytecode of their own are
left alone (the prefix is only set when a probe module lacks it). Nothing is written into the host's
package folders. MOETUNE_PYCACHE=0 turns it off, =1 forces it; a PYTHONPYCACHEPREFIX the user set wins.

The first run on such a host fills the folder in parallel before its processes import (warm()): the GPU
worker and the 14 precompile processes each compiled the same ~2300 sources, one core each, at once; one
process per core compiles the installed packages' sources once instead (a marker per package set says
when nothing changed since). Standard library only.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

from .. import options
from ..protocol import RunError
from ..runs.store import check_private_dir, private_subdir

PYCACHE = "pycache"  # the folder under the agent's home
# Top-level modules whose bytecode says whether the host's packages have any: torch and Triton (every
# GPU process), and what the servers' fused-MoE code imports on top (torch's compiler stack pulls sympy).
PROBE_MODULES = ("torch", "triton", "sympy", "torch._dynamo")


def valid_bytecode(source: str) -> bool:
    """Whether the bytecode Python would use for this source file (in its __pycache__, for this
    interpreter) exists and matches the source (pyc_matches)."""
    try:
        saved = getattr(sys, "pycache_prefix", None)
        sys.pycache_prefix = None  # type: ignore[attr-defined]  # the package's own __pycache__
        try:
            pyc = importlib.util.cache_from_source(source)
        finally:
            sys.pycache_prefix = saved  # type: ignore[attr-defined]
    except (ValueError, NotImplementedError):
        return False
    return pyc_matches(pyc, source)


def pyc_matches(pyc: str, source: str) -> bool:
    """Whether the bytecode file pyc is valid for source as the import system checks it (magic number,
    then the source's mtime and size, or a hash-based pyc, which it trusts here)."""
    try:
        with open(pyc, "rb") as f:
            head = f.read(16)
        st = os.stat(source)
    except OSError:
        return False
    if len(head) < 16 or head[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(head[4:8], "little")
    if flags & 1:  # hash-based pyc (PEP 552)
        return True
    return int.from_bytes(head[8:12], "little") == (int(st.st_mtime) & 0xFFFFFFFF) and int.from_bytes(
        head[12:16], "little"
    ) == (st.st_size & 0xFFFFFFFF)


def _origin(name: str) -> Optional[str]:
    """The source file of a module without importing it (a submodule's parent is imported by find_spec,
    so only top-level names and submodules of packages already imported are looked up)."""
    parent = name.rpartition(".")[0]
    if parent and parent not in sys.modules:
        top = _origin(parent)
        if top is None or not top.endswith("__init__.py"):
            return None
        path = os.path.join(os.path.dirname(top), *name.split(".")[len(parent.split(".")) :])
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
    """The agent's bytecode folder for this host when the workers should use it (created 0700), else None:
    MOETUNE_PYCACHE=0, a PYTHONPYCACHEPREFIX of the user's, every probe module's bytecode valid, or a
    home or folder another user could write into (runs.store.private_subdir: said on stderr)."""
    flag = options.host().bytecode_cache
    if flag == options.OFF or options.host_env("PYTHONPYCACHEPREFIX"):
        return None
    if flag != options.ON and not any(missing(modules).values()):
        return None
    try:
        path = private_subdir(PYCACHE, home, "the bytecode cache")
    except RunError as e:
        # Nothing is imported from a folder another user could write: the workers compile as they would
        # without the cache, and the sentence says why.
        sys.stderr.write("moetune-agent: no bytecode cache: %s\n" % e.message)
        return None
    if not os.access(path, os.W_OK):
        return None
    return path


def enable(prefix: Optional[str]) -> None:
    """In a worker process, before its heavy imports: bytecode read from and written to prefix (and
    written even where the environment says not to write any: it goes to the agent's own folder)."""
    if not prefix:
        return
    try:
        check_private_dir(prefix, "the bytecode cache")  # made private by host_prefix; still so?
    except RunError as e:
        sys.stderr.write("moetune-agent: no bytecode cache: %s\n" % e.message)
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


def stats(
    prefix: Optional[str], files_before: Optional[int], warmed: Optional[Dict[str, Any]] = None
) -> Optional[Dict[str, object]]:
    """For a run's timings: the bytecode folder the workers used, its .pyc files before and after, and
    what warm() did."""
    if not prefix:
        return None
    return {"dir": prefix, "files_at_start": files_before, "files_at_end": count_files(prefix), "warm": warmed}


# The packages a GPU worker imports (torch pulls sympy and mpmath in; the servers' fused-MoE code pulls
# torch's compiler stack, networkx and jinja2), compiled by warm() where their own bytecode is missing;
# the spec's server package is added to these.
WARM_PACKAGES = (
    "torch",
    "triton",
    "sympy",
    "mpmath",
    "networkx",
    "numpy",
    "jinja2",
    "markupsafe",
    "filelock",
    "fsspec",
    "typing_extensions",
    "packaging",
    "yaml",
    "einops",
    "safetensors",
    "psutil",
    "requests",
)
# Folders no worker imports from: the packages' own test suites, and torch's test-only helpers.
_SKIP_DIRS = {"tests", "test", "__pycache__", "benchmarks", "examples"}
_SKIP_PATHS = (os.path.join("torch", "testing", "_internal"), os.path.join("torch", "include"))
_MARKER = ".warm-%s.json"
WARM_CAP_S = 30.0  # the longest a bytecode warm-up runs (its children are killed then; what they wrote stays)
# The child's whole program: compile each source named in its list file whose bytecode under the prefix is not
# valid (as the import system checks it), then print "compiled valid failed".
_WARM_CHILD = r"""
import importlib.util, py_compile, sys
sys.dont_write_bytecode = True  # nothing of the agent's own is written while it is imported
sys.path.insert(0, sys.argv[3])  # the agent (a folder or its pyz): bytecode.pyc_matches
from moetune_agent.engine.bytecode import pyc_matches

__all__ = ["PYCACHE", "WARM_PACKAGES", "count_files", "enable", "host_prefix", "missing", "stats", "valid_bytecode", "warm"]
sys.pycache_prefix = sys.argv[1]
n = v = f = 0
for line in open(sys.argv[2], encoding="utf-8"):
    src = line.rstrip("\n")
    if not src:
        continue
    try:
        pyc = importlib.util.cache_from_source(src)
        if pyc_matches(pyc, src):
            v += 1
            continue
        py_compile.compile(src, cfile=pyc, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
        n += 1
    except Exception:
        f += 1
print(n, v, f)
"""
_AGENT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # above moetune_agent/


def _package_roots(packages: Sequence[str]) -> List[str]:
    """The folders of the installed top-level packages among these whose own bytecode is missing or stale
    (found without importing them), in the given order."""
    roots = []
    for name in packages:
        src = _origin(name)
        if src is None or not src.endswith("__init__.py") or valid_bytecode(src):
            continue
        root = os.path.dirname(src)
        if root not in roots:
            roots.append(root)
    return roots


def _sources(root: str) -> List[str]:
    base = os.path.dirname(root)
    out: List[Any] = []
    for d, subdirs, files in os.walk(root):
        subdirs[:] = sorted(
            x
            for x in subdirs
            if x not in _SKIP_DIRS and not os.path.relpath(os.path.join(d, x), base).startswith(_SKIP_PATHS)
        )
        out.extend(os.path.join(d, f) for f in sorted(files) if f.endswith(".py"))
    return out


def _marker_state(roots: Sequence[str]) -> Dict[str, Any]:
    """What says the packages are the ones warmed before: each root's and its __init__.py's mtime."""
    state: Dict[str, Any] = {"python": sys.version, "roots": {}}
    for r in roots:
        try:
            state["roots"][r] = [os.stat(r).st_mtime_ns, os.stat(os.path.join(r, "__init__.py")).st_mtime_ns]
        except OSError:
            state["roots"][r] = None
    return state


def warm(
    prefix: Optional[str],
    packages: Sequence[str] = WARM_PACKAGES,
    workers: Optional[int] = None,
    cap_s: Optional[float] = None,
) -> Optional[Dict[str, Any]]:
    """Compile the sources of the packages (those whose own bytecode is missing) into prefix, in parallel,
    where the prefix does not hold them yet: one child process per core (workers), each a share of the
    files, at most cap_s seconds (then the children are killed; what they wrote stays). -> what it did,
    for the run's timings (None where there is no prefix)."""
    if not prefix:
        return None
    t0 = time.time()
    roots = _package_roots(packages)
    out: Dict[str, Any] = {"packages": [os.path.basename(r) for r in roots], "skipped": False}
    marker = os.path.join(prefix, _MARKER % sys.implementation.cache_tag)
    state = _marker_state(roots)
    try:
        with open(marker, encoding="utf-8") as f:
            if json.load(f) == state:
                out.update(skipped=True, s=round(time.time() - t0, 3))
                return out
    except (OSError, ValueError):
        pass
    files = [f for r in roots for f in _sources(r)]
    if workers is None:
        try:
            ncpu = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            ncpu = os.cpu_count() or 1
        workers = max(1, ncpu - 1)  # a core stays with the GPU worker, which starts meanwhile
    workers = max(1, min(workers, -(-len(files) // 40))) if files else 0
    if cap_s is None:
        cap_s = WARM_CAP_S
    import tempfile

    procs = []
    with tempfile.TemporaryDirectory(prefix="moetune-warm-") as lists:
        for i in range(workers):
            path = os.path.join(lists, "%d.txt" % i)
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(files[i::workers]) + "\n")
            try:
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-E", "-S", "-c", _WARM_CHILD, prefix, path, _AGENT_ROOT],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                    )
                )
            except OSError:
                break
        counts = [0, 0, 0]
        capped = False
        deadline = t0 + cap_s
        for p in procs:
            try:
                got, _ = p.communicate(timeout=max(0.1, deadline - time.time()))
                vals = got.split()
                if p.returncode == 0 and len(vals) == 3 and all(x.isdigit() for x in vals):
                    counts = [a + int(b) for a, b in zip(counts, vals)]
                else:
                    counts[2] += 1  # a child that failed as a whole
            except subprocess.TimeoutExpired:
                capped = True
                p.kill()
                p.communicate()
    out.update(
        files=len(files),
        compiled=counts[0],
        valid=counts[1],
        failed=counts[2],
        workers=len(procs),
        capped=capped,
        s=round(time.time() - t0, 3),
    )
    if not capped and len(procs) == workers:
        try:
            tmp = marker + ".tmp%d" % os.getpid()
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(state, f)
            os.replace(tmp, marker)
        except OSError:
            pass
    return out
