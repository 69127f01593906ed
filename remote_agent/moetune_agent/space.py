# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The search space and its pruning (the Strategy's ``space`` dict).

The reference tuners brute-force BM{16..256} x BN{32..256} x BK{64,128,256} x GM{1,16,32,64} x warps{4,8}
x stages{2,3,4,5} = 1920 configs (2560 with BK 32 for SGLang's separate up/down tuner). Three rules cut it:

1. Shared memory per block (a hard limit: Triton refuses to compile). ``smem_bytes`` is the estimate;
   docs/servers.md section 7 measured that ``(num_stages - [BM < 64]) * (BM + BN) * BK * bytes`` predicted
   exactly which configs compile for a kernel written to docs/servers.md section 4. The kernels engineer may
   replace ``SMEM_RULE`` after checking it against the real kernel on a GPU.
2. Block-quant divisibility (a hard limit of the server's kernel), in each server's own direction:
   SGLang keeps block_k % BK == 0; vLLM keeps BK % block_k == 0 and BN % block_n == 0.
   Per dtype, as the servers' tuners do: fp8_w8a8 per-tensor / per-channel, int8_w8a8 per-channel and
   int8_w8a16 search the same 1920 (2560) configs with no divisibility rule (only element sizes change
   the shared-memory bound); int4_w4a16 has no server tuner (SGLang's and vLLM's tune fp8/int8 only):
   moetune searches the same space for the wna16 kernel, where the group size constrains no tile.
3. What cannot win: tokens per expert at batch size M is about t = M * topk / E. A BLOCK_SIZE_M above
   the expert's row count only multiplies padding (the weights are streamed once per M tile either
   way), so we keep BM <= cap(M) = the smallest power of two >= max(16, factor * t) with factor 2
   (default), which leaves room for routing imbalance (busy experts get ~2x the mean).
"""

from __future__ import annotations

import itertools
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .kernel_types import KernelConfig, Shape

__all__ = [
    "HOPPER_SMEM_LIMIT",
    "PruneStats",
    "SMEM_RULE",
    "SPACE_KEYS",
    "block_m_cap",
    "block_quant_ok",
    "build_space",
    "compile_cost",
    "dequant_elems_per_thread",
    "dequant_regs_ok",
    "element_bytes",
    "hard_filter",
    "launch_key",
    "reference_configs",
    "row_tiles",
    "same_launch",
    "server_default_config",
    "smem_bytes",
    "spec_space",
    "tokens_per_expert",
]

REF_BLOCK_M = (16, 32, 64, 128, 256)
REF_BLOCK_N = (32, 64, 128, 256)
REF_BLOCK_K = (64, 128, 256)
REF_BLOCK_K_SEP = (32, 64, 128, 256)
REF_GROUP_M = (1, 16, 32, 64)
REF_WARPS = (4, 8)
REF_STAGES = (2, 3, 4, 5)

SPACE_KEYS = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages")
HOPPER_SMEM_LIMIT = 232448

# Bytes per element of (activation, weight) as loaded into shared memory.
_ELEM_BYTES = {
    None: (2, 2),
    "bf16": (2, 2),
    "fp16": (2, 2),
    "float32": (4, 4),
    "fp8_w8a8": (1, 1),
    "int8_w8a8": (1, 1),
    "int8_w8a16": (2, 1),
    "int4_w4a16": (2, 1),
}


def element_bytes(dtype: Optional[str]) -> Tuple[int, int]:
    return _ELEM_BYTES.get(dtype, (2, 2))


def default_smem_rule(cfg: KernelConfig, dtype: Optional[str]) -> int:
    """Shared memory a config's software pipeline needs, in bytes (see the module comment, rule 1)."""
    a, w = element_bytes(dtype)
    buffers = cfg.num_stages - (1 if cfg.BLOCK_SIZE_M < 64 else 0)
    return buffers * (cfg.BLOCK_SIZE_M * a + cfg.BLOCK_SIZE_N * w) * cfg.BLOCK_SIZE_K


# Replaceable: the kernels engineer can assign a rule checked against the real kernel.
SMEM_RULE: Callable[[KernelConfig, Optional[str]], int] = default_smem_rule


def smem_bytes(cfg: KernelConfig, dtype: Optional[str]) -> int:
    return SMEM_RULE(cfg, dtype)


def block_quant_ok(cfg: KernelConfig, block_shape: Optional[Sequence[int]], framework: str) -> bool:
    """Rule 2: block-quant divisibility in the server's own direction. Group quantisation ([0, group],
    int4_w4a16 / int8_w8a16) constrains no tile: the wna16 kernel loads a scale per weight element."""
    if not block_shape or not all(block_shape):
        return True
    block_n, block_k = int(block_shape[0]), int(block_shape[1])
    if framework == "vllm":
        return cfg.BLOCK_SIZE_K % block_k == 0 and cfg.BLOCK_SIZE_N % block_n == 0
    return block_k % cfg.BLOCK_SIZE_K == 0


DEQUANT_ELEMS_PER_THREAD = 64
DEQUANT_IN_REGISTERS = ("int4_w4a16",)


def dequant_elems_per_thread(cfg: KernelConfig) -> float:
    """Weight elements of one BLOCK_SIZE_N x BLOCK_SIZE_K tile per thread of the block."""
    return float(cfg.BLOCK_SIZE_N * cfg.BLOCK_SIZE_K) / (32 * max(1, int(cfg.num_warps)))


def dequant_regs_ok(cfg: KernelConfig, dtype: Optional[str]) -> bool:
    """Rule 4: whether a kernel that dequantises its weight tile in registers keeps it unspilled."""
    return dtype not in DEQUANT_IN_REGISTERS or dequant_elems_per_thread(cfg) <= DEQUANT_ELEMS_PER_THREAD


def tokens_per_expert(shape: Shape, m: int) -> float:
    return float(m) * shape.topk / shape.E


def block_m_cap(shape: Shape, m: int, factor: float = 2.0) -> int:
    """Rule 3: the largest BLOCK_SIZE_M worth trying at batch size m."""
    need = max(16.0, factor * tokens_per_expert(shape, m))
    cap = 16
    while cap < need:
        cap *= 2
    return cap


def reference_configs(separate: bool = False, options: Optional[dict] = None) -> List[KernelConfig]:
    """The reference tuners' space (1920, or 2560 with separate=True), or the axes given in options."""
    options = options or {}
    axes = [
        options.get("BLOCK_SIZE_M", REF_BLOCK_M),
        options.get("BLOCK_SIZE_N", REF_BLOCK_N),
        options.get("BLOCK_SIZE_K", REF_BLOCK_K_SEP if separate else REF_BLOCK_K),
        options.get("GROUP_SIZE_M", REF_GROUP_M),
        options.get("num_warps", REF_WARPS),
        options.get("num_stages", REF_STAGES),
    ]
    return [KernelConfig(*v) for v in itertools.product(*axes)]


class PruneStats(object):
    def __init__(self):
        self.total = 0
        self.smem = 0
        self.block_quant = 0
        self.kept_hard = 0  # after the hard limits (independent of m)
        self.dequant = 0  # rule 4 (of those kept_hard)

    def as_dict(self):
        return {
            "total": self.total,
            "pruned_smem": self.smem,
            "pruned_block_quant": self.block_quant,
            "kept_hard": self.kept_hard,
            "pruned_dequant": self.dequant,
        }


def hard_filter(
    configs: Sequence[KernelConfig], shape: Shape, framework: str, smem_limit: int, stats: Optional[PruneStats] = None
) -> List[KernelConfig]:
    """Rules 1 and 2: configs that can run at all."""
    out = []
    for c in configs:
        if stats is not None:
            stats.total += 1
        if smem_bytes(c, shape.dtype) > smem_limit:
            if stats is not None:
                stats.smem += 1
            continue
        if not block_quant_ok(c, shape.block_shape, framework):
            if stats is not None:
                stats.block_quant += 1
            continue
        out.append(c)
    if stats is not None:
        stats.kept_hard = len(out)
    return out


def spec_space(
    spec: dict, shape: Shape, batch_sizes: Sequence[int], ops: Sequence[str], device_smem: Optional[int]
) -> Dict[Tuple[str, int], List[KernelConfig]]:
    """A tune spec's space: build_space with the spec's "space" options and its smem_limit where it sets
    one, else the device's shared memory (the GPU worker's info, or its early compile facts); {} when
    neither is known."""
    smem = int(spec["space"].get("smem_limit") or device_smem or 0)
    if smem <= 0:
        return {}
    return build_space(shape, batch_sizes, ops, spec["framework"], smem, spec["space"])


def build_space(
    shape: Shape,
    batch_sizes: Sequence[int],
    ops: Sequence[str],
    framework: str = "sglang",
    smem_limit: int = HOPPER_SMEM_LIMIT,
    options: Optional[dict] = None,
    stats: Optional[PruneStats] = None,
) -> Dict[Tuple[str, int], List[KernelConfig]]:
    """(op, m) -> candidate configs: the Strategy's space.

    options (the spec's "space" object) may restrict any axis (lists of ints), set "prune_m": false to
    keep every BLOCK_SIZE_M, "prune_m_factor" (default 2), "smem_limit" (bytes) to override the device's,
    "prune_dequant": false to keep what rule 4 cuts.
    """
    options = dict(options or {})
    if options.get("smem_limit"):
        smem_limit = int(options["smem_limit"])
    separate = "both" not in ops
    hard = hard_filter(reference_configs(separate, options), shape, framework, smem_limit, stats)
    if options.get("prune_dequant", True):
        kept = [c for c in hard if dequant_regs_ok(c, shape.dtype)]
        if stats is not None:
            stats.dequant = len(hard) - len(kept)
        hard = kept
    prune_m = options.get("prune_m", True)
    factor = float(options.get("prune_m_factor", 2.0))
    space: Dict[Tuple[str, int], List[KernelConfig]] = {}
    for op in ops:
        for m in batch_sizes:
            if prune_m:
                cap = block_m_cap(shape, m, factor)
                cands = [c for c in hard if c.BLOCK_SIZE_M <= cap]
            else:
                cands = list(hard)
            space[(op, m)] = cands
    return space


def server_default_config(shape: Shape, m: int, framework: str = "sglang", op: str = "up") -> KernelConfig:
    """The config the server uses when no tuned file exists (docs/servers.md section 3): num_warps/num_stages
    are Triton's launch defaults (4 warps, 3 stages on CUDA)."""
    if shape.block_shape and shape.dtype == "fp8_w8a8":
        bn, bk = int(shape.block_shape[0]), int(shape.block_shape[1])
        return KernelConfig(64, bn, bk, 32, 4, 3)
    if m <= shape.E:
        return KernelConfig(16, 32, 64, 1, 4, 3)
    return KernelConfig(64, 64, 32, 8, 4, 3)


def compile_cost(cfg: KernelConfig) -> float:
    """A relative estimate of how long cfg's GEMM kernel takes to compile (no unit): the tile elements
    each thread holds, (BM x BN accumulator + (BM + BN) x BK operands) / num_warps. On the H200 it ranks
    the measured compile times of 120 bf16 and 120 int4_w4a16 kernels with a log-log correlation of 0.90
    (recordings/h200-bytecode-warm/call6_*_compile.json: 0.29-1.49 s bf16, up to 8.07 s int4, the slow
    ones BLOCK_SIZE_N 256 with 4 warps). The precompile pool takes the costly kernels of a batch first
    (longest first), so a phase does not end waiting for one slow kernel started last."""
    bm, bn, bk = cfg.BLOCK_SIZE_M, cfg.BLOCK_SIZE_N, cfg.BLOCK_SIZE_K
    return float(bm * bn + (bm + bn) * bk) / max(1, int(cfg.num_warps))


def row_tiles(shape: Shape, m: int, block_m: int) -> int:
    """M tiles of moetune's own kernel's grid at batch size m: its padded row count over block_m. The
    padding is kernels/fused_moe.max_padded_size's static bound (each non-empty expert pads to block_m,
    and at most numel = m x top-k experts are non-empty), which the kernel takes as EM."""
    numel = m * shape.topk
    padded = min(numel + shape.E * (block_m - 1), numel * block_m)
    return -(-padded // block_m)


def launch_key(cfg: KernelConfig, shape: Shape, m: int) -> tuple:
    """What a launch of moetune's own kernel at batch size m depends on: cfg's axes with a GROUP_SIZE_M at
    or above the grid's M tiles (row_tiles) taken as that count. kernels/fused_moe._tile_of then puts every
    program in one group, so all such values map each program to the same tile, and GROUP_SIZE_M is a
    run-time argument there (one binary). At M = 1 (E = 128, top-k 8, BLOCK_SIZE_M 16: 8 M tiles) GROUP_SIZE_M
    16, 32 and 64 are one launch; at M = 4096 every value is its own."""
    tiles = row_tiles(shape, m, cfg.BLOCK_SIZE_M)
    gm = min(cfg.GROUP_SIZE_M, tiles)
    return (cfg.BLOCK_SIZE_M, cfg.BLOCK_SIZE_N, cfg.BLOCK_SIZE_K, gm, cfg.num_warps, cfg.num_stages, cfg.USE_TMA)


def same_launch(a: KernelConfig, b: KernelConfig, shape: Shape, m: int) -> bool:
    """Whether a and b run the same launch of moetune's own kernel at batch size m (launch_key)."""
    return a == b or launch_key(a, shape, m) == launch_key(b, shape, m)
