# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 22: the tile screen's shared GROUP_SIZE_M for the servers' kernels (strategies/fast.py _screen_gm),
on the CPU: what it saves in compiles and what it costs in quality.

    python3 remote_agent/bench/shared_gm_replay.py [--json OUT.json]

1. Binaries. The servers' kernels compile GROUP_SIZE_M in and share binaries between the batch sizes of a
   specialisation class (backends/server_backend.specialisation_class). For SGLang main and vLLM main (Qwen3
   shape, 18 sizes, `up`) it counts the distinct precompile keys (engine/pool.precompile_key, as the pool
   compiles them) of the first phase, and of the whole fast strategy driven on the SYNTHETIC backend (a
   simulated landscape: counts only), with the screen's GROUP_SIZE_M per anchor (before) and shared (now).
2. Quality. The whole decision (strategy, head-to-head against the default) on the replayed H200
   landscapes (bench/replay.py: exhaustive recordings at 1, 16, 64, 256, 1024), before and with SGLang's
   and vLLM's classes: units, modelled GPU seconds (a model, not a measurement) and the regret of the final
   choice against the exhaustive best.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import replay  # noqa: E402
from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.backends.server_backend import classes_for  # noqa: E402
from moetune_agent.backends.synthetic import SyntheticBackend  # noqa: E402
from moetune_agent.kernel_types import CandidateError, Shape, batch_sizes_default  # noqa: E402
from moetune_agent.engine.pool import precompile_key  # noqa: E402
from moetune_agent.strategies import make_strategy  # noqa: E402
from moetune_agent.work import Measurement  # noqa: E402

QWEN3 = Shape(E=128, N=768, K=2048, topk=8, dtype="bf16")


def binaries(framework: str, shared: bool) -> dict:
    """Distinct precompile keys of the first phase and of the whole strategy (synthetic landscape)."""
    sizes = batch_sizes_default()
    ops = ("up",)
    classes = classes_for(framework, QWEN3)
    space = space_mod.build_space(QWEN3, sizes, ops)
    st = make_strategy("fast", space, sizes, ops, QWEN3, **({"kernel_classes": classes} if shared else {}))
    be = SyntheticBackend(QWEN3)
    meas, first, keys = [], None, set()
    while True:
        ph = st.next_phase(meas)
        if ph is None:
            break
        new = {precompile_key(u.op, u.cfg, u.m, True, classes) for u in ph}
        if first is None:
            first = (len(ph), len(new))
        keys |= new
        for u in ph:
            try:
                meas.append(Measurement(u, be.measure(u.op, u.cfg, u.m, u.replays).samples_us))
            except CandidateError as e:
                meas.append(Measurement(u, None, e.kind, e.message))
    return {"first_units": first[0], "first_binaries": first[1], "units": len(meas), "binaries": len(keys)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write every figure here")
    a = ap.parse_args()
    out: dict = {"binaries": {}, "replayed": {}}
    print("BINARIES the pool compiles, Qwen3 `up`, 18 sizes (synthetic landscape: counts only)")
    print("%-7s %-7s %12s %15s %7s %9s" % ("server", "screen", "first units", "first binaries", "units",
                                           "binaries"))
    for fw in ("sglang", "vllm"):
        for label, shared in (("before", False), ("now", True)):
            r = binaries(fw, shared)
            out["binaries"]["%s_%s" % (fw, label)] = r
            print("%-7s %-7s %12d %15d %7d %9d" % (fw, label, r["first_units"], r["first_binaries"], r["units"],
                                                   r["binaries"]))
    print()
    print("REPLAYED H200 landscapes: each anchor's own GROUP_SIZE_M (before), shared with SGLang's or vLLM's classes "
          "(model_gpu_s is a model, not a measurement)")
    print("%-9s %-7s %6s %11s %9s %9s  per-size regret" % ("shape", "screen", "units", "model_gpu_s",
                                                           "geomean", "worst"))
    for name, path in replay.RECORDINGS.items():
        rec = replay.load_recording(path)
        f = rec["shape"]
        shape = Shape(E=f["E"], N=f["N"], K=f["K"], topk=f["topk"], dtype=f["dtype"],
                      block_shape=tuple(f["block_shape"]) if f.get("block_shape") else None)
        for label, opts in (("before", {}), ("sglang", {"kernel_classes": classes_for("sglang", shape)}),
                            ("vllm", {"kernel_classes": classes_for("vllm", shape)})):
            r = replay.run_pipeline(rec, options=opts)
            r["options"] = {}
            out["replayed"]["%s_%s" % (name, label)] = r
            print("%-9s %-7s %6d %11.2f %9.4f %9.4f  %s" % (
                name, label, r["units"], r["model_gpu_s"], r["final_regret_geomean"], r["final_regret_worst"],
                " ".join("%d:%.4f" % (p["m"], p["final_regret"]) for p in r["per_m"])))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
