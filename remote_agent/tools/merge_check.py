# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU check of the row merge (issue 20, item 3): a short real tune through the pyz with the server
backend (SGLang's own kernel, its shipped file as the default), then install-config --dry-run into a copy
of SGLang's shipped configs folder holding that file. Prints what the merge decided per row with the
measured gains, checks the rules, writes merge_check.json to $OUT (or --out).

    PYTHONPATH=<checkout>/.upstream/sglang_head python3 remote_agent/tools/merge_check.py

Without a GPU: --backend synthetic (the labelled test double: every number SIMULATED) makes the shipped
file the synthetic server's default (MOETUNE_SYNTHETIC_DEFAULT_FILE) and installs into a copy marked as
a test fixture's tree, the one place simulated results are accepted.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
SHAPE = {"E": 128, "N": 768, "K": 2048, "topk": 8}
NAME = "E=128,N=768,device_name=NVIDIA_H200.json"


def sglang_configs():
    """SGLang's shipped configs folder, from the sglang on PYTHONPATH (no import: its package needs torch)."""
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        for sub in ("moe_runner/triton_utils", "fused_moe_triton"):
            p = os.path.join(entry, "sglang", "srt", "layers", "moe", sub, "configs")
            if os.path.isdir(p):
                return p
    return None


def agent(cmd, args, env, timeout):
    p = subprocess.run(cmd + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout)
    events = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
    return p.returncode, events, p.stderr.decode("utf-8", "replace")


def check_rows(merge, shipped, sizes):
    """The merge's rules, as failures (sentences)."""
    bad = []
    rows = {r["m"]: r for r in merge["rows"]}
    for m in shipped:
        if m not in rows:
            bad.append("row %d of the shipped file is not listed" % m)
        elif m not in sizes and rows[m]["decision"] != "kept_unmeasured":
            bad.append("row %d was never measured but is %s" % (m, rows[m]["decision"]))
    for m, r in rows.items():
        if r["decision"] in ("replaced", "added") and not (r.get("gain") or 0) > 1.0 and \
                r.get("h2h_decision") != "default_failed":
            bad.append("row %d is %s without a measured gain (%s)" % (m, r["decision"], r.get("gain")))
        if r["decision"] == "replaced" and m not in sizes:
            bad.append("row %d replaced without a measurement" % m)
    if not merge.get("measured_default"):
        bad.append("the run's default was not recognised as the shipped file (%s)" % merge.get("note"))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,64,512,768,2048", help="768 is no key of the shipped file")
    ap.add_argument("--backend", default="server", choices=("server", "synthetic"))
    ap.add_argument("--agent", default=None, help="a moetune-agent.pyz (default: built from this checkout)")
    ap.add_argument("--budget", type=float, default=60.0, help="the tune's search budget, s (the head-to-head follows)")
    ap.add_argument("--out", default=os.environ.get("OUT") or None)
    a = ap.parse_args()
    t_start = time.time()
    out = a.out or tempfile.mkdtemp(prefix="moetune-merge-check-")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="merge-check-")
    configs = sglang_configs()
    if configs is None:
        print("no sglang on PYTHONPATH (%s): set PYTHONPATH to shared/upstream/sglang_head" % os.environ.get(
            "PYTHONPATH"))
        return 2
    pyz = a.agent
    if pyz is None:
        pyz = os.path.join(work, "moetune-agent.pyz")
        subprocess.run([sys.executable, os.path.join(AGENT_ROOT, "build_pyz.py"), "--src", AGENT_ROOT, "--kernels",
                        os.path.join(os.path.dirname(AGENT_ROOT), "kernels"), "--out", pyz], check=True)
    cmd = [sys.executable, pyz]
    env = dict(os.environ, MOETUNE_HOME=os.path.join(work, "home"))
    sizes = [int(x) for x in a.sizes.split(",")]
    spec = dict(SHAPE, framework="sglang", backend=a.backend, ops="up", strategy="fast", batch_sizes=sizes,
                time_budget_s=a.budget)

    # The copy of the shipped folder the dry run goes into (the folder of the Triton the run reports).
    copy_root = os.path.join(work, "configs copy")
    shutil.copytree(configs, copy_root)
    if a.backend == "synthetic":
        spec["device_name"] = "NVIDIA_H200"
        folder = os.path.join(copy_root, "triton_3_6_0")
        env["MOETUNE_SYNTHETIC_DEFAULT_FILE"] = os.path.join(folder, NAME)
        # TEST DOUBLE: simulated numbers install only into a tree marked as a test fixture's.
        sys.path.insert(0, AGENT_ROOT)
        from moetune_agent.install import installer as install  # pylint: disable=import-outside-toplevel
        with open(os.path.join(copy_root, install.TEST_DOUBLE_MARKER), "wb") as f:
            f.write(install.TEST_DOUBLE_TEXT)
    sp = os.path.join(work, "spec.json")
    with open(sp, "w") as f:
        json.dump(spec, f)
    t0 = time.time()
    try:
        rc, ev, err = agent(cmd, ["tune", sp, "--foreground"], env, 170)
    except subprocess.TimeoutExpired:
        with open(os.path.join(out, "merge_check.json"), "w") as f:
            json.dump({"ok": False, "failures": ["the tune ran past 170 s"], "sizes": sizes}, f)
        print("FAILED: the tune ran past 170 s (try fewer --sizes or a smaller --budget)")
        return 1
    tune_s = time.time() - t0
    done = ev[-1] if ev else {}
    started = next((e for e in ev if e["type"] == "run_started"), {})
    print("tune: rc=%d status=%s %.1fs backend=%s device=%s triton=%s%s" % (
        rc, done.get("status"), tune_s, started.get("backend"), started.get("device_name"),
        started.get("triton_version"), " SIMULATED (synthetic backend: no number below was measured)"
        if started.get("backend") == "synthetic" else ""))
    res_path = [e["path"] for e in ev if e["type"] == "result_written" and e["kind"] == "result"]
    if rc != 0 or not res_path:
        print(err[-3000:])
        for e in ev:
            if e["type"] == "error":
                print("error:", e["code"], e["message"][:800])
        return 1
    with open(res_path[0]) as f:
        res = json.load(f)
    ds = res.get("default_source") or {}
    print("default: %s %s sha256=%s" % (ds.get("kind"), ds.get("path"), (ds.get("sha256") or "")[:16]))
    tv = res.get("triton_version") or "3.6.0"
    folder = os.path.join(copy_root, "triton_" + "_".join(tv.split("+")[0].split(".")[:3]))
    target = os.path.join(folder, NAME)
    if not os.path.isfile(target):
        print("the shipped folder has no %s for Triton %s (%s)" % (NAME, tv, folder))
        return 1
    with open(target, "rb") as f:
        shipped_bytes = f.read()
    shipped = {int(k): v for k, v in json.loads(shipped_bytes).items()}
    print("target copy: %s (sha256 %s, %d rows)" % (target, hashlib.sha256(shipped_bytes).hexdigest()[:16],
                                                    len(shipped)))
    rc, ev, err = agent(cmd, ["install-config", res["run_id"], "--framework", "sglang", "--root", folder,
                              "--dry-run", "--replace"], env, 60)
    diffs = [e for e in ev if e["type"] == "diff"]
    if rc != 0 or not diffs:
        print("install-config --dry-run failed: rc=%d %s %s" % (rc, err[-2000:], json.dumps(ev)[-2000:]))
        return 1
    merge = diffs[0]["merge"]
    print("merge: %s, measured default %s: %s" % (merge["mode"], merge["measured_default"], merge["note"]))
    for r in merge["rows"]:
        print("  m=%5d %-16s gain=%s default=%s tuned=%s rounds=%s %s" % (
            r["m"], r["decision"], "%.3f" % r["gain"] if r.get("gain") else "-",
            "%.2fus" % r["default_us"] if r.get("default_us") else "-",
            "%.2fus" % r["tuned_us"] if r.get("tuned_us") else "-", r.get("rounds") or "-", r.get("note") or ""))
    with open(target, "rb") as f:
        untouched = f.read() == shipped_bytes
    bad = check_rows(merge, shipped, sizes)
    if not untouched:
        bad.append("the dry run changed the target")
    wall = time.time() - t_start
    summary = {"ok": not bad, "failures": bad, "wall_s": round(wall, 1), "tune_s": round(tune_s, 1),
               "backend": res.get("backend"), "simulated": res.get("simulated"), "device_name": res.get("device_name"),
               "triton_version": tv, "default_source": ds, "target": target, "sizes": sizes,
               "changed": diffs[0]["changed"], "merge": merge,
               "per_batch": res.get("per_batch")}
    with open(os.path.join(out, "merge_check.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("%s in %.1fs (tune %.1fs)%s" % ("OK" if not bad else "FAILED", wall, tune_s,
                                          "" if not bad else ": " + "; ".join(bad)))
    print("summary: %s" % os.path.join(out, "merge_check.json"))
    shutil.rmtree(work, ignore_errors=True)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
