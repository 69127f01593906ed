"""The tune spec (PROTOCOL.md section 6): validation with errors a person can act on, and defaults."""

import json
from typing import Any, Dict, Tuple

from .backends.base import Shape, batch_sizes_default

DTYPES = (None, "bf16", "fp16", "fp8_w8a8", "int8_w8a8", "int8_w8a16", "int4_w4a16", "float32")
BACKENDS = ("auto", "server", "triton", "synthetic")
SPACE_INT_LISTS = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages")
SPACE_OTHER = ("prune_m", "prune_m_factor", "smem_limit")

KEYS = ("framework", "E", "N", "K", "topk", "dtype", "block_shape", "per_channel_quant", "ops", "batch_sizes",
        "space", "strategy", "gpus", "time_budget_s", "backend", "python", "routing_file", "device_name")


class SpecError(ValueError):
    """A spec that cannot run; key is the offending key (or None)."""

    def __init__(self, message, key=None):
        super().__init__(message)
        self.key = key


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _pos_int(d, key):
    v = d.get(key)
    if v is None:
        raise SpecError("spec: key %r is required (an integer > 0)" % key, key)
    if not _is_int(v) or v <= 0:
        raise SpecError("spec: key %r must be an integer > 0 (got %s)" % (key, json.dumps(v)), key)
    return v


def _int_list(v, key, positive=True):
    if not isinstance(v, list) or not v:
        raise SpecError("spec: %r must be a non-empty list of integers (got %s)" % (key, json.dumps(v)), key)
    for x in v:
        if not _is_int(x) or (positive and x <= 0):
            raise SpecError("spec: %r must hold integers > 0 (got %s)" % (key, json.dumps(x)), key)
    return list(v)


def normalise(raw):
    # type: (Any) -> Dict[str, Any]
    """Validate raw (parsed JSON) and return the spec with every default filled in."""
    if not isinstance(raw, dict):
        raise SpecError("spec: the spec must be a JSON object, got %s" % type(raw).__name__)
    unknown = sorted(k for k in raw if k not in KEYS)
    if unknown:
        raise SpecError("spec: unknown key %r (known keys: %s)" % (unknown[0], ", ".join(KEYS)), unknown[0])
    d = {}  # type: Dict[str, Any]
    fw = raw.get("framework")
    if fw not in ("sglang", "vllm"):
        raise SpecError("spec: 'framework' must be \"sglang\" or \"vllm\" (got %s)" % json.dumps(fw), "framework")
    d["framework"] = fw
    for k in ("E", "N", "K", "topk"):
        d[k] = _pos_int(raw, k)
    if d["topk"] > d["E"]:
        raise SpecError("spec: 'topk' (%d) cannot exceed 'E' (%d)" % (d["topk"], d["E"]), "topk")
    dt = raw.get("dtype")
    if dt not in DTYPES:
        raise SpecError("spec: 'dtype' must be one of %s (got %s)"
                        % (", ".join(json.dumps(x) for x in DTYPES), json.dumps(dt)), "dtype")
    d["dtype"] = None if dt in ("bf16",) else dt
    bs = raw.get("block_shape")
    if bs is not None:
        if not isinstance(bs, list) or len(bs) != 2 or not all(_is_int(x) and x > 0 for x in bs):
            raise SpecError("spec: 'block_shape' must be null or [n, k] with positive integers (got %s)"
                            % json.dumps(bs), "block_shape")
        bs = list(bs)
    d["block_shape"] = bs
    pcq = raw.get("per_channel_quant", False)
    if not isinstance(pcq, bool):
        raise SpecError("spec: 'per_channel_quant' must be true or false", "per_channel_quant")
    d["per_channel_quant"] = pcq
    ops = raw.get("ops", "up")
    if ops not in ("up", "up+down"):
        raise SpecError("spec: 'ops' must be \"up\" (one config file) or \"up+down\" (separate _down file), got %s"
                        % json.dumps(ops), "ops")
    if ops == "up+down" and fw == "vllm":
        raise SpecError("spec: 'ops' \"up+down\" is SGLang-only (vLLM has no _down files)", "ops")
    d["ops"] = ops
    bsz = raw.get("batch_sizes")
    d["batch_sizes"] = sorted(set(_int_list(bsz, "batch_sizes"))) if bsz is not None else list(batch_sizes_default())
    sp = raw.get("space", {})
    if sp is None:
        sp = {}
    if not isinstance(sp, dict):
        raise SpecError("spec: 'space' must be an object", "space")
    space = {}  # type: Dict[str, Any]
    for k, v in sp.items():
        if k in SPACE_INT_LISTS:
            space[k] = _int_list(v, "space." + k)
        elif k == "prune_m":
            if not isinstance(v, bool):
                raise SpecError("spec: 'space.prune_m' must be true or false", "space.prune_m")
            space[k] = v
        elif k == "prune_m_factor":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                raise SpecError("spec: 'space.prune_m_factor' must be a number > 0", "space.prune_m_factor")
            space[k] = v
        elif k == "smem_limit":
            if v is not None and (not _is_int(v) or v <= 0):
                raise SpecError("spec: 'space.smem_limit' must be null or bytes > 0", "space.smem_limit")
            space[k] = v
        else:
            raise SpecError("spec: unknown key 'space.%s' (known: %s)"
                            % (k, ", ".join(SPACE_INT_LISTS + SPACE_OTHER)), "space." + k)
    d["space"] = space
    st = raw.get("strategy")
    if st is not None and (not isinstance(st, str) or not st):
        raise SpecError("spec: 'strategy' must be null (the agent's default) or a strategy name", "strategy")
    d["strategy"] = st
    g = raw.get("gpus", "all")
    if g != "all":
        if not isinstance(g, list) or not g or not all(_is_int(x) and x >= 0 for x in g) or len(set(g)) != len(g):
            raise SpecError("spec: 'gpus' must be \"all\" or a list of distinct device indices >= 0 (got %s)"
                            % json.dumps(g), "gpus")
    d["gpus"] = g
    tb = raw.get("time_budget_s")
    if tb is not None and (isinstance(tb, bool) or not isinstance(tb, (int, float)) or tb <= 0):
        raise SpecError("spec: 'time_budget_s' must be null or a number of seconds > 0 (got %s)"
                        % json.dumps(tb), "time_budget_s")
    d["time_budget_s"] = tb
    be = raw.get("backend", "auto")
    if be not in BACKENDS:
        raise SpecError("spec: 'backend' must be one of %s (got %s)" % (", ".join(BACKENDS), json.dumps(be)),
                        "backend")
    d["backend"] = be
    for k in ("python", "routing_file", "device_name"):
        v = raw.get(k)
        if v is not None and (not isinstance(v, str) or (k != "device_name" and not v)):
            raise SpecError("spec: %r must be null or a string" % k, k)
        d[k] = v
    return d


def check_routing_file(spec):
    # type: (Dict[str, Any]) -> None
    """A recorded routing file must be a JSON list of per-token lists of topk expert ids in [0, E)."""
    path = spec.get("routing_file")
    if not path:
        return
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise SpecError("spec: cannot read 'routing_file' %s: %s" % (path, e), "routing_file")
    if not isinstance(data, list) or not data:
        raise SpecError("spec: 'routing_file' must hold a non-empty JSON list of per-token expert id lists",
                        "routing_file")
    for i, row in enumerate(data):
        if not isinstance(row, list) or len(row) != spec["topk"] or \
                not all(_is_int(x) and 0 <= x < spec["E"] for x in row):
            raise SpecError("spec: 'routing_file' row %d must list %d expert ids in [0, %d) (got %s)"
                            % (i, spec["topk"], spec["E"], json.dumps(row)[:80]), "routing_file")


def load(path):
    # type: (str) -> Dict[str, Any]
    """Read and validate a spec file. Raises SpecError (unreadable / not JSON / invalid)."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError("cannot read spec %s: %s" % (path, e))
    try:
        raw = json.loads(text)
    except ValueError as e:
        raise SpecError("spec %s is not valid JSON: %s" % (path, e))
    return normalise(raw)


def shape_of(spec):
    # type: (Dict[str, Any]) -> Shape
    bs = spec.get("block_shape")
    return Shape(spec["E"], spec["N"], spec["K"], spec["topk"], spec.get("dtype") or "bf16",
                 tuple(bs) if bs else None, bool(spec.get("per_channel_quant")))


def strategy_ops(spec):
    # type: (Dict[str, Any]) -> Tuple[str, ...]
    return ("up", "down") if spec["ops"] == "up+down" else ("both",)


def shape_dict(spec):
    # type: (Dict[str, Any]) -> Dict[str, Any]
    return {k: spec[k] for k in ("E", "N", "K", "topk", "dtype", "block_shape", "per_channel_quant")}


def spec_hash(spec):
    # type: (Dict[str, Any]) -> str
    import hashlib
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
