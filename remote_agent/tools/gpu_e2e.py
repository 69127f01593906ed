# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""End-to-end check of the agent on a real GPU host: probe, a detached `tune` on the Triton backend,
attach until done, then install-config --dry-run into a scratch root. Prints what it measured.

    python3 remote_agent/tools/gpu_e2e.py [--sizes 1,64,1024|all] [--ops up|up+down] [--strategy fast]
        [--backend triton|server|auto] [--dtype fp8_w8a8 --block-shape 128,128] [--agent PYZ] [--out DIR]

--sizes all leaves batch_sizes out of the spec (the agent's 18). --agent runs that moetune-agent.pyz, as a
user's host does, instead of the source tree.
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


AGENT_CMD = [sys.executable, "-m", "moetune_agent"]


def agent(args, env, timeout=None):
    p = subprocess.run(AGENT_CMD + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, timeout=timeout, cwd=AGENT_ROOT)
    events = [json.loads(l) for l in p.stdout.decode().splitlines()]
    return p.returncode, events, p.stderr.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,64,1024")
    ap.add_argument("--ops", default="up")
    ap.add_argument("--strategy", default="fast")
    ap.add_argument("--backend", default="triton")
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--block-shape", default=None)
    ap.add_argument("--shape", default="128,768,2048,8", help="E,N,K,topk")
    ap.add_argument("--agent", default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.agent:
        AGENT_CMD[:] = [sys.executable, os.path.abspath(a.agent)]
    out = a.out or tempfile.mkdtemp(prefix="moetune-e2e-")
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, MOETUNE_HOME=os.path.join(out, "home"))
    if not a.agent:  # the source tree first; a PYTHONPATH given (a server's tree) stays after it
        env["PYTHONPATH"] = os.pathsep.join(p for p in (AGENT_ROOT, os.environ.get("PYTHONPATH")) if p)
    rc, ev, err = agent(["probe"], env, 120)
    probe = [e for e in ev if e["type"] == "probe"][0]
    print("probe: gpus=%s python=%s torch=%s triton=%s" % ([g["name"] for g in probe["gpus"]], probe["python"]["version"],
                                                          probe["python"]["torch"], probe["python"]["triton"]))
    with open(os.path.join(out, "probe.json"), "w") as f:
        json.dump(probe, f, indent=1)
    E, N, K, topk = (int(x) for x in a.shape.split(","))
    spec = {"framework": "sglang", "E": E, "N": N, "K": K, "topk": topk, "backend": a.backend, "ops": a.ops,
            "strategy": a.strategy}
    if a.sizes != "all":
        spec["batch_sizes"] = [int(x) for x in a.sizes.split(",")]
    if a.dtype:
        spec["dtype"] = a.dtype
    if a.block_shape:
        spec["block_shape"] = [int(x) for x in a.block_shape.split(",")]
    sp = os.path.join(out, "spec.json")
    with open(sp, "w") as f:
        json.dump(spec, f)
    t0 = time.time()
    rc, ev, err = agent(["tune", sp], env, 120)
    print("tune: rc=%d returned after %.1fs: %s" % (rc, time.time() - t0, [e["type"] for e in ev]))
    if rc != 0:
        print(err[-3000:])
        print(json.dumps(ev)[-3000:])
        return 1
    run_id = [e for e in ev if e["type"] == "run_started"][0]["run_id"]
    rc, ev, err = agent(["attach", run_id], env)
    wall = time.time() - t0
    with open(os.path.join(out, "events.jsonl"), "w") as f:
        for e in ev:
            f.write(json.dumps(e) + "\n")
    done = ev[-1]
    meas = [e for e in ev if e["type"] == "measurement"]
    errs = [e for e in ev if e["type"] == "candidate_error"]
    print("attach: rc=%d done=%s wall=%.1fs measurements=%d candidate_errors=%d kinds=%s" % (
        rc, done.get("status"), wall, len(meas), len(errs), sorted({e["kind"] for e in errs})))
    for e in ev:
        if e["type"] == "error":
            print("error:", e["code"], e["message"][:500])
    res_path = [e["path"] for e in ev if e["type"] == "result_written" and e["kind"] == "result"]
    if not res_path:
        print(err[-2000:])
        return 1
    with open(res_path[0]) as f:
        res = json.load(f)
    print("device=%s triton=%s simulated=%s strategy=%s" % (res["device_name"], res["triton_version"], res["simulated"],
                                                            res["strategy"]))
    print("backend=%s default source=%s" % (res["backend"], json.dumps(res.get("default"))[:300]))
    for p in res["per_batch"]:
        print("  m=%5d best=%9.2fus default=%9.2fus speedup=%.3f roofline_frac=%s decision=%s rounds=%s" % (
            p["m"], p["best_us"] or 0, p["default_us"] or 0, p["speedup"] or 0,
            "%.2f" % p["roofline_fraction"] if p.get("roofline_fraction") else None, p.get("decision"),
            p.get("rounds")))
    slower = [p["m"] for p in res["per_batch"] if (p["speedup"] or 0) < 1.0]
    print("sizes where the chosen config is slower than the default: %s" % (slower or "none"))
    print("timings: %s" % json.dumps(res.get("timings"))[:800])
    for f_ in res["files"]:
        print("  file:", f_["framework"], f_["file_name"])
    root = os.path.join(out, "scratch configs")
    rc, ev, err = agent(["install-config", run_id, "--framework", "sglang", "--root", root], env, 120)
    print("install-config: rc=%d %s" % (rc, [(e["type"], e.get("target") or e.get("message")) for e in ev[1:]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
