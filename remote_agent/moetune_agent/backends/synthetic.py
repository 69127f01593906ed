# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A deterministic latency model of the fused-MoE kernel, for hosts without a GPU and for CI.

Everything it produces is simulated (``simulated = True``, device "SIMULATED_GPU"). The model is a
roofline with the effects that shape the real landscape (docs/servers.md sections 4 and 7): weights streamed
once per M tile (padding from BLOCK_SIZE_M), tile-quantisation waste in N, wave tails over the SMs,
memory-level parallelism from stages x tile bytes, warp count vs tile size, GROUP_SIZE_M's L2 reuse,
a launch overhead, and a few percent of hash-based pseudo-noise. Some configs fail deterministically:
"resources" when the shared-memory rule or the accumulator registers are exceeded, "compile" for a
fixed pseudo-random 1%.
"""

from __future__ import annotations

import hashlib
import math
import os
import struct
import time
from typing import Optional

from .. import options, space as space_mod
from ..kernel_types import CandidateError, KernelConfig, Shape, Timing
from . import SYNTHETIC, defaults as defaults_mod
from .base import Backend, file_sha256

__all__ = ["SIM_DEVICE", "SyntheticBackend"]

SIM_DEVICE = "SIMULATED_GPU"
_HBM_BPS = 4.0e12  # bytes/s achievable
_FLOPS = {1: 1.5e15, 2: 7.5e14, 4: 6.0e13}  # dense tensor throughput by element bytes
_SMS = 132
_LAUNCH_US = 3.0
_LATENCY_S = 0.9e-6  # memory latency that stages must cover


def _unit_hash(*parts: object) -> float:
    """Deterministic value in [0, 1) from the parts (independent of PYTHONHASHSEED)."""
    h = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return struct.unpack(">Q", h[:8])[0] / 2.0**64


class SyntheticBackend(Backend):
    name = SYNTHETIC
    simulated = True
    supports_tma = False

    def __init__(
        self,
        shape: Shape,
        device_index: int = 0,
        cache_dir: Optional[str] = None,
        device_name: Optional[str] = None,
        delay_s: Optional[float] = None,
        framework: Optional[str] = None,
    ) -> None:
        super().__init__(shape, device_index, cache_dir)
        self._device = device_name or SIM_DEVICE
        self.framework = framework or "sglang"
        if delay_s is None:
            # Lets tests make a run slow enough to kill it midway; 0 by default.
            delay_s = options.test_hooks(True).synthetic_delay_ms / 1000.0
        self._delay_s = delay_s

    def device_name(self):
        return self._device

    def shared_memory_per_block(self):
        return space_mod.HOPPER_SMEM_LIMIT

    # -- the model ---------------------------------------------------------------------------------
    def _fails(self, op: str, cfg: KernelConfig) -> Optional[CandidateError]:
        need = space_mod.smem_bytes(cfg, self.shape.dtype)
        if need > self.shared_memory_per_block():
            return CandidateError(
                "resources", "out of shared memory: needs %d bytes, limit %d" % (need, self.shared_memory_per_block())
            )
        acc_per_thread = cfg.BLOCK_SIZE_M * cfg.BLOCK_SIZE_N // (cfg.num_warps * 32)
        if acc_per_thread > 256:
            return CandidateError("resources", "out of registers: %d fp32 accumulators per thread" % acc_per_thread)
        if _unit_hash("compile", op, cfg.key()) < 0.01:
            return CandidateError("compile", "simulated compiler failure for %s" % cfg.key())
        return None

    def _gemm_us(self, rows_n: int, red_k: int, cfg: KernelConfig, m: int, routed_scale: bool) -> float:
        s = self.shape
        a_bytes, w_bytes = space_mod.element_bytes(s.dtype)
        pairs = m * s.topk
        active = s.E * (1.0 - (1.0 - float(s.topk) / s.E) ** m)
        active = max(1.0, min(float(s.E), active))
        per_expert = pairs / active
        m_tiles_e = max(1, int(math.ceil(per_expert / cfg.BLOCK_SIZE_M)))
        n_tiles = int(math.ceil(float(rows_n) / cfg.BLOCK_SIZE_N))
        n_waste = n_tiles * cfg.BLOCK_SIZE_N / float(rows_n)
        tiles = active * m_tiles_e * n_tiles
        # Bytes: each M tile of an expert streams that expert's weights; L2 absorbs part of the
        # re-reads, better with a larger GROUP_SIZE_M.
        l2_miss = 1.0 / (1.0 + 0.15 * math.log2(cfg.GROUP_SIZE_M) + 0.5) if m_tiles_e > 1 else 1.0
        w_reads = 1.0 + (m_tiles_e - 1) * l2_miss
        bytes_w = active * w_reads * rows_n * red_k * w_bytes * n_waste
        bytes_a = pairs * red_k * a_bytes * n_tiles * 0.1 + pairs * rows_n * 2
        # Concurrency: CTAs per SM limited by shared memory; bytes in flight limited by stages.
        smem = max(1, space_mod.smem_bytes(cfg, s.dtype))
        ctas_per_sm = max(1, min(8, self.shared_memory_per_block() // smem))
        concurrent = min(tiles, _SMS * ctas_per_sm)
        inflight = (
            max(1, cfg.num_stages - 1) * (cfg.BLOCK_SIZE_M * a_bytes + cfg.BLOCK_SIZE_N * w_bytes) * cfg.BLOCK_SIZE_K
        )
        bw = min(_HBM_BPS, concurrent * inflight / _LATENCY_S)
        mem_s = (bytes_w + bytes_a) / bw
        # Compute on padded rows; small tiles and a poor warp fit use the tensor cores badly.
        flops = 2.0 * active * m_tiles_e * cfg.BLOCK_SIZE_M * n_tiles * cfg.BLOCK_SIZE_N * red_k
        elems_per_thread = cfg.BLOCK_SIZE_M * cfg.BLOCK_SIZE_N / (cfg.num_warps * 32.0)
        warp_eff = 1.0 / (1.0 + abs(math.log2(max(elems_per_thread, 1.0) / 64.0)) * 0.12)
        tile_eff = min(1.0, (cfg.BLOCK_SIZE_M * cfg.BLOCK_SIZE_N) / (128.0 * 128.0)) ** 0.35
        k_eff = 1.0 / (1.0 + 32.0 / cfg.BLOCK_SIZE_K * 0.15)
        peak = _FLOPS.get(max(a_bytes, w_bytes) if w_bytes != 1 or a_bytes != 1 else 1, 7.5e14)
        comp_s = flops / (peak * warp_eff * tile_eff * k_eff)
        waves = tiles / float(_SMS * ctas_per_sm)
        tail = math.ceil(waves) / waves if waves > 1.0 else 1.0
        # Deep pipelines cost prologue time on short K loops.
        k_iters = max(1.0, float(red_k) / cfg.BLOCK_SIZE_K)
        prologue = 1.0 + 0.04 * max(0, cfg.num_stages - 2) / math.sqrt(k_iters)
        t = max(mem_s, comp_s * tail) * prologue + 0.25 * min(mem_s, comp_s)
        extra = 0.15e-6 * m if routed_scale else 0.0
        return t * 1e6 + extra

    def model_us(self, op: str, cfg: KernelConfig, m: int, cfg_down: Optional[KernelConfig] = None) -> float:
        s = self.shape
        if op == "up":
            us = self._gemm_us(2 * s.N, s.K, cfg, m, False)
        elif op == "down":
            us = self._gemm_us(s.K, s.N, cfg, m, True)
        else:
            us = (
                self._gemm_us(2 * s.N, s.K, cfg, m, False)
                + self._gemm_us(s.K, s.N, cfg_down or cfg, m, True)
                + _LAUNCH_US
            )
        return us + _LAUNCH_US + 1.0 + 0.002 * m

    # -- simulated compile ------------------------------------------------------------------------
    # MOETUNE_SYNTHETIC_COMPILE_MS (test/benchmark hook, default 0): each config costs that long to
    # "compile" once per run: in a CPU precompile worker, or on the GPU worker's first use when no worker
    # compiled it first. The run's cache folder holds a marker per compiled (op, config), shared by all of
    # the run's processes as Triton's cache is, so the scheduler's compile/timing overlap can be measured
    # on a machine without a GPU. Everything stays simulated.
    @staticmethod
    def _compile_s() -> float:
        return options.test_hooks(True).synthetic_compile_ms / 1000.0

    def _marker(self, op: str, cfg: KernelConfig) -> Optional[str]:
        if not self.cache_dir:
            return None
        return os.path.join(self.cache_dir, "synthetic-compiled", "%s-%s" % (op, cfg.key()))

    def _compile(self, op: str, cfg: KernelConfig) -> None:
        cost = self._compile_s()
        if cost and options.test_hooks(True).synthetic_compile_spread:
            # Test/benchmark hook: the cost spread over configs as space.compile_cost ranks them (the H200's
            # bf16 kernels took 0.3-1.5 s), MOETUNE_SYNTHETIC_COMPILE_MS for a 64x64x64 tile with 4 warps.
            from ..space import compile_cost

            cost *= compile_cost(cfg) / 3072.0
        marker = self._marker(op, cfg)
        if not cost or marker is None or os.path.exists(marker):
            return
        time.sleep(cost)
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return
        import multiprocessing

        with os.fdopen(fd, "w") as f:  # which process compiled it (a pool worker or a GPU worker)
            f.write(multiprocessing.current_process().name)

    def cpu_compile_info(self):
        """With a simulated compile cost the run gets CPU precompile workers, as for a GPU backend."""
        if not self._compile_s():
            return None
        return {"capability": 90, "device_name": self._device, "smem": self.shared_memory_per_block()}

    def warm_precompile(self):
        """A precompile worker's early start (test hook MOETUNE_TEST_WARM_LOG: one line per call, with the
        process and the time, so a test sees that the pool warmed before the GPU worker's info came)."""
        log = options.test_hooks(True).warm_log
        if log:
            import multiprocessing

            with open(log, "a", encoding="utf-8") as f:
                f.write("%s %.6f\n" % (multiprocessing.current_process().name, time.time()))

    # -- Backend ----------------------------------------------------------------------------------
    def precompile(self, op, cfg, m=None):
        err = self._fails(op, cfg)
        if err is not None:
            raise err
        self._compile(op, cfg)

    def measure(self, op, cfg, m, replays=10, cfg_down=None):
        hooks = options.test_hooks(True)
        fail = hooks.fail_measure  # test hook: every measurement fails like this
        if fail:
            raise CandidateError("other", fail)
        for c in (cfg, cfg_down):
            if c is not None:
                err = self._fails(op, c)
                if err is not None:
                    raise err
        for c in (cfg, cfg_down):
            if c is not None:
                self._compile(op, c)
        delay = self._delay_s
        slow = hooks.synthetic_slow_gpu  # test hook "INDEX:MS": one GPU much slower
        if slow:
            idx, _, ms = slow.partition(":")
            if idx.strip() == str(self.device_index):
                delay += float(ms or 0) / 1000.0
        if delay:
            time.sleep(delay)
        base = self.model_us(op, cfg, m, cfg_down)
        # Stable per-config bias (a "real" landscape is not perfectly smooth) plus per-sample noise.
        bias = 1.0 + 0.02 * (_unit_hash("bias", op, cfg.key(), m) - 0.5)
        n = max(1, min(int(replays), 20))
        samples = []
        for i in range(n):
            noise = 1.0 + 0.01 * (_unit_hash("noise", op, cfg.key(), m, replays, i) - 0.5)
            samples.append(round(base * bias * noise, 3))
        return Timing(samples)

    def check(self, op, cfg, m):
        hooks = options.test_hooks(True)
        slow = hooks.synthetic_check_ms  # test hook: a slow first call (a server's JIT)
        if slow:
            time.sleep(float(slow) / 1000.0)
        fail = hooks.fail_call  # test hook: the kernel cannot be called at all
        if fail:
            raise CandidateError("other", fail)
        err = self._fails(op, cfg)
        if err is not None:
            raise err
        if hooks.mismatch_cfg == cfg.key():  # test hook: a wrong-output kernel
            raise CandidateError("mismatch", "simulated wrong output: relative error 0.5 > tolerance")
        return 0.0

    def _default_file(self, op):
        """Test hook MOETUNE_SYNTHETIC_DEFAULT_FILE: an existing config file is the server's default
        (as a shipped or earlier tuned file is for the server backend); a _down file beside it for op down."""
        path = options.test_hooks(True).synthetic_default_file
        if not path:
            return None, None
        if op == "down":
            down = path[: -len(".json")] + "_down.json"
            path = down if os.path.exists(down) else path
        from ..serverconfig import configjson

        with open(path, encoding="utf-8") as f:
            entries, _ = configjson.parse_config_text(f.read())
        return entries, path

    def default_config(self, op, m):
        entries, _ = self._default_file(op)
        if entries:
            e = entries[min(entries, key=lambda k: abs(int(k) - m))]
            return KernelConfig.from_dict(e if isinstance(e, dict) else e.as_dict())
        return defaults_mod.heuristic(self.framework, self.shape, m)

    def default_source(self):
        entries, path = self._default_file("up")
        if entries:
            _, down = self._default_file("down")
            return {
                "kind": "file",
                "framework": self.framework,
                "file_name": os.path.basename(path),
                "path": path,
                "sha256": file_sha256(path),
                "down": {"kind": "file", "file_name": os.path.basename(down), "path": down, "sha256": file_sha256(down)}
                if down != path
                else {"kind": "up_config", "file_name": None, "path": None},
                "note": "simulated",
            }
        return {
            "kind": "heuristic",
            "framework": self.framework,
            "file_name": None,
            "path": None,
            "down": None,
            "note": "simulated: the %s built-in heuristic" % self.framework,
        }

    def roofline_us(self, op, m):
        s = self.shape
        _, w_bytes = space_mod.element_bytes(s.dtype)
        active = max(1.0, min(float(s.E), s.E * (1.0 - (1.0 - float(s.topk) / s.E) ** m)))
        up = active * 2 * s.N * s.K * w_bytes
        down = active * s.K * s.N * w_bytes
        b = {"up": up, "down": down}.get(op, up + down)
        return b / _HBM_BPS * 1e6
