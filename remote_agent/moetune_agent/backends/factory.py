# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds a Backend from a picklable description, in whatever process needs one (GPU workers,
precompile workers), through the registry (backends/__init__.py: name -> module, class, options); and
picks the backend `auto` means here."""

from __future__ import annotations

import importlib.util
from typing import Any, Dict, List, Optional

from ..kernel_types import Shape
from . import AUTO_ORDER, BACKENDS, SERVER, SYNTHETIC, TRITON, backend_class, packaged
from .base import Backend

__all__ = ["BackendUnavailable", "auto_candidates", "make_backend", "resolve_auto"]


class BackendUnavailable(Exception):
    pass


def _backend_class(name):
    if name not in BACKENDS:
        raise BackendUnavailable("unknown backend %r" % name)
    try:
        return backend_class(name)
    except ImportError as e:
        raise BackendUnavailable("backend %r is not available: %s" % (name, e))
    except AttributeError:
        raise BackendUnavailable("module %s defines no Backend" % BACKENDS[name].module)


def make_backend(desc: Dict[str, Any], device_index: int, cache_dir: Optional[str]) -> Backend:
    """desc: {"name", "shape": {...}, "framework", "device_name", "routing_file"}."""
    cls = _backend_class(desc["name"])
    sd = desc["shape"]
    shape = Shape(
        sd["E"],
        sd["N"],
        sd["K"],
        sd["topk"],
        sd.get("dtype") or "bf16",
        tuple(sd["block_shape"]) if sd.get("block_shape") else None,
        bool(sd.get("per_channel_quant")),
    )
    kwargs: Dict[str, Any] = {}
    for k in BACKENDS[desc["name"]].options:
        if desc.get(k) is not None:
            kwargs[k] = desc[k]
    return cls(shape, device_index, cache_dir, **kwargs)


def _importable(mod):
    try:
        return importlib.util.find_spec(mod) is not None
    except (ImportError, ValueError):
        return False


def auto_candidates(framework: str) -> List[str]:
    """The backends auto may use, in order (AUTO_ORDER): "server" when the spec's framework (not any other
    server) and the server backend are importable here, then "triton" when torch, triton and the Triton
    backend are. The run starts the first and proves it can run (one real call) before using it; one that
    cannot is skipped with a warning. Never synthetic."""
    usable = {SERVER: lambda: _importable(framework), TRITON: lambda: _importable("torch") and _importable("triton")}
    return [name for name in AUTO_ORDER if packaged(name) and usable[name]()]


def resolve_auto(framework: str) -> str:
    """The first of auto_candidates, or BackendUnavailable (never synthetic)."""
    cands = auto_candidates(framework)
    if cands:
        return cands[0]
    raise BackendUnavailable(
        "no GPU backend here: %s is not importable and torch+triton are %s; run with the server's "
        'Python (--python / spec \'python\') or set "backend": "%s" for a simulated run'
        % (framework, "missing" if not _importable("torch") else "present but the Triton backend is missing", SYNTHETIC)
    )
