# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Headroom check vs full tunes on a GPU host (issue 19): for each (shape, backend) pair, run the agent's
`headroom` (its wall time is the check's), then a full fast `tune` of the same spec (detached + attach,
through the .pyz as tools/gpu_e2e.py does), and compare per batch size the estimate with the tune's
head-to-head gain (result.json per_batch speedup: default / chosen, the default kept on a tie).

    PYTHONUNBUFFERED=1 python3 remote_agent/bench/headroom_bench.py --upstream .upstream/sglang_head --out "$OUT"

Pairs: bf16 Qwen3-30B-A3B TP1 (E=128 N=768 K=2048 top-k 8) and fp8 block [128,128] (E=256 N=256 K=7168
top-k 8, the recorded DeepSeek-like shape), each with moetune's kernel (backend triton) and with SGLang's
kernel (backend server, --upstream on PYTHONPATH); the fp8 server pair is skipped when the upstream tree's
fp8 activation quantisation is a stand-in that raises (sglang_head's is), and the summary says so.
--synthetic runs every pair on the synthetic backend (SIMULATED: the CPU test of this script).
Writes headroom_bench.json (and each pair's events) under --out (default $OUT, else a temporary folder).
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
REPO = os.path.dirname(AGENT_ROOT)
sys.path.insert(0, AGENT_ROOT)
from moetune_agent.kernel_types import KernelConfig  # noqa: E402  # pylint: disable=wrong-import-position

SHAPES = {
    "qwen3": {"E": 128, "N": 768, "K": 2048, "topk": 8},
    "fp8block": {"E": 256, "N": 256, "K": 7168, "topk": 8, "dtype": "fp8_w8a8", "block_shape": [128, 128]},
}
# (shape, backend, seconds the full tune took on one H200: the budget check before starting a pair)
# the two own-kernel pairs first: the server pair's tune (164 s on the H200) is the one a time limit drops
PAIRS = (("qwen3", "triton", 80), ("fp8block", "triton", 125), ("qwen3", "server", 190), ("fp8block", "server", 170))


def fp8_server_blocker(upstream):
    """Why SGLang's fp8 path cannot run from this tree, or None."""
    if not upstream:
        return "no --upstream tree"
    path = os.path.join(upstream, "sglang", "kernels", "ops", "quantization", "fp8_kernel.py")
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline()
    except OSError:
        return None
    if first.startswith("# STAND-IN"):
        return ("%s is a stand-in that raises for fp8 activation quantisation (the real one needs SGLang's CUDA "
                "wheels): the fp8 server-backend pair cannot run from this tree" % path)
    return None


def parse_variants(text):
    """"name:ENV=V,ENV=V;name2:ENV=V" -> [(name, {ENV: V})] (check variants, --variants)."""
    out = []
    for part in filter(None, (p.strip() for p in (text or "").split(";"))):
        name, _, envs = part.partition(":")
        env = {}
        for kv in filter(None, (x.strip() for x in envs.split(","))):
            k, eq, v = kv.partition("=")
            if not eq or not k:
                raise ValueError("variant %r: %r is not ENV=VALUE" % (name, kv))
            env[k] = v
        out.append((name.strip(), env))
    return out


def check_once(agent, sp, events_path):
    """One `headroom` run of spec sp, its events written to events_path -> (rc, events, stderr, wall,
    the headroom event or None)."""
    t0 = time.time()
    rc, ev, err = agent.run(["headroom", sp], timeout=300)
    wall = time.time() - t0
    with open(events_path, "w", encoding="utf-8") as f:
        for e in ev:
            f.write(json.dumps(e) + "\n")
    hr = [e for e in ev if e.get("type") == "headroom"]
    if rc == 0 and hr:
        hr[0]["_verdict_s"] = hr[0].get("_arrived_s")  # when the user reads the verdict; wall: the exit
    return rc, ev, err, wall, (hr[0] if rc == 0 and hr else None)


def print_rows(label, rows):
    """The per-size lines: label's estimate against the tune's head-to-head gain."""
    for r in rows:
        print("    m=%5d %s %s tune %s  %s pp%s" % (
            r["m"], label, "%.3fx" % r["estimate"] if r["estimate"] else "-",
            "%.3fx" % r["tune_gain"] if r["tune_gain"] else "-",
            "%+.1f" % r["error_pp"] if r["error_pp"] is not None else "-", "" if r["within"] else "  MISS"))


def variant_checks(agent, sp, out_dir, tag, variants, pause_s):
    """Each variant's check, in the given order, each after pause_s of an idle GPU (so none starts on the
    heat of the one before): [(name, env, wall, headroom event or None, error)]."""
    done = []
    for name, env in variants:
        time.sleep(pause_s)
        _rc, _ev, err, wall, hr = check_once(agent.with_env(env), sp, os.path.join(
            out_dir, "%s_variant_%s_%d.jsonl" % (tag, name, len(done))))
        done.append((name, env, wall, hr, None if hr else err[-500:]))
        t = (hr.get("timings") or {}) if hr else {}
        print("[%s] variant %s %s: %.1f s (start-up %s, screen %s, re-timing %s; GPU worker %s)" % (
            tag, name, env, wall, t.get("startup_s"), t.get("screen_s"), t.get("retime_s"),
            json.dumps(t.get("info_steps"), sort_keys=True)), flush=True)
    return done


def report_variants(tag, done, result):
    """Each variant's estimate against the tune's head-to-head, and per variant name the totals."""
    out = []
    for name, env, wall, hr, err in done:
        if hr is None:
            out.append({"variant": name, "env": env, "error": err})
            continue
        rows = compare(hr["sizes"], result["per_batch"])
        out.append({"variant": name, "env": env, "wall_s": round(wall, 2), "rows": rows,
                    "within": sum(1 for r in rows if r["within"]), "timings": hr.get("timings")})
        print("[%s] variant %s: within 2 pp at %d of %d sizes, %.1f s; error pp at M >= 1024: %s" % (
            tag, name, out[-1]["within"], len(rows), wall,
            " ".join("%d:%+.1f" % (r["m"], r["error_pp"]) for r in rows if r["m"] >= 1024 and r["error_pp"] is not None)),
              flush=True)
    by = {}
    for v in out:
        if "error" not in v:
            by.setdefault(v["variant"], []).append(v)
    for name, vs in by.items():
        print("[%s] variant %s over %d checks: within %s; wall %s" % (
            tag, name, len(vs), [v["within"] for v in vs], [v["wall_s"] for v in vs]), flush=True)
    return out


class Agent(object):
    """One agent command line (the source tree or a pyz) run to its end: (rc, events, stderr). Shared by the
    benchmarks (tools/user_path_bench.py too)."""

    def __init__(self, cmd, env, cwd=None):
        self.cmd = cmd
        self.env = env
        self.cwd = cwd

    def with_env(self, extra):
        return Agent(self.cmd, dict(self.env, **extra), self.cwd)

    def run(self, args, timeout=None):
        """-> (rc, events, stderr); each event gets "_arrived_s", the seconds from the command's start
        to the line's arrival (a check's verdict reaches the user then, before the process has ended)."""
        import threading

        t0 = time.time()
        p = subprocess.Popen(self.cmd + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
                             cwd=self.cwd)
        err = []
        reader = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
        reader.start()
        killer = threading.Timer(timeout, p.kill) if timeout else None
        if killer is not None:
            killer.start()
        events = []
        try:
            for raw in p.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if not line:
                    continue
                try:
                    ev = json.loads(line)
                except ValueError:
                    ev = {"type": "_unparsed", "line": line}
                if isinstance(ev, dict):
                    ev["_arrived_s"] = round(time.time() - t0, 3)
                    events.append(ev)
            p.wait()
        finally:
            if killer is not None:
                killer.cancel()
        reader.join(5)
        if killer is not None and p.returncode is not None and p.returncode < 0 and time.time() - t0 >= timeout:
            raise subprocess.TimeoutExpired(self.cmd + args, timeout)
        return p.returncode, events, b"".join(err).decode("utf-8", "replace")


def compare(headroom_rows, per_batch, pp=2.0):
    tune = {p["m"]: p.get("speedup") for p in per_batch}
    rows = []
    for r in headroom_rows:
        t = tune.get(r["m"])
        est = r.get("gain")
        err = None if est is None or t is None else round(100.0 * (est - t), 2)
        rows.append({"m": r["m"], "estimate": est, "tune_gain": t, "error_pp": err,
                     "within": err is not None and abs(err) <= pp, "bound": r.get("bound"),
                     "floor_fraction": r.get("floor_fraction")})
    return rows


def tune_timings(run_dir):
    """(m, config key) -> the median of the tune's screening medians of that config (its journal, op up or both)."""
    got = {}
    try:
        with open(os.path.join(run_dir, "journal.jsonl"), encoding="utf-8") as f:
            for line in f:
                try:  # a damaged journal line is skipped, as the agent's own reader counts it as damage
                    r = json.loads(line)
                    if r.get("type") != "measurement" or r.get("op") not in ("up", "both") \
                            or not 0 <= int(r.get("round", -1)) < 100:
                        continue
                    key = (int(r["m"]), KernelConfig.from_dict(r["config"]).key())
                    got.setdefault(key, []).append(float(r["median_us"]))
                except (ValueError, TypeError, KeyError, AttributeError):
                    continue
    except OSError:
        return {}
    return {k: round(sorted(v)[len(v) // 2], 2) for k, v in got.items()}


def save_run(run_dir, out_dir, tag):
    """The tune's result.json and journal (gzipped) next to the benchmark's JSON."""
    try:
        shutil.copy(os.path.join(run_dir, "result.json"), os.path.join(out_dir, tag + "_result.json"))
        with open(os.path.join(run_dir, "journal.jsonl"), "rb") as f, \
                gzip.open(os.path.join(out_dir, tag + "_journal.jsonl.gz"), "wb") as g:
            shutil.copyfileobj(f, g)
    except OSError as e:
        print("[%s] could not keep the tune's files: %s" % (tag, e), flush=True)


def recheck(agent, sp, out_dir, tag, result):
    """The check again right after the tune, on a GPU the tune kept busy for a minute (and a filled
    compile cache): its estimate against the same head-to-head says whether a large-M miss is the check
    running on a cooler GPU than the tune's head-to-head (stop 29: at M >= 2048 the check over-stated the
    gain by 2-7 pp in two of three calls, with the same config and the default timed the same)."""
    rc, _ev, err, wall, hr = check_once(agent, sp, os.path.join(out_dir, tag + "_recheck.jsonl"))
    if hr is None:
        return {"error": "recheck failed (rc %d): %s" % (rc, err[-500:])}
    rows = compare(hr["sizes"], result["per_batch"])
    out = {"wall_s": round(wall, 2), "within": sum(1 for r in rows if r["within"]), "sizes": len(rows),
           "rows": rows}
    print("[%s] re-check after the tune (hot GPU, warm cache) %.1f s: within 2 pp at %d of %d sizes" % (
        tag, wall, out["within"], out["sizes"]), flush=True)
    print_rows("re-check", rows)
    return out


def run_pair(agent, shape, backend, out_dir, synthetic, again=False, variants=(), pause_s=0.0, check_only=False,
             framework="sglang"):
    spec = dict(SHAPES[shape], framework=framework, backend="synthetic" if synthetic else backend,
                ops="up", strategy="fast")
    tag = "%s_%s" % (shape, backend)
    sp = os.path.join(out_dir, tag + "_spec.json")
    with open(sp, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    rc, ev, err, check_wall, hr = check_once(agent, sp, os.path.join(out_dir, tag + "_headroom.jsonl"))
    res = {"pair": tag, "shape": shape, "backend": backend, "simulated": synthetic, "check_rc": rc,
           "check_wall_s": round(check_wall, 2)}
    if hr is None:
        res["error"] = "headroom failed (rc %d): %s %s" % (rc, [e.get("message") for e in ev if e.get("type") == "error"],
                                                          err[-1500:])
        return res
    res.update(verdict=hr["verdict"], kind=hr["kind"], check_agent_wall_s=hr["wall_s"],
               check_verdict_s=hr.get("_verdict_s"), assumed=hr.get("assumed"),
               default_source=hr.get("default_source"), check_units=hr.get("units"), check_timings=hr.get("timings"),
               best_configs={r["m"]: r.get("best_config") for r in hr["sizes"]})
    t = hr.get("timings") or {}
    print("[%s] check: start-up %s s, screen %s s (%s units, %s kernels), re-timing %s s (%s units); precompile %s; "
          "compile cache %s (%s entries before)" % (
              tag, t.get("startup_s"), t.get("screen_s"), t.get("screen_units"), t.get("distinct_configs"),
              t.get("retime_s"), t.get("retime_units"), t.get("precompile"), t.get("compile_cache"),
              t.get("compile_cache_entries_before")), flush=True)
    if t.get("info_steps"):
        print("[%s] GPU worker start-up: %s" % (tag, json.dumps(t["info_steps"], sort_keys=True)), flush=True)
    if t.get("bytecode_cache"):
        print("[%s] bytecode cache: %s" % (tag, json.dumps(t["bytecode_cache"], sort_keys=True)), flush=True)
    if t.get("kept_graphs"):
        print("[%s] kept re-timing graphs: %s" % (tag, json.dumps(t["kept_graphs"], sort_keys=True)), flush=True)
    print("[%s] headroom: %.1f s to the process's end, verdict at %s s (agent %.1f s), %d units: %s" % (
        tag, check_wall, hr.get("_verdict_s"), hr["wall_s"], hr.get("units") or 0, hr["verdict"]), flush=True)
    if check_only:  # the check's wall time and estimate alone (no tune to compare with)
        res["check_only"] = True
        return res
    done = variant_checks(agent, sp, out_dir, tag, variants, pause_s) if variants else []
    t1 = time.time()
    rc, ev, err = agent.run(["tune", sp, "--new"], timeout=300)
    started = [e for e in ev if e.get("type") == "run_started"]
    if rc != 0 or not started:
        res["error"] = "tune did not start (rc %d): %s %s" % (rc, ev[-3:], err[-1500:])
        return res
    run_id = started[0]["run_id"]
    rc, ev, err = agent.run(["attach", run_id], timeout=900)
    res["tune_wall_s"] = round(time.time() - t1, 2)
    paths = [e["path"] for e in ev if e.get("type") == "result_written" and e.get("kind") == "result"]
    if not paths:
        res["error"] = "tune wrote no result (rc %d): %s %s" % (rc, [e for e in ev if e.get("type") == "error"],
                                                               err[-1500:])
        return res
    with open(paths[0], encoding="utf-8") as f:
        result = json.load(f)
    res["tune_backend"] = result.get("backend")
    res["rows"] = compare(hr["sizes"], result["per_batch"])
    # what each side picked, and what the tune's own timings say of the check's best (a miss is either the
    # tune not finding what the check found, or the two timing the same config differently)
    chosen = {w["m"]: KernelConfig.from_dict(w["config"]).key() for w in result.get("winners", []) if w["op"] in ("up", "both")}
    seen = tune_timings(os.path.dirname(paths[0]))
    for r in res["rows"]:
        best = res["best_configs"].get(r["m"])
        r["check_best"] = KernelConfig.from_dict(best).key() if best else None
        r["tune_chosen"] = chosen.get(r["m"])
        r["tune_saw_check_best"] = seen.get((r["m"], r["check_best"]))
        r["tune_saw_chosen"] = seen.get((r["m"], r["tune_chosen"]))
    save_run(os.path.dirname(paths[0]), out_dir, tag)
    res["within"] = sum(1 for r in res["rows"] if r["within"])
    res["sizes"] = len(res["rows"])
    print("[%s] tune %.1f s; estimate vs the tune's head-to-head gain:" % (tag, res["tune_wall_s"]))
    print_rows("estimate", res["rows"])
    for r in res["rows"]:
        if not r["within"]:
            print("    m=%5d check's best %s (tune's screening median %s us), tune chose %s (%s us)" % (
                r["m"], r["check_best"], r["tune_saw_check_best"], r["tune_chosen"], r["tune_saw_chosen"]))
    print("[%s] within 2 pp at %d of %d sizes; check wall %.1f s" % (tag, res["within"], res["sizes"], check_wall),
          flush=True)
    if done:
        res["variants"] = report_variants(tag, done, result)
    if again:
        res["recheck"] = recheck(agent, sp, out_dir, tag, result)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", default=None, help="sglang_head tree (a PYTHONPATH entry) for the server pairs")
    ap.add_argument("--framework", default="sglang", choices=("sglang", "vllm"),
                    help="the server of every pair's spec (vllm: --upstream is a vllm tree; server pairs time "
                    "vLLM's kernel)")
    ap.add_argument("--agent", default=None, help="moetune-agent.pyz to run (default: build one from this checkout)")
    ap.add_argument("--out", default=os.environ.get("OUT") or None)
    ap.add_argument("--pairs", default="all", help="comma list of shape_backend, e.g. qwen3_triton")
    ap.add_argument("--limit-s", type=float, default=360.0, help="do not start a pair that would end past this "
                    "(default: the 6 minutes the lead's device command allows)")
    ap.add_argument("--synthetic", action="store_true", help="every pair on the synthetic backend (SIMULATED)")
    ap.add_argument("--recheck", default="", help="comma list of pairs whose check runs again after the tune "
                    "(hot GPU): its estimate against the same head-to-head")
    ap.add_argument("--variants", default="", help="checks run again before the tune with other environments, "
                    "e.g. 'nocache:MOETUNE_COMPILE_CACHE=0;cache:MOETUNE_COMPILE_CACHE=1' (in this order)")
    ap.add_argument("--variants-for", default="qwen3_triton", help="comma list of pairs that run the variants")
    ap.add_argument("--check-only", default="", help="comma list of pairs run without their tune (wall time only)")
    ap.add_argument("--variant-pause-s", type=float, default=15.0, help="idle GPU before each variant's check")
    ap.add_argument("--home", default=None, help="MOETUNE_HOME of the agent (default: a fresh one): a host where "
                    "the agent ran before keeps its compile and bytecode caches there")
    a = ap.parse_args()
    variants = parse_variants(a.variants)
    out = a.out or tempfile.mkdtemp(prefix="moetune-headroom-bench-")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="moetune-headroom-work-")
    t0 = time.time()
    pyz = a.agent
    if pyz is None:
        pyz = os.path.join(work, "moetune-agent.pyz")
        subprocess.run([sys.executable, os.path.join(AGENT_ROOT, "build_pyz.py"), "--src", AGENT_ROOT, "--kernels",
                        os.path.join(REPO, "kernels"), "--out", pyz], check=True)
    env = dict(os.environ, MOETUNE_HOME=a.home or os.path.join(work, "home"), PYTHONUNBUFFERED="1")
    if a.upstream:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(a.upstream), os.environ.get("PYTHONPATH")) if p)
    agent = Agent([sys.executable, pyz], env)
    blocker = fp8_server_blocker(a.upstream)
    summary = {"simulated": a.synthetic, "pairs": [], "skipped": []}
    for shape, backend, expect_s in PAIRS:
        tag = "%s_%s" % (shape, backend)
        if a.pairs != "all" and tag not in a.pairs.split(","):
            continue
        if backend == "server" and not a.upstream and not a.synthetic:
            summary["skipped"].append({"pair": tag, "why": "no --upstream tree given"})
            continue
        if tag == "fp8block_server" and blocker and not a.synthetic:
            summary["skipped"].append({"pair": tag, "why": blocker})
            print("[%s] skipped: %s" % (tag, blocker), flush=True)
            continue
        if not a.synthetic and time.time() - t0 + expect_s + 20 > a.limit_s:
            summary["skipped"].append({"pair": tag, "why": "time: %.0f s used, the pair takes ~%d s, limit %.0f s"
                                       % (time.time() - t0, expect_s + 20, a.limit_s)})
            print("[%s] skipped for time" % tag, flush=True)
            continue
        summary["pairs"].append(run_pair(agent, shape, backend, out, a.synthetic,
                                         again=tag in a.recheck.split(","),
                                         variants=variants if tag in a.variants_for.split(",") else (),
                                         pause_s=0.0 if a.synthetic else a.variant_pause_s,
                                         check_only=tag in a.check_only.split(","), framework=a.framework))
    summary["wall_s"] = round(time.time() - t0, 1)
    print("\nSUMMARY%s" % (" (SIMULATED: synthetic backend)" if a.synthetic else ""))
    for p in summary["pairs"]:
        if "error" in p:
            print("  %-16s ERROR %s" % (p["pair"], p["error"][:600]))
            continue
        if p.get("check_only"):
            print("  %-16s check only: wall %.1f s (goal <= 15 s), verdict at %s s; verdict: %s" % (
                p["pair"], p["check_wall_s"], p.get("check_verdict_s"), p["verdict"]))
            continue
        print("  %-16s within 2 pp at %d of %d sizes (goal >= 16 of 18); check wall %.1f s (goal <= 15 s); "
              "tune %.1f s; verdict: %s" % (p["pair"], p["within"], p["sizes"], p["check_wall_s"],
                                            p["tune_wall_s"], p["verdict"]))
        rc = p.get("recheck")
        if rc and "error" not in rc:
            print("  %-16s re-checked after the tune: within 2 pp at %d of %d sizes (%.1f s)"
                  % ("", rc["within"], rc["sizes"], rc["wall_s"]))
    for s in summary["skipped"]:
        print("  %-16s skipped: %s" % (s["pair"], s["why"]))
    print("  total wall %.1f s" % summary["wall_s"])
    with open(os.path.join(out, "headroom_bench.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    print("wrote %s" % os.path.join(out, "headroom_bench.json"))
    return 0 if summary["pairs"] and all("error" not in p for p in summary["pairs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
