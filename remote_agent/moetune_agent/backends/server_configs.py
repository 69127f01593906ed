# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A server's configs as moetune's: a config dict read as a KernelConfig, the server's nearest-key choice, vLLM's
padded row count, and which kernels a config compiles to at a size (specialisation_class: the size classes the
precompile pool compiles once)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ..kernel_types import KernelConfig, Shape

__all__ = ["classes_for", "nearest", "six_keys", "specialisation_class", "to_config", "vllm_padded"]


def vllm_padded(numel: int, bm: int, E: int) -> int:
    """Rows of vLLM's sorted_token_ids for numel routed tokens (moe_align_block_size's allocation,
    pad_sorted_ids off, as fused_experts calls it): a GPU op fills it, its size is set on the host."""
    padded = numel + E * (bm - 1)
    if numel < E:
        padded = min(numel * bm, padded)
    return padded


def to_config(d: Dict[str, Any], keep_tma: bool) -> KernelConfig:
    """A server config dict -> KernelConfig; keys the server leaves out are Triton's CUDA defaults."""
    tma = bool(d.get("USE_TMA")) if keep_tma else None
    return KernelConfig(
        int(d["BLOCK_SIZE_M"]),
        int(d["BLOCK_SIZE_N"]),
        int(d["BLOCK_SIZE_K"]),
        int(d.get("GROUP_SIZE_M", 1)),
        int(d.get("num_warps", 4)),
        int(d.get("num_stages", 3)),
        USE_TMA=True if tma else None,
    )


def nearest(configs: Dict[int, Any], m: int) -> Any:
    """The server's key choice: nearest batch size, ties to the first key in file order."""
    return configs[min(configs.keys(), key=lambda k: abs(int(k) - m))]


def six_keys(cfg: KernelConfig) -> Dict[str, int]:
    d = cfg.as_dict()
    d.pop("USE_TMA", None)
    return d  # type: ignore[return-value]


def _spec(v: int) -> str:
    """What Triton specialises an integer argument on (its value 1, divisibility by 16)."""
    return "1" if v == 1 else ("16" if v % 16 == 0 else "")


def specialisation_class(framework: str, shape: Shape, op: str, cfg: KernelConfig, m: int) -> Optional[tuple]:
    """The batch-size part of the server's compiled kernel(s) for cfg at batch size m: batch sizes of one
    class run the same binaries. The servers' GEMM kernels take the padded row count (EM) and the routed
    token count as plain integers, which Triton specialises on (value 1, divisibility by 16), so of the 18
    sizes of a tune most fall into two or three classes per config (SGLang main, E = 128, top-k 8: m = 1,
    m = 2-16, m >= 24). The precompile pool compiles one (op, config, class) once, not once per size
    (issue 22: 908 measured (config, size) pairs of a SGLang tune, 554 (config, class) pairs). None: not
    known for this server (one compile per size). A wrong class costs speed only: the GPU worker compiles
    what the pool did not, on first use."""
    numel = m * shape.topk
    bm = cfg.BLOCK_SIZE_M
    if framework == "sglang":
        slots = shape.E + 1  # SGLang aligns over E + 1 slots (the -1 of experts filtered by EP)
        em = numel * bm if numel < slots else numel + slots * (bm - 1)
        return ("sglang", _spec(em), _spec(numel))
    if framework == "vllm":
        wna16_block = (
            shape.dtype in ("int8_w8a16", "int4_w4a16") and bool(shape.block_shape) and shape.block_shape[1] > 0
        )
        if numel * 4 <= shape.E and not wna16_block:  # vLLM's naive block assignment: no alignment
            return ("vllm", "naive", _spec(numel * bm), _spec(numel))
        padded = vllm_padded(numel, bm, shape.E)
        em_up = min(padded, numel * bm) if m < bm else padded  # the up GEMM: A has m rows, top-k routed
        em_down = min(padded, numel * bm) if numel < bm else padded  # the down GEMM: numel rows, top-k 1
        return ("vllm", _spec(em_up), _spec(em_down), _spec(numel))
    return None


def classes_for(framework: str, shape: Shape):
    """-> (op, cfg, m) -> specialisation_class(...), for the scheduler's precompile keys."""
    return lambda op, cfg, m: specialisation_class(framework, shape, op, cfg, m)
