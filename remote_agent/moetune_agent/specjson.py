# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A spec's JSON, strictly: the size and nesting limits, SpecError, a bounded read of a regular file, and a parse
that refuses duplicate keys and the constants NaN and Infinity."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional, Tuple

__all__ = [
    "MAX_BATCH_SIZE",
    "MAX_BATCH_SIZES",
    "MAX_DEPTH",
    "MAX_ROUTING_BYTES",
    "MAX_ROUTING_TOKENS",
    "MAX_SHAPE",
    "MAX_SPACE_VALUE",
    "MAX_SPACE_VALUES",
    "MAX_SPEC_BYTES",
    "SpecError",
    "parse",
    "read_limited",
    "short_json",
]


MAX_DEPTH = 8  # a valid spec nests 3 deep ({"space": {"BLOCK_SIZE_M": [..]}})

# Input limits (PROTOCOL.md section 7): each is refused as spec_invalid, fast and small, before a run exists.
MAX_SPEC_BYTES = 1 << 20  # a spec is a few hundred bytes
MAX_ROUTING_BYTES = 16 << 20  # a recorded routing file (~25 bytes per token at topk 8)
MAX_ROUTING_TOKENS = 1 << 20
MAX_BATCH_SIZES = 256  # the servers' tuners use 18
MAX_BATCH_SIZE = 65536  # tokens per MoE call; the servers' lists end at 4096
MAX_SPACE_VALUES = 64  # values per space list (the space is their product)
MAX_SPACE_VALUE = 65536
MAX_SHAPE = {"E": 999999, "N": 9999999, "K": 1 << 20, "topk": 1024}  # E, N: the file name's digits


class SpecError(ValueError):
    """A spec that cannot run; key is the offending key (or None)."""

    def __init__(self, message: str, key: Optional[str] = None):
        super().__init__(message)
        self.key = key


def short_json(v: Any) -> str:
    try:
        return json.dumps(v)[:80]
    except (ValueError, RecursionError):
        return "a value nested too deeply"


def read_limited(path: str, limit: int, what: str, key: Optional[str]) -> bytes:
    """The bytes of a regular file, at most limit; SpecError otherwise (a FIFO or device never blocks)."""
    from .protocol import RunError
    from .safefile import read_bounded

    try:
        data = read_bounded(path, limit, what)
    except RunError as e:
        raise SpecError(
            "spec: %s" % e.message
            + (": a spec names files of at most %d MiB" % (limit >> 20) if e.code == "too_large" else ""),
            key,
        )
    except OSError as e:
        raise SpecError("spec: cannot read %s %s: %s" % (what, path, e.strerror or e), key)
    if data is None:
        raise SpecError("spec: cannot read %s %s: no such file" % (what, path), key)
    return data


def _nesting(text: str) -> Tuple[int, Optional[str]]:
    """(deepest nesting of [ / {, the top-level key under which it occurs) of JSON text, without
    parsing it (json.loads would exhaust the recursion limit first)."""
    depth = deepest = 0
    key: Optional[str] = None
    deepest_key: Optional[str] = None
    i, n = 0, len(text)
    last_str: Optional[str] = None
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            last_str = text[i + 1 : j]
            i = j + 1
            continue
        if c == ":" and depth == 1:
            key = last_str
        elif c in "[{":
            depth += 1
            if depth > deepest:
                deepest, deepest_key = depth, key
            if depth > MAX_DEPTH:
                return depth, deepest_key
        elif c in "]}":
            depth -= 1
        i += 1
    return deepest, deepest_key


def _no_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    seen: Dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise SpecError("spec: key %r appears twice; which value was meant is unclear" % k, k)
        seen[k] = v
    return seen


class _Constant(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _Constant(name)


def parse(text: str, where: str = "spec") -> Any:
    """Strict JSON for specs: no NaN / Infinity, no duplicate keys, nesting at most MAX_DEPTH."""
    deep, key = _nesting(text)
    if deep > MAX_DEPTH:
        raise SpecError(
            "spec: %s nests deeper than %d levels%s; a spec is at most 3 deep"
            % (where, MAX_DEPTH, " under key %r" % key if key else ""),
            key,
        )
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except SpecError:
        raise
    except _Constant as e:
        key = _constant_key(text)
        raise SpecError(
            "spec: %s is %s, not a number a spec can use (budgets and factors must be finite)"
            % ("%r" % key if key else "a value", e.args[0]),
            key,
        )
    except (ValueError, RecursionError) as e:
        raise SpecError("%s is not valid JSON: %s" % (where, e))


def _constant_key(text: str) -> Optional[str]:
    """The top-level key whose value holds NaN / Infinity (for the error's detail)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None

    def bad(v: Any) -> bool:
        if isinstance(v, float):
            return not math.isfinite(v)
        if isinstance(v, dict):
            return any(bad(x) for x in v.values())
        if isinstance(v, list):
            return any(bad(x) for x in v)
        return False

    if isinstance(obj, dict):
        for k, v in obj.items():
            if bad(v):
                return k
    return None
