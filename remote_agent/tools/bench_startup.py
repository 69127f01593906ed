# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 13: where a run's wall time goes outside the GPU's timing, measured on this machine with the
SYNTHETIC backend (no GPU): agent start, worker start-up and the first measurement, the default phase,
the strategy, the head-to-head, and the overlap of (simulated) compiles with timing through the CPU
precompile pool.

    python3 remote_agent/tools/bench_startup.py [--compile-ms 40] [--workers 3] [--sizes 18]

Runs `tune --foreground` of Qwen3-30B-A3B (ops up, fast) two ways: no precompile pool (every config
"compiles" on the GPU worker's first use) and the pool started with the GPU worker (the agent's order; the
pool started after the GPU worker reported, issue 13's "before", is gone with its switch). The compile cost is
MOETUNE_SYNTHETIC_COMPILE_MS per config (a stand-in: real Triton compiles take ~0.8 s on an H200 host's
core, docs/servers.md section 7); every figure is a wall time of this machine, printed with what it measured.
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
SIZES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096]


def one(tmp, label, env_extra, sizes):
    spec = {"framework": "sglang", "E": 128, "N": 768, "K": 2048, "topk": 8, "backend": "synthetic",
            "ops": "up", "strategy": "fast", "batch_sizes": sizes}
    sp = os.path.join(tmp, "spec-%s.json" % label)
    with open(sp, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    env = dict(os.environ, MOETUNE_HOME=os.path.join(tmp, "home-" + label), PYTHONPATH=AGENT_ROOT)
    env.update(env_extra)
    t0 = time.time()
    p = subprocess.Popen([sys.executable, "-m", "moetune_agent", "tune", sp, "--foreground", "--new"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=AGENT_ROOT)
    marks = {}
    events = []
    for line in p.stdout:
        now = time.time() - t0
        e = json.loads(line)
        events.append(e)
        t = e["type"]
        if t == "phase":
            marks.setdefault("phase " + e["name"], now)
        elif t in ("hello", "run_started", "measurement", "result_written", "done"):
            marks.setdefault(t, now)
    p.wait()
    wall = time.time() - t0
    result = None
    for e in events:
        if e["type"] == "result_written" and e["kind"] == "result":
            with open(e["path"], encoding="utf-8") as f:
                result = json.load(f)
    done = events[-1]
    if p.returncode != 0 or done.get("status") != "ok" or result is None:
        raise SystemExit("%s: the run failed (rc %s): %s" % (label, p.returncode, p.stderr.read()[-2000:]))
    t = result["timings"]
    return {"label": label, "wall_s": round(wall, 2), "marks": {k: round(v, 2) for k, v in marks.items()},
            "units": t["units_measured"], "precompile": t.get("precompile")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile-ms", type=float, default=40.0)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--sizes", type=int, default=18)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated run labels")
    a = ap.parse_args()
    sizes = SIZES[: a.sizes]
    tmp = tempfile.mkdtemp(prefix="moetune-startup-")
    base = {"MOETUNE_SYNTHETIC_COMPILE_MS": str(a.compile_ms)}
    runs = [("no-pool", dict(base, MOETUNE_PRECOMPILE_WORKERS="0")),
            ("pool-early", dict(base, MOETUNE_PRECOMPILE_WORKERS=str(a.workers)))]
    runs = [r for r in runs if not a.only or r[0] in a.only.split(",")] * a.repeat
    try:
        print("synthetic backend (simulated latencies), %d sizes, compile %.0f ms per config (simulated), %d "
              "precompile workers; wall times measured on this machine" % (len(sizes), a.compile_ms, a.workers))
        for label, env in runs:
            r = one(tmp, label, env, sizes)
            m = r["marks"]
            print("%-16s wall %6.2f s | hello %.2f  run_started %.2f  first measurement %.2f  strategy from %.2f  "
                  "head-to-head from %.2f  result %.2f | units %d  precompile %s"
                  % (label, r["wall_s"], m.get("hello", -1), m.get("run_started", -1), m.get("measurement", -1),
                     m.get("phase fast", -1), m.get("phase head-to-head", -1), m.get("result_written", -1),
                     r["units"], r["precompile"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
