# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""How long each kernel of a shape's search space takes to compile with moetune's own Triton kernel, as the
precompile pool compiles it (CPU compile mode: no GPU is used; the GPU's facts are given), one process per
core, each with its own empty Triton cache so that every compile is a real one (issue 22: int4_w4a16 kernels
took up to 3.0 s of ptxas each on the H200 host, bf16 ones ~0.3 s).

    python3 tools/compile_times.py --dtype int4_w4a16 --block-shape 0,128 --sizes 1,64,1024 --sample 150 \
        --json int4_compile.json
    python3 tools/compile_times.py --dtype bf16 --sizes 1,64,1024 --sample 150 --dry-run   # the sample only

GROUP_SIZE_M is a runtime argument of the kernels (one kernel for all its values), so the space is taken
per (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps, num_stages). Prints the mean and the slowest
compile per value of each axis, and the slowest kernels; --json keeps every time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
sys.path.insert(0, AGENT_ROOT)

AXES = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "num_warps", "num_stages")
_BE = None


def sample_space(shape_args, sizes, n, seed=1):
    """[(BM, BN, BK, warps, stages)]: the space's distinct kernels at these sizes, n of them at random
    (all where n is 0 or larger)."""
    from moetune_agent import space as space_mod
    from moetune_agent.kernel_types import Shape

    shape = Shape(*shape_args)
    sp = space_mod.build_space(shape, sizes, ["up"], "sglang", space_mod.HOPPER_SMEM_LIMIT)
    kernels = sorted({(c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K, c.num_warps, c.num_stages)
                      for cfgs in sp.values() for c in cfgs})
    if n and n < len(kernels):
        kernels = sorted(random.Random(seed).sample(kernels, n))
    return kernels


def _init(desc, root, pycache):
    """A pool process: no GPU, its own Triton cache, the backend built and one kernel compiled first (the
    process's one-time costs: imports, Triton's own hash) outside what is timed."""
    global _BE
    from moetune_agent.engine import bytecode

    bytecode.enable(pycache)  # the host's packages' bytecode, compiled once by main()
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ct-", dir=root)
    from moetune_agent.backends.factory import make_backend
    from moetune_agent.kernel_types import KernelConfig

    _BE = make_backend(desc, 0, os.environ["TRITON_CACHE_DIR"])
    try:
        _BE.precompile("up", KernelConfig(16, 64, 64, 1, 4, 2))
    except Exception:  # noqa: BLE001 - the timed compiles say what is wrong
        pass


def _one(kernel):
    from moetune_agent.kernel_types import KernelConfig

    bm, bn, bk, warps, stages = kernel
    t0 = time.time()
    err = None
    try:
        _BE.precompile("up", KernelConfig(bm, bn, bk, 1, warps, stages))
    except Exception as e:  # noqa: BLE001 - recorded per kernel
        err = "%s: %s" % (type(e).__name__, str(e)[:160])
    return kernel, round(time.time() - t0, 3), err


def summarise(rows):
    ok = [r for r in rows if r["error"] is None]
    print("%d kernels compiled, %d failed; compile seconds: mean %.2f, median %.2f, max %.2f, total %.1f" % (
        len(ok), len(rows) - len(ok), statistics.mean(r["s"] for r in ok) if ok else 0.0,
        statistics.median(r["s"] for r in ok) if ok else 0.0, max((r["s"] for r in ok), default=0.0),
        sum(r["s"] for r in ok)))
    for i, axis in enumerate(AXES):
        by = {}
        for r in ok:
            by.setdefault(r["kernel"][i], []).append(r["s"])
        print("  %-13s %s" % (axis, "  ".join("%s: mean %.2f max %.2f (%d)" % (v, statistics.mean(t), max(t), len(t))
                                               for v, t in sorted(by.items()))))
    print("  slowest:")
    for r in sorted(ok, key=lambda r: -r["s"])[:15]:
        print("    %5.2f s  m%dn%dk%d w%d s%d" % ((r["s"],) + tuple(r["kernel"])))
    for r in [r for r in rows if r["error"]][:5]:
        print("    failed m%dn%dk%d w%d s%d: %s" % (tuple(r["kernel"]) + (r["error"],)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--E", type=int, default=128)
    ap.add_argument("--N", type=int, default=768)
    ap.add_argument("--K", type=int, default=2048)
    ap.add_argument("--topk", type=int, default=8)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--block-shape", default="", help="e.g. 0,128 (int4_w4a16 group 128) or 128,128")
    ap.add_argument("--sizes", default="1,64,1024")
    ap.add_argument("--sample", type=int, default=150, help="kernels drawn from the space (0: all)")
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--capability", type=int, default=90)
    ap.add_argument("--device-name", default="NVIDIA H200")
    ap.add_argument("--smem", type=int, default=232448)
    ap.add_argument("--backend", default="triton", help="synthetic: the tool's own check without a GPU stack (SIMULATED)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--dry-run", action="store_true", help="print the sample and exit")
    a = ap.parse_args(argv)
    block = [int(x) for x in a.block_shape.split(",")] if a.block_shape else None
    sizes = [int(x) for x in a.sizes.split(",")]
    shape_args = (a.E, a.N, a.K, a.topk, a.dtype, tuple(block) if block else None, False)
    kernels = sample_space(shape_args, sizes, a.sample)
    print("compile_times: %s E=%d N=%d K=%d topk=%d block %s, sizes %s: %d kernels on %d processes" % (
        a.dtype, a.E, a.N, a.K, a.topk, block, sizes, len(kernels), a.workers), flush=True)
    if a.dry_run:
        for k in kernels:
            print("  m%dn%dk%d w%d s%d" % k)
        return 0
    desc = {"name": a.backend, "framework": "sglang",
            "shape": {"E": a.E, "N": a.N, "K": a.K, "topk": a.topk, "dtype": a.dtype, "block_shape": block,
                      "per_channel_quant": False},
            "cpu_compile": {"capability": a.capability, "device_name": a.device_name, "smem": a.smem}}
    root = tempfile.mkdtemp(prefix="moetune-compile-times-")
    from moetune_agent.engine import bytecode

    pycache = os.path.join(root, "pycache") if a.backend != "synthetic" and any(bytecode.missing().values()) else None
    if pycache:
        os.makedirs(pycache)
        print("bytecode of the host's packages: %s" % bytecode.warm(pycache), flush=True)
    t0 = time.time()
    import multiprocessing

    with ProcessPoolExecutor(a.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init,
                             initargs=(desc, root, pycache)) as pool:
        rows = [{"kernel": list(k), "s": s, "error": err} for k, s, err in pool.map(_one, kernels)]
    wall = time.time() - t0
    summarise(rows)
    print("wall %.1f s" % wall)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"backend": a.backend, "simulated": a.backend == "synthetic", "dtype": a.dtype, "block_shape": block, "sizes": sizes, "workers": a.workers,
                       "wall_s": round(wall, 1), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
