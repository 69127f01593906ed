# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The backend registry: every backend the agent has, by name, with the module and class that implement
it, the constructor options a run passes it and the quantisation variants its kernel tunes. The spec
validates against it (spec.BACKENDS, spec.TUNABLE), hello and probe report from it, and factory.py builds
from it. Importing this registry imports no backend module (none of torch, Triton or a server)."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Dict, NamedTuple, Optional, Tuple

__all__ = [
    "ALL_VARIANTS",
    "AUTO",
    "AUTO_ORDER",
    "BACKENDS",
    "SERVER",
    "SYNTHETIC",
    "TRITON",
    "backend_class",
    "is_simulated",
    "packaged",
    "packaged_gpu_backends",
]

# Backend names: the spec's "backend" values and the names in events, result.json and `backend:` capabilities.
SERVER = "server"  # the server's own fused-MoE kernel (SGLang / vLLM), called as its tuner does
TRITON = "triton"  # moetune's Triton kernel (kernels/), the server's config semantics
SYNTHETIC = "synthetic"  # a deterministic latency model: every number it gives is simulated
AUTO = "auto"  # the spec's default: the first GPU backend of AUTO_ORDER that can run here

# Variants here are spec.VARIANTS names; None means every variant.
ALL_VARIANTS = None


class BackendInfo(NamedTuple):
    module: str  # the module that defines the backend, imported only to build one
    cls: str  # the Backend subclass in that module
    options: Tuple[str, ...]  # the spec/desc keys its constructor takes besides shape, device, cache
    variants: Optional[Tuple[str, ...]]  # the quantisation variants its kernel can tune (ALL_VARIANTS: all)
    simulated: bool = False  # its numbers are simulated, never measured


BACKENDS: Dict[str, BackendInfo] = {
    SERVER: BackendInfo(
        "moetune_agent.backends.server_backend",
        "ServerBackend",
        ("framework", "routing_file", "cpu_compile", "bandwidth_probe"),
        ("bf16", "fp8_w8a8", "fp8_w8a8:block"),
    ),
    TRITON: BackendInfo(
        "moetune_agent.backends.triton_backend",
        "TritonBackend",
        ("framework", "routing_file", "cpu_compile", "bandwidth_probe"),
        (
            "bf16",
            "fp8_w8a8",
            "fp8_w8a8:block",
            "fp8_w8a8:channel",
            "int8_w8a8:channel",
            "int8_w8a16",
            "int4_w4a16:group",
        ),
    ),
    SYNTHETIC: BackendInfo(
        "moetune_agent.backends.synthetic",
        "SyntheticBackend",
        ("framework", "device_name"),
        ALL_VARIANTS,
        simulated=True,
    ),
}
# The backends `auto` tries, in order (never a simulated one).
AUTO_ORDER = (SERVER, TRITON)


def is_simulated(name: Optional[str]) -> bool:
    """Whether the backend called name gives simulated numbers (the synthetic backend)."""
    info = BACKENDS.get(name or "")
    return info is not None and info.simulated


def gpu_backends() -> Tuple[str, ...]:
    """The registered backends that measure on a GPU (everything but the simulated ones), in order."""
    return tuple(n for n, info in BACKENDS.items() if not info.simulated)


def packaged(name: str) -> bool:
    """Whether the backend's module is in this agent (found, not imported: it must not import torch)."""
    info = BACKENDS.get(name)
    if info is None:
        return False
    try:
        return importlib.util.find_spec(info.module) is not None
    except (ImportError, ValueError):
        return False


def packaged_gpu_backends():
    """The GPU backends whose module is packaged, sorted by name (hello's `backend:` capabilities)."""
    return [n for n in sorted(gpu_backends()) if packaged(n)]


def backend_class(name: str):
    """The class of the backend called name (imports its module). ImportError when it is missing here,
    KeyError for a name that is not registered."""
    info = BACKENDS[name]
    return getattr(importlib.import_module(info.module), info.cls)
