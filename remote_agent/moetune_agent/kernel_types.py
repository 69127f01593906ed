# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The values every part of the agent passes around: the MoE layer being tuned (``Shape``), one tile
configuration (``KernelConfig``, ``CONFIG_KEYS``), a measurement's samples (``Timing``), a candidate that
cannot run (``CandidateError``) and the batch sizes the reference tuners sweep.

Floor 0: imports nothing of the agent, so the backends, the servers' config files, the search space and
the strategies all build on it without importing one another. Worker processes receive these objects
pickled (``Shape``, ``KernelConfig``); both sides import them from here.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Dict, List, Optional, Sequence, Tuple

__all__ = [
    "CONFIG_KEYS",
    "CandidateError",
    "KernelConfig",
    "Shape",
    "Timing",
    "batch_sizes_default",
    "shape_of",
    "strategy_ops",
]

# The six keys every config file entry has, in the order the servers write them.
CONFIG_KEYS = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages")


_KEY_RE = re.compile(r"^m([0-9]+)n([0-9]+)k([0-9]+)g([0-9]+)w([0-9]+)s([0-9]+)(t?)$")


@dataclasses.dataclass(frozen=True, order=True)
class KernelConfig:
    """One candidate tile configuration (one entry of a config file)."""

    BLOCK_SIZE_M: int
    BLOCK_SIZE_N: int
    BLOCK_SIZE_K: int
    GROUP_SIZE_M: int
    num_warps: int
    num_stages: int
    USE_TMA: Optional[bool] = None  # only for backends that support TMA (SGLang down files)

    def as_dict(self) -> Dict[str, object]:
        d: Dict[str, object] = {k: getattr(self, k) for k in CONFIG_KEYS}
        if self.USE_TMA is not None:
            d["USE_TMA"] = self.USE_TMA
        return d

    @staticmethod
    def from_dict(d: Dict[str, object]) -> "KernelConfig":
        return KernelConfig(*(int(d[k]) for k in CONFIG_KEYS), USE_TMA=d.get("USE_TMA"))  # type: ignore

    @staticmethod
    def from_key(key: str) -> "KernelConfig":
        """The inverse of key(): 'm64n128k64g16w4s3' (optionally ending in 't' for USE_TMA) -> KernelConfig.
        Raises ValueError for any other text."""
        m = _KEY_RE.match(key)
        if not m:
            raise ValueError("%r is not a config key like 'm64n128k64g16w4s3'" % (key,))
        return KernelConfig(*(int(x) for x in m.groups()[:6]), USE_TMA=True if m.group(7) else None)  # type: ignore

    def key(self) -> str:
        """Short stable text id, e.g. 'm64n128k64g16w4s3'."""
        s = "m%dn%dk%dg%dw%ds%d" % (
            self.BLOCK_SIZE_M,
            self.BLOCK_SIZE_N,
            self.BLOCK_SIZE_K,
            self.GROUP_SIZE_M,
            self.num_warps,
            self.num_stages,
        )
        if self.USE_TMA:
            s += "t"
        return s


@dataclasses.dataclass(frozen=True)
class Shape:
    """The MoE layer being tuned (one rank's view)."""

    E: int  # local experts
    N: int  # per-rank intermediate size after SiLU-and-mul (up weight is 2N x K)
    K: int  # hidden size
    topk: int
    dtype: str = "bf16"  # "bf16" | "fp16" | "fp8_w8a8" | "int8_w8a8" | ...
    block_shape: Optional[Tuple[int, ...]] = None  # e.g. (128, 128) for block-quant fp8
    per_channel_quant: bool = False


class CandidateError(Exception):
    """A candidate that cannot run: recorded in the journal and skipped, never fatal to the run.

    kind is one of "compile", "resources" (out of shared memory/registers), "oom" (GPU memory),
    "mismatch" (output differs from the torch reference), "other".
    """

    def __init__(self, kind: str, message: str):
        super().__init__("%s: %s" % (kind, message))
        self.kind = kind
        self.message = message


@dataclasses.dataclass
class Timing:
    """Microseconds per MoE call (or per GEMM when op is "up"/"down")."""

    samples_us: List[float]

    @property
    def median_us(self) -> float:
        s = sorted(self.samples_us)
        n = len(s)
        return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])

    @property
    def spread(self) -> float:
        """(max - min) / median of the samples; 0 for a single sample."""
        if len(self.samples_us) < 2:
            return 0.0
        m = self.median_us
        return (max(self.samples_us) - min(self.samples_us)) / m if m > 0 else 0.0


def batch_sizes_default() -> Sequence[int]:
    """The 18 batch sizes the reference tuners sweep."""
    return (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)


def shape_of(spec: Dict) -> Shape:
    """The Shape a tune spec (spec.py, normalised) describes."""
    bs = spec.get("block_shape")
    return Shape(
        spec["E"],
        spec["N"],
        spec["K"],
        spec["topk"],
        spec.get("dtype") or "bf16",
        tuple(bs) if bs else None,
        bool(spec.get("per_channel_quant")),
    )


def strategy_ops(spec: Dict) -> Tuple[str, ...]:
    """The ops a strategy of that spec tunes: "up" and "down" apart, or "both" as one call."""
    return ("up", "down") if spec["ops"] == "up+down" else ("both",)
