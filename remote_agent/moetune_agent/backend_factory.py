# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds a Backend from a picklable description, in whatever process needs one (GPU workers,
precompile workers). The server and Triton backends live in modules of the kernels engineer; this file
only finds the Backend subclass each defines, so it stays independent of their internals."""

from __future__ import annotations

import importlib
import inspect
import os
from typing import Any, Dict, List, Optional

from .backends.base import Backend, Shape

_MODULES = {"triton": "moetune_agent.backends.triton_backend", "server": "moetune_agent.backends.server_backend"}


class BackendUnavailable(Exception):
    pass


def available_backend_modules() -> List[str]:
    """Backends whose module is packaged (importing them must not import torch)."""
    return [name for name, mod in sorted(_MODULES.items()) if _importable(mod)]


def _backend_class(name):
    if name == "synthetic":
        from .backends.synthetic import SyntheticBackend
        return SyntheticBackend
    mod_name = _MODULES.get(name)
    if mod_name is None:
        raise BackendUnavailable("unknown backend %r" % name)
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise BackendUnavailable("backend %r is not available: %s" % (name, e))
    classes = [c for _, c in inspect.getmembers(mod, inspect.isclass)
               if issubclass(c, Backend) and c is not Backend and c.__module__ == mod.__name__
               and not inspect.isabstract(c)]
    if not classes:
        raise BackendUnavailable("module %s defines no Backend" % mod_name)
    return classes[0]


def backend_takes(name: str, option: str) -> bool:
    """Whether the backend's constructor accepts an option (e.g. routing_file)."""
    try:
        return option in inspect.signature(_backend_class(name).__init__).parameters
    except (BackendUnavailable, TypeError, ValueError):
        return False


def make_backend(desc: Dict[str, Any], device_index: int, cache_dir: Optional[str]) -> Backend:
    """desc: {"name", "shape": {...}, "framework", "device_name", "routing_file"}."""
    cls = _backend_class(desc["name"])
    sd = desc["shape"]
    shape = Shape(sd["E"], sd["N"], sd["K"], sd["topk"], sd.get("dtype") or "bf16",
                  tuple(sd["block_shape"]) if sd.get("block_shape") else None, bool(sd.get("per_channel_quant")))
    kwargs: Dict[str, Any] = {}
    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        params = {}
    for k in ("framework", "device_name", "routing_file", "cpu_compile", "bandwidth_probe"):
        if k in params and desc.get(k) is not None:
            kwargs[k] = desc[k]
    return cls(shape, device_index, cache_dir, **kwargs)


def _importable(mod):
    import importlib.util
    try:
        return importlib.util.find_spec(mod) is not None
    except (ImportError, ValueError):
        return False


def auto_candidates(framework: str) -> List[str]:
    """The backends auto may use, in order: "server" when the spec's framework (not any other server)
    and the server backend are importable here, then "triton" when torch, triton and the Triton backend
    are. The run starts the first and proves it can run (one real call) before using it; one that
    cannot is skipped with a warning. Never synthetic."""
    out = []
    if "server" in available_backend_modules() and _importable(framework):
        out.append("server")
    if "triton" in available_backend_modules() and _importable("torch") and _importable("triton"):
        out.append("triton")
    return out


def resolve_auto(framework: str) -> str:
    """The first of auto_candidates, or BackendUnavailable (never synthetic)."""
    cands = auto_candidates(framework)
    if cands:
        return cands[0]
    raise BackendUnavailable(
        "no GPU backend here: %s is not importable and torch+triton are %s; run with the server's "
        "Python (--python / spec 'python') or set \"backend\": \"synthetic\" for a simulated run"
        % (framework, "missing" if not _importable("torch") else "present but the Triton backend is missing"))


def gpu_indices() -> List[int]:
    """Visible CUDA devices (nvidia-smi), honouring CUDA_VISIBLE_DEVICES when it lists indices."""
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is not None and vis.strip() != "":
        out = []
        for part in vis.split(","):
            part = part.strip()
            if part.isdigit():
                out.append(int(part))
        if out:
            return out
    from .probe import nvidia_smi_gpus
    gpus, _ = nvidia_smi_gpus()
    return [g["index"] for g in gpus] or [0]
