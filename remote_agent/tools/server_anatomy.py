# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the server backend's seconds go (issue 22), with one server tree on PYTHONPATH:

    PYTHONPATH=<tree> python3 remote_agent/tools/server_anatomy.py classes --framework sglang [--json OUT]
        CPU precompile (no GPU visible, as a pool process) of a few configs at the 18 sizes, one process:
        which sizes compiled a new kernel, against server_backend.specialisation_class (the pool's
        precompile keys). "merged" = the class put sizes together that compiled apart (the GPU worker
        would compile those: must be 0); "split" = sizes of two classes that shared a kernel (wasted
        pool tasks only).
    PYTHONPATH=<tree> python3 remote_agent/tools/server_anatomy.py imports --framework sglang
        the server's import on top of torch (python -X importtime), summed per top-level package.
    PYTHONPATH=<tree> python3 remote_agent/tools/server_anatomy.py anatomy --framework sglang --ops both
        on the GPU: one measurement's steps through the server's call path, timed one at a time (make,
        eager calls, verify, capture of 2 and of 10 calls, the graph's instantiation, replays), and the
        backend's whole measure() for a screening and a head-to-head unit, beside the same steps of
        moetune's own kernel.

Needs torch and Triton (and a GPU for `anatomy`). Prints its figures; --json keeps them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

SIZES = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)
H200 = {"capability": 90, "device_name": "NVIDIA H200", "smem": 232448, "sm_count": 132}
CONFIGS = ("m16n64k128g1w4s3", "m32n128k64g16w4s3", "m64n128k64g8w4s4", "m128n256k64g8w8s4")


def _shape():
    from moetune_agent.kernel_types import Shape

    return Shape(128, 768, 2048, 8, "bf16")


def cmd_classes(a) -> dict:
    from moetune_agent.backends.cpu_compile import hide_gpus

    hide_gpus()
    from moetune_agent.backends import cpu_compile as cpu_mod
    from moetune_agent.backends.server_backend import ServerBackend, specialisation_class
    from moetune_agent.kernel_types import KernelConfig

    cache = a.cache or tempfile.mkdtemp(prefix="moetune-classes-")
    shape = _shape()
    b = ServerBackend(shape, 0, cache, framework=a.framework, cpu_compile=H200)
    t = time.time()
    api = b.api()
    print("server import (CPU compile mode) %.2f s: %s" % (time.time() - t, api.describe()))
    import importlib

    mods = [api.invoke_gemm.__module__] if api.invoke_gemm is not None else []
    if api.extras.get("precompile_gemm") is not None:
        mods.append(api.extras["precompile_gemm"].__module__)
    fns = []
    for mod in mods:
        fns += cpu_mod.jit_functions_of(importlib.import_module(mod))
    out = {"framework": a.framework, "api": api.describe(), "rows": [], "merged": 0, "split": 0}
    for op in a.ops.split(","):
        for key in CONFIGS:
            cfg = KernelConfig.from_key(key)
            seen_cls = {}
            row = {"op": op, "config": key, "sizes": []}
            for m in SIZES:
                before = len(cpu_mod.compiled_kernels(fns))
                t0 = time.perf_counter()
                err = None
                try:
                    b.precompile(op, cfg, m)
                except Exception as e:  # noqa: BLE001 - reported
                    err = "%s: %s" % (type(e).__name__, str(e)[:120])
                dt = time.perf_counter() - t0
                new = len(cpu_mod.compiled_kernels(fns)) - before
                cls = specialisation_class(a.framework, shape, op, cfg, m)
                first_of_class = cls not in seen_cls
                seen_cls.setdefault(cls, m)
                if new and not first_of_class:
                    out["merged"] += 1
                if not new and first_of_class and err is None:
                    out["split"] += 1
                row["sizes"].append({"m": m, "new_kernels": new, "s": round(dt, 3), "class": list(cls or ()),
                                     "first_of_class": first_of_class, "error": err})
            out["rows"].append(row)
            comp = [(s["m"], s["new_kernels"]) for s in row["sizes"] if s["new_kernels"]]
            print("%-5s %-20s compiled at %s; classes %d; %.1f s" % (
                op, key, comp, len(seen_cls), sum(s["s"] for s in row["sizes"])))
            errs = [s for s in row["sizes"] if s["error"]]
            if errs:
                print("      errors: %s" % errs[:2])
    print("CLASSES %s: merged %d (must be 0), split %d" % (a.framework, out["merged"], out["split"]))
    return out


def cmd_imports(a) -> dict:
    code = ("import torch, sys; sys.path.insert(0, %r); from moetune_agent.backends import server_api; "
            "server_api.detect(%r)" % (os.path.dirname(HERE), a.framework))
    t = time.time()
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", code], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    wall = time.time() - t
    per_pkg = {}
    rows = []
    torch_done = False
    for line in p.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line.split("|")
        try:
            selfus, cumus, name = int(parts[0].split(":")[1]), int(parts[1]), parts[2]
        except (IndexError, ValueError):
            continue
        mod = name.strip()
        if mod == "torch" and not torch_done and len(name) - len(name.lstrip()) <= 1:
            # everything listed so far was torch's own import: only what the server adds counts
            torch_done = True
            per_pkg, rows = {}, [("torch (cumulative)", cumus)]
            continue
        top = mod.split(".")[0]
        per_pkg[top] = per_pkg.get(top, 0) + selfus
        rows.append((mod, cumus))
    tops = sorted(per_pkg.items(), key=lambda kv: -kv[1])[:15]
    print("imports %s: wall %.2f s (rc %d)" % (a.framework, wall, p.returncode))
    for k, v in tops:
        print("    %-28s self %7.2f s" % (k, v / 1e6))
    big = sorted([r for r in rows if not r[0].startswith("torch")], key=lambda r: -r[1])[:15]
    for k, v in big:
        print("    cum %-60s %7.2f s" % (k[:60], v / 1e6))
    if p.returncode:
        print(p.stderr[-1500:])
    return {"wall_s": round(wall, 2), "per_package_self_s": {k: v / 1e6 for k, v in tops},
            "largest_cumulative_s": {k: v / 1e6 for k, v in big}}


def _anatomy_of(be, op, m, cfgs, torch, graph_calls):
    def clock():
        torch.cuda.synchronize()
        return time.perf_counter()

    steps = {}
    x, logits, inter = be._inputs(m)
    w = be.weights()
    for c in cfgs:
        t0 = clock()
        moe = be._make(w, m, c, None)
        moe.x.copy_(x)
        moe.poison()
        moe.inter2.copy_(inter)
        moe.logits.copy_(logits[0])
        t1 = clock()
        be._step(moe, op)
        t2 = clock()
        be._verify(op, m, moe, be._reference(op, m, moe))  # before a second call (SGLang's both is in place)
        t3 = clock()
        be._step(moe, op)
        t4 = clock()
        stream = torch.cuda.Stream(be.dev)
        res = {}
        for calls in (2, graph_calls):
            stream.wait_stream(torch.cuda.current_stream())
            g = torch.cuda.CUDAGraph()
            ta = clock()
            with torch.cuda.stream(stream):
                g.capture_begin()
                for _ in range(calls):
                    be._step(moe, op)
                tb = time.perf_counter()
                g.capture_end()
            tc = clock()
            torch.cuda.current_stream().wait_stream(stream)
            st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            td = clock()
            for i in range(3):
                moe.logits.copy_(logits[(i + 1) % len(logits)])
                st.record()
                g.replay()
                en.record()
                en.synchronize()
            te = clock()
            g.reset()
            res[calls] = (tb - ta, tc - tb, (te - td) / 3)
            del g
        torch.cuda.empty_cache()
        for name, v in (("make+prep", t1 - t0), ("eager call 1", t2 - t1), ("verify", t3 - t2),
                        ("eager call 2", t4 - t3),
                        ("capture 2 calls: python", res[2][0]), ("capture 2 calls: instantiate", res[2][1]),
                        ("replay of 2 calls", res[2][2]),
                        ("capture %d calls: python" % graph_calls, res[graph_calls][0]),
                        ("capture %d calls: instantiate" % graph_calls, res[graph_calls][1]),
                        ("replay of %d calls" % graph_calls, res[graph_calls][2])):
            steps.setdefault(name, []).append(1000.0 * v)
    for c in cfgs:
        for reps, name in ((1, "measure() screening (1 replay)"), (10, "measure() 10 replays")):
            t0 = time.perf_counter()
            be.measure(op, c, m, reps)
            steps.setdefault(name, []).append(1000.0 * (time.perf_counter() - t0))
    return {k: round(statistics.median(v), 3) for k, v in steps.items()}


def cmd_anatomy(a) -> dict:
    from moetune_agent.backends.server_backend import ServerBackend
    from moetune_agent.backends.triton_backend import TritonBackend
    from moetune_agent.kernel_types import KernelConfig
    from moetune_agent.work import GRAPH_CALLS

    cache = a.cache or tempfile.mkdtemp(prefix="moetune-anatomy-")
    shape = _shape()
    out = {}
    cfgs = [KernelConfig.from_key(k) for k in CONFIGS[:3]]
    for name, cls in (("server", ServerBackend), ("own", TritonBackend)):
        t = time.time()
        be = cls(shape, 0, cache, framework=a.framework, bandwidth_probe="torch")
        be._ensure()
        if name == "server":
            be.api()
        torch = be._torch
        be.weights()
        torch.cuda.synchronize()
        print("%s: set-up %.2f s" % (name, time.time() - t))
        for op in a.ops.split(","):
            if name == "own" and op not in ("up", "both"):
                continue
            for m in (1, 64, 1024):
                # first pass compiles (the pool's work, not timed here); the second is what a unit costs
                _anatomy_of(be, op, m, cfgs, torch, GRAPH_CALLS)
                row = _anatomy_of(be, op, m, cfgs, torch, GRAPH_CALLS)
                out["%s|%s|%d" % (name, op, m)] = row
                print("%s op %s m=%d:" % (name, op, m))
                for k, v in row.items():
                    print("    %-34s %8.2f ms" % (k, v))
        be.close()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("classes", "imports", "anatomy"))
    ap.add_argument("--framework", default="sglang", choices=("sglang", "vllm"))
    ap.add_argument("--ops", default=None, help="default: up,both (sglang), both (vllm)")
    ap.add_argument("--cache", default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if a.ops is None:
        a.ops = "up,both" if a.framework == "sglang" else "both"
    res = {"classes": cmd_classes, "imports": cmd_imports, "anatomy": cmd_anatomy}[a.what](a)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=1)
    if a.what == "classes":
        return 1 if res["merged"] else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
