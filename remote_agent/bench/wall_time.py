# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""One fast run's wall time and timeline on a GPU host (issue 13's figure): `tune` of Qwen3-30B-A3B at
TP1 (E=128, N=768, K=2048, top-k 8, bf16), fast strategy, the 18 default batch sizes, measured from
starting `tune --foreground` to the result files, with the run's timeline (start-up, first measurement,
every phase, head-to-head, result) written to OUT as the events arrive, so a run cut short still leaves
what it reached.

    python3 remote_agent/bench/wall_time.py --out DIR [--ops up|up+down] [--backend triton] [--limit-s 170]

Prints one line per phase and the figures at the end; DIR gets timeline_<ops>.json, events_<ops>.jsonl
and result_<ops>.json.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
QWEN = {"framework": "sglang", "E": 128, "N": 768, "K": 2048, "topk": 8, "strategy": "fast"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--ops", default="up")
    ap.add_argument("--backend", default="triton")
    ap.add_argument("--limit-s", type=float, default=170.0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tag = a.ops.replace("+", "_")
    home = os.path.join("/tmp", "moetune-wall-time-home")
    shutil.rmtree(home, ignore_errors=True)
    spec = dict(QWEN, ops=a.ops, backend=a.backend)
    sp = os.path.join(a.out, "spec_%s.json" % tag)
    with open(sp, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    env = dict(os.environ, MOETUNE_HOME=home, PYTHONPATH=AGENT_ROOT, PYTHONUNBUFFERED="1")
    timeline = {"spec": spec, "marks": {}, "phases": [], "status": None, "wall_s": None}
    tl_path = os.path.join(a.out, "timeline_%s.json" % tag)

    def save():
        with open(tl_path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(timeline, f, indent=1)
        os.replace(tl_path + ".tmp", tl_path)

    t0 = time.time()
    p = subprocess.Popen([sys.executable, "-m", "moetune_agent", "tune", sp, "--foreground", "--new"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=AGENT_ROOT)
    killer = threading.Timer(a.limit_s, p.kill)
    killer.start()
    err_chunks = []
    threading.Thread(target=lambda: err_chunks.append(p.stderr.read()), daemon=True).start()
    result_path = None
    with open(os.path.join(a.out, "events_%s.jsonl" % tag), "w", encoding="utf-8") as evf:
        for line in p.stdout:
            now = round(time.time() - t0, 3)
            evf.write(line.decode("utf-8", "replace"))
            e = json.loads(line)
            t = e["type"]
            if t in ("hello", "run_started", "measurement", "done"):
                timeline["marks"].setdefault(t, now)
            if t == "phase":
                timeline["phases"].append({"name": e["name"], "units": e["units"], "at_s": now})
                print("%7.2f s  phase %-13s %4d units" % (now, e["name"], e["units"]), flush=True)
                save()
            elif t == "result_written":
                timeline["marks"].setdefault("result_written", now)
                if e["kind"] == "result":
                    result_path = e["path"]
            elif t == "error":
                timeline.setdefault("errors", []).append(e.get("message"))
            elif t == "done":
                timeline["status"] = e.get("status")
                timeline["run_wall_s"] = e.get("wall_s")
    p.wait()
    killer.cancel()
    timeline["wall_s"] = round(time.time() - t0, 3)
    timeline["rc"] = p.returncode
    timeline["killed_at_limit"] = p.returncode == -9
    if result_path and os.path.exists(result_path):
        shutil.copy(result_path, os.path.join(a.out, "result_%s.json" % tag))
        with open(result_path, encoding="utf-8") as f:
            res = json.load(f)
        timeline["timings"] = res.get("timings")
        rows = res.get("head_to_head") or []
        timeline["speedups"] = {r["m"]: r.get("speedup") for r in rows}
        timeline["kept_default"] = sum(1 for r in rows if r.get("chosen_default"))
    timeline["stderr_tail"] = b"".join(err_chunks).decode("utf-8", "replace")[-3000:]
    save()
    m = timeline["marks"]
    print("ops %s backend %s: status %s rc %s, wall %.2f s (tune started -> done); hello %.2f, run_started %.2f, "
          "first measurement %.2f, result files %.2f" % (a.ops, a.backend, timeline["status"], p.returncode,
                                                          timeline["wall_s"], m.get("hello", -1),
                                                          m.get("run_started", -1), m.get("measurement", -1),
                                                          m.get("result_written", -1)))
    print("timings:", json.dumps(timeline.get("timings")))
    print("speedups:", json.dumps(timeline.get("speedups")))
    return 0 if timeline["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
