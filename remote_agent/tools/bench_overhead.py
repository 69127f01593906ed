# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""How much of a GPU's time the agent's own bookkeeping costs: a foreground run on the synthetic
backend whose every measurement sleeps D ms (a stand-in for GPU time; 20 ms is what timing one config
at B=1 costs on an H200, docs/servers.md section 7). Prints GPU busy fraction = (units x D) / wall time of the
measuring phases, and the overhead per unit. The journal fsync, events and IPC are all included.

    python3 remote_agent/tools/bench_overhead.py [--delay-ms 20] [--units 300] [--gpus 1]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--units", type=int, default=300)
    ap.add_argument("--gpus", type=int, default=1)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="moetune-bench-")
    try:
        # BLOCK_SIZE_N x K x warps x stages x GROUP_SIZE_M restricted to reach about the asked unit count.
        spec = {"framework": "sglang", "E": 64, "N": 512, "K": 1024, "topk": 4, "backend": "synthetic",
                "strategy": "exhaustive", "batch_sizes": [4096], "gpus": list(range(a.gpus)),
                "space": {"BLOCK_SIZE_M": [64, 128], "prune_m": False}}
        sp = os.path.join(tmp, "spec.json")
        with open(sp, "w") as f:
            json.dump(spec, f)
        env = dict(os.environ, MOETUNE_HOME=os.path.join(tmp, "home"), PYTHONPATH=AGENT_ROOT,
                   MOETUNE_SYNTHETIC_DELAY_MS=str(a.delay_ms))
        p = subprocess.run([sys.executable, "-m", "moetune_agent", "tune", sp, "--foreground"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=AGENT_ROOT)
        ev = [json.loads(l) for l in p.stdout.decode().splitlines()]
        phases = [e for e in ev if e["type"] == "phase" and e["name"] != "default"]
        meas = [e for e in ev if e["type"] in ("measurement", "candidate_error") and e["round"] >= 0]
        ok = [e for e in meas if e["type"] == "measurement"]
        t0 = phases[0]["ts"]
        t1 = max(e["ts"] for e in meas)
        wall = t1 - t0
        busy = len(ok) * a.delay_ms / 1000.0 / a.gpus
        print("units=%d (timed %d, failed fast %d) gpus=%d delay=%.1fms" % (len(meas), len(ok), len(meas) - len(ok),
                                                                       a.gpus, a.delay_ms))
        print("measuring wall=%.2fs ideal=%.2fs busy_fraction=%.3f overhead_per_unit=%.2fms"
              % (wall, busy, busy / wall, (wall - busy) * 1000.0 * a.gpus / max(1, len(meas))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
