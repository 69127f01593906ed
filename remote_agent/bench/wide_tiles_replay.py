# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 22: the tile screen's two cuts (strategies/fast.py): wide tiles screened with 8 warps only
(wide_tile) and no BLOCK_SIZE_M below a quarter of the size's largest (SCREEN_BM_FLOOR_DIV), on the CPU:
what they save in compile work and GPU time and what they cost in quality. Settings: "none" (both off),
"wide" (the 8-warp rule alone), "both" (the default).

    python3 remote_agent/bench/wide_tiles_replay.py [--json OUT.json]

1. Compile work. For each path (moetune's own kernel bf16 at 18 sizes, int4_w4a16 at 3 sizes as the int4
   row of the user-path benchmark, SGLang main's kernel at 18 sizes), the fast strategy is driven on the
   SYNTHETIC backend (a simulated landscape: counts only) with the rule off and on. It counts the distinct
   kernels the pool compiles (engine/pool.precompile_key) in the first phase and in the whole tune, and
   ESTIMATES their compile seconds: a log-log fit of the measured compile times of 120 bf16 and 120
   int4_w4a16 kernels (recordings/h200-bytecode-warm/call6_*_compile.json, one H200 host) against
   space.compile_cost. The estimate is a model, not a measurement; the "max" column is the slowest kernel.
2. Quality. The whole decision (strategy, head-to-head) on the replayed H200 landscapes (bench/replay.py),
   rule off and on: units, modelled GPU seconds and the regret against the exhaustive best.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import replay  # noqa: E402
from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.backends.server_backend import classes_for  # noqa: E402
from moetune_agent.backends.synthetic import SyntheticBackend  # noqa: E402
from moetune_agent.kernel_types import CandidateError, KernelConfig, Shape, batch_sizes_default  # noqa: E402
from moetune_agent.engine.pool import precompile_key  # noqa: E402
from moetune_agent.strategies import make_strategy  # noqa: E402
from moetune_agent.work import Measurement  # noqa: E402

COMPILE_TIMES = os.path.join(HERE, "recordings", "h200-bytecode-warm", "call6_%s_compile.json")
BF16 = Shape(E=128, N=768, K=2048, topk=8, dtype="bf16")
INT4 = Shape(E=128, N=768, K=2048, topk=8, dtype="int4_w4a16", block_shape=(0, 128))
PATHS = (("own bf16, 18 sizes", BF16, None, None),
         ("own int4_w4a16, 3 sizes", INT4, (1, 64, 1024), None),
         ("SGLang main bf16, 18 sizes", BF16, None, "sglang"))


def fit(dtype: str):
    """(a, b) of log(seconds) = a + b log(compile_cost), least squares over the recorded kernels."""
    with open(COMPILE_TIMES % dtype, encoding="utf-8") as f:
        rows = [r for r in json.load(f)["rows"] if r.get("error") is None and r.get("s")]
    xs = [math.log(space_mod.compile_cost(KernelConfig(bm, bn, bk, 1, w, st))) for (bm, bn, bk, w, st) in
          (r["kernel"] for r in rows)]
    ys = [math.log(r["s"]) for r in rows]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


SETTINGS = (("none", False, False), ("wide", True, False), ("both", True, True))


def setting(wide: bool, floor: bool) -> dict:
    """The fast strategy's options of a setting: the two rules on or off."""
    return {"wide_tiles_w8": wide, "screen_bm_floor": floor}


def compile_work(shape: Shape, sizes, framework, model, strategy_options=None, space_options=None) -> dict:
    """Distinct kernels of the first phase and the whole tune, and their estimated compile seconds."""
    sizes = list(sizes or batch_sizes_default())
    ops = ("up",)
    classes = classes_for(framework, shape) if framework else None
    space = space_mod.build_space(shape, sizes, ops, options=space_options)
    st = make_strategy("fast", space, sizes, ops, shape, **dict(strategy_options or {},
                                                                **({"kernel_classes": classes} if classes else {})))
    be = SyntheticBackend(shape)
    meas, first, keys, first_units = [], None, {}, 0
    while True:
        ph = st.next_phase(meas)
        if ph is None:
            break
        new = {}
        for u in ph:
            k = precompile_key(u.op, u.cfg, u.m, framework is not None, classes, gm_at_run_time=framework is None)
            new[k] = u.cfg
        if first is None:
            first, first_units = dict(new), len(ph)
        keys.update(new)
        for u in ph:
            try:
                meas.append(Measurement(u, be.measure(u.op, u.cfg, u.m, u.replays).samples_us))
            except CandidateError as e:
                meas.append(Measurement(u, None, e.kind, e.message))
    a, b = model

    def secs(cfgs):
        return [math.exp(a + b * math.log(space_mod.compile_cost(c))) for c in cfgs]
    fs, ws = secs(first.values()), secs(keys.values())
    return {"first_units": first_units, "first_kernels": len(first), "first_s": round(sum(fs), 1),
            "first_max_s": round(max(fs), 2), "units": len(meas), "kernels": len(keys), "all_s": round(sum(ws), 1)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write every figure here")
    a = ap.parse_args()
    out: dict = {"compile": {}, "replayed": {}}
    models = {"bf16": fit("bf16"), "int4_w4a16": fit("int4")}
    out["fit"] = {k: {"a": round(v[0], 4), "b": round(v[1], 4)} for k, v in models.items()}
    print("COMPILE WORK (synthetic landscape; seconds ESTIMATED from recorded compile times: a model)")
    print("%-28s %-5s %6s %8s %11s %9s %6s %8s %10s" % ("path", "rules", "first", "first", "first est s",
                                                        "first max", "units", "kernels", "all est s"))
    print("%-28s %-5s %6s %8s" % ("", "", "units", "kernels"))
    for label, shape, sizes, fw in PATHS:
        for name, wide, floor in SETTINGS:
            r = compile_work(shape, sizes, fw, models["int4_w4a16" if shape.dtype == "int4_w4a16" else "bf16"],
                             setting(wide, floor))
            out["compile"]["%s|%s" % (label, name)] = r
            print("%-28s %-5s %6d %8d %11.1f %9.2f %6d %8d %10.1f" % (
                label, name, r["first_units"], r["first_kernels"], r["first_s"], r["first_max_s"], r["units"],
                r["kernels"], r["all_s"]))
    print()
    print("REPLAYED H200 landscapes (model_gpu_s is a model, not a measurement)")
    print("%-9s %-5s %6s %11s %9s %9s  per-size regret" % ("shape", "rules", "units", "model_gpu_s", "geomean",
                                                           "worst"))
    for rec_name, path in replay.RECORDINGS.items():
        rec = replay.load_recording(path)
        for name, wide, floor in SETTINGS:
            r = replay.run_pipeline(rec, options=setting(wide, floor))
            out["replayed"]["%s|%s" % (rec_name, name)] = {
                k: r[k] for k in ("units", "model_gpu_s", "final_regret_geomean", "final_regret_worst")}
            print("%-9s %-5s %6d %11.2f %9.4f %9.4f  %s" % (
                rec_name, name, r["units"], r["model_gpu_s"], r["final_regret_geomean"],
                r["final_regret_worst"], " ".join("%d:%.4f" % (p["m"], p["final_regret"]) for p in r["per_m"])))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
