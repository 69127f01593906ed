# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Config file names of both servers (docs/servers.md section 2) and Triton version folders.

E=<E>,N=<N>,device_name=<dev>[,dtype=<dt>][,block_shape=[n, k]][,per_channel_quant=True][_down].json
SGLang writes the block shape as "[128, 128]", vLLM as "[128,128]"; "_down" and per_channel_quant are
SGLang-only. One source of truth in Python; tests/data/moe_vectors.json keeps it identical to the C++ one.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, Optional, Sequence, Tuple

__all__ = [
    "ConfigName",
    "ConfigNameError",
    "DERIVED_SUFFIX_MAX",
    "DIALECTS",
    "NAME_MAX",
    "PATH_MAX",
    "check_file_name",
    "check_path_fits",
    "device_file_name",
    "file_names",
    "parse_name",
    "parse_triton_version",
    "server_config_name",
    "triton_folder",
    "try_parse_name",
]

DIALECTS = ("sglang", "vllm")

# The dtypes the servers put into file names; bf16/fp16 have no dtype part at all.
KNOWN_DTYPES = ("fp8_w8a8", "int8_w8a8", "int8_w8a16", "int4_w4a16", "float32")

# The same grammar as src/core/moe/configname.cpp (the shared vectors keep the two in step): a device
# name holds no comma; dtype is any word, so a dtype newer than this list still parses.
_NAME_RE = re.compile(
    r"^E=(?P<E>[0-9]{1,6}),N=(?P<N>[0-9]{1,7}),device_name=(?P<dev>[^,]*?)"
    r"(?:,dtype=(?P<dtype>[A-Za-z0-9_]+?))?"
    r"(?:,block_shape=\[(?P<bn>[0-9]{1,5}), ?(?P<bk>[0-9]{1,5})\])?"
    r"(?P<pcq>,per_channel_quant=True)?"
    r"(?P<down>_down)?\.json$"
)


class ConfigNameError(ValueError):
    """A file name that is not a server MoE config name."""


class ConfigName(object):
    """One parsed config file name."""

    __slots__ = ("E", "N", "device_name", "dtype", "block_shape", "per_channel_quant", "down")

    def __init__(
        self,
        E: int,
        N: int,
        device_name: str,
        dtype: Optional[str] = None,
        block_shape: Optional[Tuple[int, ...]] = None,
        per_channel_quant: bool = False,
        down: bool = False,
    ) -> None:
        self.E = int(E)
        self.N = int(N)
        self.device_name = device_name
        self.dtype = dtype or None
        self.block_shape = tuple(int(x) for x in block_shape) if block_shape else None
        self.per_channel_quant = bool(per_channel_quant)
        self.down = bool(down)

    def _key(self):
        return (self.E, self.N, self.device_name, self.dtype, self.block_shape, self.per_channel_quant, self.down)

    def __eq__(self, other):
        return isinstance(other, ConfigName) and self._key() == other._key()

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return "ConfigName(%r)" % (self._key(),)

    def file_name(self, dialect: str = "sglang") -> str:
        if dialect not in DIALECTS:
            raise ValueError("unknown dialect %r (sglang or vllm)" % (dialect,))
        s = "E=%d,N=%d,device_name=%s" % (self.E, self.N, self.device_name)
        if self.dtype:
            s += ",dtype=%s" % self.dtype
        if self.block_shape:
            sep = ", " if dialect == "sglang" else ","
            s += ",block_shape=[%d%s%d]" % (self.block_shape[0], sep, self.block_shape[1])
        if dialect == "sglang":
            if self.per_channel_quant:
                s += ",per_channel_quant=True"
            if self.down:
                s += "_down"
        return s + ".json"

    def as_dict(self):
        return {
            "E": self.E,
            "N": self.N,
            "device_name": self.device_name,
            "dtype": self.dtype,
            "block_shape": list(self.block_shape) if self.block_shape else None,
            "per_channel_quant": self.per_channel_quant,
            "down": self.down,
        }


def parse_name(name_or_path: str) -> ConfigName:
    """Parse a bare file name or a path ending in one (either dialect). Raises ConfigNameError."""
    base = re.split(r"[/\\]", name_or_path)[-1].strip()
    m = _NAME_RE.match(base)
    if not m:
        raise ConfigNameError(
            "%r is not a fused-MoE config file name " "(expected E=<E>,N=<N>,device_name=<device>[...].json)" % (base,)
        )
    e, n = int(m.group("E")), int(m.group("N"))
    if e <= 0 or n <= 0:
        raise ConfigNameError("%r: E and N must be positive" % (base,))
    bs = None
    if m.group("bn") is not None:
        bs = (int(m.group("bn")), int(m.group("bk")))
        if bs[0] <= 0 or bs[1] <= 0:
            raise ConfigNameError("%r: block_shape must be positive" % (base,))
    return ConfigName(
        e, n, m.group("dev"), m.group("dtype"), bs, m.group("pcq") is not None, m.group("down") is not None
    )


# A name goes into one directory entry, plus what the agent derives from it: the longest is a backup's
# temporary file ".<name>.bak.moetune-tmp-<pid, up to 7 digits>-<16 hex>" (safefile.temp_name), 42 bytes more
# than the name (a backup itself, "<name>.bak-YYYYMMDD-HHMMSS-<n>", adds at most 25).
NAME_MAX = 255
PATH_MAX = 4096
DERIVED_SUFFIX_MAX = len(".") + len(".bak") + len(".moetune-tmp-") + 7 + len("-") + 16


def check_file_name(name: object, dialect: Optional[str] = None) -> ConfigName:
    """A config file name as a directory entry the agent may create: exactly a server config name (the
    whole string, not a path ending in one: no '/', '\\', NUL, control character, '..'), in `dialect`'s own
    spelling when given, short enough for NAME_MAX with every suffix the agent adds. Raises ConfigNameError."""
    if not isinstance(name, str) or not name:
        raise ConfigNameError("the file name must be a non-empty string (got %r)" % (name,))
    if "/" in name or "\\" in name or name in (".", ".."):
        raise ConfigNameError("%r is a path, not a file name: a config file name holds no '/' or '\\'" % (name,))
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ConfigNameError(
            "%r holds a control character (newline, NUL, ...): no server builds such a name" % (name,)
        )
    m = _NAME_RE.fullmatch(name)
    cname = parse_name(name) if m else None
    if cname is None:
        raise ConfigNameError(
            "%r is not a fused-MoE config file name " "(expected E=<E>,N=<N>,device_name=<device>[...].json)" % (name,)
        )
    if dialect is not None:
        want = cname.file_name(dialect)
        if want != name:
            raise ConfigNameError(
                "%r is not a name %s reads: %s looks that shape up as %r" % (name, dialect, dialect, want)
            )
    n = len(name.encode("utf-8", "surrogateescape"))
    if n + DERIVED_SUFFIX_MAX > NAME_MAX:
        raise ConfigNameError(
            "the file name %r is %d bytes; with the agent's backup and temporary suffixes (%d "
            "bytes) it must fit the file system's %d-byte limit, so the name may be at most %d "
            "bytes" % (name[:60] + "...", n, DERIVED_SUFFIX_MAX, NAME_MAX, NAME_MAX - DERIVED_SUFFIX_MAX)
        )
    return cname


def check_path_fits(folder: str, name: str) -> None:
    """folder/<name and its longest derived name> must fit PATH_MAX. Raises ConfigNameError."""
    n = len(os.fsencode(os.path.join(folder, name))) + DERIVED_SUFFIX_MAX
    if n >= PATH_MAX:
        raise ConfigNameError(
            "the path %s/%s is too long: with the agent's suffixes it is %d bytes, the limit is %d"
            % (folder[:80] + "...", name[:60], n, PATH_MAX)
        )


def try_parse_name(name_or_path: str) -> Optional[ConfigName]:
    try:
        return parse_name(name_or_path)
    except ConfigNameError:
        return None


def device_file_name(raw_name: str) -> str:
    """The CUDA device name as the servers write it into file names: spaces -> '_'."""
    return (raw_name or "").strip().replace(" ", "_")


def server_config_name(
    framework: str,
    E: int,
    N: int,
    device_name: str,
    dtype: Optional[str] = None,
    block_shape: Optional[Sequence[int]] = None,
    per_channel_quant: bool = False,
    down: bool = False,
) -> ConfigName:
    """The name the server builds for a layer, from the LOGICAL shape (N = per-rank intermediate size,
    block_shape as the quantisation uses it, [0, group] for group-quantised int4/int8 weights):
    - bf16/fp16 have no dtype part; vLLM has none for int8_w8a8 either (it shares the plain file);
    - a block_shape with a 0 (group quantisation) is never in the name;
    - int4_w4a16: both servers take N from the packed down weight w2 [E, K, N/2]; vLLM doubles it back
      (file N = N), SGLang does not (file N = N/2);
    - per_channel_quant and _down exist in SGLang only."""
    if framework not in DIALECTS:
        raise ValueError("unknown framework %r (sglang or vllm)" % (framework,))
    dt = dtype_name_part(dtype)
    if framework == "vllm" and dt == "int8_w8a8":
        dt = None
    bs = tuple(int(x) for x in block_shape) if block_shape and all(block_shape) else None
    n = int(N)
    if dtype == "int4_w4a16" and framework == "sglang":
        if n % 2:
            raise ValueError("int4_w4a16 packs two weights per byte: N must be even (got %d)" % n)
        n //= 2
    sg = framework == "sglang"
    return ConfigName(E, n, device_name, dt, bs, bool(per_channel_quant) and sg, bool(down) and sg)


def dtype_name_part(dtype: Optional[str]) -> Optional[str]:
    """The dtype as it appears in a file name: None for bf16/fp16 (and None)."""
    if dtype in (None, "", "bf16", "fp16", "bfloat16", "float16", "auto"):
        return None
    return dtype


# -- Triton version <-> SGLang folder ------------------------------------------------------------

_VER_RE = re.compile(r"^(?:triton_)?([0-9]+)[._]([0-9]+)(?:[._]([0-9]+))?")


def parse_triton_version(s: str) -> Optional[Tuple[int, int, int]]:
    """'3.6.0', '3.6', '3.6.0+git1234', 'triton_3_6_0' or a path ending in that folder -> (3, 6, 0)."""
    if not s:
        return None
    base = os.path.basename(s.rstrip("/"))
    m = _VER_RE.match(base)
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


def triton_folder(version: str) -> str:
    """'3.6.0' -> 'triton_3_6_0' (the installed triton.__version__ with dots turned into underscores)."""
    v = parse_triton_version(version)
    if v is None:
        raise ValueError("not a Triton version: %r" % (version,))
    return "triton_%d_%d_%d" % v


def triton_version_string(version: str) -> str:
    v = parse_triton_version(version)
    if v is None:
        raise ValueError("not a Triton version: %r" % (version,))
    return "%d.%d.%d" % v


def file_names(spec: Dict[str, Any], device_name: str) -> Dict[str, str]:
    """The config file names a run writes, by kind (sglang, vllm, sglang_down with ops up+down): each
    server's own naming rules for the logical shape (server_config_name)."""

    def name(fw, down=False):
        return server_config_name(
            fw,
            spec["E"],
            spec["N"],
            device_name,
            spec.get("dtype"),
            spec.get("block_shape"),
            spec.get("per_channel_quant", False),
            down,
        ).file_name(fw)

    names = {"sglang": name("sglang"), "vllm": name("vllm")}
    if spec["ops"] == "up+down":
        names["sglang_down"] = name("sglang", True)
    return names
