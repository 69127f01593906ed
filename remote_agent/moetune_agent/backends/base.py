# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The interface every measurement backend implements.

Three backends implement it:
  * ``server``    - the server's own fused-MoE kernel (SGLang / vLLM importable on the host),
  * ``triton``    - moetune's own Triton fused-MoE kernel in ``kernels/`` (same algorithm and config
                    semantics as the servers'),
  * ``synthetic`` - a deterministic latency model for hosts without a GPU and for CI. Everything it
                    produces is marked simulated.

The strategies (``moetune_agent.strategies``) and the multi-GPU scheduler only talk to this interface.
Standard library only: a backend module imports torch/triton lazily, inside its own methods.
"""

from __future__ import annotations

import abc
from typing import Optional

# The values (Shape, KernelConfig, Timing, CandidateError) live in kernel_types; this module re-exports none
# of them, so every caller imports them from there.
from .. import kernel_types

__all__ = ["Backend", "file_sha256"]


class Backend(abc.ABC):
    """Measures kernel configs of one MoE shape on one device.

    op is "up" (gate/up GEMM + SiLU-and-mul), "down" (down GEMM scaled by routing weights, summed over
    top-k) or "both" (the whole MoE call, up config used for both GEMMs unless cfg_down is given).
    """

    name: str = "abstract"
    simulated: bool = False
    supports_tma: bool = False

    def __init__(self, shape: kernel_types.Shape, device_index: int = 0, cache_dir: Optional[str] = None):
        self.shape = shape
        self.device_index = device_index
        self.cache_dir = cache_dir

    # -- facts about the device ---------------------------------------------------------------
    @abc.abstractmethod
    def device_name(self) -> str:
        """CUDA device name as the servers write it in file names (spaces -> '_')."""

    @abc.abstractmethod
    def shared_memory_per_block(self) -> int:
        """Opt-in shared-memory limit per block in bytes (232448 on Hopper)."""

    # -- measuring ----------------------------------------------------------------------------
    def precompile(self, op: str, cfg: kernel_types.KernelConfig) -> None:
        """Compile cfg for op ahead of time (may run in a separate CPU worker process that shares
        cache_dir). Raises CandidateError. Default: nothing to do."""

    @abc.abstractmethod
    def measure(
        self,
        op: str,
        cfg: kernel_types.KernelConfig,
        m: int,
        replays: int = 10,
        cfg_down: Optional[kernel_types.KernelConfig] = None,
    ) -> kernel_types.Timing:
        """Time cfg at batch size m the reference way (whole call in a CUDA graph, fresh random routing
        per replay). Compiles on first use. Raises CandidateError."""

    def measure_pair(
        self, op: str, cfg: kernel_types.KernelConfig, ref: kernel_types.KernelConfig, m: int, replays: int = 10
    ):
        """A paired measurement: cfg and the reference ref (the server's default) timed in one unit, replay
        by replay alternating, so that both see the same clocks and drift and their ratio is what the
        head-to-head and the headroom check decide on. -> (cfg's Timing, ref's Timing or None, why ref
        failed or None). cfg's own failure raises CandidateError; ref's is returned, so the head-to-head
        can still pick a tuned config where the default cannot run. Default (a model with no drift):
        the two measured one after the other."""
        t = self.measure(op, cfg, m, replays)
        try:
            return t, self.measure(op, ref, m, replays), None
        except kernel_types.CandidateError as e:
            return t, None, "%s: %s" % (e.kind, e.message)

    @abc.abstractmethod
    def check(self, op: str, cfg: kernel_types.KernelConfig, m: int) -> float:
        """Run cfg once on fresh random inputs and return the relative error against a torch
        reference; raise CandidateError("mismatch", ...) when it is above tolerance."""

    @abc.abstractmethod
    def default_config(self, op: str, m: int) -> kernel_types.KernelConfig:
        """The config the server uses when no tuned file exists (docs/servers.md section 3)."""

    def roofline_us(self, op: str, m: int) -> Optional[float]:
        """Lower bound in microseconds from HBM bandwidth (bytes that must move / measured bandwidth);
        None when unknown."""
        return None

    def close(self) -> None:
        """Free device memory."""


def file_sha256(path: Optional[str]) -> Optional[str]:
    """sha256 of a file's bytes (the default's config file, so an install can tell it is the very file at
    its target), None when it cannot be read."""
    if not path:
        return None
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None
