# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The agent's options, and the one place that reads the process environment.

Built once per process from the environment (again only when a MOETUNE_* variable changed, which only
tests do), in two parts:
  * HostOptions: what a host's user may set (home, unit timeout, the compile cache, the prewarm, the
    bytecode cache) and three tooling settings (profiling, the nvidia-smi to run, the start-up wait);
  * TestHooks: the test doubles' knobs, honoured only with the synthetic backend (test_hooks(False)
    gives every other backend the defaults), plus the install's mid-write pause, which is no backend's.
Everything else the agent decides is a constant or a constructor parameter of the part it belongs to.

The variables that belong to the servers and the host (SGLANG_MOE_CONFIG_DIR, VLLM_TUNED_CONFIG_FOLDER,
HF_HOME, CUDA_VISIBLE_DEVICES, PYTHONPYCACHEPREFIX, USER) are facts the probe and the backends read:
host_env() reads them, set_env() sets a worker's before its heavy imports, child_env() builds a child
process's. tests/test_options.py keeps os.environ out of every other module of the agent.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Dict, Mapping, Optional, Tuple

__all__ = [
    "HostOptions",
    "TestHooks",
    "host",
    "test_hooks",
    "host_env",
    "set_env",
    "child_env",
    "COMPILE_CACHE",
    "BYTECODE_CACHE",
    "AUTO",
    "ON",
    "OFF",
]

AUTO, ON, OFF = "auto", "on", "off"


def _switch(value: Optional[str]) -> str:
    """ "0" -> off, "1" -> on, anything else (unset) -> auto: the three-way switches below."""
    return OFF if value == "0" else ON if value == "1" else AUTO


def _float(value: Optional[str], default: float) -> float:
    return float(value or default)


@dataclasses.dataclass(frozen=True)
class HostOptions:
    """What the user of a host may set, each through one variable (remote_agent/README.md, "Options")."""

    home: Optional[str] = None  # MOETUNE_HOME: the agent's folder (default ~/.cache/moetune)
    unit_timeout_s: float = 600.0  # MOETUNE_UNIT_TIMEOUT_S: a unit running longer is a hung kernel
    compile_cache: str = AUTO  # MOETUNE_COMPILE_CACHE: 0 off, 1 also for the synthetic backend
    prewarm: bool = True  # MOETUNE_PREWARM=0: no background compile after a headroom check
    bytecode_cache: str = AUTO  # MOETUNE_PYCACHE: 0 off, 1 always (auto: where packages lack bytecode)
    profile_dir: Optional[str] = None  # MOETUNE_PROFILE_DIR (tooling): cProfile every process there
    nvidia_smi: Optional[str] = None  # MOETUNE_NVIDIA_SMI (tooling): the nvidia-smi the probe runs
    start_wait_s: float = 60.0  # MOETUNE_AGENT_START_WAIT_S (tooling): tune's wait for its run process

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "HostOptions":
        return cls(
            home=env.get("MOETUNE_HOME") or None,
            unit_timeout_s=_float(env.get("MOETUNE_UNIT_TIMEOUT_S"), 600.0),
            compile_cache=_switch(env.get("MOETUNE_COMPILE_CACHE")),
            prewarm=env.get("MOETUNE_PREWARM", "1") != "0",
            bytecode_cache=_switch(env.get("MOETUNE_PYCACHE")),
            profile_dir=env.get("MOETUNE_PROFILE_DIR") or None,
            nvidia_smi=env.get("MOETUNE_NVIDIA_SMI") or None,
            start_wait_s=_float(env.get("MOETUNE_AGENT_START_WAIT_S"), 60.0),
        )


COMPILE_CACHE = "MOETUNE_COMPILE_CACHE"
BYTECODE_CACHE = "MOETUNE_PYCACHE"


@dataclasses.dataclass(frozen=True)
class TestHooks:
    """The test doubles' knobs (never set in production). Every field but install_pause_s is honoured only
    with the synthetic backend: test_hooks() gives any other backend the defaults."""

    synthetic_delay_ms: float = 0.0  # MOETUNE_SYNTHETIC_DELAY_MS: each measurement takes this long
    synthetic_compile_ms: float = 0.0  # MOETUNE_SYNTHETIC_COMPILE_MS: each config compiles this long
    synthetic_compile_spread: bool = False  # MOETUNE_SYNTHETIC_COMPILE_SPREAD=1: ... scaled by compile_cost
    synthetic_check_ms: Optional[str] = None  # MOETUNE_SYNTHETIC_CHECK_MS: a slow smoke call
    synthetic_default_file: Optional[str] = None  # MOETUNE_SYNTHETIC_DEFAULT_FILE: the "server's" file
    synthetic_slow_gpu: Optional[str] = None  # MOETUNE_SYNTHETIC_SLOW_GPU "INDEX:MS": one GPU slower
    crash_unit: Optional[str] = None  # MOETUNE_TEST_CRASH_UNIT: the worker dies on that unit
    hang_unit: Optional[str] = None  # MOETUNE_TEST_HANG_UNIT: the worker hangs on that unit
    fail_measure: Optional[str] = None  # MOETUNE_TEST_FAIL_MEASURE: every measurement fails so
    fail_call: Optional[str] = None  # MOETUNE_TEST_FAIL_CALL: the kernel cannot be called
    mismatch_cfg: Optional[str] = None  # MOETUNE_TEST_MISMATCH_CFG: that config's output is wrong
    warm_log: Optional[str] = None  # MOETUNE_TEST_WARM_LOG: pool processes log their warm-up
    precompile_workers: Optional[int] = None  # MOETUNE_PRECOMPILE_WORKERS: the pool's size
    install_pause_s: float = 0.0  # MOETUNE_TEST_INSTALL_PAUSE_S: install pauses mid-write

    @classmethod
    def from_env(cls, env: Mapping[str, str], synthetic: bool = True) -> "TestHooks":
        pause = _float(env.get("MOETUNE_TEST_INSTALL_PAUSE_S"), 0.0)
        if not synthetic:
            return cls(install_pause_s=pause)
        workers = env.get("MOETUNE_PRECOMPILE_WORKERS")
        return cls(
            synthetic_delay_ms=_float(env.get("MOETUNE_SYNTHETIC_DELAY_MS"), 0.0),
            synthetic_compile_ms=_float(env.get("MOETUNE_SYNTHETIC_COMPILE_MS"), 0.0),
            synthetic_compile_spread=env.get("MOETUNE_SYNTHETIC_COMPILE_SPREAD") == "1",
            synthetic_check_ms=env.get("MOETUNE_SYNTHETIC_CHECK_MS") or None,
            synthetic_default_file=env.get("MOETUNE_SYNTHETIC_DEFAULT_FILE") or None,
            synthetic_slow_gpu=env.get("MOETUNE_SYNTHETIC_SLOW_GPU") or None,
            crash_unit=env.get("MOETUNE_TEST_CRASH_UNIT") or None,
            hang_unit=env.get("MOETUNE_TEST_HANG_UNIT") or None,
            fail_measure=env.get("MOETUNE_TEST_FAIL_MEASURE") or None,
            fail_call=env.get("MOETUNE_TEST_FAIL_CALL") or None,
            mismatch_cfg=env.get("MOETUNE_TEST_MISMATCH_CFG") or None,
            warm_log=env.get("MOETUNE_TEST_WARM_LOG") or None,
            precompile_workers=int(workers) if workers else None,
            install_pause_s=pause,
        )


# Built once per process; built again only when the agent's variables changed (tests set them in-process).
_built: Dict[str, Tuple[Tuple[Tuple[str, str], ...], object]] = {}


def _snapshot() -> Tuple[Tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("MOETUNE_")))


def host() -> HostOptions:
    """This process's host options."""
    snap = _snapshot()
    got = _built.get("host")
    if got is None or got[0] != snap:
        got = (snap, HostOptions.from_env(os.environ))
        _built["host"] = got
    return got[1]  # type: ignore[return-value]


def test_hooks(synthetic: bool) -> TestHooks:
    """The test hooks for a process of the synthetic backend (synthetic: all of them), or of any other
    backend or none (only the install's pause)."""
    key = "hooks-synthetic" if synthetic else "hooks"
    snap = _snapshot()
    got = _built.get(key)
    if got is None or got[0] != snap:
        got = (snap, TestHooks.from_env(os.environ, synthetic))
        _built[key] = got
    return got[1]  # type: ignore[return-value]


def host_env(name: str) -> Optional[str]:
    """A variable of the host or of the servers (SGLANG_MOE_CONFIG_DIR, VLLM_TUNED_CONFIG_FOLDER, HF_HOME,
    CUDA_VISIBLE_DEVICES, PYTHONPYCACHEPREFIX, USER, PYTHONPATH): a fact the probe or a backend reads;
    None where unset or empty."""
    return os.environ.get(name) or None


def set_env(**values: str) -> None:
    """Set variables of this process for what it imports next (a worker pins its GPU and Triton's cache
    folder before torch or Triton load)."""
    os.environ.update(values)


def child_env(**values: str) -> Dict[str, str]:
    """The environment for a child process: this one's, with values set."""
    env = dict(os.environ)
    env.update(values)
    return env
