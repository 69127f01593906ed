# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tune spec (PROTOCOL.md section 6): validation with errors a person can act on, and defaults.

Everything wrong with a spec is found here, before a run exists, with a sentence naming the field:
also what json.loads lets through (NaN / Infinity, duplicate keys, nesting deep enough to exhaust the
recursion limit) and device names that would break a config file name.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Optional

from .backends import ALL_VARIANTS, AUTO, BACKENDS as REGISTRY, SERVER, SYNTHETIC, TRITON, is_simulated
from . import kernel_types
from .kernel_types import batch_sizes_default
from .specjson import (
    MAX_BATCH_SIZE,
    MAX_BATCH_SIZES,
    MAX_ROUTING_BYTES,
    MAX_ROUTING_TOKENS,
    MAX_SHAPE,
    MAX_SPACE_VALUE,
    MAX_SPACE_VALUES,
    MAX_SPEC_BYTES,
    SpecError,
    read_limited,
    short_json,
    parse,
)

__all__ = [
    "BACKENDS",
    "DTYPES",
    "GROUP_SIZES",
    "KEYS",
    "MAX_BATCH_SIZE",
    "MAX_BATCH_SIZES",
    "MAX_ROUTING_BYTES",
    "MAX_SPEC_BYTES",
    "SpecError",
    "TUNABLE",
    "VARIANTS",
    "backends_for",
    "capability_table",
    "check_device_name",
    "check_file_names",
    "check_routing_file",
    "load",
    "normalise",
    "parse",
    "shape_dict",
    "shape_of",
    "spec_hash",
    "strategy_ops",
    "variant_of",
    "variant_text",
]

DTYPES = (None, "bf16", "fp16", "fp8_w8a8", "int8_w8a8", "int8_w8a16", "int4_w4a16", "float32")
BACKENDS = (AUTO,) + tuple(REGISTRY)  # what a spec's "backend" may say: auto, then the registry's order
SPACE_INT_LISTS = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages")
SPACE_OTHER = ("prune_m", "prune_m_factor", "smem_limit", "prune_dequant")

KEYS = (
    "framework",
    "E",
    "N",
    "K",
    "topk",
    "dtype",
    "block_shape",
    "per_channel_quant",
    "ops",
    "batch_sizes",
    "space",
    "strategy",
    "gpus",
    "time_budget_s",
    "backend",
    "python",
    "routing_file",
    "device_name",
)


# The quantisation variants a spec can name, and which backend's kernel implements each one with the
# server's config semantics (kernels/fused_moe.py, kernels/fused_moe_quant.py; the server backend runs
# the server's own fused_experts). The synthetic backend models every variant (simulated numbers only).
VARIANTS = (
    ("bf16", "bf16 / fp16 (no quantisation)"),
    ("float32", "float32"),
    ("fp8_w8a8", "fp8_w8a8 per-tensor (one scale per expert weight, one dynamic activation scale)"),
    ("fp8_w8a8:block", "fp8_w8a8 block-wise (block_shape [n, k] weight scales, per-token-group activations)"),
    (
        "fp8_w8a8:channel",
        "fp8_w8a8 per-channel (per_channel_quant: per-output-channel weight scales, " "per-token activation scales)",
    ),
    ("int8_w8a8:channel", "int8_w8a8 per-token activation / per-channel weight scales"),
    ("int8_w8a8", "int8_w8a8 per-tensor"),
    ("int8_w8a8:block", "int8_w8a8 block-wise"),
    ("int8_w8a16", "int8_w8a16 per-channel weight scales (the servers' main fused-MoE kernel)"),
    ("int8_w8a16:group", "int8_w8a16 group-quantised (block_shape [0, group]: the servers' wna16 kernel)"),
    (
        "int4_w4a16:group",
        "int4_w4a16 group-quantised, two weights per byte (block_shape [0, group]: the " "servers' wna16 kernel)",
    ),
)
TUNABLE = {
    name: tuple(v for v, _ in VARIANTS) if info.variants is ALL_VARIANTS else info.variants
    for name, info in REGISTRY.items()
}  # backend -> the variants it tunes (backends/__init__.py)
GROUP_SIZES = (32, 64, 128, 256)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _pos_int(d: Dict[str, Any], key: str) -> int:
    v = d.get(key)
    if v is None:
        raise SpecError("spec: key %r is required (an integer > 0)" % key, key)
    if not _is_int(v) or v <= 0:
        raise SpecError("spec: key %r must be an integer > 0 (got %s)" % (key, json.dumps(v)[:80]), key)
    if key in MAX_SHAPE and v > MAX_SHAPE[key]:
        raise SpecError("spec: key %r (%d) is larger than the limit of %d" % (key, v, MAX_SHAPE[key]), key)
    return v


def _int_list(v: Any, key: str, max_len: int, max_value: int) -> List[int]:
    if not isinstance(v, list) or not v:
        raise SpecError("spec: %r must be a non-empty list of integers (got %s)" % (key, json.dumps(v)[:80]), key)
    if len(v) > max_len:
        raise SpecError("spec: %r holds %d values; at most %d are allowed" % (key, len(v), max_len), key)
    for x in v:
        if not _is_int(x) or x <= 0:
            raise SpecError("spec: %r must hold integers > 0 (got %s)" % (key, json.dumps(x)[:80]), key)
        if x > max_value:
            raise SpecError("spec: %r: %d is larger than the limit of %d" % (key, x, max_value), key)
    return list(v)


def _finite_number(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)


def check_device_name(v: str) -> None:
    """A device name goes into a config file name between ',' separators (docs/servers.md section 2)."""
    bad = [c for c in ("/", ",", "\\") if c in v]
    if bad:
        raise SpecError(
            "spec: 'device_name' cannot contain %r: it becomes part of the config file name "
            "E=..,N=..,device_name=<name>.json (got %s)" % (bad[0], json.dumps(v)),
            "device_name",
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in v):
        raise SpecError("spec: 'device_name' cannot contain control characters (got %s)" % json.dumps(v), "device_name")
    if v.endswith("_down"):
        raise SpecError(
            "spec: 'device_name' cannot end in \"_down\": the file name would read as a down-projection "
            "file (got %s)" % json.dumps(v),
            "device_name",
        )
    if len(v) > 200:
        raise SpecError("spec: 'device_name' is longer than 200 characters", "device_name")


def variant_of(dtype: Optional[str], block_shape: Optional[List[int]], per_channel_quant: bool) -> str:
    """The VARIANTS key of a (normalised) spec's quantisation."""
    if dtype in (None, "bf16", "fp16"):
        return "bf16"
    if block_shape and not block_shape[0]:
        return dtype + ":group"
    if block_shape:
        return dtype + ":block"
    if per_channel_quant:
        return dtype + ":channel"
    return dtype


def variant_text(variant: str) -> str:
    return dict(VARIANTS).get(variant, variant)


def backends_for(variant: str) -> List[str]:
    return [b for b in REGISTRY if variant in TUNABLE[b]]


def capability_table() -> List[Dict[str, Any]]:
    """What probe reports: every variant and the backends that can tune it (empty: none can)."""
    return [{"variant": v, "description": text, "backends": backends_for(v)} for v, text in VARIANTS]


def _check_quant(d: Dict[str, Any]) -> None:
    """dtype, block_shape and per_channel_quant together: a combination some server runs, and one a
    backend here can tune; the backend "auto" becomes "triton" when only our own kernel can."""
    dt, bs, pcq = d["dtype"], d["block_shape"], d["per_channel_quant"]
    if dt == "int4_w4a16" and bs is None:
        bs = d["block_shape"] = [0, 128]  # GPTQ/AWQ's usual group size; the servers require one
    if bs is not None and bs[0] == 0:
        if dt not in ("int4_w4a16", "int8_w8a16"):
            raise SpecError(
                "spec: 'block_shape' [0, group] (group-quantised weights) applies to int4_w4a16 and "
                "int8_w8a16 only (dtype is %s)" % json.dumps(dt),
                "block_shape",
            )
        g = bs[1]
        if g not in GROUP_SIZES:
            raise SpecError(
                "spec: 'block_shape' [0, %d]: the group size must be one of %s" % (g, ", ".join(map(str, GROUP_SIZES))),
                "block_shape",
            )
        for k in ("K", "N"):
            if d[k] % g:
                raise SpecError(
                    "spec: %r (%d) must be a multiple of the quantisation group size %d (block_shape "
                    "[0, %d]): each group scales %d consecutive weights" % (k, d[k], g, g, g),
                    k,
                )
    elif dt in ("int4_w4a16",):
        raise SpecError(
            "spec: int4_w4a16 weights are group-quantised: 'block_shape' must be [0, group] "
            "(got %s)" % json.dumps(bs),
            "block_shape",
        )
    elif bs is not None and dt not in ("fp8_w8a8", "int8_w8a8"):
        raise SpecError(
            "spec: 'block_shape' [n, k] (block-wise scales) applies to fp8_w8a8 and int8_w8a8 only "
            "(dtype is %s)" % json.dumps(dt),
            "block_shape",
        )
    if pcq:
        if dt not in ("fp8_w8a8", "int8_w8a8"):
            raise SpecError(
                "spec: 'per_channel_quant' applies to fp8_w8a8 and int8_w8a8 only (dtype is %s)" % json.dumps(dt),
                "per_channel_quant",
            )
        if bs is not None:
            raise SpecError(
                "spec: 'per_channel_quant' and a block_shape exclude each other: the scales are "
                "either per channel or per block",
                "per_channel_quant",
            )
    if dt == "int8_w8a8" and d["framework"] == "vllm" and bs is None:
        # vLLM's int8 W8A8 MoE is per-token / per-channel, and its file names carry no such flag.
        d["per_channel_quant"] = pcq = True
    v = variant_of(dt, bs, pcq)
    be = d["backend"]
    can = backends_for(v)
    gpu = [b for b in can if not is_simulated(b)]
    if be == AUTO:
        if not gpu:
            raise SpecError(
                'spec: no backend here can tune %s; only "backend": "%s" (simulated '
                "numbers) accepts it" % (variant_text(v), SYNTHETIC),
                "dtype",
            )
        if SERVER not in gpu:
            d["backend"] = TRITON  # the server backend cannot run it: moetune's own kernel can
    elif be not in can:
        raise SpecError(
            "spec: the %s backend cannot tune %s; %s"
            % (
                be,
                variant_text(v),
                ("backends that can: %s" % ", ".join(gpu))
                if gpu
                else 'no GPU backend here can (only "%s", simulated)' % SYNTHETIC,
            ),
            "backend",
        )


def normalise(raw: Any) -> Dict[str, Any]:
    """Validate raw (parsed JSON) and return the spec with every default filled in."""
    if not isinstance(raw, dict):
        raise SpecError("spec: the spec must be a JSON object, got %s" % type(raw).__name__)
    unknown = sorted(k for k in raw if k not in KEYS)
    if unknown:
        raise SpecError("spec: unknown key %r (known keys: %s)" % (unknown[0], ", ".join(KEYS)), unknown[0])
    d: Dict[str, Any] = {}
    fw = raw.get("framework")
    if fw not in ("sglang", "vllm"):
        raise SpecError('spec: \'framework\' must be "sglang" or "vllm" (got %s)' % json.dumps(fw), "framework")
    d["framework"] = fw
    for k in ("E", "N", "K", "topk"):
        d[k] = _pos_int(raw, k)
    if d["topk"] > d["E"]:
        raise SpecError("spec: 'topk' (%d) cannot exceed 'E' (%d)" % (d["topk"], d["E"]), "topk")
    dt = raw.get("dtype")
    if dt not in DTYPES:
        raise SpecError(
            "spec: 'dtype' must be one of %s (got %s)" % (", ".join(json.dumps(x) for x in DTYPES), json.dumps(dt)),
            "dtype",
        )
    d["dtype"] = None if dt in ("bf16",) else dt
    bs = raw.get("block_shape")
    if bs is not None:
        if not isinstance(bs, list) or len(bs) != 2 or not all(_is_int(x) and x >= 0 for x in bs) or bs[1] == 0:
            raise SpecError(
                "spec: 'block_shape' must be null, [n, k] with positive integers, or [0, group] for "
                "group-quantised weights (got %s)" % json.dumps(bs),
                "block_shape",
            )
        bs = list(bs)
    d["block_shape"] = bs
    pcq = raw.get("per_channel_quant", False)
    if not isinstance(pcq, bool):
        raise SpecError("spec: 'per_channel_quant' must be true or false", "per_channel_quant")
    d["per_channel_quant"] = pcq
    ops = raw.get("ops", "up")
    if ops not in ("up", "up+down"):
        raise SpecError(
            'spec: \'ops\' must be "up" (one config file) or "up+down" (separate _down file), got %s' % json.dumps(ops),
            "ops",
        )
    if ops == "up+down" and fw == "vllm":
        raise SpecError("spec: 'ops' \"up+down\" is SGLang-only (vLLM has no _down files)", "ops")
    d["ops"] = ops
    bsz = raw.get("batch_sizes")
    d["batch_sizes"] = (
        sorted(set(_int_list(bsz, "batch_sizes", MAX_BATCH_SIZES, MAX_BATCH_SIZE)))
        if bsz is not None
        else list(batch_sizes_default())
    )
    sp = raw.get("space", {})
    if sp is None:
        sp = {}
    if not isinstance(sp, dict):
        raise SpecError("spec: 'space' must be an object", "space")
    space: Dict[str, Any] = {}
    for k, v in sp.items():
        if k in SPACE_INT_LISTS:
            space[k] = _int_list(v, "space." + k, MAX_SPACE_VALUES, MAX_SPACE_VALUE)
        elif k in ("prune_m", "prune_dequant"):
            if not isinstance(v, bool):
                raise SpecError("spec: 'space.%s' must be true or false" % k, "space." + k)
            space[k] = v
        elif k == "prune_m_factor":
            if not _finite_number(v) or v <= 0:
                raise SpecError("spec: 'space.prune_m_factor' must be a number > 0", "space.prune_m_factor")
            space[k] = v
        elif k == "smem_limit":
            if v is not None and (not _is_int(v) or v <= 0):
                raise SpecError("spec: 'space.smem_limit' must be null or bytes > 0", "space.smem_limit")
            space[k] = v
        else:
            raise SpecError(
                "spec: unknown key 'space.%s' (known: %s)" % (k, ", ".join(SPACE_INT_LISTS + SPACE_OTHER)), "space." + k
            )
    d["space"] = space
    st = raw.get("strategy")
    if st is not None and (not isinstance(st, str) or not st):
        raise SpecError("spec: 'strategy' must be null (the agent's default) or a strategy name", "strategy")
    d["strategy"] = st
    g = raw.get("gpus", "all")
    if g != "all":
        if not isinstance(g, list) or not g or not all(_is_int(x) and x >= 0 for x in g) or len(set(g)) != len(g):
            raise SpecError(
                "spec: 'gpus' must be \"all\" or a list of distinct device indices >= 0 (got %s)" % json.dumps(g),
                "gpus",
            )
    d["gpus"] = g
    tb = raw.get("time_budget_s")
    if tb is not None and (not _finite_number(tb) or tb <= 0):
        raise SpecError(
            "spec: 'time_budget_s' must be null or a number of seconds > 0 (got %s)" % json.dumps(tb), "time_budget_s"
        )
    d["time_budget_s"] = tb
    be = raw.get("backend", AUTO)
    if be not in BACKENDS:
        raise SpecError("spec: 'backend' must be one of %s (got %s)" % (", ".join(BACKENDS), json.dumps(be)), "backend")
    d["backend"] = be
    for k in ("python", "routing_file", "device_name"):
        v = raw.get(k)
        if v is not None and (not isinstance(v, str) or (k != "device_name" and not v)):
            raise SpecError("spec: %r must be null or a string" % k, k)
        if k == "device_name" and v is not None:
            check_device_name(v)
        d[k] = v
    _check_quant(d)
    if d["device_name"] is not None:
        check_file_names(d, d["device_name"])
    return d


def check_file_names(spec: Dict[str, Any], device_name: str, folder: Optional[str] = None) -> None:
    """The config file names the run will write (each server's name for the shape, _down too) must be names
    the agent can create: within NAME_MAX with the backup and temporary suffixes, and (given the folder
    they go into) within PATH_MAX. Checked when the spec is read and again once the backend has named the
    device, so a run never measures for an hour and then fails writing its result."""
    from .serverconfig import naming

    try:
        names = naming.file_names(spec, device_name)
    except ValueError as e:
        raise SpecError("spec: no config file name can be made for this shape: %s" % e, "device_name")
    for kind in sorted(names):
        name = names[kind]
        try:
            naming.check_file_name(name, "vllm" if kind == "vllm" else "sglang")
            if folder is not None:
                naming.check_path_fits(os.path.join(folder, "vllm" if kind == "vllm" else "sglang"), name)
        except naming.ConfigNameError as e:
            raise SpecError(
                "spec: the %s config file name for device_name %s cannot be written: %s; shorten "
                "'device_name'" % (kind, json.dumps(device_name[:40] + ("..." if len(device_name) > 40 else "")), e),
                "device_name",
            )


def check_routing_file(spec: Dict[str, Any]) -> None:
    """A recorded routing file must be a JSON list of per-token lists of topk expert ids in [0, E), at most
    MAX_ROUTING_BYTES and MAX_ROUTING_TOKENS long."""
    path = spec.get("routing_file")
    if not path:
        return
    data = read_limited(path, MAX_ROUTING_BYTES, "'routing_file'", "routing_file")
    try:
        data = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise SpecError("spec: 'routing_file' %s is not UTF-8 text: %s" % (path, e), "routing_file")
    except RecursionError:
        raise SpecError(
            "spec: 'routing_file' %s nests too deeply: it must be a list of lists (2 levels)" % path, "routing_file"
        )
    except ValueError as e:
        raise SpecError("spec: cannot read 'routing_file' %s: not JSON: %s" % (path, e), "routing_file")
    if not isinstance(data, list) or not data:
        raise SpecError(
            "spec: 'routing_file' must hold a non-empty JSON list of per-token expert id lists", "routing_file"
        )
    if len(data) > MAX_ROUTING_TOKENS:
        raise SpecError(
            "spec: 'routing_file' %s holds %d tokens; at most %d are allowed" % (path, len(data), MAX_ROUTING_TOKENS),
            "routing_file",
        )
    for i, row in enumerate(data):
        if (
            not isinstance(row, list)
            or len(row) != spec["topk"]
            or not all(_is_int(x) and 0 <= x < spec["E"] for x in row)
        ):
            raise SpecError(
                "spec: 'routing_file' row %d must list %d expert ids in [0, %d) (got %s)"
                % (i, spec["topk"], spec["E"], short_json(row)),
                "routing_file",
            )


def load(path: str) -> Dict[str, Any]:
    """Read and validate a spec file (a regular file of at most MAX_SPEC_BYTES). Raises SpecError."""
    data = read_limited(path, MAX_SPEC_BYTES, "spec", None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError("cannot read spec %s: %s" % (path, e))
    return normalise(parse(text, "spec %s" % path))


shape_of = kernel_types.shape_of  # the spec's Shape
strategy_ops = kernel_types.strategy_ops  # the ops its strategy tunes


def shape_dict(spec: Dict[str, Any]) -> Dict[str, Any]:
    return {k: spec[k] for k in ("E", "N", "K", "topk", "dtype", "block_shape", "per_channel_quant")}


def spec_hash(spec: Dict[str, Any]) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
