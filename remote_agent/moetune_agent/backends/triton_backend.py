# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend over moetune's own Triton fused-MoE kernel (kernels/fused_moe.py).

Timing follows the reference tuners: the whole call (router top-k, alignment, GEMMs) captured 10 times
in one CUDA graph, fresh random router logits copied in before every replay, 5 warm-up replays (fewer when
fewer than 5 are timed), then `replays` timed replays; one sample = replay time / 10, in microseconds.
A screening unit (at most SCREEN_MAX_REPLAYS timed replays: it only ranks configs against each other at
one size) captures SCREEN_GRAPH_CALLS calls and times `launches` back-to-back launches of that graph per
sample, launches from the call's HBM floor (about SCREEN_TARGET_US of GPU time per sample), after one
warm-up sample. Measured on an H200 (issue 22, tools/timing_protocols.py): 3 calls instead of 10 per
sample kept the top 4 of 12 configs at M = 64, 1024 and 4096 with a uniform bias of +0.5-0.9%, while the
capture of 10 calls was most of a screening unit (3 of 6 ms with this kernel; ~50 of 57 ms through
SGLang's Python call path).

On a call path that is slow to capture (SLOW_CAPTURE_MS: the server test trees' Python stand-ins), a
re-timing unit (more replays: the head-to-head's rounds, the headroom check's re-timing) captures fewer
calls, launched back to back so that a sample still times GRAPH_CALLS calls, and keeps its prepared call
and graph for the next unit of the same (op, config, size) (KEEP_* below).

Every measurement is also a correctness check: the first (eager) run writes into poisoned buffers and
is compared with a float32 torch reference of the same inputs before any timing is recorded.

torch and triton are imported lazily; TRITON_CACHE_DIR is set from cache_dir before triton loads so
precompile() in CPU worker processes and measure() here share one cache.

Routing: fresh random router logits per replay, or, with a recorded routing file (per-token lists of
top-k expert ids from a real server), logits built so that the router's top-k picks exactly the
recorded experts of a window of consecutive recorded tokens (the real expert load), a new window per
replay. The router, alignment and GEMMs are then the same code path either way.

CPU compile mode (cpu_compile={"capability", "device_name", "smem"}): for precompile workers that must
not touch the GPU being timed - no GPU is visible to them (CUDA_VISIBLE_DEVICES=""), torch.cuda answers
as the GPU does (see cpu_compile.py) and every tensor is an uninitialised host tensor (virtual memory,
aligned like a GPU allocation, so Triton specialises exactly as for the GPU's tensors), so Triton
compiles for the GPU's target into the shared cache without a CUDA context, weights or launches.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Tuple

from .. import options
from ..kernel_types import CandidateError, KernelConfig, Shape, Timing
from ..work import GRAPH_CALLS
from . import TRITON, defaults as defaults_mod
from .base import Backend
from .timing import (
    RETIME_WARMUP_REPLAYS,
    SCREEN_GRAPH_CALLS,
    SCREEN_MAX_LAUNCHES,
    SCREEN_MAX_REPLAYS,
    floor_bytes,
    nominal_floor_us,
    screen_launches,
    screen_calls,
    sized_launches,
    warmup_replays,
)

__all__ = [
    "GRAPH_CALLS",
    "KEEP_MAX",
    "RETIME_WARMUP_REPLAYS",
    "SCREEN_GRAPH_CALLS",
    "SCREEN_MAX_LAUNCHES",
    "SCREEN_MAX_REPLAYS",
    "SLOW_GRAPH_CALLS",
    "TritonBackend",
    "classify",
    "floor_bytes",
    "load_kernel_module",
    "load_routing",
    "screen_calls",
    "screen_launches",
    "sglang_default_config",
    "sized_launches",
    "warmup_replays",
]

LOGIT_POOL = 16
# Re-timing units (more than SCREEN_MAX_REPLAYS replays: the head-to-head's rounds, the headroom check's
# re-timing) time the same (op, config, size) again and again, each time made, checked and captured anew:
# through SGLang's Python call path the capture of 10 calls took ~46 ms of a ~110 ms unit on the H200
# (tools/server_anatomy.py). Their prepared call and graph are kept instead (least recently used first
# out) while they fit in KEEP_FRACTION of the GPU's memory (at most KEEP_MAX_BYTES, KEEP_MAX entries):
# the same kernel on the same inputs, timed by the same replays. By default on call paths slow to capture
# only (_keeps); TritonBackend.keep_graphs True: on every path, False: on none (an open experiment).
KEEP_MAX = 96
# A call path whose capture costs more than SLOW_CAPTURE_MS of Python per call (the SGLang test tree's
# torch stand-in of moe_align_block_size: ~4.6 ms a call, against ~0.23 for moetune's kernel) has its
# re-timing units captured as SLOW_GRAPH_CALLS calls launched back to back GRAPH_CALLS / SLOW_GRAPH_CALLS
# times per sample: the same calls per sample on the GPU, a fifth of the capture.
SLOW_CAPTURE_MS = 1.0
# A unit's first (eager) call slower than this compiled a kernel on the GPU worker (a cache hit and a launch
# take milliseconds; a compile 0.3-8 s): counted in kept_stats, so a run shows kernels the pool missed.
SLOW_FIRST_CALL_S = 0.2
SLOW_GRAPH_CALLS = 2
KEEP_FRACTION = 0.05
KEEP_MAX_BYTES = 8 << 30


def load_kernel_module(name: str):
    """kernels/<name>.py: from the zipapp (moetune_agent/kernels/) or, in a checkout, the repo's kernels/."""
    try:
        return importlib.import_module("moetune_agent.kernels." + name)
    except ImportError:
        repo_kernels = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "kernels")
        repo_kernels = os.path.normpath(repo_kernels)
        if repo_kernels not in sys.path:
            sys.path.insert(0, repo_kernels)
        return importlib.import_module(name)


def sglang_default_config(shape: Shape, m: int) -> KernelConfig:
    """SGLang's built-in config when no tuned file exists (Triton's default warps 4 / stages 3)."""
    return defaults_mod.sglang_heuristic(shape, m)


def load_routing(path: str, E: int, topk: int):
    """The recorded top-k ids of a routing file (validated again: a worker must not index out of range)."""
    import json

    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    out = []
    for row in rows:
        ids = [int(v) for v in row]
        if len(ids) != topk or any(v < 0 or v >= E for v in ids):
            raise CandidateError("other", "routing file %s: a row is not %d expert ids in [0, %d)" % (path, topk, E))
        out.append(ids)
    if not out:
        raise CandidateError("other", "routing file %s holds no tokens" % path)
    return out


def classify(exc: BaseException) -> CandidateError:
    """Map a Triton/torch failure to a CandidateError kind."""
    if isinstance(exc, CandidateError):
        return exc
    name = type(exc).__name__
    text = str(exc)
    if name == "OutOfResources" or "out of resource" in text.lower():
        return CandidateError("resources", text.splitlines()[0] if text else name)
    if name == "OutOfMemoryError" or "out of memory" in text.lower():
        return CandidateError("oom", text.splitlines()[0] if text else name)
    if name in ("CompilationError", "CompileTimeAssertionFailure") or "compil" in name.lower():
        return CandidateError("compile", (text.splitlines() or [name])[0][:500])
    if isinstance(exc, ValueError):
        return CandidateError("compile", text)
    return CandidateError("other", "%s: %s" % (name, text.splitlines()[0] if text else ""))


class TritonBackend(Backend):
    name = TRITON
    simulated = False
    supports_tma = False
    # Open experiment (bench/RESULTS.md, stop 31): re-timing graphs kept on every path (True), on none
    # (False), or only on a call path slow to capture (None, the default); a benchmark sets it.
    keep_graphs: Optional[bool] = None
    # A call path slow to capture gets re-timing graphs of SLOW_GRAPH_CALLS calls (False: GRAPH_CALLS
    # always; the GPU tests fix the protocol with it).
    slow_capture_graphs = True

    def __init__(
        self,
        shape: Shape,
        device_index: int = 0,
        cache_dir: Optional[str] = None,
        seed: int = 0,
        framework: Optional[str] = None,
        routing_file: Optional[str] = None,
        cpu_compile: Optional[dict] = None,
        bandwidth_probe: Optional[str] = None,
    ):
        super().__init__(shape, device_index, cache_dir)
        # "torch": the HBM floor from the torch copy/read probe, skipping the nvcc build (seconds the
        # headroom check cannot spend); default: bandwidth.cu through nvcc where it exists.
        self.bandwidth_probe = bandwidth_probe
        if cache_dir:
            options.set_env(TRITON_CACHE_DIR=cache_dir)
        self.seed = seed
        self.framework = framework or "sglang"
        self.routing_file = routing_file
        self.cpu_compile = cpu_compile
        self._routing: Any = None
        self._torch: Any = None
        self._fm: Any = None
        self._weights: Any = None
        self._small: Any = None
        self._x: Dict[int, object] = {}
        self._logits: Dict[int, list] = {}
        self._inter: Dict[int, object] = {}
        self._ref: Dict[Tuple[str, int], object] = {}
        self._bw: Optional[dict] = None
        self._check_calls = 0
        self._stream: Any = None
        self._kept: "OrderedDict[tuple, tuple]" = OrderedDict()  # key -> (call, graph, bytes)
        self._kept_bytes = 0
        self._keep_budget: Optional[int] = None
        # the worker's counters (Scheduler.worker_stats): the kept re-timing graphs, and the first calls
        # slower than SLOW_FIRST_CALL_S (a kernel this GPU worker compiled itself: the pool's binary missed)
        self.kept_stats = {
            "hits": 0,
            "kept": 0,
            "evicted": 0,
            "slow_first_calls": 0,
            "slow_first_call_ms": 0,
            "sized_units": 0,
            "sized_launches": 0,
        }
        self._capture_ms: Dict[str, List[float]] = {}  # op -> Python ms per captured call, the last 5
        self._bw_folder: Any = None
        if cache_dir and not cpu_compile and bandwidth_probe != "torch":
            # the HBM probe's executable, kept beside the compile cache and built while torch imports
            self._bw_folder = os.path.join(os.path.dirname(os.path.abspath(cache_dir)), "bandwidth-probe")
            try:
                load_kernel_module("bandwidth").prebuild(self._bw_folder)
            except Exception:  # noqa: BLE001 - the probe then builds (or falls back) when it is asked
                pass

    # -- setup ------------------------------------------------------------------------------------
    def _ensure(self):
        if self._torch is not None:
            return
        if self.cpu_compile:
            from .cpu_compile import enter

            enter(self.cpu_compile)
        import torch

        if not torch.cuda.is_available():
            raise CandidateError("other", "no CUDA device visible: the triton backend needs a GPU")
        if not self.cpu_compile:
            torch.cuda.set_device(self.device_index)
        self._torch = torch
        self._fm = load_kernel_module("fused_moe")
        quant = load_kernel_module("fused_moe_quant")  # per-channel fp8/int8, int8_w8a16, int4_w4a16
        if quant.handles(self.shape.dtype, self.shape.block_shape, self.shape.per_channel_quant):
            self._fm = quant
        if self.cpu_compile:
            self._fm.CPU_COMPILE_SMEM_LIMIT = int(self.cpu_compile.get("smem") or 232448)
        if self.shape.dtype not in self._fm.TOLERANCE:
            raise CandidateError("other", "dtype %s is not supported by moetune's Triton kernel" % self.shape.dtype)

    @property
    def dev(self):
        if self.cpu_compile:
            return self._torch.device("cpu")
        return self._torch.device("cuda", self.device_index)

    # -- routing ----------------------------------------------------------------------------------
    def routing_info(self) -> dict:
        if not self.routing_file:
            return {"kind": "random", "path": None, "tokens": None}
        return {"kind": "recorded", "path": self.routing_file, "tokens": len(self._recorded())}

    def _recorded(self):
        if self._routing is None:
            self._routing = load_routing(self.routing_file, self.shape.E, self.shape.topk)
        return self._routing

    def _logits_for(self, m: int, window: int, g):
        """Router logits for m tokens: random, or with the recorded experts of window `window` far above
        the others so the router's top-k selects exactly them."""
        torch = self._torch
        logits = torch.randn(m, self.shape.E, device=self.dev, generator=g)
        if not self.routing_file:
            return logits
        rec = self._recorded()
        start = (window * m * 7919) % len(rec)
        rows = [rec[(start + i) % len(rec)] for i in range(m)]
        ids = torch.tensor(rows, dtype=torch.int64, device=self.dev)
        boost = torch.full((m, self.shape.topk), 20.0, device=self.dev) + torch.rand(
            m, self.shape.topk, device=self.dev, generator=g
        )
        return logits.scatter_(1, ids, boost)

    def weights(self):
        self._ensure()
        if self._weights is None:
            s = self.shape
            self._weights = self._fm.MoEWeights.random(s.E, s.N, s.K, s.dtype, s.block_shape, self.dev, self.seed)
        return self._weights

    def _inputs(self, m: int):
        torch = self._torch
        if m not in self._x:
            g = torch.Generator(device=self.dev).manual_seed(1000 + m)
            self._x[m] = torch.randn(m, self.shape.K, device=self.dev, generator=g).to(self.weights().act_dtype)
            self._logits[m] = [self._logits_for(m, i, g) for i in range(LOGIT_POOL)]
            n = m * self.shape.topk
            self._inter[m] = torch.randn(n, self.shape.N, device=self.dev, generator=g).to(self.weights().act_dtype)
        return self._x[m], self._logits[m], self._inter[m]

    @staticmethod
    def _cfg_dict(cfg: KernelConfig) -> dict:
        return cfg.as_dict()

    # -- facts ------------------------------------------------------------------------------------
    def device_name(self) -> str:
        self._ensure()
        return self._torch.cuda.get_device_name(self.device_index).replace(" ", "_")

    def shared_memory_per_block(self) -> int:
        self._ensure()
        import triton

        props = triton.runtime.driver.active.utils.get_device_properties(self.device_index)
        return int(props["max_shared_mem"])

    def cpu_compile_info(self) -> dict:
        """What a precompile worker needs to compile for this GPU without seeing it (cpu_compile.py)."""
        self._ensure()
        torch = self._torch
        p = torch.cuda.get_device_properties(self.device_index)
        return {
            "capability": p.major * 10 + p.minor,
            "device_name": torch.cuda.get_device_name(self.device_index),
            "smem": self.shared_memory_per_block(),
            "sm_count": p.multi_processor_count,
        }

    def warm_precompile(self) -> None:
        """A precompile worker, before its first task: load torch, Triton and the kernel module."""
        self._ensure()

    # -- running one call ---------------------------------------------------------------------------
    def _make(self, w, m: int, cfg: KernelConfig, cfg_down: Optional[KernelConfig]):
        try:
            return self._fm.FusedMoE(
                w, m, self.shape.topk, self._cfg_dict(cfg), self._cfg_dict(cfg_down) if cfg_down else None
            )
        except ValueError as e:
            raise CandidateError("compile", str(e))

    def _step(self, moe, op: str):
        moe.route()
        moe.align()
        if op in ("both", "up"):
            moe.up()
        if op in ("both", "down"):
            moe.down()

    def _result(self, moe, op: str):
        return moe.inter2 if op == "up" else moe.out

    def precompile(self, op: str, cfg: KernelConfig) -> None:
        """Compile and load the GEMM kernel(s) of cfg for op without launching anything (triton's
        warmup), on a tiny problem (E = top-k experts, M = 1) with the real N and K, so the
        specialisation equals the one measure() uses and the binary lands in the shared
        TRITON_CACHE_DIR. Raises CandidateError ("resources" when shared memory does not fit)."""
        self._ensure()
        s = self.shape
        if self._small is None:
            self._small = self._fm.MoEWeights.uninitialized(max(s.topk, 2), s.N, s.K, s.dtype, s.block_shape, self.dev)
        try:
            moe = self._make(self._small, 1, cfg, None)
            moe.compile_gemms(op)
        except Exception as e:  # noqa: BLE001 - every failure becomes a recorded CandidateError
            raise classify(e)

    def warm_aux(self) -> None:
        """Compile the small kernels around the GEMMs (alignment for every BLOCK_SIZE_M of the reference
        space, SiLU-and-mul, activation quantisation) so the first measurement pays no compile."""
        self._ensure()
        torch = self._torch
        s = self.shape
        ids = torch.randint(0, s.E, (1, s.topk), device=self.dev, dtype=torch.int32)
        for bm in (16, 32, 64, 128, 256):
            self._fm.moe_align_block_size(ids, self._fm.AlignBuffers(s.topk, s.E, bm, self.dev))
        bs = s.block_shape[1] if s.block_shape else 64
        cfg = KernelConfig(16, 64, min(64, bs), 1, 4, 2)
        small = self._fm.MoEWeights.random(max(s.topk, 2), s.N, s.K, s.dtype, s.block_shape, self.dev, 1)
        moe = self._make(small, 1, cfg, None)
        moe.x.normal_()
        moe.logits.normal_()
        moe()
        torch.cuda.synchronize(self.device_index)

    def _reference(self, op: str, m: int, moe):
        key = (op, m)
        if key not in self._ref:
            x, _logits, inter = self._inputs(m)
            self._ref[key] = self._fm.reference(
                inter if op == "down" else x, self.weights(), moe.topk_w, moe.topk_ids, op
            )
        return self._ref[key]

    def _verify(self, op: str, m: int, moe, ref):
        err = self._fm.rel_error(self._result(moe, op), ref)
        tol = self._fm.TOLERANCE[self.shape.dtype]
        if not (err <= tol):
            raise CandidateError(
                "mismatch", "relative error %.3g above tolerance %.3g (op %s, m %d)" % (err, tol, op, m)
            )
        return err

    def slow_capture(self, op: str) -> bool:
        """Whether op's call path is slow to capture (SLOW_CAPTURE_MS): each of its last captures was."""
        ms = self._capture_ms.get(op)
        return bool(ms) and min(ms) > SLOW_CAPTURE_MS and self.slow_capture_graphs

    def _protocol(self, op: str, m: int, replays: int) -> Tuple[int, int, int]:
        """(calls per graph, launches per sample, warm-up replays) of a unit with this many replays: a
        screening unit (<= SCREEN_MAX_REPLAYS) captures SCREEN_GRAPH_CALLS and launches from the floor."""
        screening = replays <= SCREEN_MAX_REPLAYS
        calls = SCREEN_GRAPH_CALLS if screening else GRAPH_CALLS
        launches = screen_launches(nominal_floor_us(self.shape, op, m)) if screening else 1
        if not screening and self.slow_capture(op):
            calls, launches = SLOW_GRAPH_CALLS, GRAPH_CALLS // SLOW_GRAPH_CALLS
        return calls, launches, warmup_replays(replays)

    def _prepare(self, op: str, cfg: KernelConfig, m: int, calls: int, cfg_down: Optional[KernelConfig] = None):
        """-> (call, graph): cfg's call at m, run once eagerly (compiles on first use) and checked against
        the reference, then captured `calls` times in one graph. Raises what the call raised."""
        torch = self._torch
        x, logits, inter = self._inputs(m)
        moe = self._make(self.weights(), m, cfg, cfg_down)
        moe.x.copy_(x)
        moe.poison()
        moe.inter2.copy_(inter)
        moe.logits.copy_(logits[0])
        t_first = time.perf_counter()
        self._step(moe, op)
        torch.cuda.synchronize()
        first_s = time.perf_counter() - t_first
        if first_s > SLOW_FIRST_CALL_S:
            self.kept_stats["slow_first_calls"] += 1
            self.kept_stats["slow_first_call_ms"] += int(first_s * 1000)
        # the reference for (op, m) uses logits[0]: the routing of this run is the same
        self._verify(op, m, moe, self._reference(op, m, moe))
        return moe, self._capture(moe, op, calls)

    def _release(self, graphs) -> None:
        live = [g for g in graphs if g is not None]
        for g in live:
            g.reset()
        if live:
            # the graph's private memory pool goes back to the driver now: kept as the allocator's
            # cache, every unit's pool added up until the GPU was full, a burden to every other
            # process on it (what torch.cuda.graph() did on entry; 0.3 ms)
            self._torch.cuda.empty_cache()

    def _replays(self, sides, m: int, replays: int, calls: int, launches: int, warm: int) -> List[List[float]]:
        """Time the sides [(call, graph), ...] replay by replay: in replay i every side runs once, in
        turn (the order reversed every other replay, so neither side always runs first), each with the
        routing of replay i. -> per side its samples (microseconds per call)."""
        torch = self._torch
        logits = self._inputs(m)[1]
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        samples: List[List[float]] = [[] for _ in sides]
        order = list(range(len(sides)))
        # a screening unit's first warm-up replay launches once and sizes the rest (sized_launches)
        sizing = launches > 1 and warm >= 1
        first: List[float] = []
        for i in range(warm + replays):
            n = 1 if (sizing and i == 0) else launches
            for j in order if i % 2 == 0 else order[::-1]:
                moe, graph = sides[j]
                moe.logits.copy_(logits[(i + 1) % len(logits)])
                start.record()
                for _ in range(n):
                    graph.replay()
                end.record()
                end.synchronize()
                per_call = start.elapsed_time(end) * 1000.0 / (calls * n)
                if i >= warm:
                    samples[j].append(per_call)
                elif sizing and i == 0:
                    first.append(per_call)
            if sizing and i == 0:
                launches = sized_launches(launches, min(first))
                self.kept_stats["sized_launches"] += launches
                self.kept_stats["sized_units"] += 1
                for j in order:  # the warm-up replay as long as a sample, as before the sizing
                    for _ in range(launches - 1):
                        sides[j][1].replay()
        return samples

    # -- kept re-timing graphs (KEEP_* above) ----------------------------------------------------------
    def _keeps(self, replays: int, op: str = "") -> bool:
        """Whether a unit of this many replays keeps its graphs: a re-timing unit, by default only on a
        call path slow to capture (slow_capture), where the capture is most of the unit. On moetune's own
        kernel (capture ~0.23 ms a call) the head-to-head's gains moved by up to 9 percentage points at
        M >= 256 in the one H200 call that kept its graphs (both of its tunes alike; bench/RESULTS.md,
        stop 31), which that call could not tell from the machine: keep_graphs True keeps them on every path
        (an open experiment until a quality run says so), False on none."""
        if replays <= SCREEN_MAX_REPLAYS:
            return False
        if self.keep_graphs is not None:
            return self.keep_graphs
        return self.slow_capture(op)

    def _budget(self) -> int:
        if self._keep_budget is None:
            try:
                _free, total = self._torch.cuda.mem_get_info(self.device_index)
            except Exception:  # noqa: BLE001 - no budget known: keep nothing
                total = 0
            self._keep_budget = int(min(KEEP_MAX_BYTES, KEEP_FRACTION * total))
        return self._keep_budget

    def _side(
        self,
        op: str,
        cfg: KernelConfig,
        m: int,
        calls: int,
        cfg_down: Optional[KernelConfig],
        keep: bool,
        pinned: Tuple = (),
    ):
        """-> (call, graph, kept): cfg's prepared call and graph, from the kept ones where it is there;
        a kept one is never evicted while its unit uses it (pinned: the keys of the unit's other sides)."""
        key = (op, cfg, cfg_down, m, calls)
        if keep:
            hit = self._kept.get(key)
            if hit is not None:
                self._kept.move_to_end(key)
                self.kept_stats["hits"] += 1
                return hit[0], hit[1], True
        torch = self._torch
        if keep:  # what every side at m shares (the weights, m's inputs) is not this side's memory
            self.weights()
            self._inputs(m)
        before = torch.cuda.memory_reserved(self.dev) if keep else 0
        moe, graph = self._prepare(op, cfg, m, calls, cfg_down)
        if not keep:
            return moe, graph, False
        nbytes = max(0, torch.cuda.memory_reserved(self.dev) - before)
        budget = self._budget()
        if nbytes > budget // 4:
            return moe, graph, False  # one that would crowd out the others: timed once, released
        while self._kept_bytes + nbytes > budget or len(self._kept) >= KEEP_MAX:
            if not self._evict(pinned):
                return moe, graph, False  # only the unit's own sides are kept: this one is not
        self._kept[key] = (moe, graph, nbytes)
        self._kept_bytes += nbytes
        self.kept_stats["kept"] += 1
        return moe, graph, True

    def _evict(self, pinned: Tuple = ()) -> bool:
        """Release the least recently used kept graph that is not pinned; -> whether there was one."""
        key = next((k for k in self._kept if k not in pinned), None)
        if key is None:
            return False
        moe, graph, nbytes = self._kept.pop(key)
        self._kept_bytes -= nbytes
        self.kept_stats["evicted"] += 1
        del moe
        self._release([graph])
        return True

    def _drop_kept(self) -> None:
        graphs = [g for (_moe, g, _n) in self._kept.values()]
        self._kept.clear()
        self._kept_bytes = 0
        if graphs and self._torch is not None:
            self._release(graphs)

    def measure(
        self, op: str, cfg: KernelConfig, m: int, replays: int = 10, cfg_down: Optional[KernelConfig] = None
    ) -> Timing:
        self._ensure()
        graph = None
        kept = False
        calls, launches, warm = self._protocol(op, m, replays)
        try:
            moe, graph, kept = self._side(op, cfg, m, calls, cfg_down, self._keeps(replays, op))
            return Timing(self._replays([(moe, graph)], m, replays, calls, launches, warm)[0])
        except Exception as e:  # noqa: BLE001
            raise classify(e)
        finally:
            if not kept:
                self._release([graph])
            del graph

    def measure_pair(self, op: str, cfg: KernelConfig, ref: KernelConfig, m: int, replays: int = 10):
        """cfg and ref in one unit, replay by replay alternating (Backend.measure_pair). At M = 4096 the
        default/best ratio of the same two configs moved from 1.50 to 1.70 with the timing protocol when
        they were timed in separate units (issue 19, tools/timing_protocols.py); paired, both sides see
        the same clocks."""
        self._ensure()
        graphs: list = []  # the ones to release (not kept)
        calls, launches, warm = self._protocol(op, m, replays)
        keep = self._keeps(replays, op)
        try:
            try:
                moe, graph, kept = self._side(op, cfg, m, calls, None, keep)
                mine = (moe, graph)
            except Exception as e:  # noqa: BLE001
                raise classify(e)
            if not kept:
                graphs.append(graph)
            ref_error = None
            try:
                moe, graph, kept = self._side(op, ref, m, calls, None, keep, pinned=((op, cfg, None, m, calls),))
                theirs = (moe, graph)
                if not kept:
                    graphs.append(graph)
            except Exception as e:  # noqa: BLE001 - the reference's failure is reported, cfg still timed
                err = classify(e)
                theirs, ref_error = None, "%s: %s" % (err.kind, err.message)
            try:
                sides = [mine] + ([theirs] if theirs is not None else [])
                got = self._replays(sides, m, replays, calls, launches, warm)
            except Exception as e:  # noqa: BLE001
                raise classify(e)
            return Timing(got[0]), (Timing(got[1]) if theirs is not None else None), ref_error
        finally:
            self._release(graphs)
            del graphs

    def _capture(self, moe, op: str, calls: int):
        """calls x the whole call in one CUDA graph, captured on a side stream. Not torch.cuda.graph():
        its entry synchronises and empties the allocator's cache before the capture, a quarter of the
        capture's cost (issue 22, tools/measure_anatomy.py: 3.1 against 2.3 ms for 10 calls); the eager
        call before has synchronised already, and measure() returns the graph's memory after reset."""
        torch = self._torch
        if self._stream is None:
            self._stream = torch.cuda.Stream(self.dev)
        stream = self._stream
        stream.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.stream(stream):
            graph.capture_begin()
            try:
                t0 = time.perf_counter()
                for _ in range(calls):
                    self._step(moe, op)
                ms = self._capture_ms.setdefault(op, [])
                ms.append(1000.0 * (time.perf_counter() - t0) / max(1, calls))
                del ms[:-5]
            finally:
                graph.capture_end()
        torch.cuda.current_stream().wait_stream(stream)
        return graph

    def call_floor_us(self, op: str, m: int) -> float:
        """The call's HBM floor at a nominal bandwidth (the screening launch count; no probe)."""
        return nominal_floor_us(self.shape, op, m)

    def check(self, op: str, cfg: KernelConfig, m: int) -> float:
        """Fresh random inputs and routing (a new seed per call), poisoned outputs, float32 reference."""
        self._ensure()
        torch = self._torch
        self._check_calls += 1
        g = torch.Generator(device=self.dev).manual_seed(777_000 + self._check_calls * 7919 + m)
        w = self.weights()
        try:
            moe = self._make(w, m, cfg, None)
            xin = torch.randn(m, self.shape.K, device=self.dev, generator=g).to(w.act_dtype)
            moe.x.copy_(xin)  # the reference reads xin: a server's inplace call overwrites moe.x
            moe.poison()
            inter = torch.randn(m * self.shape.topk, self.shape.N, device=self.dev, generator=g).to(w.act_dtype)
            moe.inter2.copy_(inter)
            moe.logits.copy_(self._logits_for(m, self._check_calls + 97, g))
            self._step(moe, op)
            torch.cuda.synchronize()
            ref = self._fm.reference(inter if op == "down" else xin, w, moe.topk_w, moe.topk_ids, op)
            return self._verify(op, m, moe, ref)
        except Exception as e:  # noqa: BLE001
            raise classify(e)

    def default_config(self, op: str, m: int) -> KernelConfig:
        """What the spec's server runs with no tuned file: its built-in heuristic (this backend cannot
        see the server's shipped files; the server backend can)."""
        return defaults_mod.heuristic(self.framework, self.shape, m)

    def default_source(self) -> dict:
        return {
            "kind": "heuristic",
            "framework": self.framework,
            "file_name": None,
            "path": None,
            "down": None,
            "note": "the %s built-in heuristic (this backend cannot read the server's "
            "shipped config files)" % self.framework,
        }

    # -- roofline ---------------------------------------------------------------------------------
    def bandwidth(self) -> dict:
        if self._bw is None:
            self._ensure()
            bw = load_kernel_module("bandwidth")
            self._bw = bw.measure(
                device=self.device_index, use_nvcc=self.bandwidth_probe != "torch", exe_folder=self._bw_folder
            )
        return self._bw

    def set_bandwidth(self, bw: dict) -> None:
        self._bw = dict(bw)

    def roofline_us(self, op: str, m: int) -> Optional[float]:
        """Bytes that must move at least once / measured bandwidth (the larger of streaming read and
        copy, so the floor stays a floor): the weights of the experts a uniform random routing is
        expected to hit, plus reading x and writing the output."""
        bw = self.bandwidth()
        gbps = max(bw.get("read_gbps", 0.0), bw.get("copy_gbps", 0.0))
        if gbps <= 0:
            return None
        return floor_bytes(self.shape, op, m) / (gbps * 1e9) * 1e6

    def close(self) -> None:
        self._drop_kept()
        self._x.clear()
        self._logits.clear()
        self._inter.clear()
        self._ref.clear()
        self._weights = None
        self._small = None
        if self._torch is not None:
            self._torch.cuda.empty_cache()
