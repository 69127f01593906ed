# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The server backend against one installed SGLang / vLLM tree, on a real GPU. Prints one JSON object.

    PYTHONPATH=<tree> python3 remote_agent/gpu_tests/server_tree_check.py --framework sglang [--tune]

Run by test_server_backend.py once per tree of ../shared/upstream (each tree needs its own process:
its modules are imported once per interpreter). Checks, in order:
  1. import: the API generation detected from the installed signatures;
  2. forward calls of the server's kernel against the float32 torch reference (fresh inputs, poisoned
     outputs): the whole call, and for SGLang each GEMM alone and the down GEMM with TMA;
  3. the default: what the server runs with no new file (its shipped file or its heuristic);
  4. CPU precompile: a process that sees no GPU compiles the server's GEMM into the shared Triton cache
     and the GPU process then compiles nothing for it (no CUDA context, no launch, same binary);
  5. --tune: a short `tune --foreground` through `backend: auto` (the CLI, real worker processes).
"""

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
sys.path.insert(0, AGENT_ROOT)

from moetune_agent.kernel_types import CandidateError, KernelConfig, Shape  # noqa: E402

QWEN = dict(E=128, N=768, K=2048, topk=8)


def cache_files(d):
    n = 0
    for _root, _dirs, files in os.walk(d):
        n += len(files)
    return n


def cache_entries(d):
    """{entry folder: its kernel metadata (the JSON Triton writes beside the binary)}"""
    out = {}
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        sub = os.path.join(d, name)
        for f in os.listdir(sub):
            if f.endswith(".json") and not f.startswith("__grp__"):
                try:
                    with open(os.path.join(sub, f)) as fh:
                        meta = json.load(fh)
                    out[name] = {k: v for k, v in meta.items() if k not in ("tensordesc_meta",)}
                except Exception:
                    out[name] = None
    return out


def _cpu_child(framework, cache_dir, info, op, cfg, m, q, backend="server"):
    """A precompile worker: no GPU visible, compile only."""
    try:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        os.environ["TRITON_CACHE_DIR"] = cache_dir
        from moetune_agent.backends.server_backend import ServerBackend
        from moetune_agent.backends.triton_backend import TritonBackend

        t0 = time.time()
        if backend == "server":
            b = ServerBackend(Shape(**QWEN), 0, cache_dir, framework=framework, cpu_compile=info)
            b.precompile(op, cfg, m)
        else:
            b = TritonBackend(Shape(**QWEN), 0, cache_dir, framework=framework, cpu_compile=info)
            b.precompile(op, cfg)
        import torch

        q.put({"ok": True, "s": round(time.time() - t0, 3), "cuda_initialized": bool(torch.cuda.is_initialized())})
    except CandidateError as e:
        q.put({"ok": False, "kind": e.kind, "error": e.message})
    except Exception as e:  # noqa: BLE001
        q.put({"ok": False, "kind": "exception", "error": "%s: %s" % (type(e).__name__, e),
               "tb": traceback.format_exc()[-1500:]})


def agent(args, env, timeout):
    p = subprocess.run([sys.executable, "-m", "moetune_agent"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, timeout=timeout, cwd=AGENT_ROOT)
    events = []
    for line in p.stdout.decode().splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    return p.returncode, events, p.stderr.decode("utf-8", "replace")


def short_tune(framework, ops, out_dir, sizes=(1, 64), space=None):
    home = tempfile.mkdtemp(prefix="moetune-gputest-", dir=out_dir)
    spec = {"framework": framework, "backend": "auto", "ops": ops, "strategy": "fast", "batch_sizes": list(sizes),
            "space": space if space is not None else {"BLOCK_SIZE_N": [64, 128], "GROUP_SIZE_M": [1, 16],
                                                      "num_stages": [3, 4]}}
    spec.update(QWEN)
    sp = os.path.join(home, "spec.json")
    with open(sp, "w") as f:
        json.dump(spec, f)
    env = dict(os.environ, MOETUNE_HOME=os.path.join(home, "home"))
    env["PYTHONPATH"] = AGENT_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.time()
    rc, ev, err = agent(["tune", sp, "--foreground", "--new"], env, 560)
    wall = time.time() - t0
    started = [e for e in ev if e["type"] == "run_started"]
    done = ev[-1] if ev else {}
    res = None
    results = [e for e in ev if e["type"] == "result_written" and e["kind"] == "result"]
    if results:
        with open(results[0]["path"]) as f:
            res = json.load(f)
    return {"rc": rc, "wall_s": round(wall, 2), "status": done.get("status"),
            "errors": [e for e in ev if e["type"] == "error"],
            "warnings": [e["message"] for e in ev if e["type"] == "log" and e.get("level") == "warning"][:10],
            "backend": started[0]["backend"] if started else None,
            "default_source": started[0].get("default_source") if started else None,
            "server": started[0].get("server") if started else None,
            "head_to_head": [{k: h[k] for k in ("m", "decision", "rounds", "speedup", "median_us",
                                               "default_median_us", "chosen_default")}
                             for h in (res or {}).get("head_to_head", [])],
            "precompile": (res or {}).get("timings", {}).get("precompile"),
            "units": (res or {}).get("timings", {}).get("units_measured"),
            "failed_units": (res or {}).get("timings", {}).get("units_failed"),
            "stderr_tail": err[-1500:] if rc else ""}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framework", required=True)
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    out = {"framework": a.framework, "steps": {}}
    tmp = tempfile.mkdtemp(prefix="moetune-tree-")
    cache_dir = os.path.join(tmp, "triton_cache")
    os.makedirs(cache_dir)
    os.environ["TRITON_CACHE_DIR"] = cache_dir

    def step(name, fn):
        t0 = time.time()
        try:
            out["steps"][name] = {"ok": True, "result": fn()}
        except Exception as e:  # noqa: BLE001 - every step reports, the next still runs
            out["steps"][name] = {"ok": False, "error": "%s: %s" % (type(e).__name__, e),
                                  "tb": traceback.format_exc()[-2000:]}
        out["steps"][name]["s"] = round(time.time() - t0, 2)

    from moetune_agent.backends import server_api
    from moetune_agent.backends.server_backend import ServerBackend

    step("import", lambda: server_api.detect(a.framework).describe())
    b = ServerBackend(Shape(**QWEN), 0, cache_dir, framework=a.framework)

    def forward():
        res = {}
        api = b.api()
        cfg = KernelConfig(32, 64, 128, 1, 4, 3)
        for m in (1, 64, 512):
            res["both|%d|default" % m] = b.check("both", b.default_config("both", m), m)
            res["both|%d|%s" % (m, cfg.key())] = b.check("both", cfg, m)
            if api.supports_separate:
                res["up|%d" % m] = b.check("up", cfg, m)
                res["down|%d" % m] = b.check("down", cfg, m)
                if api.supports_tma:
                    res["down_tma|%d" % m] = b.check("down", KernelConfig(32, 64, 128, 1, 4, 3, USE_TMA=True), m)
        t = b.measure("both", b.default_config("both", 64), 64, 5)
        res["measure_both_64_median_us"] = t.median_us
        return res

    step("forward", forward)
    step("default", lambda: {"source": b.default_source(),
                             "configs": {"%s|%d" % (op, m): b.default_config(op, m).as_dict()
                                         for op in (("both", "up", "down") if a.framework == "sglang" else ("both",))
                                         for m in (1, 64, 4096)}})

    def precompile():
        info = b.cpu_compile_info()
        cfg = KernelConfig(16, 128, 64, 16, 8, 4)   # not compiled by any step before
        ctx = multiprocessing.get_context("spawn")
        q = ctx.Queue()
        res = {"supported": b.can_cpu_precompile(), "info": info}
        from moetune_agent.backends.triton_backend import TritonBackend

        tb = TritonBackend(Shape(**QWEN), 0, cache_dir, framework=a.framework)
        tb.warm_aux()  # the small kernels around the GEMMs compile on the GPU in any case
        for kind, op, m in (("server", "up", 64), ("server", "down", 256), ("triton", "both", 64)):
            if kind == "server" and not b.can_cpu_precompile():
                continue
            e0 = cache_entries(cache_dir)
            before = cache_files(cache_dir)
            p = ctx.Process(target=_cpu_child, args=(a.framework, cache_dir, info, op, cfg, m, q, kind))
            p.start()
            child = q.get(timeout=300)
            p.join(60)
            mid = cache_files(cache_dir)
            e1 = cache_entries(cache_dir)
            t = (b if kind == "server" else tb).measure(op, cfg, m, 3)
            after = cache_files(cache_dir)
            e2 = cache_entries(cache_dir)
            res["%s|%s|%d" % (kind, op, m)] = {
                "child": child, "files_by_cpu_compile": mid - before, "files_by_gpu_measure": after - mid,
                "median_us": t.median_us,
                "cpu_entries": {k: v for k, v in e1.items() if k not in e0},
                "gpu_entries": {k: v for k, v in e2.items() if k not in e1}}
        tb.close()
        return res

    step("cpu_precompile", precompile)

    def routing():
        import random as _r
        import torch

        rng = _r.Random(7)
        hot = list(range(16))  # a skewed recorded load: most tokens go to 16 of the 128 experts
        rows = [rng.sample(hot, 6) + rng.sample(range(16, 128), 2) for _ in range(300)]
        path = os.path.join(tmp, "routing.json")
        with open(path, "w") as f:
            json.dump(rows, f)
        rb = ServerBackend(Shape(**QWEN), 0, cache_dir, framework=a.framework, routing_file=path)
        rb._ensure()
        g = torch.Generator(device=rb.dev).manual_seed(1)
        lg = rb._logits_for(64, 3, g)
        got = torch.topk(torch.softmax(lg, -1), 8, dim=-1).indices.sort(dim=-1).values.tolist()
        start = (3 * 64 * 7919) % len(rows)
        want = [sorted(rows[(start + i) % len(rows)]) for i in range(64)]
        err = rb.check("both", rb.default_config("both", 64), 64)
        t = rb.measure("both", rb.default_config("both", 64), 64, 5)
        rb.close()
        return {"replayed_exactly": got == want, "check_err": err, "median_us": t.median_us,
                "info": rb.routing_info()}

    step("routing", routing)
    b.close()
    if a.tune:
        step("tune_up", lambda: short_tune(a.framework, "up", tmp))
        if a.framework == "sglang":
            step("tune_up_down", lambda: short_tune(a.framework, "up+down", tmp))
    text = json.dumps(out, indent=1, default=str)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
