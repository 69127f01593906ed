# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 9 benchmark: Qwen3-30B-A3B TP1 (E=128, top-k 8, K=2048, N=768, bf16), fast strategy, all 18
batch sizes, `backend: auto` on an installed SGLang (here: the upstream SGLang tree on PYTHONPATH), for
`ops: up` and `ops: up+down`; then an independent re-timing of every reported speedup in a separate,
later process (fresh backend, interleaved rounds of the chosen config and the default).

    PYTHONPATH=<sglang tree> python3 remote_agent/bench/bench_server.py all --out DIR [--ops up,up+down]
    PYTHONPATH=<sglang tree> python3 remote_agent/bench/bench_server.py retime --result result.json --out F

Prints a table per run: m, decision, reported speedup, re-timed speedup, their ratio; and the figures the
issue asks for: wall time, tuned >= default at every size, every re-timed speedup within 2%.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
sys.path.insert(0, AGENT_ROOT)

QWEN = {"E": 128, "N": 768, "K": 2048, "topk": 8}
SIZES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096]


def tune(ops, out_dir, framework="sglang", sizes=None):
    home = os.path.join(out_dir, "home")
    spec = {"framework": framework, "backend": "auto", "ops": ops, "strategy": "fast",
            "batch_sizes": sizes or SIZES}
    spec.update(QWEN)
    sp = os.path.join(out_dir, "spec_%s.json" % ops.replace("+", "_"))
    with open(sp, "w") as f:
        json.dump(spec, f)
    env = dict(os.environ, MOETUNE_HOME=home)
    env["PYTHONPATH"] = AGENT_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.time()
    p = subprocess.run([sys.executable, "-m", "moetune_agent", "tune", sp, "--foreground", "--new"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=AGENT_ROOT)
    wall = time.time() - t0
    events = [json.loads(l) for l in p.stdout.decode().splitlines() if l.startswith("{")]
    res_ev = [e for e in events if e["type"] == "result_written" and e["kind"] == "result"]
    done = events[-1] if events else {}
    out = {"ops": ops, "rc": p.returncode, "status": done.get("status"), "wall_s": round(wall, 2),
           "run_wall_s": done.get("wall_s"), "errors": [e for e in events if e["type"] == "error"],
           "stderr_tail": p.stderr.decode("utf-8", "replace")[-2000:]}
    if res_ev:
        dst = os.path.join(out_dir, "result_%s.json" % ops.replace("+", "_"))
        shutil.copy(res_ev[0]["path"], dst)
        out["result"] = dst
    return out


def retime(result_path, rounds=15, replays=10):
    """Separate process: time the chosen config and the default of every size again, interleaved."""
    from moetune_agent.backends.server_backend import ServerBackend
    from moetune_agent.kernel_types import KernelConfig, Shape
    from moetune_agent.strategies.common import median

    with open(result_path) as f:
        res = json.load(f)
    sh = res["shape"]
    shape = Shape(sh["E"], sh["N"], sh["K"], sh["topk"], sh.get("dtype") or "bf16")
    cache = tempfile.mkdtemp(prefix="moetune-retime-")
    b = ServerBackend(shape, 0, cache, framework=res["framework"])
    ops = res["ops"]
    rows = []
    t0 = time.time()
    for h in res["head_to_head"]:
        m = h["m"]
        chosen = {op: KernelConfig.from_dict(c) for op, c in h["chosen"]["configs"].items()}
        default = {op: KernelConfig.from_dict(c) for op, c in h["default"]["configs"].items()}
        series = {"chosen": [], "default": []}
        for r in range(rounds):
            order = ("default", "chosen") if r % 2 == 0 else ("chosen", "default")
            for side in order:
                cfgs = chosen if side == "chosen" else default
                series[side].append(sum(b.measure(op, cfgs[op], m, replays).median_us for op in ops))
        dmed, cmed = median(series["default"]), median(series["chosen"])
        same = all(chosen[op] == default[op] for op in ops)
        retimed = 1.0 if same else dmed / cmed
        reported = h["speedup"]
        rows.append({"m": m, "decision": h["decision"], "chosen_default": same, "reported_speedup": reported,
                     "retimed_speedup": retimed, "ratio": retimed / reported if reported else None,
                     "default_us": dmed, "chosen_us": cmed, "rounds": rounds, "replays": replays})
    b.close()
    return {"result": result_path, "rows": rows, "wall_s": round(time.time() - t0, 2)}


def summarize(tuned, rt):
    rows = rt["rows"] if rt else []
    within = [r for r in rows if r["ratio"] is not None and abs(r["ratio"] - 1.0) <= 0.02]
    with open(tuned["result"]) as f:
        res = json.load(f)
    return {"ops": tuned["ops"], "wall_s": tuned["wall_s"], "run_wall_s": tuned["run_wall_s"],
            "sizes": len(res["head_to_head"]),
            "tuned_ge_default_all": all(h["speedup"] is not None and h["speedup"] >= 1.0 for h in res["head_to_head"]),
            "min_speedup": min((h["speedup"] for h in res["head_to_head"] if h["speedup"] is not None), default=None),
            "kept_default": sum(1 for h in res["head_to_head"] if h["chosen_default"]),
            "retimed_within_2pct": "%d/%d" % (len(within), len(rows)),
            "worst_ratio": max((abs(r["ratio"] - 1.0) for r in rows if r["ratio"]), default=None),
            "default_source": res.get("default_source"), "backend": res.get("backend"),
            "precompile": res.get("timings", {}).get("precompile"),
            "units": res.get("timings", {}).get("units_measured")}


def table(res_path, rt):
    with open(res_path) as f:
        res = json.load(f)
    by_m = {r["m"]: r for r in (rt or {}).get("rows", [])}
    print("ops %s  backend %s  default: %s %s" % ("+".join(res["ops"]), res["backend"],
                                                  res["default_source"]["kind"], res["default_source"].get("file_name")))
    print("%6s %-17s %7s %9s %9s %8s %8s" % ("M", "decision", "rounds", "reported", "retimed", "ratio", "tuned_us"))
    for h in res["head_to_head"]:
        r = by_m.get(h["m"], {})
        print("%6d %-17s %7d %9s %9s %8s %8s" % (h["m"], h["decision"], h["rounds"],
                                                 "%.4f" % h["speedup"] if h["speedup"] else "-",
                                                 "%.4f" % r["retimed_speedup"] if r else "-",
                                                 "%.4f" % r["ratio"] if r.get("ratio") else "-",
                                                 "%.1f" % h["median_us"] if h["median_us"] else "-"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=("all", "retime"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--ops", default="up,up+down")
    ap.add_argument("--result")
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args()
    if a.cmd == "retime":
        rt = retime(a.result, a.rounds)
        with open(a.out, "w") as f:
            json.dump(rt, f, indent=1)
        return
    os.makedirs(a.out, exist_ok=True)
    summary = {"runs": []}
    for ops in a.ops.split(","):
        t = tune(ops, a.out)
        print("tune %s: rc=%s status=%s wall %.1fs" % (ops, t["rc"], t["status"], t["wall_s"]), flush=True)
        entry = {"tune": t}
        if t.get("result") and t["status"] == "ok":
            rt_path = os.path.join(a.out, "retime_%s.json" % ops.replace("+", "_"))
            env = dict(os.environ)
            env["PYTHONPATH"] = AGENT_ROOT + os.pathsep + env.get("PYTHONPATH", "")
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "retime", "--result", t["result"],
                                "--out", rt_path, "--rounds", str(a.rounds)], env=env, stderr=subprocess.PIPE)
            rt = None
            if p.returncode == 0:
                with open(rt_path) as f:
                    rt = json.load(f)
            else:
                entry["retime_error"] = p.stderr.decode("utf-8", "replace")[-2000:]
            entry["summary"] = summarize(t, rt)
            table(t["result"], rt)
            print(json.dumps(entry["summary"]), flush=True)
        summary["runs"].append(entry)
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
