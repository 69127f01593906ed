# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The H200 benchmark of issue 3: fast vs exhaustive, parallel vs serial compile, tuned vs default,
fraction of the HBM roofline, 2 GPUs vs 1. Drives Backend + Strategy directly (bench/runner.py).

  python3 remote_agent/bench/bench_h200.py bench --shape qwen3 --exh-sizes 1,16,64,256,1024 --out DIR
  python3 remote_agent/bench/bench_h200.py probe --out DIR       (bandwidth, compile and unit costs)

Prints a table at the end and writes DIR/<shape>.json with every raw number. What is measured and
what is extrapolated is written next to each figure.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.backends.triton_backend import sglang_default_config  # noqa: E402
from moetune_agent.kernel_types import CandidateError, KernelConfig, Shape, batch_sizes_default  # noqa: E402
from moetune_agent.strategies import make_strategy  # noqa: E402
from moetune_agent.strategies.common import median  # noqa: E402
from moetune_agent.work import Unit  # noqa: E402
from runner import Runner, make_backend  # noqa: E402

BACKEND = "triton"   # "synthetic" only to check this script on a machine without a GPU

SHAPES = {
    "qwen3": Shape(E=128, N=768, K=2048, topk=8, dtype="bf16"),
    "fp8block": Shape(E=256, N=256, K=7168, topk=8, dtype="fp8_w8a8", block_shape=(128, 128)),
    "fp8block_small": Shape(E=64, N=512, K=2048, topk=6, dtype="fp8_w8a8", block_shape=(128, 128)),
}
BS = tuple(batch_sizes_default())
LOG = []


def log(*a):
    s = " ".join(str(x) for x in a)
    LOG.append(s)
    print(s, flush=True)


def compact(meas):
    u = meas.unit
    d = {"op": u.op, "cfg": u.cfg.key(), "m": u.m, "r": u.replays, "round": u.round}
    if u.cfg_down is not None:
        d["cfg_down"] = u.cfg_down.key()
    if meas.ok:
        d["us"] = [round(x, 3) for x in meas.samples_us]
    else:
        d["err"] = meas.error_kind
        d["msg"] = (meas.error or "")[:200]
    return d


def log_interp(points, m):
    """Piecewise-linear in log(m) through {m: value}; constant beyond the ends."""
    xs = sorted(points)
    if m <= xs[0]:
        return points[xs[0]]
    if m >= xs[-1]:
        return points[xs[-1]]
    for a, b in zip(xs, xs[1:]):
        if a <= m <= b:
            t = (math.log(m) - math.log(a)) / (math.log(b) - math.log(a))
            return points[a] + t * (points[b] - points[a])
    return points[xs[-1]]


class ListStrategy:
    """One fixed phase (used for the head-to-head re-timing)."""

    def __init__(self, units):
        self.units = units

    def next_phase(self, measured):
        done = {m.unit.ident() for m in measured}
        todo = [u for u in self.units if u.ident() not in done]
        return todo or None


def run_strategy(shape, name, sizes, gpus, bw, workers, space_all, extra=None):
    """Fresh runner (new processes, new Triton cache); returns (strategy, measurements, wall, stats)."""
    ops = ("both",)
    space = {k: v for k, v in space_all.items() if k[1] in sizes}
    st = make_strategy(name, space, sizes, ops, shape)
    t0 = time.perf_counter()
    with Runner(shape, gpus, workers, bw=bw, log=log, backend=BACKEND) as r:
        if extra is not None:
            extra(r, "before")
        t1 = time.perf_counter()
        meas = r.run_strategy(st)
        wall = time.perf_counter() - t0
        wall_ex_start = time.perf_counter() - t1
        stats = r.stats.as_dict()   # the strategy's own figures, before any extra work in this runner
        stats["compile_log"] = list(r.compile_log)
        after = extra(r, "after", st, meas) if extra is not None else None
    stats["strategy_wall_s"] = wall
    stats["strategy_wall_without_startup_s"] = wall_ex_start
    log("%s on %d sizes, %d GPU(s): %.1f s wall (%.1f s start-up), %d units, %d compiles (%d failed)"
        % (name, len(sizes), len(gpus), wall, stats["startup_s"], stats["units"], stats["compile_tasks"],
           stats["compile_failed"]))
    return st, meas, wall, stats, after


def _serial_worker(kind, shape, cfgs, sizes, q):
    """The reference method on a sample: one process, fresh cache, compile then time, serially."""
    cache = tempfile.mkdtemp(prefix="moetune-serial-")
    os.environ["TRITON_CACHE_DIR"] = cache
    be = make_backend(kind, shape, 0, cache)
    for prep in ("weights", "warm_aux"):
        if hasattr(be, prep):
            getattr(be, prep)()
    rows = []
    for c in cfgs:
        row = {"cfg": c.key()}
        t0 = time.perf_counter()
        try:
            be.precompile("up", c)
            be.precompile("down", c)
            row["compile_s"] = time.perf_counter() - t0
        except CandidateError as e:
            row["compile_s"] = time.perf_counter() - t0
            row["err"] = e.kind
            rows.append(row)
            continue
        row["time_s"] = {}
        for m in sizes:
            t1 = time.perf_counter()
            try:
                be.measure("both", c, m, 10)
            except CandidateError as e:
                row.setdefault("errs", []).append(e.kind)
            row["time_s"][str(m)] = time.perf_counter() - t1
        rows.append(row)
    q.put(rows)


def serial_sample(shape, n, sizes, seed=0):
    full = space_mod.reference_configs(False)
    full = [c for c in full if space_mod.block_quant_ok(c, shape.block_shape, "sglang")]
    cfgs = random.Random(seed).sample(full, n)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_serial_worker, args=(BACKEND, shape, cfgs, sizes, q))
    p.start()
    rows = q.get(timeout=1200)
    p.join()
    return rows, len(full)


def cmd_bench(a):
    shape = SHAPES[a.shape]
    out = {"shape": a.shape, "shape_fields": dict(E=shape.E, N=shape.N, K=shape.K, topk=shape.topk,
                                                  dtype=shape.dtype, block_shape=shape.block_shape),
           "batch_sizes": list(BS)}
    exh_sizes = [int(x) for x in a.exh_sizes.split(",")]
    stats_p = space_mod.PruneStats()
    space18 = space_mod.build_space(shape, BS, ("both",), "sglang", space_mod.HOPPER_SMEM_LIMIT, None, stats_p)
    out["prune"] = stats_p.as_dict()
    out["space_sizes"] = {str(m): len(space18[("both", m)]) for m in BS}
    log("shape %s: pruned space %s" % (a.shape, stats_p.as_dict()))
    workers = a.workers or max(1, (os.cpu_count() or 4) - 2)
    bw = None

    # 1. fast on all 18 sizes, one GPU (bandwidth probe first, outside the timed run)
    def fast_extra(r, when, *rest):
        nonlocal bw
        if when == "before" and bw is None:
            bw = r.call("bandwidth") if BACKEND == "triton" else {"copy_gbps": 4000.0, "read_gbps": 4000.0}
            log("bandwidth: %s" % json.dumps(bw))
            r.bw = bw
        return None

    st, meas_f18, wall_f18, stats_f18, _ = run_strategy(shape, "fast", BS, [0], None, workers, space18, fast_extra)
    out["bandwidth"] = bw
    win_f18 = st.winners(meas_f18)
    out["fast18"] = {"wall_s": wall_f18, "stats": stats_f18, "winners": {str(m): win_f18[("both", m)].key()
                                                                         for m in BS if ("both", m) in win_f18},
                     "measurements": [compact(x) for x in meas_f18]}
    _save(a, out)

    # 2. fast on the exhaustive subset only (same sizes as the ground truth)
    st_s, meas_fs, wall_fs, stats_fs, _ = run_strategy(shape, "fast", exh_sizes, [0], bw, workers, space18)
    win_fs = st_s.winners(meas_fs)
    out["fastS"] = {"wall_s": wall_fs, "stats": stats_fs,
                    "winners": {str(m): win_fs[("both", m)].key() for m in exh_sizes if ("both", m) in win_fs},
                    "measurements": [compact(x) for x in meas_fs]}
    _save(a, out)

    # 3. exhaustive on the subset; then, in the same (warm) runner, the smem check of the configs the
    #    rule rejects, and the head-to-head re-timing of every winner vs the default at all 18 sizes

    def exh_extra(r, when, *rest):
        if when == "before":
            return None
        st_e, meas_e = rest
        win_e = st_e.winners(meas_e)
        units = []
        per_m = {}
        for m in BS:
            cands = {"fast": win_f18.get(("both", m)), "default": sglang_default_config(shape, m)}
            if m in exh_sizes:
                cands["exhaustive"] = win_e.get(("both", m))
                cands["fastS"] = win_fs.get(("both", m))
            per_m[m] = {k: v for k, v in cands.items() if v is not None}
        uniq = {m: sorted({c.key(): c for c in per_m[m].values()}.values(), key=lambda c: c.key()) for m in BS}
        for rnd in range(3):
            for m in BS:
                for c in uniq[m]:
                    units.append(Unit("both", c, m, 10, 200 + rnd))
        t0 = time.perf_counter()
        got = r.run_strategy(ListStrategy(units))
        log("head-to-head re-timing: %d units, %.1f s" % (len(units), time.perf_counter() - t0))
        smem = None
        if a.smem_check:
            smem = smem_complement(r, shape)
        return {"per_m": {str(m): {k: v.key() for k, v in per_m[m].items()} for m in BS},
                "measurements": got, "smem": smem, "win_e": win_e}

    _st_e, meas_e, wall_e, stats_e, after = run_strategy(shape, "exhaustive", exh_sizes, [0], bw, workers, space18,
                                                        exh_extra)
    win_e = after["win_e"]
    out["exhaustive"] = {"wall_s": wall_e, "stats": stats_e, "sizes": exh_sizes,
                         "winners": {str(m): win_e[("both", m)].key() for m in exh_sizes if ("both", m) in win_e},
                         "measurements": [compact(x) for x in meas_e]}
    out["smem_check"] = after["smem"]
    h2h_meas = after["measurements"]
    out["h2h"] = {"per_m": after["per_m"], "measurements": [compact(x) for x in h2h_meas]}
    _save(a, out)

    # 4. the reference method (serial compile, then time) on a sample, extrapolated
    if a.serial_sample:
        t0 = time.perf_counter()
        rows, nfull = serial_sample(shape, a.serial_sample, exh_sizes)
        out["serial_sample"] = {"rows": rows, "full_space": nfull, "wall_s": time.perf_counter() - t0}
        log("serial sample: %d configs, %.1f s" % (len(rows), time.perf_counter() - t0))
        _save(a, out)

    # 5. two GPUs vs one for fast
    if a.gpus >= 2:
        st2, meas_2, wall_2, stats_2, _ = run_strategy(shape, "fast", BS, list(range(a.gpus)), bw, workers, space18)
        win_2 = st2.winners(meas_2)
        out["fast18_multi"] = {"gpus": a.gpus, "wall_s": wall_2, "stats": stats_2,
                               "winners": {str(m): win_2[("both", m)].key() for m in BS if ("both", m) in win_2},
                               "measurements": [compact(x) for x in meas_2]}
        _save(a, out)

    summarize(out, shape, h2h_meas)
    out["log"] = LOG
    _save(a, out)


def smem_complement(r, shape):
    """Compile every config of the reference space (1920) that the run has not compiled yet: the
    shared-memory rule of space.py is checked both ways (rejected but compiles: too strict; accepted
    but fails: too loose), and the reference tuners' (stages - 1) rule beside it."""
    full = space_mod.reference_configs(False)
    full = [c for c in full if space_mod.block_quant_ok(c, shape.block_shape, "sglang")]
    rejected = [c for c in full if space_mod.smem_bytes(c, shape.dtype) > space_mod.HOPPER_SMEM_LIMIT]
    keys = {}
    for c in rejected:
        for op in ("up", "down"):
            keys[(op, c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K, c.num_warps, c.num_stages)] = (op, c)
    accepted = {}
    for c in full:
        if space_mod.smem_bytes(c, shape.dtype) <= space_mod.HOPPER_SMEM_LIMIT:
            for op in ("up", "down"):
                accepted[(op, c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K, c.num_warps, c.num_stages)] = (op, c)
    # compile the accepted ones not compiled yet too (BK 32 is not in the 1920 space)
    todo = {k: v for k, v in list(keys.items()) + list(accepted.items()) if k not in r.compiled}
    t0 = time.perf_counter()
    units = []
    from runner import _compile_task  # noqa: F401 - run through the pool
    it = r.pool.imap_unordered(_compile_task, [(k, op, c) for k, (op, c) in todo.items()])
    for key, kind, msg, secs in it:
        r.compiled[key] = (kind, msg) if kind else None
        r.compile_log.append({"key": list(key), "error": kind, "s": round(secs, 4), "smem_check": True})
    wall = time.perf_counter() - t0
    del units

    def fails(k):
        v = r.compiled.get(k)
        return bool(v) and v[0] == "resources"

    rej_ok = sorted(k for k in keys if not fails(k))
    acc_fail = sorted(k for k in accepted if fails(k))
    ref_rule_ok = 0
    ref_rule_fail = 0
    ab = space_mod.element_bytes(shape.dtype)
    for k in list(keys) + list(accepted):
        op, bm, bn, bk, _w, s = k
        ref_fit = (s - 1) * (bm * ab[0] + bn * ab[1]) * bk <= space_mod.HOPPER_SMEM_LIMIT
        if ref_fit and fails(k):
            ref_rule_fail += 1
        elif ref_fit:
            ref_rule_ok += 1
    res = {"compile_keys": len(keys) + len(accepted), "rule_rejected": len(keys), "rule_accepted": len(accepted),
           "rejected_but_compiled": [list(k) for k in rej_ok], "accepted_but_failed": [list(k) for k in acc_fail],
           "reference_rule_accepted_but_failed": ref_rule_fail, "reference_rule_accepted_ok": ref_rule_ok,
           "wall_s": wall, "compiled_now": len(todo)}
    log("smem rule check: %d compile keys; rule rejects %d, of which %d compiled anyway; rule accepts %d, of which "
        "%d failed; reference (stages-1) rule accepts %d that failed (of %d it accepts)"
        % (res["compile_keys"], len(keys), len(rej_ok), len(accepted), len(acc_fail), ref_rule_fail,
           ref_rule_fail + ref_rule_ok))
    return res


def _save(a, out):
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "%s.json" % a.shape), "w") as f:
        json.dump(out, f, default=str)


def summarize(out, shape, h2h_meas):
    """The table: per batch size, tuned vs default, regret, roofline; then the wall-time figures."""
    book = {}
    for x in h2h_meas:
        if x.ok:
            book.setdefault((x.unit.m, x.unit.cfg.key()), []).append(median(x.samples_us))
    be = make_backend(BACKEND, shape, 0, None)
    if hasattr(be, "set_bandwidth"):
        be.set_bandwidth(out["bandwidth"])
    rows = []
    regrets, regrets_s = [], []
    exh_sizes = out["exhaustive"]["sizes"]
    for m in BS:
        per = out["h2h"]["per_m"][str(m)]
        lat = {k: median(book.get((m, v), [float("inf")])) for k, v in per.items()}
        roof = be.roofline_us("both", m)
        row = {"m": m, "fast_us": lat.get("fast"), "default_us": lat.get("default"), "roofline_us": roof,
               "fast_cfg": per.get("fast"), "default_cfg": per.get("default")}
        row["speedup_vs_default"] = lat["default"] / lat["fast"] if lat.get("fast") else None
        row["roofline_fraction"] = roof / lat["fast"] if lat.get("fast") else None
        if m in exh_sizes and "exhaustive" in lat:
            row["exh_us"] = lat["exhaustive"]
            row["exh_cfg"] = per["exhaustive"]
            row["regret"] = 1.0 if per["exhaustive"] == per["fast"] else lat["fast"] / lat["exhaustive"]
            row["regret_fastS"] = 1.0 if per["exhaustive"] == per.get("fastS") else \
                lat.get("fastS", float("inf")) / lat["exhaustive"]
            regrets.append(row["regret"])
            regrets_s.append(row["regret_fastS"])
        rows.append(row)
    out["table"] = rows

    def geo(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None

    # exhaustive extrapolated to 18 sizes: per-unit GPU time interpolated in log(m) from the subset
    units_e = len(out["exhaustive"]["measurements"])
    # per-size timing cost measured in the exhaustive run (sum of GPU-worker seconds per size)
    cost_m = out["exhaustive"]["stats"].get("unit_secs_by_m", {})
    sizes18 = out["space_sizes"]
    extrap = None
    if cost_m:
        per_cfg = {int(m): v["s"] / max(1, v["n"]) for m, v in cost_m.items()}
        add = sum(sizes18[str(m)] * log_interp(per_cfg, m) for m in BS if m not in exh_sizes)
        extrap = out["exhaustive"]["wall_s"] + add
    ref = None
    ss = out.get("serial_sample")
    if ss:
        ok = [r for r in ss["rows"] if "time_s" in r]
        tc = median([r["compile_s"] for r in ss["rows"][1:]] or [0])
        tc_mean = sum(r["compile_s"] for r in ss["rows"][1:]) / max(1, len(ss["rows"]) - 1)
        tm = {m: sum(r["time_s"][str(m)] for r in ok) / max(1, len(ok)) for m in exh_sizes}
        ref = {"compile_s_median": tc, "compile_s_mean": tc_mean, "first_compile_s": ss["rows"][0]["compile_s"],
               "time_s_mean_by_m": tm,
               "full_18_sizes_s": ss["full_space"] * tc_mean + ss["full_space"] * sum(log_interp(tm, m) for m in BS),
               "subset_s": ss["full_space"] * tc_mean + ss["full_space"] * sum(tm.values())}
    out["summary"] = {
        "regret_geomean": geo(regrets), "regret_worst": max(regrets) if regrets else None,
        "regret_fastS_geomean": geo(regrets_s), "regret_fastS_worst": max(regrets_s) if regrets_s else None,
        "wall_fast18_s": out["fast18"]["wall_s"], "wall_fastS_s": out["fastS"]["wall_s"],
        "wall_exhaustive_subset_s": out["exhaustive"]["wall_s"], "exhaustive_units": units_e,
        "wall_exhaustive_18_extrapolated_s": extrap,
        "ratio_subset_measured": out["exhaustive"]["wall_s"] / out["fastS"]["wall_s"],
        "ratio_18_extrapolated": (extrap / out["fast18"]["wall_s"]) if extrap else None,
        "reference_serial": ref,
        "ratio_reference_vs_exhaustive_subset": (ref["subset_s"] / out["exhaustive"]["wall_s"]) if ref else None,
        "ratio_reference_vs_exhaustive_18": (ref["full_18_sizes_s"] / extrap) if ref and extrap else None,
    }
    if "fast18_multi" in out:
        out["summary"]["multi_gpu_speedup"] = out["fast18"]["wall_s"] / out["fast18_multi"]["wall_s"]
        out["summary"]["multi_gpu_speedup_without_startup"] = (
            out["fast18"]["stats"]["strategy_wall_without_startup_s"]
            / out["fast18_multi"]["stats"]["strategy_wall_without_startup_s"])
    log("")
    log("%-5s %-22s %9s %9s %8s %9s %7s %9s" % ("M", "fast config", "fast us", "default", "speedup",
                                               "exh us", "regret", "roofline"))
    for r in rows:
        log("%-5d %-22s %9.1f %9.1f %7.2fx %9s %7s %8.0f%%" % (
            r["m"], r["fast_cfg"], r["fast_us"], r["default_us"], r["speedup_vs_default"],
            "%.1f" % r["exh_us"] if "exh_us" in r else "-", "%.4f" % r["regret"] if "regret" in r else "-",
            100 * r["roofline_fraction"]))
    log(json.dumps(out["summary"], indent=1, default=str))


def cmd_probe(a):
    """Run 1: bandwidth (nvcc and torch), compile cost (serial, first and later; parallel pool), unit cost
    per batch size, and a smoke run of both strategies through the runner."""
    res = {}
    sys.path.insert(0, os.path.join(HERE, "..", "..", "kernels"))
    import bandwidth as bwmod
    res["bandwidth_nvcc"] = bwmod.measure(2048, 0, True)
    res["bandwidth_torch"] = bwmod.measure(2048, 0, False)
    log("bandwidth:", res["bandwidth_nvcc"], res["bandwidth_torch"])
    shape = SHAPES[a.shape]
    sizes = [int(x) for x in a.exh_sizes.split(",")]
    rows, _nfull = serial_sample(shape, a.serial_sample or 6, sizes)
    res["serial"] = rows
    log("serial compile/time sample:", json.dumps(rows))
    space = space_mod.build_space(shape, BS, ("both",))
    # smoke: exhaustive on one small size with a cut space, fast on 3 sizes
    small = {k: v[:: max(1, len(v) // 60)] for k, v in space.items()}
    workers = a.workers or max(1, (os.cpu_count() or 4) - 2)
    for name, szs in (("exhaustive", [16, 1024]), ("fast", [1, 64, 1024, 4096])):
        st, meas, wall, stats, _ = run_strategy(shape, name, szs, [0], res["bandwidth_torch"], workers,
                                                small if name == "exhaustive" else space)
        win = st.winners(meas)
        res[name] = {"wall_s": wall, "stats": {k: v for k, v in stats.items() if k != "compile_log"},
                     "winners": {str(k[1]): v.key() for k, v in win.items()},
                     "unit_secs_by_m": stats.get("unit_secs_by_m"),
                     "errors": sorted({(x.error_kind or "") + ":" + (x.error or "")[:120] for x in meas if not x.ok})[:20]}
        log(name, json.dumps(res[name], default=str)[:3000])
        cl = stats["compile_log"]
        if cl:
            res[name]["compile_s_median"] = median([c["s"] for c in cl])
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "probe_%s.json" % a.shape), "w") as f:
        json.dump(res, f, default=str, indent=1)


def cmd_fastonly(a):
    """fast on all 18 sizes with one GPU and with --gpus GPUs (fresh runs), then the new winners
    re-timed head-to-head against the exhaustive winners recorded by an earlier bench run (--against)."""
    shape = SHAPES[a.shape]
    with open(a.against) as f:
        prev = json.load(f)
    exh_win = prev["exhaustive"]["winners"]
    space18 = space_mod.build_space(shape, BS, ("both",))
    workers = a.workers or max(1, (os.cpu_count() or 4) - 2)
    bw = prev.get("bandwidth")
    out = {"shape": a.shape, "against": os.path.basename(a.against), "runs": {}}
    wins = {}
    for gpus in ([0], list(range(a.gpus))) if a.gpus > 1 else ([0],):
        h2h_box = {}

        def extra(r, when, *rest):
            if when == "before" or len(gpus) != a.gpus:
                return None
            st_, meas_ = rest
            w_ = st_.winners(meas_)
            units = []
            for rnd in range(3):
                for m in sorted(int(x) for x in exh_win):
                    cs = {exh_win[str(m)]: None}
                    for _g, wg in list(wins.items()) + [("this", w_)]:
                        cs[wg[("both", m)].key()] = None
                    for k in sorted(cs):
                        units.append(Unit("both", KernelConfig.from_key(k), m, 10, 200 + rnd))
            got = r.run_strategy(ListStrategy(units))
            h2h_box["m"] = got
            return None

        st, meas, wall, stats, _ = run_strategy(shape, "fast", BS, gpus, bw, workers, space18, extra)
        w = st.winners(meas)
        wins[len(gpus)] = w
        out["runs"][str(len(gpus))] = {"wall_s": wall, "stats": stats,
                                       "winners": {str(m): w[("both", m)].key() for m in BS},
                                       "measurements": [compact(x) for x in meas]}
        if "m" in h2h_box:
            out["h2h"] = [compact(x) for x in h2h_box["m"]]
        _save(a, out)
    # regret of each run's winners vs the recorded exhaustive winners, from the interleaved re-timing
    book = {}
    for x in out.get("h2h", []):
        if "us" in x:
            book.setdefault((x["m"], x["cfg"]), []).append(median(x["us"]))
    res = {}
    for g, run in out["runs"].items():
        regs = {}
        for m, ek in exh_win.items():
            fk = run["winners"][m]
            regs[m] = 1.0 if fk == ek else median(book[(int(m), fk)]) / median(book[(int(m), ek)])
        res[g] = {"wall_s": run["wall_s"], "regret": regs,
                  "regret_geomean": math.exp(sum(math.log(v) for v in regs.values()) / len(regs)),
                  "regret_worst": max(regs.values())}
    if "1" in out["runs"] and str(a.gpus) in out["runs"] and a.gpus > 1:
        res["multi_gpu_speedup"] = out["runs"]["1"]["wall_s"] / out["runs"][str(a.gpus)]["wall_s"]
        res["multi_gpu_speedup_without_startup"] = (
            out["runs"]["1"]["stats"]["strategy_wall_without_startup_s"]
            / out["runs"][str(a.gpus)]["stats"]["strategy_wall_without_startup_s"])
    out["summary"] = res
    out["log"] = LOG
    _save(a, out)
    log(json.dumps(res, indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=("bench", "probe", "fastonly"))
    ap.add_argument("--against", help="fastonly: an earlier bench JSON holding exhaustive winners")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="qwen3")
    ap.add_argument("--exh-sizes", default="1,16,64,256,1024")
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--serial-sample", type=int, default=12)
    ap.add_argument("--smem-check", action="store_true")
    ap.add_argument("--out", default=os.environ.get("OUT", "bench_out"))
    ap.add_argument("--backend", choices=("triton", "synthetic"), default="triton",
                    help="synthetic: check this script without a GPU (its figures are simulated)")
    a = ap.parse_args()
    global BACKEND
    BACKEND = a.backend
    {"bench": cmd_bench, "probe": cmd_probe, "fastonly": cmd_fastonly}[a.cmd](a)


if __name__ == "__main__":
    main()
