# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""CPU precompile of the server's down GEMM with USE_TMA, in one worker that sees no GPU, the way the
precompile pool runs it: 4 configs x the 18 batch sizes of Qwen3-30B-A3B TP1. Prints how many were tried
and every failure kind with its (BLOCK_SIZE_M, m) pairs and the first traceback of each kind.

    PYTHONPATH=<a SGLang tree> python3 remote_agent/tools/precompile_probe.py
"""

import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from moetune_agent.backends.cpu_compile import hide_gpus  # noqa: E402

hide_gpus()  # before torch is imported, as in a precompile worker

from moetune_agent.backends import cpu_compile as cpu_mod  # noqa: E402
from moetune_agent.backends.server_backend import ServerBackend  # noqa: E402
from moetune_agent.kernel_types import KernelConfig, Shape  # noqa: E402

SIZES = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)
CONFIGS = ((16, 64, 128, 4, 3), (64, 128, 64, 8, 4), (128, 256, 64, 8, 4), (32, 128, 64, 4, 3))


def main():
    info = {"capability": 90, "device_name": "NVIDIA H200", "smem": 232448, "sm_count": 132}
    b = ServerBackend(Shape(128, 768, 2048, 8, "bf16"), 0, "/tmp/moetune-precompile-probe", framework="sglang",
                      cpu_compile=info)
    invoke = b.invoke
    seen = set()

    def traced(*a, **k):
        try:
            return invoke(*a, **k)
        except cpu_mod.CompiledOnly:
            raise
        except Exception as e:  # noqa: BLE001 - the point is to show it
            kind = str(e).splitlines()[0] if str(e) else type(e).__name__
            if kind not in seen:
                seen.add(kind)
                traceback.print_exc()
            raise

    b.invoke = traced
    fails = {}
    tried = 0
    for bm, bn, bk, warps, stages in CONFIGS:
        cfg = KernelConfig.from_dict({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 1,
                                      "num_warps": warps, "num_stages": stages, "USE_TMA": True})
        for m in SIZES:
            tried += 1
            try:
                b.precompile("down", cfg, m)
            except Exception as e:  # noqa: BLE001
                fails.setdefault("%s: %s" % (type(e).__name__, str(e)[:160]), []).append((bm, m))
    print("tried %d, failed %d" % (tried, sum(len(v) for v in fails.values())))
    for kind, where in fails.items():
        print(len(where), kind, where)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
