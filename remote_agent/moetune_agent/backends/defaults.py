# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The config each server runs when it finds no tuned file (its built-in heuristic), per framework.

Standard library only. Used by backends that cannot ask the installed server (the Triton backend, the
synthetic backend); the server backend asks the server itself (its shipped file first, else its own
heuristic). num_warps / num_stages absent from a server's heuristic are Triton's CUDA launch defaults
(4 warps, 3 stages), so the explicit values here launch the same kernel.
"""

from __future__ import annotations

from typing import Optional

from ..kernel_types import KernelConfig, Shape

__all__ = ["heuristic", "sglang_heuristic"]


def sglang_heuristic(shape: Shape, m: int) -> KernelConfig:
    """SGLang (docs/servers.md section 3): BM16 BN32 BK64 GM1 when M <= E, else BM64 BN64 BK32 GM8; fp8 has
    its own."""
    if shape.dtype == "fp8_w8a8":
        if shape.block_shape:
            return KernelConfig(64, int(shape.block_shape[0]), int(shape.block_shape[1]), 32, 4, 3)
        if m <= shape.E:
            return KernelConfig(64, 128, 128, 1, 4, 4)
        return KernelConfig(128, 256, 128, 32, 8, 4)
    if m <= shape.E:
        return KernelConfig(16, 32, 64, 1, 4, 3)
    return KernelConfig(64, 64, 32, 8, 4, 3)


def vllm_heuristic(shape: Shape, m: int) -> KernelConfig:
    """vLLM 2026: tiles grow with the batch (memory-bound small M wants long K tiles, large M wide tiles
    and 8 warps); block-fp8 keeps the quant block as the K tile."""
    if shape.dtype == "fp8_w8a8" and shape.block_shape:
        bn, bk = int(shape.block_shape[0]), int(shape.block_shape[1])
        if m <= 8 and bn % 64 == 0:
            n_tile, stages = 64, (4 if m <= 4 else 3)
        else:
            n_tile, stages = bn, 3
        return KernelConfig(16 if m <= 64 else 64, n_tile, bk, 1 if m <= 16 else 32, 4, stages)
    if m <= 32:
        bm = 16
    elif m <= 96:
        bm = 32
    elif m <= 512:
        bm = 64
    else:
        bm = 128
    bn = 64 if m <= 64 else 128
    bk = 128 if shape.dtype == "fp8_w8a8" or m <= 64 else 64
    gm = 16 if m // max(shape.E, 1) > 128 else 1
    warps = 4 if m <= 128 else 8
    stages = 4 if m <= 32 else 3
    return KernelConfig(bm, bn, bk, gm, warps, stages)


def heuristic(framework: Optional[str], shape: Shape, m: int) -> KernelConfig:
    return vllm_heuristic(shape, m) if framework == "vllm" else sglang_heuristic(shape, m)
