# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""moetune's Triton fused-MoE kernel for the quantised weights the servers run besides bf16 and
fp8 per-tensor / block-wise (those stay in fused_moe.py, which this module reuses for routing, alignment
and SiLU-and-mul):

  fp8_w8a8 per-channel   SGLang's per_channel_quant=True: fp8 weights with one scale per output channel,
                         activations quantised per token (dynamic); fp32 accumulation, both scales
                         applied to the accumulator at the end (the servers' main fused-MoE kernel).
  int8_w8a8 per-channel  the same with int8 (round to nearest, +-127): int8 x int8 dots.
  int8_w8a16             int8 weights, one scale per output channel; bf16/fp16 activations: the weight
                         tile is converted to the activation type before the dot, the channel scale is
                         applied to the accumulator (the main kernel's use_int8_w8a16 path).
  int4_w4a16             group-quantised weights (block_shape [0, group]): two 4-bit weights per byte along
                         K (low nibble = even k), unsigned with offset 8, one scale per (output channel,
                         group); every loaded weight is scaled by its own group's scale before the dot
                         (the servers' separate wna16 Triton kernel, which is why no tile size is tied to
                         the group size); a K tile inside one group (group % BLOCK_SIZE_K == 0) loads one
                         scale per output channel and scales the tile's dot instead (same values, fewer
                         loads). With zero points (GPTQ/AWQ asymmetric, the servers' has_zp):
                         unsigned 4-bit weights, one 4-bit zero point per (output channel, group), two
                         output channels per byte (low nibble = even channel), as the wna16 kernels read
                         them: weight = (q - zero) * scale instead of (q - 8) * scale.

The config keys mean what they mean to that server kernel: BLOCK_SIZE_M/N/K the tile of one program,
GROUP_SIZE_M the program-id swizzle, num_warps/num_stages launch options; batch-dependent sizes are
runtime arguments, so one compile serves every batch size. The module offers the same names as
fused_moe.py (MoEWeights, FusedMoE, reference, rel_error, TOLERANCE, AlignBuffers, moe_align_block_size),
so the Triton backend can use either; handles() says which one a shape needs.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

try:  # packaged: moetune_agent.kernels.fused_moe_quant
    from . import fused_moe as _base
except ImportError:  # a checkout: kernels/ is on sys.path
    import fused_moe as _base

AlignBuffers = _base.AlignBuffers
moe_align_block_size = _base.moe_align_block_size
rel_error = _base.rel_error
reference = _base.reference
FP8_MAX = _base.FP8_MAX
_tile_of = _base._tile_of  # a jit helper: called by name from this module's kernel
INT8_MAX = 127.0
# As fused_moe.CPU_COMPILE_SMEM_LIMIT: set (bytes) in precompile workers that compile for a GPU they cannot
# see; compile_only then checks the compiled kernel's shared memory against it instead of loading it.
CPU_COMPILE_SMEM_LIMIT = None

# QMODE of the GEMM kernel below.
FP8_CHANNEL, INT8_CHANNEL, INT8_W8A16, INT4_GROUP = 1, 2, 3, 4
# ||out - ref|| / ||ref|| against a float32 reference on the dequantised weights and unquantised
# activations: the activation quantisation of w8a8 is part of the error.
TOLERANCE = {"fp8_w8a8": 8e-2, "int8_w8a8": 5e-2, "int8_w8a16": 2e-2, "int4_w4a16": 3e-2}


def handles(dtype: str, block_shape=None, per_channel_quant: bool = False) -> bool:
    """Whether this module (and not fused_moe.py) runs the shape's quantisation."""
    if dtype in ("fp8_w8a8", "int8_w8a8"):
        return bool(per_channel_quant) and not block_shape
    if dtype == "int8_w8a16":
        return not block_shape
    if dtype == "int4_w4a16":
        return bool(block_shape) and not block_shape[0] and block_shape[1] > 0
    return False


def qmode_of(dtype: str) -> int:
    return {"fp8_w8a8": FP8_CHANNEL, "int8_w8a8": INT8_CHANNEL, "int8_w8a16": INT8_W8A16,
            "int4_w4a16": INT4_GROUP}[dtype]


# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------
@triton.jit(do_not_specialize=["EM", "num_valid", "GROUP_SIZE_M"])
def _moe_gemm_q(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, topk_w_ptr, sorted_ptr, expert_ids_ptr, ntpp_ptr,
                b_zp_ptr,
                N, K, EM, num_valid,
                stride_am, stride_ak, stride_be, stride_bn, stride_bk, stride_cm, stride_cn,
                stride_bse, stride_bsn, stride_bsk,
                stride_bze, stride_bzn, stride_bzk,
                GROUP_SIZE_M,
                QGROUP: tl.constexpr, HAS_ZP: tl.constexpr, ONE_GROUP: tl.constexpr,
                BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                A_ROW_DIV: tl.constexpr, MUL_ROUTED_WEIGHT: tl.constexpr, QMODE: tl.constexpr,
                EVEN_K: tl.constexpr):
    pid_m, pid_n = _tile_of(tl.program_id(0), EM, N, GROUP_SIZE_M, BLOCK_SIZE_M, BLOCK_SIZE_N)

    ntpp = tl.load(ntpp_ptr)
    if pid_m * BLOCK_SIZE_M >= ntpp:
        return
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    pair = tl.load(sorted_ptr + offs_m)
    row_mask = pair < num_valid
    expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)

    offs_n = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_rows = (pair // A_ROW_DIV).to(tl.int64)
    a_ptrs = a_ptr + a_rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    if QMODE == 4:
        # two weights per byte along K: byte k // 2, nibble k % 2
        b_ptrs = b_ptr + expert * stride_be + (offs_k[:, None] // 2) * stride_bk + offs_n[None, :] * stride_bn
        shift = (offs_k[:, None] % 2) * 4
        bs_ptrs = b_scale_ptr + expert * stride_bse + offs_n[None, :] * stride_bsn
        if HAS_ZP:  # two output channels per zero-point byte
            bz_ptrs = b_zp_ptr + expert * stride_bze + (offs_n[None, :] // 2) * stride_bzn
            zshift = (offs_n[None, :] % 2) * 4
    else:
        b_ptrs = b_ptr + expert * stride_be + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=row_mask[:, None], other=0.0)
            b = tl.load(b_ptrs)
        else:
            kmask = offs_k < K - k * BLOCK_SIZE_K
            a = tl.load(a_ptrs, mask=row_mask[:, None] & kmask[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=kmask[:, None], other=0)
        if QMODE == 4 and ONE_GROUP:
            # The K tile lies in one group (QGROUP % BLOCK_SIZE_K == 0): one scale (and zero point) per
            # output channel for the whole tile, a [1, BLOCK_SIZE_N] load instead of one per weight, and the
            # scale applied to the tile's dot product (issue 22: the per-weight scale gather made int4
            # units several times slower than bf16 ones).
            grp1 = (k * BLOCK_SIZE_K) // QGROUP
            s1 = tl.load(bs_ptrs + grp1 * stride_bsk).to(tl.float32)
            if HAS_ZP:
                z1 = ((tl.load(bz_ptrs + grp1 * stride_bzk) >> zshift) & 0xF).to(tl.float32)
            else:
                z1 = 8.0
            wq = ((b >> shift) & 0xF).to(tl.float32) - z1   # small integers: exact in bf16/fp16
            acc += tl.dot(a, wq.to(a.dtype)) * s1
        elif QMODE == 4:
            grp = (k * BLOCK_SIZE_K + offs_k[:, None]) // QGROUP
            if EVEN_K:
                s = tl.load(bs_ptrs + grp * stride_bsk).to(tl.float32)
            else:
                s = tl.load(bs_ptrs + grp * stride_bsk, mask=kmask[:, None], other=0.0).to(tl.float32)
            if HAS_ZP:
                if EVEN_K:
                    zb = tl.load(bz_ptrs + grp * stride_bzk)
                else:
                    zb = tl.load(bz_ptrs + grp * stride_bzk, mask=kmask[:, None], other=0)
                z = ((zb >> zshift) & 0xF).to(tl.float32)
            else:
                z = 8.0
            w = (((b >> shift) & 0xF).to(tl.float32) - z) * s
            acc = tl.dot(a, w.to(a.dtype), acc=acc)
        elif QMODE == 3:
            acc = tl.dot(a, b.to(a.dtype), acc=acc)
        elif QMODE == 2:
            acc += tl.dot(a, b).to(tl.float32)  # int8 x int8 -> int32, exact per tile
        else:
            acc = tl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        if QMODE == 4:
            b_ptrs += (BLOCK_SIZE_K // 2) * stride_bk
        else:
            b_ptrs += BLOCK_SIZE_K * stride_bk

    if QMODE == 1 or QMODE == 2:
        a_s = tl.load(a_scale_ptr + a_rows, mask=row_mask, other=0.0)
        b_s = tl.load(b_scale_ptr + expert * stride_bse + offs_n * stride_bsn)
        acc = acc * a_s[:, None] * b_s[None, :]
    if QMODE == 3:
        b_s = tl.load(b_scale_ptr + expert * stride_bse + offs_n * stride_bsn)
        acc = acc * b_s[None, :]
    if MUL_ROUTED_WEIGHT:
        rw = tl.load(topk_w_ptr + pair, mask=row_mask, other=0.0)
        acc = acc * rw[:, None]
    out = acc.to(c_ptr.dtype.element_ty)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + pair[:, None].to(tl.int64) * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, out, mask=row_mask[:, None] & (offs_cn[None, :] < N))


@triton.jit(do_not_specialize=["rows"])
def _quant_per_token(x_ptr, q_ptr, s_ptr, rows, K, stride_x, stride_q, QMAX: tl.constexpr, IS_INT: tl.constexpr,
                     BLOCK: tl.constexpr):
    # one program per row: dynamic per-token scale = amax / QMAX
    r = tl.program_id(0).to(tl.int64)
    amax = tl.zeros((BLOCK,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        offs = k0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * stride_x + offs, mask=offs < K, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.abs(x))
    s = tl.maximum(tl.max(amax, 0), 1e-10) / QMAX
    for k0 in range(0, K, BLOCK):
        offs = k0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * stride_x + offs, mask=offs < K, other=0.0).to(tl.float32)
        v = tl.clamp(x / s, -QMAX, QMAX)
        if IS_INT:
            v = tl.where(v >= 0, v + 0.5, v - 0.5)  # round half away from zero, then truncate
        tl.store(q_ptr + r * stride_q + offs, v.to(q_ptr.dtype.element_ty), mask=offs < K)
    tl.store(s_ptr + r, s)


# ----------------------------------------------------------------------------------------------
# Weights
# ----------------------------------------------------------------------------------------------
def quantize_per_channel(w: torch.Tensor, dtype: str):
    """w [E, rows, cols] float -> (q, scales [E, rows] float32): one scale per output channel."""
    qmax = FP8_MAX if dtype == "fp8_w8a8" else INT8_MAX
    s = w.abs().amax(dim=2).float().clamp(min=1e-10) / qmax
    v = (w.float() / s[:, :, None]).clamp(-qmax, qmax)
    if dtype == "fp8_w8a8":
        return v.to(torch.float8_e4m3fn).contiguous(), s.contiguous()
    return v.round().to(torch.int8).contiguous(), s.contiguous()


def quantize_int4_group(w: torch.Tensor, group: int, scale_dtype=torch.bfloat16):
    """w [E, rows, cols] float -> (packed uint8 [E, rows, cols/2], scales [E, rows, cols/group]).
    Symmetric 4-bit: q = round(w / s) in [-8, 7], stored as q + 8; low nibble holds the even column."""
    E, R, C = w.shape
    if C % group or C % 2:
        raise ValueError("int4_w4a16: the reduction size %d must be a multiple of the group size %d" % (C, group))
    wg = w.float().view(E, R, C // group, group)
    s = (wg.abs().amax(dim=3).clamp(min=1e-10) / 7.0).to(scale_dtype)
    q = (wg / s.float()[..., None]).round().clamp(-8, 7).to(torch.int16) + 8
    q = q.view(E, R, C)
    packed = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).to(torch.uint8)
    return packed.contiguous(), s.contiguous()


def quantize_int4_group_zp(w: torch.Tensor, group: int, scale_dtype=torch.bfloat16):
    """w [E, rows, cols] float -> (packed uint8 [E, rows, cols/2], scales [E, rows, cols/group],
    zero points uint8 [E, rows/2, cols/group]). Asymmetric 4-bit (GPTQ/AWQ style): per group
    s = (max - min) / 15, zero = round(-min / s) in [0, 15], q = round(w / s) + zero in [0, 15]; weights
    pack along cols as in quantize_int4_group, zero points along rows (low nibble = even row)."""
    E, R, C = w.shape
    if C % group or C % 2 or R % 2:
        raise ValueError("int4_w4a16 with zero points: %d x %d does not pack (group %d)" % (R, C, group))
    wg = w.float().view(E, R, C // group, group)
    lo = wg.amin(dim=3).clamp(max=0.0)
    hi = wg.amax(dim=3).clamp(min=0.0)
    s = ((hi - lo).clamp(min=1e-10) / 15.0).to(scale_dtype)
    sf = s.float()
    z = (-lo / sf).round().clamp(0, 15)
    q = ((wg / sf[..., None]).round() + z[..., None]).clamp(0, 15).to(torch.int16).view(E, R, C)
    packed = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).to(torch.uint8)
    zi = z.to(torch.int16)
    zp = (zi[:, 0::2, :] | (zi[:, 1::2, :] << 4)).to(torch.uint8)
    return packed.contiguous(), s.contiguous(), zp.contiguous()


def unpack_zero_points(zp: torch.Tensor) -> torch.Tensor:
    """uint8 [E, rows/2, G] -> float [E, rows, G]."""
    E, half, G = zp.shape
    p = zp.to(torch.int16)
    z = torch.empty(E, half * 2, G, dtype=torch.float32, device=zp.device)
    z[:, 0::2, :] = (p & 0xF).float()
    z[:, 1::2, :] = ((p >> 4) & 0xF).float()
    return z


def dequantize_int4_group(packed: torch.Tensor, s: torch.Tensor, group: int, zp=None) -> torch.Tensor:
    E, R, half = packed.shape
    p = packed.to(torch.int16)
    q = torch.empty(E, R, half * 2, dtype=torch.float32, device=packed.device)
    q[:, :, 0::2] = (p & 0xF).float()
    q[:, :, 1::2] = ((p >> 4) & 0xF).float()
    z = 8.0 if zp is None else unpack_zero_points(zp).repeat_interleave(group, dim=2)
    return (q - z) * s.float().repeat_interleave(group, dim=2)


class MoEWeights(_base.MoEWeights):
    """w1 [E, 2N, K] and w2 [E, K, N] quantised (int4: packed along K to [E, 2N, K/2], [E, K, N/2]),
    with their scales; E, N, K are the logical sizes."""

    def __init__(self, w1, w2, dtype: str, block_shape, w1_scale, w2_scale, E: int, N: int, K: int,
                 act_dtype=torch.bfloat16, w1_zp=None, w2_zp=None):
        # Not the base constructor: the sizes cannot be read off packed tensors.
        self.w1, self.w2 = w1, w2
        self.dtype = dtype
        self.block_shape = tuple(block_shape) if block_shape else None
        self.w1_scale, self.w2_scale = w1_scale, w2_scale
        self.E, self.N, self.K = E, N, K
        self.N2 = 2 * N
        self.qmode = qmode_of(dtype)
        self.group = self.block_shape[1] if dtype == "int4_w4a16" else 0
        self._act = act_dtype
        self._deq = None
        self.w1_zp, self.w2_zp = w1_zp, w2_zp  # int4 zero points (None: symmetric, offset 8)

    @property
    def has_zp(self) -> bool:
        return self.w1_zp is not None

    def zp_of(self, b):
        """The zero points of weight tensor b (w1 or w2), None without."""
        return self.w1_zp if b is self.w1 else (self.w2_zp if b is self.w2 else None)

    @property
    def act_dtype(self):
        return self._act

    @staticmethod
    def random(E: int, N: int, K: int, dtype: str, block_shape=None, device="cuda", seed: int = 0,
               zero_points: bool = False) -> "MoEWeights":
        g = torch.Generator(device=device).manual_seed(seed)
        w1 = torch.randn(E, 2 * N, K, device=device, generator=g, dtype=torch.float32) / K ** 0.5
        w2 = torch.randn(E, K, N, device=device, generator=g, dtype=torch.float32) / N ** 0.5
        if zero_points:
            if dtype != "int4_w4a16":
                raise ValueError("zero points are for int4_w4a16 only (got %r)" % dtype)
            # an offset per expert and row, so the groups are not centred on zero (what zero points are for)
            w1 = w1 + 0.5 * w1.std() * torch.rand(E, 2 * N, 1, device=device, generator=g)
            w2 = w2 + 0.5 * w2.std() * torch.rand(E, K, 1, device=device, generator=g)
            q1, s1, z1 = quantize_int4_group_zp(w1, block_shape[1])
            del w1
            q2, s2, z2 = quantize_int4_group_zp(w2, block_shape[1])
            return MoEWeights(q1, q2, dtype, block_shape, s1, s2, E, N, K, w1_zp=z1, w2_zp=z2)
        if dtype == "int4_w4a16":
            group = block_shape[1]
            q1, s1 = quantize_int4_group(w1, group)
            del w1
            q2, s2 = quantize_int4_group(w2, group)
        elif dtype in ("fp8_w8a8", "int8_w8a8", "int8_w8a16"):
            q1, s1 = quantize_per_channel(w1, "fp8_w8a8" if dtype == "fp8_w8a8" else "int8")
            del w1
            q2, s2 = quantize_per_channel(w2, "fp8_w8a8" if dtype == "fp8_w8a8" else "int8")
        else:
            raise ValueError("fused_moe_quant does not run dtype %r" % dtype)
        return MoEWeights(q1, q2, dtype, block_shape, s1, s2, E, N, K)

    @staticmethod
    def uninitialized(E: int, N: int, K: int, dtype: str, block_shape=None, device="cuda",
                      zero_points: bool = False) -> "MoEWeights":
        """The right layout and no values (torch.empty: no kernel runs): for compiling only."""
        f32 = torch.float32
        if dtype == "int4_w4a16":
            group = block_shape[1]
            w1 = torch.empty(E, 2 * N, K // 2, dtype=torch.uint8, device=device)
            w2 = torch.empty(E, K, N // 2, dtype=torch.uint8, device=device)
            s1 = torch.empty(E, 2 * N, K // group, dtype=torch.bfloat16, device=device)
            s2 = torch.empty(E, K, N // group, dtype=torch.bfloat16, device=device)
            if zero_points:
                z1 = torch.empty(E, N, K // group, dtype=torch.uint8, device=device)
                z2 = torch.empty(E, K // 2, N // group, dtype=torch.uint8, device=device)
                return MoEWeights(w1, w2, dtype, block_shape, s1, s2, E, N, K, w1_zp=z1, w2_zp=z2)
        else:
            t = torch.float8_e4m3fn if dtype == "fp8_w8a8" else torch.int8
            w1 = torch.empty(E, 2 * N, K, dtype=t, device=device)
            w2 = torch.empty(E, K, N, dtype=t, device=device)
            s1 = torch.empty(E, 2 * N, dtype=f32, device=device)
            s2 = torch.empty(E, K, dtype=f32, device=device)
        return MoEWeights(w1, w2, dtype, block_shape, s1, s2, E, N, K)

    def dequantized(self):
        """(w1, w2) in float32 for the reference (kept: the reference runs once per batch size)."""
        if self._deq is None:
            if self.qmode == INT4_GROUP:
                self._deq = (dequantize_int4_group(self.w1, self.w1_scale, self.group, self.w1_zp),
                             dequantize_int4_group(self.w2, self.w2_scale, self.group, self.w2_zp))
            else:
                self._deq = (self.w1.float() * self.w1_scale[:, :, None], self.w2.float() * self.w2_scale[:, :, None])
        return self._deq


def check_config(cfg: dict, w: MoEWeights) -> None:
    """Raise ValueError for a config the kernel cannot run with these weights."""
    for key in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"):
        if key not in cfg:
            raise ValueError("config lacks %s" % key)
    if w.qmode == INT4_GROUP and cfg["BLOCK_SIZE_K"] % 2:
        raise ValueError("int4_w4a16: BLOCK_SIZE_K must be even (two weights per byte)")


# ----------------------------------------------------------------------------------------------
# Host side
# ----------------------------------------------------------------------------------------------
def quant_activations(x: torch.Tensor, w: MoEWeights, q=None, s=None):
    """Per-token dynamic quantisation for the w8a8 modes -> (q, scales [rows]); None for w*a16."""
    if w.qmode not in (FP8_CHANNEL, INT8_CHANNEL):
        return x, None
    rows, K = x.shape
    if q is None:
        q = torch.empty(rows, K, dtype=torch.float8_e4m3fn if w.qmode == FP8_CHANNEL else torch.int8, device=x.device)
        s = torch.empty(rows, dtype=torch.float32, device=x.device)
    if rows:
        _quant_per_token[(rows,)](x, q, s, rows, K, x.stride(0), q.stride(0),
                                  QMAX=FP8_MAX if w.qmode == FP8_CHANNEL else INT8_MAX,
                                  IS_INT=w.qmode == INT8_CHANNEL, BLOCK=min(4096, triton.next_power_of_2(K)))
    return q, s


def invoke_gemm(a, b, c, a_scale, b_scale, topk_weights, bufs: AlignBuffers, num_valid: int, cfg: dict,
                a_row_div: int, mul_routed_weight: bool, w: MoEWeights, compile_only=False):
    """Launch the quantised grouped GEMM (b is w1 or w2 with its scales); compile_only compiles and loads
    it (raising triton's OutOfResources when it does not fit) without launching anything."""
    N = b.shape[1]
    K = a.shape[1]  # logical reduction size (int4 weights hold K / 2 bytes)
    BM, BN, BK = cfg["BLOCK_SIZE_M"], cfg["BLOCK_SIZE_N"], cfg["BLOCK_SIZE_K"]
    assert BM == bufs.BM, "alignment was done for another BLOCK_SIZE_M"
    EM = bufs.max_padded
    bss = (b_scale.stride(0), b_scale.stride(1), b_scale.stride(2) if b_scale.dim() == 3 else 0)
    zp = w.zp_of(b) if w.qmode == INT4_GROUP else None
    bzs = (zp.stride(0), zp.stride(1), zp.stride(2)) if zp is not None else (0, 0, 0)
    grid = (triton.cdiv(EM, BM) * triton.cdiv(N, BN),)
    args = (a, b, c, a_scale if a_scale is not None else b_scale, b_scale, topk_weights, bufs.sorted_ids,
            bufs.expert_ids, bufs.ntpp, zp if zp is not None else b_scale, N, K, EM, num_valid,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), b.stride(2), c.stride(0), c.stride(1),
            bss[0], bss[1], bss[2], bzs[0], bzs[1], bzs[2], cfg["GROUP_SIZE_M"])
    meta = dict(QGROUP=max(1, w.group), HAS_ZP=zp is not None,
                ONE_GROUP=bool(w.qmode == INT4_GROUP and w.group % BK == 0), BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, A_ROW_DIV=a_row_div,
                MUL_ROUTED_WEIGHT=mul_routed_weight, QMODE=w.qmode, EVEN_K=(K % BK == 0),
                num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    _base.launch_gemm(_moe_gemm_q, grid, args, meta, compile_only, CPU_COMPILE_SMEM_LIMIT)


class FusedMoE(_base.FusedMoE):
    """fused_moe.FusedMoE for quantised weights: the same preallocated, graph-capturable call; only the
    two GEMMs (and the per-token activation quantisation of w8a8) differ."""

    check_config = staticmethod(check_config)
    invoke_gemm = staticmethod(invoke_gemm)

    def __init__(self, w: MoEWeights, M: int, topk: int, cfg_up: dict, cfg_down: dict = None):
        super().__init__(w, M, topk, cfg_up, cfg_down)
        # static buffers of the per-token activation quantisation (graph capture needs fixed addresses)
        self._qx = self._qi = None
        if w.qmode in (FP8_CHANNEL, INT8_CHANNEL):
            dev = w.w1.device
            numel = M * topk
            qt = torch.float8_e4m3fn if w.qmode == FP8_CHANNEL else torch.int8
            self._qx = (torch.empty(M, w.K, dtype=qt, device=dev), torch.empty(M, dtype=torch.float32, device=dev))
            self._qi = (torch.empty(numel, w.N, dtype=qt, device=dev),
                        torch.empty(numel, dtype=torch.float32, device=dev))

    def _empty_activations(self, rows: int, width: int):
        w = self.w
        dev = w.w1.device
        if w.qmode not in (FP8_CHANNEL, INT8_CHANNEL):
            return torch.empty(rows, width, dtype=w.act_dtype, device=dev), None, ()
        qt = torch.float8_e4m3fn if w.qmode == FP8_CHANNEL else torch.int8
        return torch.empty(rows, width, dtype=qt, device=dev), torch.empty(rows, dtype=torch.float32, device=dev), ()

    def _activations(self, x: torch.Tensor, which: str):
        a, a_s = quant_activations(x, self.w, *((self._qx if which == "up" else self._qi) or (None, None)))
        return a, a_s, ()
