# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host's compile cache (issue 22), one folder per Triton version under the agent's home folder."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from .. import options
from ..backends import SYNTHETIC
from ..protocol import RunError
from .store import private_subdir

__all__ = [
    "COMPILE_CACHE",
    "COMPILE_CACHE_KEEP",
    "TRITON_DISTS",
    "installed_triton_version",
    "host_compile_cache",
    "check_cache_dir",
    "private_cache",
    "prune_compile_caches",
    "count_files",
]

# The host's compile cache (issue 22): Triton's kernel cache is content-addressed (its key covers the
# kernel's source, the specialisation, the target and Triton's own version), so one folder can serve every
# batch size, run and headroom check on a host; a run compiled each kernel again in a private folder
# before (~0.8 s a kernel on an H200 host's core). One folder per Triton version keeps a Triton upgrade
# from mixing with the old entries and lets the old version's folder be dropped whole.
COMPILE_CACHE = "triton_cache"  # the headroom check's folder name too (issue 19's helper): one cache
COMPILE_CACHE_KEEP = 3  # Triton versions kept side by side (the newest used)
TRITON_DISTS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-nightly")


def installed_triton_version() -> Optional[str]:
    """Triton's version from its installed metadata, without importing it (the run process never imports
    torch or Triton: a worker must set TRITON_CACHE_DIR before Triton loads)."""
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    for dist in TRITON_DISTS:
        try:
            return metadata.version(dist)
        except Exception:
            continue
    return None


def _cache_tag(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in ".-_+" else "_" for ch in text)[:80]


def host_compile_cache(
    desc: Dict[str, Any], home: Optional[str] = None, triton_version: Optional[str] = "detect"
) -> Optional[str]:
    """The persistent compile cache folder for a scheduler's backend description, created; None where
    there is none: MOETUNE_COMPILE_CACHE=0, no Triton installed (under any of TRITON_DISTS' names), or the
    synthetic backend (its simulated compiles are per run, unless MOETUNE_COMPILE_CACHE=1 asks for the host
    cache: tests, benchmarks). The synthetic backend's markers do not encode the shape, so its folder is
    per shape. The tune and the headroom check (check_cache_dir) both take their folder from here."""
    flag = options.host().compile_cache
    if flag == options.OFF:
        return None
    if desc.get("name") == SYNTHETIC:
        if flag != options.ON:
            return None
        import hashlib

        tag = "synthetic-" + hashlib.sha256(json.dumps(desc.get("shape"), sort_keys=True).encode()).hexdigest()[:12]
    else:
        v = installed_triton_version() if triton_version == "detect" else triton_version
        if not v:
            return None
        tag = "triton-" + _cache_tag(v)
    path = private_cache(tag, home)
    if path is None:
        return None
    try:
        os.utime(path)  # the newest used: what pruning keeps
    except OSError:
        return None
    prune_compile_caches(os.path.dirname(path))
    return path


def check_cache_dir(
    desc: Dict[str, Any], home: Optional[str] = None, triton_version: Optional[str] = "detect"
) -> Tuple[str, bool]:
    """The headroom check's compile folder -> (path, persistent?): the host's compile cache
    (host_compile_cache, the one a tune uses, so each reuses what the other compiled), else a private
    temporary folder the caller removes afterwards."""
    path = host_compile_cache(desc, home, triton_version)
    if path and os.access(path, os.W_OK):
        return path, True
    import tempfile

    return tempfile.mkdtemp(prefix="moetune-headroom-"), False


def private_cache(tag: str, home: Optional[str] = None) -> Optional[str]:
    """<home>/triton_cache/<tag>, each folder created 0700 and checked (runs.store.private_subdir): Triton
    loads the compiled kernels it finds there, so a folder another user could write into is refused (said
    on stderr) -> None."""
    try:
        return private_subdir(COMPILE_CACHE + "/" + tag, home, "the compile cache")
    except RunError as e:
        sys.stderr.write("moetune-agent: no host compile cache: %s\n" % e.message)
        return None


def prune_compile_caches(top: str, keep: int = COMPILE_CACHE_KEEP) -> List[str]:
    """Remove the Triton-version folders beyond the `keep` most recently used; -> the removed paths. Only
    real folders: a symlink planted under that name is neither followed nor removed."""
    import shutil

    try:
        names = [
            n
            for n in os.listdir(top)
            if n.startswith("triton-")
            and os.path.isdir(os.path.join(top, n))
            and not os.path.islink(os.path.join(top, n))
        ]
    except OSError:
        return []
    names.sort(key=lambda n: os.path.getmtime(os.path.join(top, n)), reverse=True)
    gone = []
    for n in names[keep:]:
        shutil.rmtree(os.path.join(top, n), ignore_errors=True)
        gone.append(os.path.join(top, n))
    return gone


def count_files(path: Optional[str]) -> int:
    n = 0
    if path:
        for _dp, _dn, fns in os.walk(path):
            n += len(fns)
    return n
