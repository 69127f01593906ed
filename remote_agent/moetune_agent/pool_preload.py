# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Imported once by the precompile pool's fork server (scheduler.pool_context), before it forks the pool's
processes: torch and Triton load once per run instead of once per pool process.

Fourteen processes each importing torch at the same moment took ~12 s apiece on the H200 host of issue
22 (the imports fought for the same cores and disk, and with the GPU worker's own import); forked from
one process that imported them, the pool's processes start with both loaded. The GPUs are hidden first,
as in every precompile process (cpu_compile.hide_gpus): the pool compiles for the GPU's target without a
CUDA context. Nothing here touches a device or a server: the server's modules load in each process after
the CPU compile mode is entered (backends/cpu_compile.enter), since they read the device at import.
A failed import costs nothing but the preload: the pool's processes import what they need themselves.
"""

import os

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # cpu_compile.hide_gpus, without importing the package's backends

try:
    import torch  # type: ignore  # noqa: F401  # pylint: disable=unused-import
    import triton  # type: ignore  # noqa: F401  # pylint: disable=unused-import
    import triton.compiler  # type: ignore  # noqa: F401  # pylint: disable=unused-import
    PRELOADED = True
except Exception:  # noqa: BLE001 - no torch or Triton here (a CPU-only host, the synthetic backend's tests)
    PRELOADED = False
