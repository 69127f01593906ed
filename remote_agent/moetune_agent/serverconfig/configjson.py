# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Config file contents (docs/servers.md section 3): parse, validate, and write the servers' exact bytes.

Both tuners write json.dump(obj, indent=4) followed by a newline; vLLM's puts a top-level
"triton_version" key first (its loader ignores it). Keys are batch sizes as decimal strings.
"""

from __future__ import annotations

import collections
import json
from typing import Any, Dict, Mapping, Optional, Tuple

from ..kernel_types import CONFIG_KEYS, KernelConfig

__all__ = [
    "ConfigFileError",
    "check_entries",
    "format_config_text",
    "nearest_key",
    "parse_config_text",
    "read_as_server",
]

OPTIONAL_KEYS = ("USE_TMA", "waves_per_eu", "matrix_instr_nonkdim", "kpack")

# Sane values (PROTOCOL.md section 7): what a Triton fused-MoE kernel can compile. Block sizes are
# tl.arange extents (powers of two), num_warps a power of two; the bounds are far above any server's files.
MAX_BATCH_KEY = 1 << 31
_POW2_MAX = {"BLOCK_SIZE_M": 4096, "BLOCK_SIZE_N": 4096, "BLOCK_SIZE_K": 4096, "num_warps": 64}
_INT_MAX = {"GROUP_SIZE_M": 1 << 16, "num_stages": 64}


class ConfigFileError(ValueError):
    """Contents that are not a valid server config file; the message names the bad key."""


def _check_entry(key, entry):
    if not isinstance(entry, dict):
        raise ConfigFileError("entry %r must be an object, got %s" % (key, type(entry).__name__))
    for k in CONFIG_KEYS:
        if k not in entry:
            raise ConfigFileError("entry %r lacks %s" % (key, k))
        v = entry[k]
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ConfigFileError("entry %r: %s must be a positive integer, got %r" % (key, k, v))
        if k in _POW2_MAX and (v & (v - 1) or v > _POW2_MAX[k]):
            raise ConfigFileError(
                "entry %r: %s must be a power of two of at most %d, got %d" % (key, k, _POW2_MAX[k], v)
            )
        if k in _INT_MAX and v > _INT_MAX[k]:
            raise ConfigFileError("entry %r: %s must be at most %d, got %d" % (key, k, _INT_MAX[k], v))
    for k in entry:
        if k not in CONFIG_KEYS and k not in OPTIONAL_KEYS:
            raise ConfigFileError("entry %r: unknown key %r" % (key, k))
    if "USE_TMA" in entry and not isinstance(entry["USE_TMA"], bool):
        raise ConfigFileError("entry %r: USE_TMA must be true or false" % (key,))


def parse_config_text(text: str) -> Tuple[Dict[int, dict], Optional[str]]:
    """-> ({m: entry dict (key order kept)}, triton_version or None). Raises ConfigFileError."""

    def pairs(kv):
        seen = collections.OrderedDict()
        for k, v in kv:
            if k in seen:  # the servers' json.load would keep the last one silently
                raise ConfigFileError("key %r appears twice" % (k,))
            seen[k] = v
        return seen

    try:
        obj = json.loads(text, object_pairs_hook=pairs)
    except ConfigFileError:
        raise
    except (ValueError, RecursionError) as e:
        raise ConfigFileError("not JSON: %s" % e)
    return check_entries(obj, allow_triton_version=True)


def read_as_server(text: str) -> Tuple[Dict[int, object], Optional[str]]:
    """A file at the server's target read the way the servers read it (docs/servers.md section 3: both
    loaders do `{int(key): val for key, val in json.load(f).items()}`, vLLM first dropping
    "triton_version"): a key written twice keeps its last value (at the place of its first), "01" and " 1"
    are batch size 1, and an entry is whatever the file holds (the kernel, not the loader, uses it). Used for
    files moetune did not write, so that a file the server reads is never called invalid and none of its
    rows is lost. -> ({m: entry, in the server's order}, triton_version or None). Raises ConfigFileError only
    where the server's own loader fails too (not JSON, not an object, a key int() refuses)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise ConfigFileError("not JSON: %s" % e)
    if not isinstance(obj, dict):
        raise ConfigFileError("a config file must be a JSON object of batch size -> config")
    tv = obj.pop("triton_version", None)
    entries: Dict[int, object] = collections.OrderedDict()
    for key, entry in obj.items():
        try:
            m = int(key)
        except ValueError:
            raise ConfigFileError("key %r is not a batch size: the server's loader (int(key)) fails on it too" % (key,))
        entries[m] = entry
    return entries, tv if isinstance(tv, str) else None


def check_batch_key(key: object) -> int:
    """A config file's key: a batch size written as a positive decimal integer ("1", "64"; not "-5",
    "0", "01", " 1"). -> the int. Raises ConfigFileError."""
    if (
        not isinstance(key, str)
        or not key.isascii()
        or not key.isdigit()
        or str(int(key)) != key
        or int(key) <= 0
        or int(key) > MAX_BATCH_KEY
    ):
        raise ConfigFileError(
            "key %r is not a batch size (a positive decimal integer of at most %d)" % (key, MAX_BATCH_KEY)
        )
    return int(key)


def check_entries(obj: object, allow_triton_version: bool = False) -> Tuple[Dict[int, dict], Optional[str]]:
    """The one validator of config contents (a parsed file, or a result.json file's "entries"): keys are
    batch sizes, every entry has the six kernel keys with sane values and nothing unknown.
    -> ({m: entry}, triton_version or None). Raises ConfigFileError."""
    if not isinstance(obj, dict):
        raise ConfigFileError("a config file must be a JSON object of batch size -> config")
    entries: Dict[int, dict] = collections.OrderedDict()
    tv = None
    for key, entry in obj.items():
        if key == "triton_version" and allow_triton_version:
            if not isinstance(entry, str):
                raise ConfigFileError("triton_version must be a string")
            tv = entry
            continue
        m = check_batch_key(key)
        _check_entry(key, entry)
        entries[m] = dict(entry)
    if not entries:
        raise ConfigFileError("the file has no batch-size entries")
    return entries, tv


def entries_from_configs(configs: Dict[int, KernelConfig]) -> Dict[int, dict]:
    return collections.OrderedDict((m, configs[m].as_dict()) for m in sorted(configs))


def format_config_text(
    entries: Mapping[int, Any],
    dialect: str = "sglang",
    triton_version: Optional[str] = None,
    keep_as_is: Tuple[int, ...] = (),
) -> str:
    """The exact bytes the server's tuner writes. entries: m -> KernelConfig or dict; written in
    ascending batch size; each entry's six keys in the servers' order, then optional keys. keep_as_is:
    keys whose entry came from a file moetune did not write (read_as_server): written as they are,
    unchecked, so a merge never drops or rewrites a row it did not measure."""
    obj: Dict[str, object] = collections.OrderedDict()
    if dialect == "vllm" and triton_version:
        obj["triton_version"] = triton_version
    for m in sorted(entries, key=int):
        e = entries[m]
        if int(m) in keep_as_is:
            obj[str(int(m))] = e
            continue
        d = e.as_dict() if isinstance(e, KernelConfig) else dict(e)
        _check_entry(str(m), d)
        ordered = collections.OrderedDict((k, d[k]) for k in CONFIG_KEYS)
        for k in OPTIONAL_KEYS:
            if k in d:
                ordered[k] = d[k]
        obj[str(int(m))] = ordered
    return json.dumps(obj, indent=4) + "\n"


def nearest_key(entries: Dict[int, object], m: int) -> int:
    """The key the server picks for m tokens: nearest, on a tie the first in the file's order (the
    servers' min() over the loaded dict; in a file written in ascending order, the smaller)."""
    return min(entries, key=lambda k: abs(int(k) - m))
