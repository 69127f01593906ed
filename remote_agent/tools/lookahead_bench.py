# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A cold host's tune with and without the precompile lookahead (Scheduler._speculate), on the SYNTHETIC
backend with a simulated compile cost: every config costs MOETUNE_SYNTHETIC_COMPILE_MS to compile (in a
pool process, or on the GPU worker when the pool has not compiled it) and each unit
MOETUNE_SYNTHETIC_DELAY_MS to time. Defaults model the H200 own-kernel run of issue 22 (14 pool
processes, ~0.27 s of CPU per kernel, ~11 ms a unit). Runs interleaved (off, on, off, on, ...), each on
a fresh agent home (a cold compile cache), and prints per run the wall time, the GPU worker's waits
(phase wall minus units x delay) and the pool's lookahead figures.

    python3 remote_agent/tools/lookahead_bench.py [--rounds 2] [--compile-ms 270] [--delay-ms 11]
        [--switch MOETUNE_PRECOMPILE_LPT] [--spread]

--switch names another 0/1 switch to compare off and on the same way (MOETUNE_PRECOMPILE_LPT: the pool's
longest-first order); --spread spreads the compile cost over configs as space.compile_cost ranks them
(MOETUNE_SYNTHETIC_COMPILE_SPREAD=1; --compile-ms is then a 64x64x64 tile's cost).

SIMULATED: the figures are the scheduler's and the strategy's, not a GPU's.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)


def run_once(lookahead, a):
    home = tempfile.mkdtemp(prefix="moetune-lookahead-")
    spec = {"E": 128, "N": 768, "K": 2048, "topk": 8, "framework": "sglang", "backend": "synthetic",
            "ops": a.ops, "strategy": "fast"}
    sp = os.path.join(home, "spec.json")
    with open(sp, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    env = dict(os.environ, MOETUNE_HOME=home, MOETUNE_SYNTHETIC_COMPILE_MS=str(a.compile_ms),
               MOETUNE_SYNTHETIC_DELAY_MS=str(a.delay_ms), MOETUNE_PRECOMPILE_WORKERS=str(a.workers),
               PYTHONPATH=AGENT_ROOT)
    env[a.switch] = "1" if lookahead else "0"
    if a.spread:
        env["MOETUNE_SYNTHETIC_COMPILE_SPREAD"] = "1"
    t0 = time.time()
    p = subprocess.run([sys.executable, "-m", "moetune_agent", "tune", sp, "--foreground"], env=env,
                       capture_output=True, text=True, timeout=900, check=False)
    wall = time.time() - t0
    events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    res = [e for e in events if e.get("type") == "result_written" and e.get("kind") == "result"]
    if p.returncode != 0 or not res:
        raise SystemExit("run failed (rc %d): %s" % (p.returncode, p.stderr[-2000:]))
    with open(res[0]["path"], encoding="utf-8") as f:
        result = json.load(f)
    units = sum(1 for e in events if e.get("type") in ("measurement", "failure"))
    pc = result["timings"].get("precompile") or {}
    print("  waits per phase [units, s]: %s" % pc.get("waits"))
    return {"lookahead": lookahead, "wall_s": round(wall, 2), "units": units,
            "busy_s": round(units * a.delay_ms / 1000.0, 2), "precompile": pc,
            "phases": result["timings"].get("phases")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--compile-ms", type=float, default=270.0)
    ap.add_argument("--delay-ms", type=float, default=11.0)
    ap.add_argument("--workers", type=int, default=14)
    ap.add_argument("--ops", default="up")
    ap.add_argument("--switch", default="MOETUNE_PRECOMPILE_LOOKAHEAD", help="the 0/1 switch compared")
    ap.add_argument("--spread", action="store_true", help="compile cost spread over configs (compile_cost)")
    a = ap.parse_args()
    rows = []
    for r in range(a.rounds):
        for la in (False, True):
            row = run_once(la, a)
            rows.append(row)
            pc = row["precompile"]
            fmt = ("round %d " + a.switch + " %-3s wall %6.2f s | units %d (%.1f s of timing) | compiles %s, of "
                   "them lookahead %s (measured later: %s) | waited for compiles %s s | SIMULATED")
            print(fmt % (r + 1, "on" if la else "off", row["wall_s"], row["units"], row["busy_s"], pc.get("submitted"),
                         pc.get("lookahead"), pc.get("lookahead_used"), pc.get("wait_s")), flush=True)
    for la in (False, True):
        w = sorted(x["wall_s"] for x in rows if x["lookahead"] == la)
        print((a.switch + " %s: median wall %.2f s over %d runs (SIMULATED)") % ("on" if la else "off", w[len(w) // 2],
                                                                              len(w)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
