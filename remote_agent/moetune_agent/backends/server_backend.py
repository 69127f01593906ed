"""Backend over the server's own fused-MoE kernel (SGLang or vLLM importable on the host).

UNTESTED HERE: neither server is installed on the development machines nor on the GPU machine this
project was benchmarked on, so this module is kept small and guarded. It reuses the Triton backend's
weights, inputs, reference check and timing method (CUDA graph of 10 calls, fresh routing per replay)
and only swaps the call: the server's ``fused_experts`` under its ``override_config(cfg)`` context
manager, which is how both servers' own tuners force a config. Only op "both" is supported (the
servers' separate up/down tuning needs their internal GEMM entry points, whose signatures move
between releases).
"""

from __future__ import annotations

import importlib
from typing import Optional

from .base import CandidateError, KernelConfig, Shape
from .triton_backend import TritonBackend, classify

# (framework, module holding fused_experts, module holding override_config), newest layout first
_CANDIDATES = (
    ("sglang", "sglang.srt.layers.moe.fused_moe_triton.fused_moe", "sglang.srt.layers.moe.fused_moe_triton"),
    ("sglang", "sglang.srt.layers.moe.fused_moe_triton", "sglang.srt.layers.moe.fused_moe_triton"),
    ("vllm", "vllm.model_executor.layers.fused_moe", "vllm.model_executor.layers.fused_moe"),
    ("vllm", "vllm.model_executor.layers.fused_moe.fused_moe", "vllm.model_executor.layers.fused_moe"),
)


def find_server_kernel(prefer: Optional[str] = None):
    """(framework, fused_experts, override_config) of the first importable server, else None."""
    for fw, mod_fn, mod_ctx in _CANDIDATES:
        if prefer and fw != prefer:
            continue
        try:
            fn = getattr(importlib.import_module(mod_fn), "fused_experts")
            ctx = getattr(importlib.import_module(mod_ctx), "override_config")
            return fw, fn, ctx
        except (ImportError, AttributeError):
            continue
    return None


class _ServerCall:
    """Looks like kernels/fused_moe.FusedMoE to TritonBackend, but runs the server's kernel."""

    def __init__(self, inner, fused_experts, override_config, cfg: dict):
        self.inner = inner
        self.fused_experts = fused_experts
        self.override_config = override_config
        self.cfg = cfg

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def align(self):
        pass  # the server aligns inside fused_experts

    def up(self):
        raise CandidateError("other", "the server backend times the whole MoE call only (op both)")

    def down(self):
        w = self.inner.w
        kw = {}
        if w.dtype == "fp8_w8a8":
            kw = dict(use_fp8_w8a8=True, w1_scale=w.w1_scale, w2_scale=w.w2_scale,
                      block_shape=list(w.block_shape) if w.block_shape else None)
        with self.override_config(self.cfg):
            out = self.fused_experts(self.inner.x, w.w1, w.w2, self.inner.topk_w.view(self.inner.M, -1),
                                     self.inner.topk_ids, inplace=False, **kw)
        self.inner.out.copy_(out)


class ServerBackend(TritonBackend):
    name = "server"

    def __init__(self, shape: Shape, device_index: int = 0, cache_dir: Optional[str] = None, prefer: Optional[str] = None):
        super().__init__(shape, device_index, cache_dir)
        found = find_server_kernel(prefer)
        if found is None:
            raise CandidateError("other", "neither SGLang nor vLLM's fused_experts is importable here; "
                                          "use the triton backend")
        self.framework, self._fused_experts, self._override = found

    def _make(self, w, m: int, cfg: KernelConfig, cfg_down: Optional[KernelConfig]):
        inner = super()._make(w, m, cfg, None)
        return _ServerCall(inner, self._fused_experts, self._override, cfg.as_dict())

    @staticmethod
    def _step(moe, op: str):
        if op != "both":
            raise CandidateError("other", "the server backend times the whole MoE call only (op both)")
        moe.route()
        moe.down()  # the whole call: see _ServerCall.down

    def precompile(self, op: str, cfg: KernelConfig) -> None:
        """The server's kernel compiles on first launch: a launch on a small problem."""
        try:
            self.check("both", cfg, 1)
        except CandidateError:
            raise
        except Exception as e:  # noqa: BLE001
            raise classify(e)
