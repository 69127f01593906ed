# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which fused-MoE API the installed SGLang / vLLM offers, read from its signatures.

Standard library only (the server modules are imported through ``import_module``, which tests replace
with fakes). Each server's own tuner calls ``fused_experts`` under ``override_config(cfg)``; how the call
looks moved between releases, so the generation is detected from the installed code, never from a
version number, and anything unrecognised fails at once with a sentence (ServerApiError) naming the
version found and what was expected:

  sglang-runner      SGLang 2025-2026: fused_experts(x, w1, w2, topk_output, moe_runner_config, ...,
                     use_fp8_w8a8=..., w1_scale=..., block_shape=...) with a published ServerArgs; the
                     separate GEMMs through invoke_fused_moe_kernel (+ TMA where it takes a_use_tma)
  vllm-quant-config  vLLM main since mid 2026: fused_experts(x, w1, w2, topk_weights, topk_ids,
                     quant_config=FusedMoEQuantConfig) (no inplace=)
  vllm-inplace       vLLM until May 2026: the same plus inplace=
  vllm-legacy        older vLLM: inplace= and use_fp8_w8a8= / w1_scale= keywords (no quant_config)
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import options

__all__ = [
    "ServerApi",
    "ServerApiError",
    "call_filtered",
    "config_dtype",
    "detect",
    "lookup_source",
    "params_of",
    "reset_override",
    "vllm_search",
]

GENERATIONS = ("sglang-runner", "vllm-quant-config", "vllm-inplace", "vllm-legacy")

# (package of fused_experts + override_config, module of the kernel functions, module of the config lookup)
SGLANG_LAYOUTS = (
    (
        "sglang.srt.layers.moe.moe_runner.triton_utils",
        "sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe",
        "sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe_triton_config",
    ),
    (
        "sglang.srt.layers.moe.fused_moe_triton",
        "sglang.srt.layers.moe.fused_moe_triton.fused_moe",
        "sglang.srt.layers.moe.fused_moe_triton.fused_moe_triton_config",
    ),
)
VLLM_LAYOUTS = (
    (
        "vllm.model_executor.layers.fused_moe",
        "vllm.model_executor.layers.fused_moe.fused_moe",
        "vllm.model_executor.layers.fused_moe.fused_moe",
    ),
)
SGLANG_RUNNER_CONFIG = ("sglang.srt.layers.moe.moe_runner", "sglang.srt.layers.moe")
SGLANG_SERVER_ARGS = "sglang.srt.server_args"
VLLM_QUANT_MODULE = "vllm.model_executor.layers.fused_moe.config"

# The quantisation builders of vLLM's quant_config API, per moetune dtype.
VLLM_QUANT_BUILDERS = {
    "fp8_w8a8": "fp8_w8a8_moe_quant_config",
    "int8_w8a8": "int8_w8a8_moe_quant_config",
    "int8_w8a16": "int8_w8a16_moe_quant_config",
    "int4_w4a16": "int4_w4a16_moe_quant_config",
}
QUANT_DTYPES = ("fp8_w8a8", "int8_w8a8", "int8_w8a16", "int4_w4a16")


class ServerApiError(Exception):
    """The installed server cannot be driven: not importable, or an API this agent does not know."""


def installed_version(framework: str) -> Optional[str]:
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        return None
    try:
        return metadata.version(framework)
    except Exception:
        return None


def params_of(fn: Any) -> List[str]:
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def call_filtered(fn, *args, **kwargs):
    """Call fn with only the keyword arguments its signature names (lookup helpers gained and lost
    optional arguments between releases)."""
    names = params_of(fn)
    if names and not any(inspect.signature(fn).parameters[n].kind == inspect.Parameter.VAR_KEYWORD for n in names):
        kwargs = {k: v for k, v in kwargs.items() if k in names}
    return fn(*args, **kwargs)


class ServerApi(object):
    """What one installed server offers, with everything the backend calls."""

    def __init__(
        self,
        framework: str,
        generation: str,
        version: Optional[str],
        fused_experts: Callable,
        override_config: Callable,
        kernel_module: Any,
        config_module: Any,
        extras: Dict[str, Any],
    ) -> None:
        self.framework = framework
        self.generation = generation
        self.version = version
        self.fused_experts = fused_experts
        self.override_config = override_config
        self.kernel_module = kernel_module
        self.config_module = config_module
        self.extras = extras
        self.params = params_of(fused_experts)

    # -- separate GEMMs and TMA (SGLang) ------------------------------------------------------------
    @property
    def invoke_gemm(self):
        return self.extras.get("invoke_gemm")

    @property
    def align(self):
        return self.extras.get("align")

    @property
    def supports_separate(self) -> bool:
        return self.invoke_gemm is not None and self.align is not None

    @property
    def supports_tma(self) -> bool:
        """The server's GEMM takes TMA descriptors (a_use_tma/b_use_tma and c_sorted) and this Triton has
        tensor descriptors (SGLang's support_tensor_descriptor())."""
        fn = self.invoke_gemm
        if fn is None:
            return False
        p = params_of(fn)
        if not ("a_use_tma" in p and "b_use_tma" in p and "c_sorted" in p):
            return False
        probe = self.extras.get("support_tensor_descriptor")
        try:
            return bool(probe()) if probe is not None else False
        except Exception:
            return False

    def describe(self) -> Dict[str, Any]:
        return {
            "framework": self.framework,
            "generation": self.generation,
            "version": self.version,
            "separate_gemms": self.supports_separate,
            "tma": self.supports_tma,
        }

    def quant_kwargs(
        self,
        dtype: str,
        w1_scale: Any,
        w2_scale: Any,
        block_shape: Any,
        per_channel_quant: bool,
        w1_zp: Any = None,
        w2_zp: Any = None,
    ) -> Dict[str, Any]:
        """The quantisation keywords of fused_experts for this generation (empty for bf16/fp16)."""
        if dtype not in QUANT_DTYPES:
            return {}
        bs = list(block_shape) if block_shape else None
        if self.generation in ("sglang-runner", "vllm-legacy"):
            kw = {"use_" + dtype: True, "w1_scale": w1_scale, "w2_scale": w2_scale, "block_shape": bs}
            if "per_channel_quant" in self.params:
                kw["per_channel_quant"] = bool(per_channel_quant)
            if dtype in ("int8_w8a16", "int4_w4a16") and "w1_zp" in self.params:
                kw["w1_zp"], kw["w2_zp"] = w1_zp, w2_zp
            return kw
        builder_name = VLLM_QUANT_BUILDERS[dtype]
        builder = self.extras.get("quant_builders", {}).get(builder_name)
        if builder is None:
            raise ServerApiError(
                "vLLM %s has no %s in %s: cannot tune %s with it"
                % (self.version or "(unknown version)", builder_name, VLLM_QUANT_MODULE, dtype)
            )
        kw = {"w1_scale": w1_scale, "w2_scale": w2_scale}
        if dtype in ("fp8_w8a8", "int8_w8a8"):
            kw.update(a1_scale=None, a2_scale=None, per_act_token_quant=bool(per_channel_quant))
            if dtype == "fp8_w8a8":
                kw["block_shape"] = bs
        else:
            kw.update(w1_zp=w1_zp, w2_zp=w2_zp, block_shape=bs)
        return {"quant_config": call_filtered(builder, **kw)}

    def call_kwargs(self) -> Dict[str, Any]:
        """Fixed keywords of the whole-call API: vLLM's inplace= generations run out of place (the
        output must not overwrite the input the next replay reads)."""
        if self.generation in ("vllm-inplace", "vllm-legacy"):
            return {"inplace": False}
        return {}


def _import_first(layouts, import_module):
    """(package, kernel module, config module) of the first layout whose package imports, and the
    errors of those that did not."""
    errors = []
    for pkg_name, kern_name, cfg_name in layouts:
        try:
            pkg = import_module(pkg_name)
        except ImportError as e:
            errors.append("%s: %s" % (pkg_name, e))
            continue
        kern = cfg = None
        try:
            kern = import_module(kern_name)
        except ImportError as e:
            errors.append("%s: %s" % (kern_name, e))
        try:
            cfg = import_module(cfg_name)
        except ImportError as e:
            errors.append("%s: %s" % (cfg_name, e))
        return pkg, kern, cfg, errors
    return None, None, None, errors


def detect(
    framework: str, import_module: Optional[Callable[[str], Any]] = None, version: Optional[str] = None
) -> ServerApi:
    """The API of the installed framework ("sglang" | "vllm"), or ServerApiError with a sentence."""
    import_module = import_module or importlib.import_module
    if version is None:
        version = installed_version(framework)
    vtext = version or "(no version metadata)"
    if framework == "sglang":
        return _detect_sglang(import_module, vtext, version)
    if framework == "vllm":
        return _detect_vllm(import_module, vtext, version)
    raise ServerApiError("unknown framework %r: the server backend drives sglang or vllm" % framework)


def _detect_sglang(import_module, vtext, version):
    pkg, kern, cfg, errors = _import_first(SGLANG_LAYOUTS, import_module)
    if pkg is None:
        raise ServerApiError("SGLang %s is not importable here (%s)" % (vtext, "; ".join(errors)[:400]))
    fe = getattr(pkg, "fused_experts", None) or getattr(kern, "fused_experts", None)
    oc = getattr(pkg, "override_config", None)
    if fe is None or oc is None:
        raise ServerApiError(
            "SGLang %s: %s has no fused_experts/override_config; this agent knows SGLang's "
            "layouts %s" % (vtext, pkg.__name__, ", ".join(l[0] for l in SGLANG_LAYOUTS))
        )
    p = params_of(fe)
    if not ("topk_output" in p and "moe_runner_config" in p):
        raise ServerApiError(
            "SGLang %s: fused_experts(%s) is an API this agent does not know; it expects "
            "fused_experts(hidden_states, w1, w2, topk_output, moe_runner_config, ...) (SGLang 2025-2026)"
            % (vtext, ", ".join(p[:8]))
        )
    runner_cfg = None
    for name in SGLANG_RUNNER_CONFIG:
        try:
            runner_cfg = getattr(import_module(name), "MoeRunnerConfig", None)
        except ImportError:
            runner_cfg = None
        if runner_cfg is not None:
            break
    if runner_cfg is None:
        raise ServerApiError(
            "SGLang %s: fused_experts takes a moe_runner_config but MoeRunnerConfig is not in %s"
            % (vtext, " or ".join(SGLANG_RUNNER_CONFIG))
        )
    publish = server_args_cls = None
    try:
        sa = import_module(SGLANG_SERVER_ARGS)
        publish = getattr(sa, "set_global_server_args_for_scheduler", None)
        server_args_cls = getattr(sa, "ServerArgs", None)
    except ImportError:
        pass
    if publish is None or server_args_cls is None:
        raise ServerApiError(
            "SGLang %s: its fused_experts reads a published ServerArgs, but %s has no "
            "ServerArgs/set_global_server_args_for_scheduler" % (vtext, SGLANG_SERVER_ARGS)
        )
    extras = {
        "MoeRunnerConfig": runner_cfg,
        "publish_server_args": publish,
        "ServerArgs": server_args_cls,
        "invoke_gemm": getattr(kern, "invoke_fused_moe_kernel", None) if kern is not None else None,
        "align": getattr(pkg, "moe_align_block_size", None) or getattr(kern, "moe_align_block_size", None),
        "support_tensor_descriptor": getattr(kern, "support_tensor_descriptor", None) if kern is not None else None,
        "get_config": getattr(pkg, "get_config", None),
    }
    if extras["support_tensor_descriptor"] is None and extras["invoke_gemm"] is not None:
        try:  # the kernels module the GEMM lives in
            extras["support_tensor_descriptor"] = getattr(
                import_module(extras["invoke_gemm"].__module__), "support_tensor_descriptor", None
            )
        except ImportError:
            pass
    return ServerApi("sglang", "sglang-runner", version, fe, oc, kern, cfg, extras)


def _detect_vllm(import_module, vtext, version):
    pkg, kern, cfg, errors = _import_first(VLLM_LAYOUTS, import_module)
    if pkg is None:
        raise ServerApiError("vLLM %s is not importable here (%s)" % (vtext, "; ".join(errors)[:400]))
    fe = getattr(pkg, "fused_experts", None) or getattr(kern, "fused_experts", None)
    oc = getattr(pkg, "override_config", None)
    if fe is None or oc is None:
        raise ServerApiError("vLLM %s: %s has no fused_experts/override_config" % (vtext, pkg.__name__))
    p = params_of(fe)
    if len(p) < 5 or p[3:5] != ["topk_weights", "topk_ids"]:
        raise ServerApiError(
            "vLLM %s: fused_experts(%s) is an API this agent does not know; it expects "
            "fused_experts(hidden_states, w1, w2, topk_weights, topk_ids, ...)" % (vtext, ", ".join(p[:8]))
        )
    builders = {}
    if "quant_config" in p:
        gen = "vllm-inplace" if "inplace" in p else "vllm-quant-config"
        try:
            qmod = import_module(VLLM_QUANT_MODULE)
            builders = {n: getattr(qmod, n) for n in VLLM_QUANT_BUILDERS.values() if hasattr(qmod, n)}
        except ImportError:
            builders = {}
    elif "inplace" in p and "use_fp8_w8a8" in p:
        gen = "vllm-legacy"
    else:
        raise ServerApiError(
            "vLLM %s: fused_experts(%s) takes neither quant_config= nor use_fp8_w8a8=; this agent knows "
            "fused_experts(..., quant_config=) (2025-2026, with or without inplace=) and "
            "fused_experts(..., inplace=, use_fp8_w8a8=, w1_scale=, ...) (older)" % (vtext, ", ".join(p[:12]))
        )
    extras = {
        "quant_builders": builders,
        "get_config": getattr(pkg, "get_config", None),
        # The one-GEMM entry point vLLM's fused_experts calls twice (up, then down), for the CPU
        # precompile only: vLLM reads one config for both GEMMs, so tuning stays on the whole call.
        "precompile_gemm": (
            getattr(kern, "dispatch_fused_moe_kernel", None)
            or getattr(kern, "invoke_fused_moe_triton_kernel", None)
            or getattr(kern, "invoke_fused_moe_kernel", None)
        )
        if kern is not None
        else None,
        "prepare_assignment": getattr(kern, "_prepare_expert_assignment", None) if kern is not None else None,
    }
    return ServerApi("vllm", gen, version, fe, oc, kern, cfg, extras)


def reset_override(api: ServerApi, saved: Any = None) -> None:
    """Neither server's override_config restores the previous value when its body raises: put back the
    value it had before (entering a new override and never leaving it, through the public API only)."""
    getter = api.extras.get("get_config")
    if getter is not None:
        try:
            if getter() == saved:
                return
        except Exception:
            pass
    cm = api.override_config(saved)
    cm.__enter__()


def config_dtype(dtype: Optional[str], framework: str) -> Optional[str]:
    """The dtype part of the server's config lookup (None for bf16/fp16; vLLM shares the plain file for
    int8_w8a8)."""
    if dtype in (None, "bf16", "fp16"):
        return None
    if framework == "vllm" and dtype == "int8_w8a8":
        return None
    return dtype


def lookup_source(
    api: ServerApi,
    E: int,
    N: int,
    dtype: Optional[str],
    block_shape: Optional[Tuple[int, ...]],
    per_channel_quant: bool,
    down: bool,
) -> Tuple[Optional[Dict[int, Any]], Optional[str]]:
    """(configs the server reads from a file for this shape or None, the file name it looks for)."""
    cfgm = api.config_module
    if cfgm is None:
        return None, None
    dt = config_dtype(dtype, api.framework)
    bn = int(block_shape[0]) if block_shape else 0
    bk = int(block_shape[1]) if block_shape else 0
    name = None
    try:
        if api.framework == "sglang":
            name = call_filtered(
                cfgm.get_config_file_name,
                E,
                N,
                dt,
                [bn, bk] if block_shape else None,
                per_channel_quant=per_channel_quant,
                down_moe=down,
            )
            got = call_filtered(
                cfgm.get_moe_configs, E, N, dt, bn, bk, per_channel_quant=per_channel_quant, down_moe=down
            )
        else:
            if down:
                return None, None
            name = call_filtered(cfgm.get_config_file_name, E, N, dt, [bn, bk] if block_shape else None)
            try:
                got = call_filtered(cfgm.get_moe_configs, E, N, dt, bn, bk)
            except Exception:  # noqa: BLE001 - e.g. its log-once helper needs an initialised engine
                got = vllm_search(cfgm, name)[0]
    except Exception as e:  # noqa: BLE001 - the lookup's own failure is reported, not fatal
        raise ServerApiError(
            "%s %s: its config lookup failed: %s: %s" % (api.framework, api.version, type(e).__name__, e)
        )
    return (dict(got) if got else None), name


def vllm_search(config_module: Any, name: str) -> Tuple[Optional[Dict[int, Any]], Optional[str]]:
    """vLLM's documented lookup (docs/servers.md section 1): VLLM_TUNED_CONFIG_FOLDER first, then configs/
    beside its fused_moe module; the file's "triton_version" key is not a batch size. -> (configs, path) or
    (None, None)."""
    import json
    import os

    folders = []
    user = options.host_env("VLLM_TUNED_CONFIG_FOLDER")
    if user:
        folders.append(user)
    folders.append(os.path.join(os.path.dirname(os.path.realpath(config_module.__file__)), "configs"))
    for folder in folders:
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
            data.pop("triton_version", None)
            return {int(k): v for k, v in data.items()}, path
    return None, None
