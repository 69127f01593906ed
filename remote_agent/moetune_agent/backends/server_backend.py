# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend over the server's own fused-MoE kernel (the SGLang or vLLM installed on the host).

The spec's framework chooses the server (never "whichever imports first"); server_api.detect() reads
the installed API generation from its signatures and fails at once, with a sentence, on one it does not
know. Calls follow each server's own tuner:

  op "both" (one config file): fused_experts(...) under override_config(cfg), the whole MoE call -
      SGLang with (topk_weights, topk_ids, router_logits) + MoeRunnerConfig(inplace=True) after a
      published ServerArgs; vLLM with quant_config= (and inplace=False where the API has inplace=);
  op "up" / "down" (SGLang's separate up and _down files): the server's own moe_align_block_size and
      invoke_fused_moe_kernel for one GEMM, as SGLang's separate up/down tuner does; the down GEMM also
      with USE_TMA (a_use_tma/b_use_tma) where the server's kernel supports it.

Weights, inputs, the torch reference check, routing (random or recorded) and the timing method (10 calls
in a CUDA graph, fresh routing per replay) are the Triton backend's. "Default" is what the server would
run with no new file: it is asked through its own lookup (its shipped or existing tuned file for this
shape and this Triton, else its own heuristic), and default_source() says which.

Precompile: only in CPU compile mode (a worker that sees no GPU, host tensors, see cpu_compile.py): the
server's GEMM is invoked so Triton compiles it into the shared cache; a hook stops the call right after
the compile, before any launch. A GPU worker never precompiles (it compiles on first use, on its own GPU).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..kernel_types import CandidateError, KernelConfig, Shape
from . import SERVER, cpu_compile as cpu_mod
from . import server_api
from .base import file_sha256
from .triton_backend import TritonBackend, classify
from .server_configs import classes_for, nearest, six_keys, specialisation_class, to_config, vllm_padded

__all__ = ["ServerBackend", "classes_for", "nearest", "specialisation_class"]

_FOUND_RE = re.compile(r"from (\S.*?\.json)")


class _LogCapture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: List[str] = []

    def emit(self, record):
        try:
            self.lines.append(record.getMessage())
        except Exception:
            pass


class _ServerCall(object):
    """One preallocated call (batch size m, one config) of the server's kernel; looks like
    kernels/fused_moe.FusedMoE (x, logits, out, inter2, route(), poison()) to TritonBackend."""

    def __init__(self, backend: "ServerBackend", inner, cfg: KernelConfig):
        self.b = backend
        self.inner = inner
        self.cfg = six_keys(cfg)
        self.tma = bool(cfg.USE_TMA)
        self.last_out = None
        torch = backend._torch
        s = backend.shape
        w = inner.w
        numel = inner.M * s.topk
        dev = w.w1.device
        self.cache1 = torch.empty(numel, 2 * s.N, dtype=w.act_dtype, device=dev)
        self.cache3 = torch.empty(inner.M, s.topk, s.K, dtype=w.act_dtype, device=dev)
        self.a_sorted = None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def poison(self):
        self.inner.poison()
        for t in (self.cache1, self.cache3):
            t.fill_(float("nan"))

    # -- the whole call ------------------------------------------------------------------------------
    def whole(self):
        b, api, inner = self.b, self.b.api(), self.inner
        w = inner.w
        tw = inner.topk_w.view(inner.M, -1)
        kw = b.quant_kwargs()
        try:
            with api.override_config(self.cfg):
                if api.framework == "sglang":
                    api.fused_experts(inner.x, w.w1, w.w2, (tw, inner.topk_ids, inner.logits), b.runner_config(), **kw)
                    self.last_out = inner.x  # inplace=True, as SGLang's tuner calls it
                else:
                    args = dict(api.call_kwargs())
                    args.update(kw)
                    self.last_out = api.fused_experts(inner.x, w.w1, w.w2, tw, inner.topk_ids, **args)
        except BaseException:
            server_api.reset_override(api, None)
            raise

    # -- one GEMM (SGLang's separate up/down tuning) -------------------------------------------------
    def _align(self):
        api, s = self.b.api(), self.b.shape
        return api.align(self.inner.topk_ids, self.cfg["BLOCK_SIZE_M"], s.E)

    def gemm_up(self):
        w = self.inner.w
        sorted_ids, expert_ids, ntpp = self._align()
        self.b.invoke(
            self.inner.x,
            w.w1,
            self.cache1,
            w.w1_scale,
            self.inner.topk_w.view(self.inner.M, -1),
            self.inner.topk_ids,
            sorted_ids,
            expert_ids,
            ntpp,
            False,
            self.b.shape.topk,
            self.cfg,
        )

    def gemm_down(self):
        torch = self.b._torch
        w = self.inner.w
        s = self.b.shape
        numel = self.inner.M * s.topk
        sorted_ids, expert_ids, ntpp = self._align()
        if self.a_sorted is None:
            self.a_sorted = torch.empty(sorted_ids.shape[0], s.N, dtype=w.act_dtype, device=w.w1.device)
        # The activations in sorted order, as the up GEMM writes them for a TMA down GEMM (c_sorted);
        # done for both variants so TMA and plain are timed with the same work around the GEMM.
        torch.index_select(self.inner.inter2, 0, sorted_ids.clamp(max=numel - 1), out=self.a_sorted)
        a = self.a_sorted if self.tma else self.inner.inter2
        self.b.invoke(
            a,
            w.w2,
            self.cache3,
            w.w2_scale,
            self.inner.topk_w.view(self.inner.M, -1),
            self.inner.topk_ids,
            sorted_ids,
            expert_ids,
            ntpp,
            True,
            1,
            self.cfg,
            tma=self.tma,
            router_topk=s.topk,
        )
        torch.sum(self.cache3, dim=1, out=self.inner.out)


class ServerBackend(TritonBackend):
    name = SERVER
    supports_tma = False  # per instance once the server is known (api().supports_tma)

    def __init__(
        self,
        shape: Shape,
        device_index: int = 0,
        cache_dir: Optional[str] = None,
        framework: Optional[str] = None,
        routing_file: Optional[str] = None,
        cpu_compile: Optional[dict] = None,
        api: Optional[server_api.ServerApi] = None,
        bandwidth_probe: Optional[str] = None,
    ):
        super().__init__(
            shape,
            device_index,
            cache_dir,
            framework=framework or "sglang",
            routing_file=routing_file,
            cpu_compile=cpu_compile,
            bandwidth_probe=bandwidth_probe,
        )
        self._api = api
        self._published = False
        self._runner_cfg: Any = None
        self._quant_kw: Optional[Dict[str, Any]] = None
        self._lookup: Optional[Dict[str, Any]] = None
        # (framework, m, BLOCK_SIZE_M) -> the alignment tensors a CPU compile passes (see assignment())
        self._assign: Dict[Tuple[str, int, int], Any] = {}

    # -- the server -----------------------------------------------------------------------------------
    def api(self) -> server_api.ServerApi:
        if self._api is None:
            self._ensure()  # torch (and the GPU or the CPU compile mode) before the server imports
            try:
                self._api = server_api.detect(self.framework)
            except server_api.ServerApiError as e:
                raise CandidateError("other", str(e))
            except Exception as e:  # noqa: BLE001 - an import that dies half-way is the same failure
                raise CandidateError(
                    "other",
                    "%s is installed but its fused-MoE modules fail to import: %s: %s"
                    % (self.framework, type(e).__name__, e),
                )
        if self._api.framework == "sglang" and not self._published:
            self._publish_server_args()
        self.supports_tma = self._api.supports_tma
        return self._api

    def _publish_server_args(self):
        """SGLang's fused_experts reads the process-wide ServerArgs (its tuner publishes one): publish
        the defaults. The real ServerArgs validates a model in __post_init__; without one, the
        dataclass defaults are set field by field (what ServerArgs() would hold)."""
        ex = self._api.extras
        cls = ex["ServerArgs"]
        try:
            sa = server_api.call_filtered(cls, model_path="moetune-tuning")
        except Exception:
            sa = object.__new__(cls)
            for f in dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ():
                if f.default is not dataclasses.MISSING:
                    setattr(sa, f.name, f.default)
                elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                    setattr(sa, f.name, f.default_factory())  # type: ignore[misc]
                else:
                    setattr(sa, f.name, None)
        ex["publish_server_args"](sa)
        self._published = True

    def runner_config(self):
        if self._runner_cfg is None:
            cls = self.api().extras["MoeRunnerConfig"]
            s = self.shape
            want = {
                "inplace": True,
                "num_experts": s.E,
                "num_local_experts": s.E,
                "top_k": s.topk,
                "hidden_size": s.K,
                "intermediate_size_per_partition": s.N,
                "activation": "silu",
                "is_gated": True,
            }
            names = (
                [f.name for f in dataclasses.fields(cls)]
                if dataclasses.is_dataclass(cls)
                else server_api.params_of(cls)
            )
            self._runner_cfg = cls(**{k: v for k, v in want.items() if k in names})
        return self._runner_cfg

    def quant_kwargs(self) -> Dict[str, Any]:
        if self._quant_kw is None:
            w = self.weights()
            try:
                self._quant_kw = self.api().quant_kwargs(
                    self.shape.dtype, w.w1_scale, w.w2_scale, self.shape.block_shape, self.shape.per_channel_quant
                )
            except server_api.ServerApiError as e:
                raise CandidateError("other", str(e))
        return self._quant_kw

    def invoke(
        self,
        a,
        b,
        c,
        b_scale,
        topk_w,
        topk_ids,
        sorted_ids,
        expert_ids,
        ntpp,
        mul_routed,
        top_k,
        cfg,
        tma=False,
        router_topk=None,
    ):
        """One GEMM through the server's invoke_fused_moe_kernel, keywords filtered by its signature."""
        api = self.api()
        import triton.language as tl

        dt = self.shape.dtype
        kw = dict(
            A=a,
            B=b,
            bias=None,
            C=c,
            A_scale=None,
            B_scale=b_scale,
            B_zp=None,
            topk_weights=topk_w,
            topk_ids=topk_ids,
            sorted_token_ids=sorted_ids,
            expert_ids=expert_ids,
            num_tokens_post_padded=ntpp,
            mul_routed_weight=mul_routed,
            top_k=top_k,
            config=dict(cfg),
            compute_type=tl.float16 if dt == "fp16" else tl.bfloat16,
            use_fp8_w8a8=dt == "fp8_w8a8",
            use_int8_w8a8=dt == "int8_w8a8",
            use_int8_w8a16=dt == "int8_w8a16",
            use_int4_w4a16=dt == "int4_w4a16",
            per_channel_quant=bool(self.shape.per_channel_quant),
            block_shape=list(self.shape.block_shape) if self.shape.block_shape else None,
            filter_expert=False,
        )
        if tma:
            kw.update(a_use_tma=True, b_use_tma=True)
        if router_topk is not None:
            kw["router_topk"] = router_topk
        server_api.call_filtered(api.invoke_gemm, **kw)

    # -- Backend ----------------------------------------------------------------------------------------
    def _check_op(self, op: str, cfg: KernelConfig):
        api = self.api()
        if op in ("up", "down") and not api.supports_separate:
            raise CandidateError(
                "other",
                "%s %s (%s) reads one config for both GEMMs and has no separate up/down "
                'entry point: tune it with ops "up"' % (api.framework, api.version, api.generation),
            )
        if cfg.USE_TMA and (op != "down" or not api.supports_tma):
            raise CandidateError(
                "other",
                "USE_TMA is only for the down GEMM of a server kernel that supports TMA "
                "(%s %s: %s)" % (api.framework, api.version, "supported" if api.supports_tma else "not supported"),
            )

    def _make(self, w, m: int, cfg: KernelConfig, cfg_down: Optional[KernelConfig]):
        self.api()
        inner = super()._make(
            w,
            m,
            KernelConfig(
                *(
                    getattr(cfg, k)
                    for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages")
                )
            ),
            None,
        )
        return _ServerCall(self, inner, cfg)

    def _step(self, moe, op: str):
        moe.route()
        if op == "both":
            moe.whole()
        elif op == "up":
            moe.gemm_up()
        else:
            moe.gemm_down()

    def _result(self, moe, op: str):
        if op == "both":
            return moe.last_out
        if op == "up":
            torch = self._torch
            c1 = moe.cache1.float()
            n = self.shape.N
            return torch.nn.functional.silu(c1[:, :n]) * c1[:, n:]
        return moe.inner.out

    def measure(self, op, cfg, m, replays=10, cfg_down=None):
        self._check_op(op, cfg)
        return super().measure(op, cfg, m, replays, cfg_down)

    def measure_pair(self, op, cfg, ref, m, replays=10):
        self._check_op(op, cfg)
        try:
            self._check_op(op, ref)
        except CandidateError as e:
            return super().measure(op, cfg, m, replays), None, "%s: %s" % (e.kind, e.message)
        return super().measure_pair(op, cfg, ref, m, replays)

    def check(self, op, cfg, m):
        self._check_op(op, cfg)
        return super().check(op, cfg, m)

    def precompile(self, op: str, cfg: KernelConfig, m: int = 1) -> None:
        """CPU compile mode only (see the module comment): compile the server's GEMM(s) of cfg for op
        at batch size m (the server's kernel specialises on sizes) on meta tensors."""
        if not self.cpu_compile:
            return
        api = self.api()
        self._check_op(op, cfg)
        if not api.supports_separate:
            if self._vllm_precompile_ok():
                self._precompile_vllm(cfg, m)
                return
            raise CandidateError("other", "%s %s: no GEMM entry point to compile ahead" % (api.framework, api.version))
        import importlib

        torch = self._torch
        s = self.shape
        fns = cpu_mod.jit_functions_of(importlib.import_module(api.invoke_gemm.__module__))
        dev = torch.device("cpu")  # uninitialised host tensors: virtual memory, GPU-like alignment
        wt = torch.float8_e4m3fn if s.dtype == "fp8_w8a8" else (torch.float16 if s.dtype == "fp16" else torch.bfloat16)
        at = torch.float16 if s.dtype == "fp16" else torch.bfloat16
        numel = m * s.topk
        ids = torch.zeros(m, s.topk, dtype=torch.int32, device=dev)
        tw = torch.empty(m, s.topk, dtype=torch.float32, device=dev)
        bm = cfg.BLOCK_SIZE_M

        def align():
            try:
                return api.align(ids, bm, s.E)
            except Exception:  # an align op that only runs on the GPU: its documented output sizes
                padded = numel * bm if numel < s.E + 1 else numel + (s.E + 1) * (bm - 1)
                return (
                    torch.empty(padded, dtype=torch.int32, device=dev),
                    torch.empty(-(-padded // bm), dtype=torch.int32, device=dev),
                    torch.empty(1, dtype=torch.int32, device=dev),
                )

        sorted_ids, expert_ids, ntpp = self.assignment("sglang", m, bm, align)
        w1 = torch.empty(s.E, 2 * s.N, s.K, dtype=wt, device=dev)
        w2 = torch.empty(s.E, s.K, s.N, dtype=wt, device=dev)
        s1 = s2 = None
        if s.dtype == "fp8_w8a8":
            if s.block_shape:
                bn, bk = s.block_shape
                s1 = torch.empty(s.E, -(-2 * s.N // bn), -(-s.K // bk), dtype=torch.float32, device=dev)
                s2 = torch.empty(s.E, -(-s.K // bn), -(-s.N // bk), dtype=torch.float32, device=dev)
            else:
                s1 = torch.empty(s.E, dtype=torch.float32, device=dev)
                s2 = torch.empty(s.E, dtype=torch.float32, device=dev)
        six = six_keys(cfg)
        gemms = []
        if op in ("both", "up"):
            gemms.append(
                lambda: self.invoke(
                    torch.empty(m, s.K, dtype=at, device=dev),
                    w1,
                    torch.empty(numel, 2 * s.N, dtype=at, device=dev),
                    s1,
                    tw,
                    ids,
                    sorted_ids,
                    expert_ids,
                    ntpp,
                    False,
                    s.topk,
                    six,
                )
            )
        if op in ("both", "down"):
            rows = sorted_ids.shape[0] if cfg.USE_TMA else numel
            gemms.append(
                lambda: self.invoke(
                    torch.empty(rows, s.N, dtype=at, device=dev),
                    w2,
                    torch.empty(m, s.topk, s.K, dtype=at, device=dev),
                    s2,
                    tw,
                    ids,
                    sorted_ids,
                    expert_ids,
                    ntpp,
                    True,
                    1,
                    six,
                    tma=bool(cfg.USE_TMA),
                    router_topk=s.topk,
                )
            )
        self._compile_gemms(fns, gemms)

    def assignment(self, kind: str, m: int, bm: int, make: Callable[[], Any]) -> Any:
        """The alignment tensors (sorted token ids, expert ids, padded count) of a CPU compile at batch size
        m and BLOCK_SIZE_M bm, made once per process: they depend on nothing else (the routing is all
        zeros, only their sizes matter to the compile), and making them runs the server's own alignment
        on the host, which the H200 profiles of a vLLM tune put at 0.27-0.51 s a compile through the test
        tree's torch stand-in (~0.1 s a compile after its first, whose lazy imports cost ~4 s: see
        warm_precompile). Reused tensors keep their data pointers, so Triton specialises every compile
        that passes them alike."""
        key = (kind, int(m), int(bm))
        got = self._assign.get(key)
        if got is None:
            got = self._assign[key] = make()
        return got

    def _compile_gemms(self, fns, gemms) -> None:
        """Run each GEMM call until Triton has compiled its kernel (the hook stops it before the launch);
        a compile error is the candidate's, anything else a failed precompile."""
        for gemm in gemms:
            before = {id(k) for k in cpu_mod.compiled_kernels(fns)}
            err = None
            try:
                with cpu_mod.stop_after_compile():
                    gemm()
            except cpu_mod.CompiledOnly:
                pass
            except Exception as e:  # noqa: BLE001 - a launch after a compile cannot work here either
                err = e
            new = [k for k in cpu_mod.compiled_kernels(fns) if id(k) not in before]
            if not new and err is not None:
                name = type(err).__name__
                if name in ("CompilationError", "CompileTimeAssertionFailure", "OutOfResources"):
                    raise classify(err)
                raise CandidateError(
                    "other",
                    "CPU compile of the server's GEMM failed: %s: %s"
                    % (name, str(err).splitlines()[0] if str(err) else ""),
                )
            try:
                cpu_mod.check_shared(new, int(self.cpu_compile.get("smem") or 0))
            except Exception as e:  # noqa: BLE001
                raise classify(e)

    # -- vLLM: its two GEMMs as its fused_experts calls them ---------------------------------------------
    def _vllm_precompile_ok(self) -> bool:
        """vLLM has no separate up/down tuning, but its fused_experts is two calls of one GEMM entry point
        with tensors whose shapes follow from the batch size alone: compiled ahead here they are cache hits
        on the GPU worker (issue 22: without it each kernel compiled on the GPU worker, ~1.1 s a unit).
        Unquantised dtypes only: the quantised paths quantise the activations on the GPU first."""
        api = self.api()
        return (
            api.framework == "vllm"
            and api.extras.get("precompile_gemm") is not None
            and self.shape.dtype in ("bf16", "fp16")
        )

    vllm_padded = staticmethod(vllm_padded)

    def _vllm_assignment(self, ids, bm: int):
        """(sorted_token_ids or None, expert_ids, num_tokens_post_padded) as vLLM's fused_experts builds
        them for these ids: its own _prepare_expert_assignment where it runs on the host (the naive
        small-batch path; the stand-in trees), else tensors of the sizes its align op allocates."""
        api, torch, s = self.api(), self._torch, self.shape
        prep = api.extras.get("prepare_assignment")
        numel = ids.numel()
        if prep is not None:
            try:
                return server_api.call_filtered(
                    prep, ids, {"BLOCK_SIZE_M": bm}, ids.shape[0], s.topk, s.E, None, ignore_invalid_experts=True
                )
            except Exception:  # noqa: BLE001 - the align op is a GPU kernel on a real vLLM
                pass
            if numel * 4 <= s.E:  # the naive path's rule, should the call above have failed for another reason
                return None, ids.view(-1), torch.empty(1, dtype=torch.int32, device=ids.device)
        padded = self.vllm_padded(numel, bm, s.E)
        return (
            torch.empty(padded, dtype=torch.int32, device=ids.device),
            torch.empty(-(-padded // bm), dtype=torch.int32, device=ids.device),
            torch.empty(1, dtype=torch.int32, device=ids.device),
        )

    def _precompile_vllm(self, cfg: KernelConfig, m: int) -> None:
        import importlib
        import triton.language as tl

        api, torch, s = self.api(), self._torch, self.shape
        fn = api.extras["precompile_gemm"]
        fns = cpu_mod.jit_functions_of(importlib.import_module(fn.__module__))
        dev = torch.device("cpu")
        at = torch.float16 if s.dtype == "fp16" else torch.bfloat16
        numel = m * s.topk
        ids = torch.zeros(m, s.topk, dtype=torch.int32, device=dev)
        tw = torch.empty(m, s.topk, dtype=torch.float32, device=dev)
        sorted_ids, expert_ids, ntpp = self.assignment(
            "vllm", m, cfg.BLOCK_SIZE_M, lambda: self._vllm_assignment(ids, cfg.BLOCK_SIZE_M)
        )
        # fused_experts_impl's buffers: one flat cache for the up output (M, topk, 2N) and the down output
        # (M, topk, K), the activation's output (M*topk, N) apart
        cache13 = torch.empty(numel * max(2 * s.N, s.K), dtype=at, device=dev)
        c1 = cache13[: numel * 2 * s.N].view(m, s.topk, 2 * s.N)
        c3 = cache13[: numel * s.K].view(m, s.topk, s.K)
        c2 = torch.empty(numel, s.N, dtype=at, device=dev)
        w1 = torch.empty(s.E, 2 * s.N, s.K, dtype=at, device=dev)
        w2 = torch.empty(s.E, s.K, s.N, dtype=at, device=dev)
        common = dict(
            A_scale=None,
            B_scale=None,
            B_zp=None,
            topk_weights=tw,
            sorted_token_ids=sorted_ids,
            expert_ids=expert_ids,
            num_tokens_post_padded=ntpp,
            config=six_keys(cfg),
            compute_type=tl.float16 if s.dtype == "fp16" else tl.bfloat16,
            use_fp8_w8a8=False,
            use_int8_w8a8=False,
            use_int8_w8a16=False,
            use_int4_w4a16=False,
            per_channel_quant=False,
            block_shape=None,
            B_bias=None,
        )
        x = torch.empty(m, s.K, dtype=at, device=dev)
        self._compile_gemms(
            fns,
            [
                lambda: server_api.call_filtered(fn, A=x, B=w1, C=c1, mul_routed_weight=False, top_k=s.topk, **common),
                lambda: server_api.call_filtered(fn, A=c2, B=w2, C=c3, mul_routed_weight=True, top_k=1, **common),
            ],
        )

    # -- what the server runs with no new file ------------------------------------------------------------
    def _server_lookup(self) -> Dict[str, Any]:
        if self._lookup is not None:
            return self._lookup
        api = self.api()
        s = self.shape
        cap = _LogCapture()
        loggers = [logging.getLogger(n) for n in ("sglang", "vllm")]
        levels = [lg.level for lg in loggers]
        for lg in loggers:
            lg.addHandler(cap)
            lg.setLevel(logging.INFO)
        try:
            up, up_name = server_api.lookup_source(api, s.E, s.N, s.dtype, s.block_shape, s.per_channel_quant, False)
            down, down_name = (None, None)
            if api.framework == "sglang":
                down, down_name = server_api.lookup_source(
                    api, s.E, s.N, s.dtype, s.block_shape, s.per_channel_quant, True
                )
        except server_api.ServerApiError as e:
            raise CandidateError("other", str(e))
        finally:
            for lg, lv in zip(loggers, levels):
                lg.removeHandler(cap)
                lg.setLevel(lv)
        found = [m.group(1) for line in cap.lines for m in [_FOUND_RE.search(line)] if m]

        def path_of(name):
            for p in found:
                if name and p.endswith(name):
                    return p
            return None

        up_path = path_of(up_name)
        if up and up_path is None and api.framework == "vllm":
            up_path = server_api.vllm_search(api.config_module, up_name)[1]
        # SGLang answers a missing _down file with the up configs (and says so): that is no down file
        if down is not None and any("Down MoE config file not found" in line for line in cap.lines):
            down = None
        self._lookup = {
            "up": up,
            "up_name": up_name,
            "up_path": up_path,
            "down": down,
            "down_name": down_name,
            "down_path": path_of(down_name),
            "log": cap.lines[-6:],
        }
        return self._lookup

    def _heuristic(self, m: int) -> KernelConfig:
        api = self.api()
        s = self.shape
        try:
            d = server_api.call_filtered(
                api.config_module.get_default_config,
                M=m,
                E=s.E,
                N=s.N,
                K=s.K,
                topk=s.topk,
                dtype=server_api.config_dtype(s.dtype, api.framework),
                is_marlin=False,
                block_shape=list(s.block_shape) if s.block_shape else None,
            )
        except Exception as e:  # noqa: BLE001
            raise CandidateError(
                "other",
                "%s %s: its default-config heuristic failed: %s: %s"
                % (api.framework, api.version, type(e).__name__, e),
            )
        return to_config(d, False)

    def default_config(self, op: str, m: int) -> KernelConfig:
        lk = self._server_lookup()
        up = to_config(nearest(lk["up"], m), False) if lk["up"] else self._heuristic(m)
        if op in ("both", "up"):
            return up
        if lk["down"]:
            d = to_config(nearest(lk["down"], m), self.api().supports_tma)
            # the server forces the down BLOCK_SIZE_M to the up one (both GEMMs share one alignment)
            return dataclasses.replace(d, BLOCK_SIZE_M=up.BLOCK_SIZE_M)
        return up  # the down GEMM reuses the up config, without TMA

    def default_source(self) -> dict:
        api = self.api()
        lk = self._server_lookup()
        out = {
            "kind": "file" if lk["up"] else "heuristic",
            "framework": api.framework,
            "generation": api.generation,
            "version": api.version,
            "file_name": lk["up_name"],
            "path": lk["up_path"],
            "sha256": file_sha256(lk["up_path"]) if lk["up"] else None,
            "down": None,
        }
        if api.framework == "sglang":
            out["down"] = {
                "kind": "file" if lk["down"] else ("up_config" if lk["up"] else "heuristic"),
                "file_name": lk["down_name"],
                "path": lk["down_path"],
                "sha256": file_sha256(lk["down_path"]) if lk["down"] else None,
            }
        try:
            import triton

            out["triton_version"] = triton.__version__
        except Exception:
            out["triton_version"] = None
        return out

    def describe(self) -> dict:
        return self.api().describe()

    def warm_precompile(self) -> None:
        """A precompile worker, before its first task: import the server's fused-MoE modules (seconds per
        process; SGLang's ServerArgs published), which its first compile would otherwise wait for."""
        super().warm_precompile()
        self.api()
        if self.cpu_compile:
            self._warm_align()

    def _warm_align(self) -> None:
        """The server's alignment once on the host, before the first task: its first call loads what it
        needs lazily (the vLLM tree's first moe_align_block_size call spent ~4 s in torch's custom-op
        registrations in each H200 pool process, on the first compile's path). Both of its paths: the
        plain one (m = 1) and the aligned one (m = 64). A failure here costs nothing: the compile that
        needs it reports its own."""
        try:
            api = self.api()
            torch = self._torch
            for m in (1, 64):
                ids = torch.zeros(m, self.shape.topk, dtype=torch.int32, device=torch.device("cpu"))
                if api.framework == "vllm":
                    if self._vllm_precompile_ok():
                        self.assignment("vllm", m, 16, lambda: self._vllm_assignment(ids, 16))
                elif api.supports_separate:
                    self.assignment("sglang", m, 16, lambda: api.align(ids, 16, self.shape.E))
        except Exception:  # noqa: BLE001 - see the docstring
            pass

    def can_cpu_precompile(self) -> bool:
        return self.api().supports_separate or self._vllm_precompile_ok()
