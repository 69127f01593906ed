# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tuner on the held-out suite (issue 43, points 3-6): per held-out shape (shapes.json), in its order,
as long as the time limit allows:

  1. tune    a cold fast `up` tune of the agent's 18 sizes through the pyz (`tune` + `attach`, a fresh
             MOETUNE_HOME: no compile or bytecode cache) -> wall_up_cold_s and the tuner's picks;
  2. check   (--check) the headroom check on the same spec, after the tune (its compile cache warm), its
             estimate against the tune's head-to-head gain per size -> headroom_wall_s, headroom_within_2pp;
  3. landscape  every launch of the space the tuner searches (space.build_space for the shape, op "both",
             GROUP_SIZE_M included; configs that are one launch of the own kernel, space.same_launch, timed
             once) at each of --sizes, each config in a paired unit against the server's default
             (Unit.pair: the two alternate replay by replay, the tuner's head-to-head method), ranked by
             config / default;
  4. regret  the landscape's best, its next RETIME_TOP and the tuner's pick re-timed together: in each of
             RETIME_ROUNDS rounds every candidate in a paired unit against the landscape's best (RETIME_REPLAYS
             replays each), ratio = median over rounds; regret = pick's ratio / the lowest ratio (1.0 for
             the best itself), so >= 1;
  5. floor   the HBM floor (the GPU worker's roofline: bytes that must move / the measured bandwidth) over
             the fastest median timed at each size, at the sizes from 16 to 256.
Optional rows per shape (each a cold tune on a fresh host): --updown (an `up+down` tune: wall_updown_s),
--int4-vs-bf16 (an int4_w4a16 shape at 3 sizes and the same dims in bf16: int4_over_bf16), --repeat (a second
`up` tune on the first's host, the two picks re-timed against each other per size: repeat_within_1pct).

Every row names the GPU, CPU model and core count, driver, torch and Triton versions, the commit and the
lease (--commit, --lease: what the command line says the checkout and the machine are), and every summary
figure is computed here from this run's measurements (summary.json: null where a figure was not measured).
Rows and the summary are rewritten after each shape and size, so a run stopped at its limit keeps them.

    PYTHONUNBUFFERED=1 python3 remote_agent/bench/heldout/heldout_bench.py --out "$OUT" [--limit-s 540]
        [--shapes NAME,...] [--sizes 1,64,1024,4096] [--check] [--updown NAMES] [--int4-vs-bf16 NAMES]
        [--repeat NAMES] [--commit SHA] [--lease TEXT] [--synthetic]
    python3 remote_agent/bench/heldout/heldout_bench.py --merge RUN_DIR... --merged summary.json

--synthetic runs every step on the SYNTHETIC backend (SIMULATED: the CPU test of this script).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
AGENT_ROOT = os.path.dirname(BENCH)
REPO = os.path.dirname(AGENT_ROOT)
sys.path.insert(0, AGENT_ROOT)
sys.path.insert(0, BENCH)

from moetune_agent import space as space_mod  # noqa: E402  # pylint: disable=wrong-import-position
from moetune_agent.kernel_types import KernelConfig, Shape  # noqa: E402  # pylint: disable=wrong-import-position
from moetune_agent.engine.scheduler import Scheduler  # noqa: E402  # pylint: disable=wrong-import-position
from moetune_agent.work import Measurement, Unit, median  # noqa: E402  # pylint: disable=wrong-import-position

SHAPES_FILE = os.path.join(HERE, "shapes.json")
OP = "both"
LANDSCAPE_REPLAYS = 2
RETIME_TOP = 3
RETIME_ROUNDS = 3
RETIME_REPLAYS = 10
RETIME_ROUND0 = 300
TUNE_CAP_S = 240.0
FLOOR_SIZES = (16, 256)
INT4_SIZES = (1, 64, 1024)   # the int4 row's sizes (tools/user_path_bench.py int4_3 / bf16_3)   # the floor is reported at the measured sizes in this range (issue 43 point 6)


def load_shapes(path: str = SHAPES_FILE) -> List[dict]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)["shapes"]


def shape_of(entry: dict) -> Shape:
    bs = entry.get("block_shape")
    return Shape(E=entry["E"], N=entry["N"], K=entry["K"], topk=entry["topk"], dtype=entry["dtype"],
                 block_shape=tuple(bs) if bs else None, per_channel_quant=bool(entry.get("per_channel_quant")))


def spec_of(entry: dict, synthetic: bool, ops: str = "up", sizes: Optional[Sequence[int]] = None,
            dtype: Optional[str] = None) -> dict:
    """The tune spec of a held-out shape (ops, batch sizes and a dtype override for the bf16 reference of
    an int4 shape: the same dims, no quantisation)."""
    spec = {k: entry[k] for k in ("E", "N", "K", "topk", "dtype")}
    if dtype is None:
        if entry.get("block_shape"):
            spec["block_shape"] = list(entry["block_shape"])
        if entry.get("per_channel_quant"):
            spec["per_channel_quant"] = True
    else:
        spec["dtype"] = dtype
    spec.update(framework="sglang", backend="synthetic" if synthetic else "triton", ops=ops, strategy="fast")
    if sizes:
        spec["batch_sizes"] = list(sizes)
    return spec


def landscape_configs(shape: Shape, m: int) -> List[KernelConfig]:
    """The space the tuner searches at m (GROUP_SIZE_M included), one config per launch of the own kernel
    (space.launch_key: GROUP_SIZE_M values at or above the grid's M tiles are one launch)."""
    seen = set()
    out = []
    for c in space_mod.build_space(shape, [m], (OP,))[(OP, m)]:
        k = space_mod.launch_key(c, shape, m)
        if k not in seen:
            seen.add(k)
            out.append(c)
    return out


def geomean(xs: Sequence[float]) -> Optional[float]:
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def regret_of(pick: KernelConfig, best: KernelConfig, ratios: Dict[str, float], shape: Shape, m: int) -> Optional[float]:
    """The pick's re-timed ratio against the landscape's best over the lowest ratio re-timed (the best
    itself counts 1.0): >= 1. ratios: config key -> median ratio config / best; None if the pick's is
    missing."""
    low = min([1.0] + list(ratios.values()))
    if space_mod.same_launch(pick, best, shape, m):
        return 1.0 / low
    r = ratios.get(pick.key())
    if r is None:
        for k, v in ratios.items():
            if space_mod.same_launch(pick, KernelConfig.from_key(k), shape, m):
                r = v
                break
    return None if r is None else r / low


def ranked_landscape(land: Dict[str, float]) -> List[str]:
    return sorted(land, key=lambda k: (land[k], k))


# -- the machine -----------------------------------------------------------------------------------------
def _cmd(args: List[str]) -> Optional[str]:
    try:
        return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60,
                              check=False).stdout.decode("utf-8", "replace").strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def package_version(name: str) -> str:
    """The installed version from the package's metadata, without importing it (an import would warm the
    page cache for the cold tune that follows)."""
    from importlib import metadata  # pylint: disable=import-outside-toplevel

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def machine_facts(synthetic: bool, commit: Optional[str], lease: Optional[str]) -> dict:
    """What every row names: GPU, CPU model and cores, driver, torch, Triton, commit, lease."""
    gpu = driver = None
    if not synthetic:
        q = _cmd(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
        if q:
            parts = [p.strip() for p in q.splitlines()[0].split(",")]
            gpu, driver = parts[0], parts[1] if len(parts) > 1 else None
    torch_v, triton_v = package_version("torch"), package_version("triton")
    return {"gpu": "synthetic (SIMULATED)" if synthetic else gpu, "driver": driver,
            "cpu": "%s, %d cores" % (cpu_model(), os.cpu_count() or 0), "cpu_model": cpu_model(),
            "cpu_cores": os.cpu_count(), "torch": torch_v, "triton": triton_v, "python": platform.python_version(),
            "kernel": platform.release(), "host": platform.node(), "commit": commit, "lease": lease,
            "simulated": synthetic, "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


# -- the tuner through the pyz ---------------------------------------------------------------------------
def build_pyz(work: str) -> str:
    pyz = os.path.join(work, "moetune-agent.pyz")
    subprocess.run([sys.executable, os.path.join(AGENT_ROOT, "build_pyz.py"), "--src", AGENT_ROOT, "--kernels",
                    os.path.join(REPO, "kernels"), "--out", pyz], check=True, stdout=subprocess.DEVNULL)
    return pyz


def run_tune(pyz: str, home: str, spec: dict, work: str, tag: str, cap_s: float = TUNE_CAP_S) -> dict:
    """A fast tune as a user runs it (`tune --new`, then `attach` to its end) on MOETUNE_HOME home ->
    wall, the winners {m: config} and the per-size head-to-head gains; a run past cap_s is cancelled."""
    from headroom_bench import Agent  # the benchmarks' one way to run an agent command

    env = dict(os.environ, MOETUNE_HOME=home, PYTHONUNBUFFERED="1")
    agent = Agent([sys.executable, pyz], env, cwd=AGENT_ROOT)
    sp = os.path.join(work, "spec-%s.json" % tag)
    with open(sp, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    t0 = time.time()
    rc, ev, err = agent.run(["tune", sp, "--new"], timeout=120)
    started = [e for e in ev if e.get("type") == "run_started"]
    if rc != 0 or not started:
        return {"error": "tune did not start (rc %s): %s %s" % (rc, json.dumps(ev[-3:])[:600], err[-600:])}
    run_id = started[0]["run_id"]
    capped = False
    try:
        rc, ev, err = agent.run(["attach", run_id], timeout=max(10.0, cap_s - (time.time() - t0)))
    except subprocess.TimeoutExpired:
        capped = True
        agent.run(["cancel", run_id], timeout=60)
        ev = []
    wall = time.time() - t0
    paths = [e["path"] for e in ev if e.get("type") == "result_written" and e.get("kind") == "result"]
    if not paths:
        return {"error": "tune wrote no result%s (rc %s): %s" % (" (capped at %.0f s)" % cap_s if capped else "", rc,
                                                                [e.get("message") for e in ev if e.get("type") == "error"][:3]),
                "wall_s": round(wall, 2), "capped": capped}
    with open(paths[0], encoding="utf-8") as f:
        res = json.load(f)
    winners = {int(w["m"]): KernelConfig.from_dict(w["config"]) for w in res.get("winners") or []
               if w.get("op") in ("both", "up")}
    gains = {int(p["m"]): p.get("speedup") for p in res.get("per_batch") or []}
    return {"wall_s": round(wall, 2), "winners": winners, "gains": gains, "spec_path": sp, "agent": agent,
            "units": (res.get("timings") or {}).get("units_measured"), "result_path": paths[0],
            "timings": {k: v for k, v in (res.get("timings") or {}).items()
                        if k in ("wall_s", "units_measured", "units_failed", "precompile", "compile_cache", "info_steps",
                                 "bytecode_cache", "prewarm")}}


def run_check(agent, spec_path: str, gains: Dict[int, Any], pp: float = 2.0) -> dict:
    """The headroom check of spec_path: its wall and its estimate against the tune's gains."""
    t0 = time.time()
    rc, ev, err = agent.run(["headroom", spec_path], timeout=180)
    wall = time.time() - t0
    hr = [e for e in ev if e.get("type") == "headroom"]
    if rc != 0 or not hr:
        return {"error": "headroom rc %s: %s" % (rc, err[-400:]), "wall_s": round(wall, 2)}
    rows = []
    for r in hr[0].get("sizes") or []:
        t = gains.get(int(r["m"]))
        est = r.get("gain")
        e = None if est is None or t is None else round(100.0 * (est - t), 2)
        rows.append({"m": r["m"], "estimate": est, "tune_gain": t, "error_pp": e, "within": e is not None and abs(e) <= pp})
    return {"wall_s": round(wall, 2), "within": sum(1 for r in rows if r["within"]), "sizes": len(rows), "rows": rows,
            "verdict": hr[0].get("verdict")}


# -- the landscape on the agent's scheduler --------------------------------------------------------------
class Gpu(object):
    """The agent's scheduler on one GPU with its CPU precompile pool (what a tune runs on), for one shape."""

    def __init__(self, backend: str, shape: Shape, sizes: Sequence[int], home: Optional[str] = None):
        self.backend = backend
        desc = {"name": backend, "shape": {"E": shape.E, "N": shape.N, "K": shape.K, "topk": shape.topk,
                                           "dtype": shape.dtype,
                                           "block_shape": list(shape.block_shape) if shape.block_shape else None,
                                           "per_channel_quant": shape.per_channel_quant},
                "framework": "sglang", "device_name": None, "routing_file": None}
        pool = max(0, (os.cpu_count() or 1) - 2) if backend != "synthetic" else 0
        # home: the tune's MOETUNE_HOME, whose compile cache the landscape reuses (what the tune compiled)
        self.sched = Scheduler(desc, [0], tempfile.mkdtemp(prefix="moetune-heldout-"), pool, home=home)
        self.sched.start(early_pool=pool > 0)
        info = self.sched.info([OP], list(sizes))
        extra = info.get("extra") or {}
        if extra.get("cpu_compile_info"):
            self.sched.start_precompile(extra["cpu_compile_info"])
        else:
            self.sched.stop_precompile()
        self.defaults = {m: info["defaults"]["%s|%d" % (OP, m)] for m in sizes}
        self.roofline = {m: (info.get("roofline") or {}).get("%s|%d" % (OP, m)) for m in sizes}

    def run(self, units: Sequence[Unit]) -> List[Measurement]:
        got: List[Measurement] = []
        self.sched.precompile(units)
        self.sched.measure(list(units), lambda meas: got.append(meas) if meas.ok else None,
                           simulated=self.backend == "synthetic")
        return got

    def close(self):
        self.sched.close()


def landscape(gpu: Gpu, shape: Shape, m: int) -> Tuple[Dict[str, float], Dict[str, float], int]:
    """-> ({config key: median config / median default}, {config key: median us}, configs timed)."""
    d = gpu.defaults[m]
    cfgs = landscape_configs(shape, m)
    units = [Unit(OP, c, m, LANDSCAPE_REPLAYS, 0, pair=d) for c in cfgs]
    ratio: Dict[str, float] = {}
    us: Dict[str, float] = {}
    for meas in gpu.run(units):
        if meas.paired:
            ratio[meas.unit.cfg.key()] = meas.median_us / meas.pair_median_us
            us[meas.unit.cfg.key()] = meas.median_us
    return ratio, us, len(cfgs)


def retime(gpu: Gpu, m: int, best: KernelConfig, cands: Sequence[KernelConfig]) -> Tuple[Dict[str, float], Optional[float]]:
    """Each candidate against best, paired, RETIME_ROUNDS rounds -> ({key: median ratio}, best's median us)."""
    units = [Unit(OP, c, m, RETIME_REPLAYS, RETIME_ROUND0 + r, pair=best) for r in range(RETIME_ROUNDS) for c in cands]
    per: Dict[str, List[float]] = {}
    best_us: List[float] = []
    for meas in gpu.run(units):
        if meas.paired:
            per.setdefault(meas.unit.cfg.key(), []).append(meas.median_us / meas.pair_median_us)
            best_us.append(meas.pair_median_us)
    return {k: median(v) for k, v in per.items()}, (median(best_us) if best_us else None)


class Rate(object):
    """Seconds per landscape unit seen so far in this run (a size is started only if it would end in time)."""

    def __init__(self, first_s_per_unit: float = 0.12):
        self.units = 0
        self.seconds = 0.0
        self.first = first_s_per_unit

    def add(self, units: int, seconds: float) -> None:
        self.units += units
        self.seconds += seconds

    def estimate_s(self, units: int) -> float:
        per = self.seconds / self.units if self.units else self.first
        return 1.25 * per * units + 10.0


def repeat_ratios(gpu: Gpu, pairs: Dict[int, Tuple[KernelConfig, KernelConfig]]) -> Dict[int, float]:
    """Two tunes' picks per size re-timed against each other (tuner_quality repeat's method): RETIME_ROUNDS
    rounds of one paired unit per size -> median over rounds of median(a) / median(b)."""
    units = [Unit(OP, a, m, RETIME_REPLAYS, RETIME_ROUND0 + r, pair=b) for r in range(RETIME_ROUNDS)
             for m, (a, b) in sorted(pairs.items())]
    per: Dict[int, List[float]] = {}
    for meas in gpu.run(units):
        if meas.paired:
            per.setdefault(meas.unit.m, []).append(meas.median_us / meas.pair_median_us)
    return {m: median(v) for m, v in per.items()}


def repeat_rows(shape: Shape, a: Dict[int, KernelConfig], b: Dict[int, KernelConfig],
                ratios: Dict[int, float], within: float = 0.01) -> List[dict]:
    """Per size both tunes picked at: one launch of the own kernel counts as within (space.same_launch)."""
    rows = []
    for m in sorted(set(a) & set(b)):
        one = space_mod.same_launch(a[m], b[m], shape, m)
        r = 1.0 if one else ratios.get(m)
        rows.append({"m": m, "a": a[m].key(), "b": b[m].key(), "same_launch": one, "a_over_b": r,
                     "within_1pct": r is not None and abs(r - 1.0) <= within})
    return rows


def shape_landscapes(backend: str, entry: dict, sizes: Sequence[int], picks: Dict[int, KernelConfig],
                     deadline: float, on_size, home: Optional[str] = None, rate: Optional[Rate] = None,
                     second: Optional[Dict[int, KernelConfig]] = None) -> dict:
    """Steps 3-5 for one shape; on_size(row) after each size. A size whose estimated time (rate) would end
    past deadline is skipped (named in skipped_sizes)."""
    shape = shape_of(entry)
    rate = rate or Rate()
    both = sorted(set(picks) & set(second or {}))
    gpu = Gpu(backend, shape, sorted(set(sizes) | set(both)), home)
    out: Dict[str, Any] = {"per_m": [], "skipped_sizes": []}
    try:
        if second:   # the repeatability of two tunes first: 18 sizes, a few seconds
            t0 = time.time()
            pairs = {m: (picks[m], second[m]) for m in both if not space_mod.same_launch(picks[m], second[m], shape, m)}
            out["repeat"] = repeat_rows(shape, picks, second, repeat_ratios(gpu, pairs) if pairs else {})
            out["repeat_wall_s"] = round(time.time() - t0, 1)
            print("[%s] repeatability: within 1%% at %d of %d sizes (%.1f s)" % (
                entry["name"], sum(1 for r in out["repeat"] if r["within_1pct"]), len(out["repeat"]),
                out["repeat_wall_s"]), flush=True)
        for m in sizes:
            n_units = len(landscape_configs(shape, m)) + RETIME_ROUNDS * (RETIME_TOP + 1)
            if time.time() + rate.estimate_s(n_units) > deadline:
                out["skipped_sizes"].append(m)
                print("[%s] m=%d skipped: ~%.0f s needed, %.0f s left" % (
                    entry["name"], m, rate.estimate_s(n_units), deadline - time.time()), flush=True)
                continue
            t0 = time.time()
            land, us, n = landscape(gpu, shape, m)
            if not land:
                out["per_m"].append({"m": m, "error": "no landscape unit succeeded", "configs": n})
                continue
            order = ranked_landscape(land)
            best = KernelConfig.from_key(order[0])
            cands: List[KernelConfig] = []
            for k in order[1:]:
                c = KernelConfig.from_key(k)
                if len(cands) >= RETIME_TOP:
                    break
                cands.append(c)
            pick = picks.get(m)
            if pick is not None and not space_mod.same_launch(pick, best, shape, m) and \
                    not any(space_mod.same_launch(pick, c, shape, m) for c in cands):
                cands.append(pick)
            ratios, best_us = retime(gpu, m, best, cands)
            reg = regret_of(pick, best, ratios, shape, m) if pick is not None else None
            fastest = min([us[k] for k in us] + ([best_us] if best_us else []))
            roof = gpu.roofline.get(m)
            row = {"m": m, "configs": n, "timed": len(land), "default": gpu.defaults[m].key(),
                   "best": best.key(), "best_over_default": round(land[order[0]], 4),
                   "pick": pick.key() if pick else None,
                   "pick_rank": (order.index(pick.key()) + 1) if pick is not None and pick.key() in land else None,
                   "retimed": {k: round(v, 4) for k, v in ratios.items()},
                   "regret": round(reg, 4) if reg else None, "best_us": round(best_us, 3) if best_us else None,
                   "roofline_us": round(roof, 3) if roof else None,
                   "floor_fraction": round(roof / fastest, 4) if roof and fastest else None,
                   "wall_s": round(time.time() - t0, 1), "landscape": {k: round(v, 4) for k, v in land.items()}}
            rate.add(n_units, time.time() - t0)
            out["per_m"].append(row)
            on_size(row)
    finally:
        gpu.close()
    return out


# -- the summary -----------------------------------------------------------------------------------------
def summary_row(entry: dict, res: dict) -> dict:
    """summary.json's row for one shape, from this run's figures only (None where not measured)."""
    regs = [r["regret"] for r in res.get("per_m", []) if r.get("regret")]
    chk = res.get("check") or {}
    floors = {str(r["m"]): r.get("floor_fraction") for r in res.get("per_m", [])
              if FLOOR_SIZES[0] <= r["m"] <= FLOOR_SIZES[1]}
    return {"shape": entry["name"], "E": entry["E"], "N": entry["N"], "K": entry["K"], "topk": entry["topk"],
            "dtype": entry["dtype"] + ("" if not entry.get("block_shape") else " %s" % entry["block_shape"]),
            "regret_geomean": round(geomean(regs), 4) if regs else None,
            "regret_worst": round(max(regs), 4) if regs else None,
            "wall_up_cold_s": (res.get("tune") or {}).get("wall_s"),
            "wall_updown_s": (res.get("updown") or {}).get("wall_s"),
            "int4_3_s": (res.get("int4_3") or {}).get("wall_s"), "bf16_3_s": (res.get("bf16_3") or {}).get("wall_s"),
            "int4_over_bf16": round(res["int4_3"]["wall_s"] / res["bf16_3"]["wall_s"], 3)
            if (res.get("int4_3") or {}).get("wall_s") and (res.get("bf16_3") or {}).get("wall_s") else None,
            "repeat_within_1pct": sum(1 for r in res["repeat"] if r["within_1pct"]) if res.get("repeat") else None,
            "repeat_sizes": len(res["repeat"]) if res.get("repeat") else None,
            "wall_up_second_s": (res.get("tune2") or {}).get("wall_s"),
            "sizes": [r["m"] for r in res.get("per_m", []) if r.get("regret")],
            "headroom_within_2pp": chk["within"] if "within" in chk else None,
            "headroom_sizes": chk["sizes"] if "within" in chk else None,
            "headroom_wall_s": chk.get("wall_s") if "within" in chk else None,
            "floor_fraction": floors or None}


def write_json(path: str, obj: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def merge_runs(folders: Sequence[str]) -> dict:
    """One summary of several runs of this script (each folder: its summary.json and rows.json), every row
    naming the run it came from (GPU, CPU, driver, torch, Triton, commit, lease, start); the suite's figures
    are computed from the runs' per-size measurements. Nothing is typed in."""
    runs = []
    rows = []
    regrets = []
    floors = []
    for d in folders:
        with open(os.path.join(d, "summary.json"), encoding="utf-8") as f:
            s = json.load(f)
        with open(os.path.join(d, "rows.json"), encoding="utf-8") as f:
            detail = json.load(f)
        facts = s["facts"]
        runs.append({k: facts.get(k) for k in ("gpu", "cpu", "driver", "torch", "triton", "commit", "lease",
                                               "started_utc", "simulated")})
        runs[-1]["skipped"] = s.get("skipped")
        for r in s["rows"]:
            rows.append(dict(r, gpu=facts.get("gpu"), cpu=facts.get("cpu"), driver=facts.get("driver"),
                             torch=facts.get("torch"), triton=facts.get("triton"), commit=facts.get("commit"),
                             lease=facts.get("lease"), started_utc=facts.get("started_utc")))
        for res in detail["shapes"].values():
            for r in res.get("per_m") or []:
                if r.get("regret"):
                    regrets.append(r["regret"])
                if r.get("floor_fraction") and FLOOR_SIZES[0] <= r["m"] <= FLOOR_SIZES[1]:
                    floors.append(r["floor_fraction"])
    measured = {r["shape"] for r in rows}
    skipped = sorted({x["shape"] for run in runs for x in run["skipped"] or []} - measured)

    def one(key):
        vals = {run[key] for run in runs}
        return vals.pop() if len(vals) == 1 else sorted(str(v) for v in vals)

    def count(key, of):
        got = [(r[key], r[of]) for r in rows if r.get(key) is not None]
        return {"within": sum(a for a, _b in got), "sizes": sum(b for _a, b in got)} if got else None

    return {"machine": one("gpu"), "cpu": one("cpu"), "commit": one("commit"), "runs": runs, "rows": rows,
            "not_measured": skipped,
            "suite": {"regret_geomean": round(geomean(regrets), 4) if regrets else None,
                      "regret_worst": round(max(regrets), 4) if regrets else None, "regret_sizes": len(regrets),
                      "headroom_within_2pp": count("headroom_within_2pp", "headroom_sizes"),
                      "repeat_within_1pct": count("repeat_within_1pct", "repeat_sizes"),
                      "floor_fraction_16_256": [min(floors), max(floors)] if floors else None}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT") or None)
    ap.add_argument("--shapes", default="", help="comma list of names (default: every shape, in the file's order)")
    ap.add_argument("--sizes", default="1,64,1024,4096")
    ap.add_argument("--limit-s", type=float, default=540.0, help="start no step past this many seconds")
    ap.add_argument("--shape-s", type=float, default=150.0, help="start no shape with less than this left")
    ap.add_argument("--hard-s", type=float, default=560.0, help="start no size that would end past this many seconds")
    ap.add_argument("--check", action="store_true", help="run the headroom check after each tune")
    ap.add_argument("--updown", default="", help="comma list of shapes also tuned `up+down` (cold, a fresh host)")
    ap.add_argument("--int4-vs-bf16", default="", help="comma list of int4_w4a16 shapes tuned at 3 sizes as int4 "
                    "and as bf16 of the same dims (each cold, a fresh host): int4 / bf16 wall")
    ap.add_argument("--repeat", default="", help="comma list of shapes tuned twice (the second on the first's "
                    "host: its compile cache warm), the two picks re-timed against each other")
    ap.add_argument("--commit", default=None)
    ap.add_argument("--lease", default=None)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--merge", nargs="+", default=None, help="run folders (summary.json + rows.json) to merge "
                    "into --merged instead of running")
    ap.add_argument("--merged", default=None)
    a = ap.parse_args(argv)
    if a.merge:
        merged = merge_runs(a.merge)
        write_json(a.merged or os.path.join(a.out or ".", "summary.json"), merged)
        print(json.dumps(merged["suite"], sort_keys=True))
        return 0
    t0 = time.time()
    deadline = t0 + a.limit_s
    out = a.out or tempfile.mkdtemp(prefix="moetune-heldout-out-")
    os.makedirs(out, exist_ok=True)
    sizes = [int(x) for x in a.sizes.split(",")]
    entries = load_shapes()
    if a.shapes:
        names = a.shapes.split(",")
        unknown = [n for n in names if n not in {e["name"] for e in entries}]
        if unknown:
            raise SystemExit("unknown held-out shapes: %s" % unknown)
        entries = [e for n in names for e in entries if e["name"] == n]
    if a.synthetic:
        os.environ.setdefault("MOETUNE_SYNTHETIC_COMPILE_MS", "5")
    facts = machine_facts(a.synthetic, a.commit, a.lease)
    print("machine: %s" % json.dumps(facts, sort_keys=True), flush=True)
    work = tempfile.mkdtemp(prefix="moetune-heldout-work-")
    pyz = build_pyz(work)
    backend = "synthetic" if a.synthetic else "triton"
    summary = {"machine": facts["gpu"], "cpu": facts["cpu"], "commit": a.commit, "lease": a.lease, "facts": facts,
               "simulated": a.synthetic, "method": __doc__.split("\n\n")[0].strip(), "rows": [], "skipped": []}
    results: Dict[str, Any] = {}
    rate = Rate()

    def save():
        summary["wall_s"] = round(time.time() - t0, 1)
        write_json(os.path.join(out, "summary.json"), summary)
        write_json(os.path.join(out, "rows.json"), {"facts": facts, "shapes": results})

    for entry in entries:
        name = entry["name"]
        left = deadline - time.time()
        if left < a.shape_s:
            summary["skipped"].append({"shape": name, "why": "time: %.0f s left of --limit-s, a shape needs ~%.0f s"
                                       % (left, a.shape_s)})
            print("[%s] skipped for time (%.0f s left)" % (name, left), flush=True)
            continue
        res: Dict[str, Any] = {"entry": entry, "facts": facts}
        results[name] = res
        home = os.path.join(work, "home-" + name)   # a fresh host per shape: the tune is cold
        tune = run_tune(pyz, home, spec_of(entry, a.synthetic), work, name, cap_s=min(TUNE_CAP_S, left - 60))
        agent = tune.pop("agent", None)
        picks = tune.pop("winners", {})
        res["tune"] = dict(tune, picks={str(m): c.key() for m, c in sorted(picks.items())},
                           gains={str(m): g for m, g in sorted((tune.get("gains") or {}).items())})
        print("[%s] cold up tune: %s s%s" % (name, tune.get("wall_s"), " ERROR %s" % tune["error"] if "error" in tune else ""),
              flush=True)
        if a.check and agent is not None and "error" not in tune:
            res["check"] = run_check(agent, tune["spec_path"], tune.get("gains") or {})
            print("[%s] headroom check: %s s, within 2 pp at %s of %s sizes" % (
                name, res["check"].get("wall_s"), res["check"].get("within"), res["check"].get("sizes")), flush=True)
        for key, what, ops, tsizes, dtype in (
                ("updown", a.updown, "up+down", None, None),
                ("int4_3", a.int4_vs_bf16, "up", INT4_SIZES, None),
                ("bf16_3", a.int4_vs_bf16, "up", INT4_SIZES, "bf16")):
            if name not in what.split(",") or (key != "updown" and entry["dtype"] != "int4_w4a16"):
                continue
            # each on a fresh host (a cold tune), the cap what is left
            extra = run_tune(pyz, os.path.join(work, "home-%s-%s" % (name, key)),
                             spec_of(entry, a.synthetic, ops, tsizes, dtype), work, "%s-%s" % (name, key),
                             cap_s=min(TUNE_CAP_S, deadline - time.time() + 30))
            extra.pop("agent", None)
            extra.pop("winners", None)
            extra.pop("gains", None)
            res[key] = extra
            print("[%s] %s cold tune: %s s%s" % (name, key, extra.get("wall_s"),
                                                 " ERROR %s" % extra["error"] if "error" in extra else ""), flush=True)
        second = None
        if name in a.repeat.split(",") and "error" not in tune:
            t2 = run_tune(pyz, home, spec_of(entry, a.synthetic), work, name + "-2", cap_s=min(TUNE_CAP_S, left - 90))
            t2.pop("agent", None)
            second = t2.pop("winners", None)
            res["tune2"] = dict(t2, picks={str(m): c.key() for m, c in sorted((second or {}).items())})
            print("[%s] second up tune (warm host): %s s" % (name, t2.get("wall_s")), flush=True)
        row_index = len(summary["rows"])
        summary["rows"].append(summary_row(entry, res))
        save()

        def on_size(row, name, res, entry, row_index):
            res.setdefault("per_m", []).append(row)
            summary["rows"][row_index] = summary_row(entry, res)
            save()
            print("[%s] m=%5d regret %s  pick %s (rank %s of %d)  best %s (%.3fx the default)  floor %s  %.1f s" % (
                name, row["m"], row["regret"], row["pick"], row["pick_rank"], row["timed"], row["best"],
                1.0 / row["best_over_default"], row["floor_fraction"], row["wall_s"]), flush=True)

        got = shape_landscapes(backend, entry, sizes, picks, t0 + a.hard_s,
                               functools.partial(on_size, name=name, res=res, entry=entry, row_index=row_index),
                               home=home, rate=rate, second=second)
        if got.get("repeat") is not None:
            res["repeat"] = got["repeat"]
            res["repeat_wall_s"] = got["repeat_wall_s"]
        res["skipped_sizes"] = got["skipped_sizes"]
        res["errors"] = [r for r in got["per_m"] if "error" in r]
        summary["rows"][row_index] = summary_row(entry, res)
        save()
    save()
    print("\nHELDOUT%s (%s; %s)" % (" (SIMULATED)" if a.synthetic else "", facts["gpu"], facts["cpu"]))
    print("%-28s %-22s %8s %8s %8s %10s %8s %s" % ("shape", "dtype", "geomean", "worst", "up cold", "headroom", "repeat",
                                                  "sizes"))
    for r in summary["rows"]:
        print("%-28s %-22s %8s %8s %8s %10s %8s %s" % (
            r["shape"], r["dtype"], r["regret_geomean"], r["regret_worst"], r["wall_up_cold_s"],
            "%s/%s" % (r["headroom_within_2pp"], r["headroom_sizes"]), "%s/%s" % (r["repeat_within_1pct"], r["repeat_sizes"]),
            r["sizes"]))
    for r in summary["rows"]:
        if r["wall_updown_s"] or r["int4_over_bf16"]:
            print("%-28s up+down cold %s s; int4 3 sizes %s s, bf16 %s s: %sx" % (
                r["shape"], r["wall_updown_s"], r["int4_3_s"], r["bf16_3_s"], r["int4_over_bf16"]))
    for s in summary["skipped"]:
        print("%-28s skipped: %s" % (s["shape"], s["why"]))
    print("wall %.1f s; wrote %s" % (time.time() - t0, os.path.join(out, "summary.json")), flush=True)
    return 0 if summary["rows"] else 1


if __name__ == "__main__":
    sys.exit(main())
