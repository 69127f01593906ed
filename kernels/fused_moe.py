# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""moetune's own Triton fused-MoE kernel (docs/servers.md section 4 semantics).

Pipeline of one MoE call (every step graph-capturable, no host sync):
  router logits -> softmax top-k (torch) -> moe_align_block_size (3 small Triton launches)
  -> up GEMM  [M*topk, K] x w1[e]^T (2N x K)            -> SiLU-and-mul -> [M*topk, N]
  -> down GEMM [M*topk, N] x w2[e]^T (K x N) * routing weight -> sum over top-k -> [M, K]

The config keys mean what they mean to SGLang/vLLM: BLOCK_SIZE_M/N/K are the tile of one program,
GROUP_SIZE_M the program-id swizzle, num_warps/num_stages launch options. Batch-dependent sizes are
runtime arguments that are not specialised, so one compile serves every batch size.

Quantisation: bf16/fp16 plain; fp8_w8a8 per-tensor (one scale per expert weight, one dynamic scale
for the activations) or block-wise (weights [bn, bk] blocks, activations per token per bk group).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

FP8_MAX = 448.0  # float8_e4m3fn
# Set (bytes) in precompile workers that compile for a GPU they cannot see: compile_only then checks the
# compiled kernel's shared memory against it instead of loading the binary.
CPU_COMPILE_SMEM_LIMIT = None


# ----------------------------------------------------------------------------------------------
# moe_align_block_size
# ----------------------------------------------------------------------------------------------
@triton.jit(do_not_specialize=["numel"])
def _align_count(ids_ptr, counts_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    e = tl.load(ids_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + e, 1, mask=mask)


@triton.jit(do_not_specialize=["numel", "max_padded", "max_blocks"])
def _align_scan(counts_ptr, cursor_ptr, sorted_ptr, expert_ids_ptr, ntpp_ptr, numel, max_padded, max_blocks,
                E: tl.constexpr, BM: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_F: tl.constexpr,
                BLOCK_B: tl.constexpr):
    # One program: the expert table is small (E <= a few hundred).
    offs_e = tl.arange(0, BLOCK_E)
    emask = offs_e < E
    cnt = tl.load(counts_ptr + offs_e, mask=emask, other=0)
    padded = (cnt + BM - 1) // BM * BM
    end = tl.cumsum(padded, 0)
    start = end - padded
    tl.store(cursor_ptr + offs_e, start, mask=emask)
    tl.store(counts_ptr + offs_e, tl.zeros_like(cnt), mask=emask)  # ready for the next call
    total = tl.sum(padded, 0)
    tl.store(ntpp_ptr, total)
    # the padding slots point past the last valid (token, slot) pair: the GEMMs mask them out
    for f in range(0, max_padded, BLOCK_F):
        offs = f + tl.arange(0, BLOCK_F)
        tl.store(sorted_ptr + offs, tl.full([BLOCK_F], 0, tl.int32) + numel, mask=offs < max_padded)
    # expert of block b = number of experts whose padded run ends at or before b*BM
    end_b = tl.where(emask, end, 1 << 30)
    for b0 in range(0, max_blocks, BLOCK_B):
        offs_b = b0 + tl.arange(0, BLOCK_B)
        pos = offs_b * BM
        ex = tl.sum((end_b[None, :] <= pos[:, None]).to(tl.int32), 1)
        ex = tl.minimum(ex, E - 1)
        tl.store(expert_ids_ptr + offs_b, ex, mask=offs_b < max_blocks)


@triton.jit(do_not_specialize=["numel"])
def _align_scatter(ids_ptr, cursor_ptr, sorted_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    e = tl.load(ids_ptr + offs, mask=mask, other=0)
    pos = tl.atomic_add(cursor_ptr + e, 1, mask=mask)
    tl.store(sorted_ptr + pos, offs, mask=mask)


def max_padded_size(numel: int, num_experts: int, block_m: int) -> int:
    """Static upper bound of the padded length: each non-empty expert adds < block_m padding, and at
    most numel experts are non-empty."""
    return min(numel + num_experts * (block_m - 1), numel * block_m)


class AlignBuffers:
    """Preallocated outputs of moe_align_block_size for one (numel, E, BLOCK_SIZE_M)."""

    def __init__(self, numel: int, num_experts: int, block_m: int, device):
        self.numel = numel
        self.E = num_experts
        self.BM = block_m
        self.max_padded = max_padded_size(numel, num_experts, block_m)
        self.max_blocks = triton.cdiv(self.max_padded, block_m)
        self.sorted_ids = torch.empty(self.max_padded, dtype=torch.int32, device=device)
        self.expert_ids = torch.empty(self.max_blocks, dtype=torch.int32, device=device)
        self.ntpp = torch.empty(1, dtype=torch.int32, device=device)
        self.counts = torch.zeros(num_experts, dtype=torch.int32, device=device)
        self.cursor = torch.empty(num_experts, dtype=torch.int32, device=device)


def moe_align_block_size(topk_ids: torch.Tensor, bufs: AlignBuffers) -> AlignBuffers:
    """Sort the (token, slot) pairs by expert, pad each expert's run to a multiple of BLOCK_SIZE_M.
    Fills bufs.sorted_ids (flat pair index, numel = padding), bufs.expert_ids (expert per block) and
    bufs.ntpp (padded length); order inside one expert's run is not defined."""
    flat = topk_ids.reshape(-1)
    numel = flat.numel()
    assert numel == bufs.numel
    blk = 1024
    _align_count[(triton.cdiv(numel, blk),)](flat, bufs.counts, numel, BLOCK=blk)
    _align_scan[(1,)](bufs.counts, bufs.cursor, bufs.sorted_ids, bufs.expert_ids, bufs.ntpp, numel,
                      bufs.max_padded, bufs.max_blocks, E=bufs.E, BM=bufs.BM,
                      BLOCK_E=triton.next_power_of_2(bufs.E), BLOCK_F=1024, BLOCK_B=32)
    _align_scatter[(triton.cdiv(numel, blk),)](flat, bufs.cursor, bufs.sorted_ids, numel, BLOCK=blk)
    return bufs


# ----------------------------------------------------------------------------------------------
# The grouped GEMM
# ----------------------------------------------------------------------------------------------
@triton.jit
def _tile_of(pid, EM, N, GROUP_SIZE_M, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    """(pid_m, pid_n): the output tile of program pid, GROUP_SIZE_M row tiles per group (L2 reuse of b)."""
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


# GROUP_SIZE_M only changes the program-id mapping: a runtime argument here (not specialised), so one
# compile serves the four GROUP_SIZE_M values of the reference space.
@triton.jit(do_not_specialize=["EM", "num_valid", "GROUP_SIZE_M"])
def _moe_gemm(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, topk_w_ptr, sorted_ptr, expert_ids_ptr, ntpp_ptr,
              N, K, EM, num_valid,
              stride_am, stride_ak, stride_be, stride_bn, stride_bk, stride_cm, stride_cn,
              stride_asm, stride_ask, stride_bse, stride_bsn, stride_bsk,
              GROUP_SIZE_M,
              GROUP_N: tl.constexpr, GROUP_K: tl.constexpr,
              BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
              A_ROW_DIV: tl.constexpr, MUL_ROUTED_WEIGHT: tl.constexpr,
              QUANT: tl.constexpr, EVEN_K: tl.constexpr):
    # QUANT: 0 none, 1 fp8 per-tensor, 2 fp8 block-wise [GROUP_N, GROUP_K]
    pid_m, pid_n = _tile_of(tl.program_id(0), EM, N, GROUP_SIZE_M, BLOCK_SIZE_M, BLOCK_SIZE_N)

    ntpp = tl.load(ntpp_ptr)
    if pid_m * BLOCK_SIZE_M >= ntpp:
        return
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    pair = tl.load(sorted_ptr + offs_m)
    row_mask = pair < num_valid
    expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)

    offs_n = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N  # wrap instead of masking loads
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_rows = (pair // A_ROW_DIV).to(tl.int64)
    a_ptrs = a_ptr + a_rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + expert * stride_be + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    if QUANT == 1:
        a_s = tl.load(a_scale_ptr)
        b_s = tl.load(b_scale_ptr + expert)
    if QUANT == 2:
        as_ptrs = a_scale_ptr + a_rows * stride_asm
        bs_ptrs = b_scale_ptr + expert * stride_bse + (offs_n // GROUP_N) * stride_bsn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=row_mask[:, None], other=0.0)
            b = tl.load(b_ptrs)
        else:
            kmask = offs_k < K - k * BLOCK_SIZE_K
            a = tl.load(a_ptrs, mask=row_mask[:, None] & kmask[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=kmask[:, None], other=0.0)
        if QUANT == 2:
            kg = (k * BLOCK_SIZE_K) // GROUP_K
            sa = tl.load(as_ptrs + kg * stride_ask, mask=row_mask, other=0.0)
            sb = tl.load(bs_ptrs + kg * stride_bsk)
            acc += tl.dot(a, b) * sa[:, None] * sb[None, :]
        else:
            acc = tl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    if QUANT == 1:
        acc = acc * (a_s * b_s)
    if MUL_ROUTED_WEIGHT:
        w = tl.load(topk_w_ptr + pair, mask=row_mask, other=0.0)
        acc = acc * w[:, None]
    out = acc.to(c_ptr.dtype.element_ty)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + pair[:, None].to(tl.int64) * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, out, mask=row_mask[:, None] & (offs_cn[None, :] < N))


@triton.jit(do_not_specialize=["rows"])
def _silu_and_mul(x_ptr, y_ptr, rows, N, stride_x, stride_y, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    for n0 in range(0, N, BLOCK):
        offs = n0 + tl.arange(0, BLOCK)
        mask = offs < N
        g = tl.load(x_ptr + r * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
        u = tl.load(x_ptr + r * stride_x + N + offs, mask=mask, other=0.0).to(tl.float32)
        y = g / (1.0 + tl.exp(-g)) * u
        tl.store(y_ptr + r * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit(do_not_specialize=["rows"])
def _group_quant_fp8(x_ptr, q_ptr, s_ptr, rows, K, stride_x, stride_q, stride_s, GROUP: tl.constexpr):
    # one program per (row, group): per-token, per-GROUP-column dynamic scale
    r = tl.program_id(0).to(tl.int64)
    g = tl.program_id(1)
    offs = g * GROUP + tl.arange(0, GROUP)
    mask = offs < K
    x = tl.load(x_ptr + r * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.maximum(tl.max(tl.abs(x), 0), 1e-10) / 448.0
    q = tl.clamp(x / s, -448.0, 448.0)
    tl.store(q_ptr + r * stride_q + offs, q.to(q_ptr.dtype.element_ty), mask=mask)
    tl.store(s_ptr + r * stride_s + g, s)


# ----------------------------------------------------------------------------------------------
# Host side
# ----------------------------------------------------------------------------------------------
def quantize_weight_fp8(w: torch.Tensor, block_shape=None):
    """w [E, rows, cols] float -> (fp8 weight, scales). Per-tensor: one scale per expert [E];
    block-wise: [E, ceil(rows/bn), ceil(cols/bk)]."""
    E, R, C = w.shape
    if block_shape is None:
        s = w.abs().amax(dim=(1, 2)).clamp(min=1e-10) / FP8_MAX
        q = (w / s[:, None, None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        return q, s.float().contiguous()
    bn, bk = block_shape
    rb, cb = triton.cdiv(R, bn), triton.cdiv(C, bk)
    wp = torch.zeros(E, rb * bn, cb * bk, dtype=torch.float32, device=w.device)
    wp[:, :R, :C] = w.float()
    blocks = wp.view(E, rb, bn, cb, bk)
    s = blocks.abs().amax(dim=(2, 4)).clamp(min=1e-10) / FP8_MAX  # [E, rb, cb]
    q = (blocks / s[:, :, None, :, None]).clamp(-FP8_MAX, FP8_MAX).view(E, rb * bn, cb * bk)[:, :R, :C]
    return q.contiguous().to(torch.float8_e4m3fn), s.contiguous()


def dequantize_weight_fp8(q: torch.Tensor, s: torch.Tensor, block_shape=None) -> torch.Tensor:
    E, R, C = q.shape
    if block_shape is None:
        return q.float() * s[:, None, None]
    bn, bk = block_shape
    sf = s.repeat_interleave(bn, dim=1)[:, :R].repeat_interleave(bk, dim=2)[:, :, :C]
    return q.float() * sf


class MoEWeights:
    """The weights of one MoE layer in the kernel's layout: w1 [E, 2N, K], w2 [E, K, N] (+ fp8 scales)."""

    def __init__(self, w1, w2, dtype: str, block_shape=None, w1_scale=None, w2_scale=None):
        self.w1, self.w2 = w1, w2
        self.dtype = dtype
        self.block_shape = tuple(block_shape) if block_shape else None
        self.w1_scale, self.w2_scale = w1_scale, w2_scale
        self.E, self.N2, self.K = w1.shape
        self.N = self.N2 // 2

    @staticmethod
    def random(E: int, N: int, K: int, dtype: str, block_shape=None, device="cuda", seed: int = 0) -> "MoEWeights":
        g = torch.Generator(device=device).manual_seed(seed)
        w1 = torch.randn(E, 2 * N, K, device=device, generator=g, dtype=torch.float32) / K ** 0.5
        w2 = torch.randn(E, K, N, device=device, generator=g, dtype=torch.float32) / N ** 0.5
        if dtype in ("bf16", "fp16"):
            t = torch.bfloat16 if dtype == "bf16" else torch.float16
            return MoEWeights(w1.to(t), w2.to(t), dtype)
        if dtype == "fp8_w8a8":
            q1, s1 = quantize_weight_fp8(w1, block_shape)
            del w1
            q2, s2 = quantize_weight_fp8(w2, block_shape)
            return MoEWeights(q1, q2, dtype, block_shape, s1, s2)
        raise ValueError("dtype %r is not supported by moetune's Triton kernel (bf16, fp16, fp8_w8a8)" % dtype)

    @staticmethod
    def uninitialized(E: int, N: int, K: int, dtype: str, block_shape=None, device="cuda") -> "MoEWeights":
        """Weights with the right layout and no values (torch.empty: no kernel runs): for compiling only."""
        if dtype == "fp8_w8a8":
            t = torch.float8_e4m3fn
        else:
            t = torch.float16 if dtype == "fp16" else torch.bfloat16
        w1 = torch.empty(E, 2 * N, K, dtype=t, device=device)
        w2 = torch.empty(E, K, N, dtype=t, device=device)
        if dtype != "fp8_w8a8":
            return MoEWeights(w1, w2, dtype)
        if block_shape is None:
            s1 = torch.empty(E, dtype=torch.float32, device=device)
            s2 = torch.empty(E, dtype=torch.float32, device=device)
        else:
            bn, bk = block_shape
            s1 = torch.empty(E, triton.cdiv(2 * N, bn), triton.cdiv(K, bk), dtype=torch.float32, device=device)
            s2 = torch.empty(E, triton.cdiv(K, bn), triton.cdiv(N, bk), dtype=torch.float32, device=device)
        return MoEWeights(w1, w2, dtype, block_shape, s1, s2)

    @property
    def act_dtype(self):
        return torch.float16 if self.dtype == "fp16" else torch.bfloat16

    def dequantized(self):
        """(w1, w2) in float32 for the reference (kept: the reference runs once per batch size)."""
        if getattr(self, "_deq", None) is None:
            if self.dtype != "fp8_w8a8":
                self._deq = (self.w1.float(), self.w2.float())
            else:
                self._deq = (dequantize_weight_fp8(self.w1, self.w1_scale, self.block_shape),
                             dequantize_weight_fp8(self.w2, self.w2_scale, self.block_shape))
        return self._deq


def check_config(cfg: dict, w: MoEWeights) -> None:
    """Raise ValueError for a config the kernel cannot run correctly with these weights."""
    for key in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"):
        if key not in cfg:
            raise ValueError("config lacks %s" % key)
    if w.block_shape is not None and w.block_shape[1] % cfg["BLOCK_SIZE_K"] != 0:
        raise ValueError("BLOCK_SIZE_K=%d does not divide the quantisation block k=%d"
                         % (cfg["BLOCK_SIZE_K"], w.block_shape[1]))


def _quant_act(x: torch.Tensor, w: MoEWeights):
    """Dynamic fp8 quantisation of activations: (q, scale, stride_asm, stride_ask)."""
    if w.block_shape is None:
        s = (x.abs().amax().float().clamp(min=1e-10) / FP8_MAX).reshape(1)
        q = (x.float() / s).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        return q, s, 0, 0
    rows, K = x.shape
    gk = w.block_shape[1]
    q = torch.empty(rows, K, dtype=torch.float8_e4m3fn, device=x.device)
    s = torch.empty(rows, triton.cdiv(K, gk), dtype=torch.float32, device=x.device)
    if rows:
        _group_quant_fp8[(rows, triton.cdiv(K, gk))](x, q, s, rows, K, x.stride(0), q.stride(0), s.stride(0),
                                                    GROUP=gk)
    return q, s, s.stride(0), s.stride(1)


def invoke_gemm(a, b, c, a_scale, b_scale, topk_weights, bufs: AlignBuffers, num_valid: int, cfg: dict,
                a_row_div: int, mul_routed_weight: bool, w: MoEWeights, a_scale_strides=(0, 0), compile_only=False):
    """Launch the grouped GEMM; compile_only compiles and loads it (raising triton's OutOfResources when
    it does not fit) without launching anything."""
    N = b.shape[1]
    K = b.shape[2]
    BM, BN, BK = cfg["BLOCK_SIZE_M"], cfg["BLOCK_SIZE_N"], cfg["BLOCK_SIZE_K"]
    assert BM == bufs.BM, "alignment was done for another BLOCK_SIZE_M"
    EM = bufs.max_padded
    quant = 0
    gn = gk = 1
    bss = (0, 0, 0)
    if w.dtype == "fp8_w8a8":
        if w.block_shape is None:
            quant = 1
        else:
            quant = 2
            gn, gk = w.block_shape
            bss = (b_scale.stride(0), b_scale.stride(1), b_scale.stride(2))
    grid = (triton.cdiv(EM, BM) * triton.cdiv(N, BN),)
    args = (a, b, c, a_scale if a_scale is not None else a, b_scale if b_scale is not None else a,
            topk_weights, bufs.sorted_ids, bufs.expert_ids, bufs.ntpp, N, K, EM, num_valid,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), b.stride(2), c.stride(0), c.stride(1),
            a_scale_strides[0], a_scale_strides[1], bss[0], bss[1], bss[2], cfg["GROUP_SIZE_M"])
    meta = dict(GROUP_N=gn, GROUP_K=gk, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, A_ROW_DIV=a_row_div,
                MUL_ROUTED_WEIGHT=mul_routed_weight, QUANT=quant, EVEN_K=(K % BK == 0),
                num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    launch_gemm(_moe_gemm, grid, args, meta, compile_only, CPU_COMPILE_SMEM_LIMIT)


def launch_gemm(kernel, grid, args, meta: dict, compile_only: bool, cpu_smem_limit=None) -> None:
    """Launch a grouped-GEMM kernel, or with compile_only compile and load it without launching anything.
    cpu_smem_limit (bytes; precompile workers, which compile for a GPU they cannot see) replaces loading:
    the compiled kernel's shared memory is checked against it as the loader would."""
    if not compile_only:
        kernel[grid](*args, **meta)
        return
    compiled = kernel.warmup(*args, grid=grid, **meta)
    if cpu_smem_limit is not None:
        shared = getattr(getattr(compiled, "metadata", None), "shared", 0) or 0
        if shared > cpu_smem_limit:
            from triton.runtime.errors import OutOfResources

            raise OutOfResources(shared, cpu_smem_limit, "shared memory")
        return
    init = getattr(compiled, "_init_handles", None)
    if init is not None:
        init()


class FusedMoE:
    """A preallocated fused-MoE call for one batch size and one (up, down) config pair: every buffer
    is static, so the whole call can be captured in a CUDA graph."""

    # The module's own config check and GEMM launch; fused_moe_quant.FusedMoE names its own.
    check_config = staticmethod(check_config)
    invoke_gemm = staticmethod(invoke_gemm)

    def __init__(self, w: MoEWeights, M: int, topk: int, cfg_up: dict, cfg_down: dict = None):
        cfg_down = cfg_down or cfg_up
        self.check_config(cfg_up, w)
        self.check_config(cfg_down, w)
        dev = w.w1.device
        self.w, self.M, self.topk = w, M, topk
        self.cfg_up, self.cfg_down = cfg_up, cfg_down
        numel = M * topk
        self.bufs_up = AlignBuffers(numel, w.E, cfg_up["BLOCK_SIZE_M"], dev)
        self.bufs_down = (self.bufs_up if cfg_down["BLOCK_SIZE_M"] == cfg_up["BLOCK_SIZE_M"]
                          else AlignBuffers(numel, w.E, cfg_down["BLOCK_SIZE_M"], dev))
        t = w.act_dtype
        self.x = torch.empty(M, w.K, dtype=t, device=dev)
        self.logits = torch.empty(M, w.E, dtype=torch.float32, device=dev)
        self.inter1 = torch.empty(numel, 2 * w.N, dtype=t, device=dev)
        self.inter2 = torch.empty(numel, w.N, dtype=t, device=dev)
        self.inter3 = torch.empty(numel, w.K, dtype=t, device=dev)
        self.out = torch.empty(M, w.K, dtype=t, device=dev)
        self.topk_w = None
        self.topk_ids = None

    def compile_gemms(self, op: str):
        """Compile (and load) the GEMM kernels op needs without launching any kernel, so compile workers
        never steal GPU time from a measurement running beside them."""
        w = self.w
        numel = self.M * self.topk
        tw = torch.empty(numel, dtype=torch.float32, device=w.w1.device)
        for which in (("up", "down") if op == "both" else (op,)):
            rows, width = (self.M, w.K) if which == "up" else (numel, w.N)
            a, a_s, extra = self._empty_activations(rows, width)
            if which == "up":
                self.invoke_gemm(a, w.w1, self.inter1, a_s, w.w1_scale, tw, self.bufs_up, numel, self.cfg_up,
                                 self.topk, False, w, *extra, compile_only=True)
            else:
                self.invoke_gemm(a, w.w2, self.inter3, a_s, w.w2_scale, tw, self.bufs_down, numel, self.cfg_down,
                                 1, True, w, *extra, compile_only=True)

    def _empty_activations(self, rows: int, width: int):
        """Activations of the GEMM input's dtype, shape and scales, uninitialised (for compiling):
        (a, a_scale or None, invoke_gemm's arguments after w)."""
        w = self.w
        dev = w.w1.device
        if w.dtype != "fp8_w8a8":
            return torch.empty(rows, width, dtype=w.act_dtype, device=dev), None, ((0, 0),)
        a = torch.empty(rows, width, dtype=torch.float8_e4m3fn, device=dev)
        if w.block_shape is None:
            return a, torch.empty(1, dtype=torch.float32, device=dev), ((0, 0),)
        a_s = torch.empty(rows, triton.cdiv(width, w.block_shape[1]), dtype=torch.float32, device=dev)
        return a, a_s, ((a_s.stride(0), a_s.stride(1)),)

    def _activations(self, x: torch.Tensor, which: str):
        """x quantised as the GEMM input wants it: (a, a_scale or None, invoke_gemm's arguments after w)."""
        if self.w.dtype != "fp8_w8a8":
            return x, None, ((0, 0),)
        a, a_s, sm, sk = _quant_act(x, self.w)
        return a, a_s, ((sm, sk),)

    def poison(self):
        for b in (self.inter1, self.inter2, self.inter3, self.out):
            b.fill_(float("nan"))

    def route(self):
        probs = torch.softmax(self.logits, dim=-1)
        tw, ti = torch.topk(probs, self.topk, dim=-1)
        self.topk_w = (tw / tw.sum(dim=-1, keepdim=True)).reshape(-1).contiguous()
        self.topk_ids = ti.to(torch.int32)

    def align(self):
        moe_align_block_size(self.topk_ids, self.bufs_up)
        if self.bufs_down is not self.bufs_up:
            moe_align_block_size(self.topk_ids, self.bufs_down)

    def up(self):
        w = self.w
        numel = self.M * self.topk
        a, a_s, extra = self._activations(self.x, "up")
        self.invoke_gemm(a, w.w1, self.inter1, a_s, w.w1_scale, self.topk_w, self.bufs_up, numel, self.cfg_up,
                         self.topk, False, w, *extra)
        _silu_and_mul[(numel,)](self.inter1, self.inter2, numel, w.N, self.inter1.stride(0), self.inter2.stride(0),
                                BLOCK=min(1024, triton.next_power_of_2(w.N)))

    def down(self):
        w = self.w
        numel = self.M * self.topk
        a, a_s, extra = self._activations(self.inter2, "down")
        self.invoke_gemm(a, w.w2, self.inter3, a_s, w.w2_scale, self.topk_w, self.bufs_down, numel,
                         self.cfg_down, 1, True, w, *extra)
        torch.sum(self.inter3.view(self.M, self.topk, w.K), dim=1, out=self.out)

    def __call__(self):
        self.route()
        self.align()
        self.up()
        self.down()
        return self.out


def reference(x: torch.Tensor, w: MoEWeights, topk_w: torch.Tensor, topk_ids: torch.Tensor, op: str = "both"):
    """float32 torch reference. topk_ids [M, topk]; topk_w [M*topk] or [M, topk].
    op "both": x [M, K] -> [M, K]; "up": x [M, K] -> SiLU-and-mul output [M*topk, N] in pair order;
    "down": x is the [M*topk, N] activations -> routing-weighted sum [M, K]."""
    w1, w2 = w.dequantized()
    M, topk = topk_ids.shape
    ids = topk_ids.reshape(-1).long()
    tw = topk_w.reshape(-1).float()
    numel = ids.numel()
    experts = ids.unique().tolist()
    if op == "down":
        act = x.float()
    else:
        xa = x.float().repeat_interleave(topk, dim=0)
        act = torch.empty(numel, w.N, dtype=torch.float32, device=x.device)
        for e in experts:
            sel = (ids == e).nonzero().squeeze(1)
            h = xa[sel] @ w1[e].t()
            act[sel] = torch.nn.functional.silu(h[:, :w.N]) * h[:, w.N:]
        if op == "up":
            return act
    y = torch.empty(numel, w.K, dtype=torch.float32, device=x.device)
    for e in experts:
        sel = (ids == e).nonzero().squeeze(1)
        y[sel] = act[sel] @ w2[e].t()
    y = y * tw[:, None]
    return y.view(M, topk, w.K).sum(dim=1)


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref||; inf when out holds a NaN or an infinity (the norm of the difference is
    then not finite). One host sync (both norms come back together): it runs on every measurement."""
    num, den = torch.stack([(out.float() - ref).norm(), ref.norm()]).tolist()
    if not math.isfinite(num):
        return float("inf")
    return num / max(den, 1e-30)


TOLERANCE = {"bf16": 2e-2, "fp16": 1e-2, "fp8_w8a8": 8e-2}
