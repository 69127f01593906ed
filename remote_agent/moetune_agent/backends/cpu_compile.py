# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Compiling Triton kernels for a GPU without touching it (precompile workers).

A precompile worker must not create a CUDA context nor hold weights on the GPU being timed (14
workers x 3.6 GB on one GPU ran a DeepSeek-size layer out of memory), and must not launch anything
there. So the worker sees no GPU at all (CUDA_VISIBLE_DEVICES="", set before CUDA can initialise),
while torch.cuda and Triton's driver answer the questions a compile asks (is there a CUDA device, its
capability, name, current device and stream) with the facts the GPU worker reported. Tensors are
uninitialised host tensors (virtual memory only; their data pointers are aligned as GPU allocations
are, so Triton specialises the kernel exactly as for the GPU worker and the cache key matches). Triton
then compiles for the GPU's target into the run's shared TRITON_CACHE_DIR; where a launch would
follow, Triton's post-compile hook raises CompiledOnly first (stop_after_compile).

Everything here is a no-op for the GPU workers: only precompile workers call enter().
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .. import options

__all__ = [
    "CompiledOnly",
    "active",
    "check_shared",
    "compiled_kernels",
    "enter",
    "hide_gpus",
    "jit_functions_of",
    "stop_after_compile",
]

_ENTERED: Optional[Dict[str, Any]] = None


class CompiledOnly(Exception):
    """Raised by Triton's post-compile hook in a precompile worker: the kernel is in the cache, stop
    before the launch."""


def _stop_after_compile(*args, **kwargs):
    raise CompiledOnly()


def hide_gpus() -> None:
    """Before torch is imported in a precompile worker."""
    options.set_env(CUDA_VISIBLE_DEVICES="")


def enter(info: Dict[str, Any]) -> None:
    """info: {"capability": 90, "device_name": "NVIDIA H200", "smem": 232448} from the GPU worker."""
    global _ENTERED
    if _ENTERED is not None:
        return
    hide_gpus()
    cap = int(info["capability"])
    major, minor = cap // 10, cap % 10
    name = str(info.get("device_name") or "").replace("_", " ")
    import torch

    props = _Props(name, major, minor, int(info.get("smem") or 0), int(info.get("sm_count") or 132))
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_capability = lambda device=None: (major, minor)
    torch.cuda.get_device_name = lambda device=None: name
    torch.cuda.get_device_properties = lambda device=None: props
    torch.cuda.set_device = lambda device: None
    torch.cuda.synchronize = lambda device=None: None
    import triton
    from triton.backends.compiler import GPUTarget

    drv = triton.runtime.driver.active
    drv.get_current_device = lambda: 0
    drv.get_current_stream = lambda device=None: 0
    drv.get_device_capability = lambda device=None: (major, minor)
    drv.get_current_target = lambda: GPUTarget("cuda", cap, 32)
    drv.set_current_device = lambda device: None
    _ENTERED = dict(info)


class stop_after_compile(object):
    """Within: Triton's post-compile hook raises CompiledOnly (for a caller that launches right after
    compiling, like the server's GEMM entry point), and so does loading a compiled kernel onto the GPU
    (CompiledKernel._init_handles): a kernel already in the process's cache is not compiled again, so
    only the load before its launch says that it is there (before, such a hit failed on the missing GPU:
    102 of 2154 "failed" precompiles of an 18-size up+down run on the H200 were hits). An older Triton
    without these hooks fails at the launch instead (no GPU)."""

    def __enter__(self):
        self._knobs = None
        self._kernel_class = None
        try:
            import triton

            self._knobs = triton.knobs.runtime
            self._old = self._knobs.jit_post_compile_hook
            self._knobs.jit_post_compile_hook = _stop_after_compile
        except Exception:
            self._knobs = None
        try:
            from triton.compiler import compiler as triton_compiler

            cls = triton_compiler.CompiledKernel
            self._old_init = cls.__dict__["_init_handles"]
            cls._init_handles = _stop_after_compile
            self._kernel_class = cls
        except Exception:
            self._kernel_class = None
        return self

    def __exit__(self, *exc):
        if self._knobs is not None:
            self._knobs.jit_post_compile_hook = self._old
        if self._kernel_class is not None:
            self._kernel_class._init_handles = self._old_init
        return False


def active() -> Optional[Dict[str, Any]]:
    return _ENTERED


class _Props(object):
    """What torch.cuda.get_device_properties answers on the real GPU, for the fields compile paths read."""

    def __init__(self, name, major, minor, smem, sm_count):
        self.name = name
        self.major = major
        self.minor = minor
        self.multi_processor_count = sm_count
        self.shared_memory_per_block_optin = smem
        self.total_memory = 0
        self.is_integrated = False
        self.warp_size = 32


def jit_kernel_count(fns: List[Any]) -> int:
    """Compiled variants held by these JITFunctions for device 0 (their in-process kernel caches)."""
    n = 0
    for fn in fns:
        caches = getattr(fn, "device_caches", None)
        if not caches:
            continue
        try:
            entry = caches[0]
        except Exception:
            continue
        try:
            n += len(entry[0])
        except Exception:
            pass
    return n


def compiled_kernels(fns: List[Any]) -> List[Any]:
    out: List[Any] = []
    for fn in fns:
        caches = getattr(fn, "device_caches", None)
        if not caches:
            continue
        try:
            out.extend(list(caches[0][0].values()))
        except Exception:
            pass
    return out


def check_shared(kernels: List[Any], limit: int) -> None:
    """Raise Triton's OutOfResources for a compiled kernel that would not load (what the loader checks)."""
    for k in kernels:
        shared = getattr(getattr(k, "metadata", None), "shared", 0) or 0
        if limit and shared > limit:
            from triton.runtime.errors import OutOfResources

            raise OutOfResources(shared, limit, "shared memory")


def jit_functions_of(module: Any) -> List[Any]:
    """The Triton JITFunctions defined in a module (the server's GEMM kernels)."""
    out: List[Any] = []
    try:
        from triton.runtime.jit import JITFunction
    except Exception:
        return out
    for v in vars(module).values():
        if isinstance(v, JITFunction):
            out.append(v)
    return out
