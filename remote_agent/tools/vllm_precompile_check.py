# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Does the CPU precompile of vLLM's fused_experts (issue 22) compile the very kernels the GPU worker
then runs? On a GPU host with a vLLM tree on PYTHONPATH:

    PYTHONPATH=.upstream/vllm_head python3 remote_agent/tools/vllm_precompile_check.py

Three processes, as a tune runs them: (1) the GPU worker reports what to compile for; (2) a precompile
worker that sees no GPU compiles 3 configs x 3 batch sizes (1: vLLM's naive small-batch path; 64, 1024:
the aligned path) into a fresh TRITON_CACHE_DIR; (3) a GPU worker measures the same 9 units through
vLLM's whole fused_experts. Prints the fused_moe_kernel entries in the cache after (2) and the new ones
(3) had to compile: 0 new means every precompiled kernel was a cache hit. Exit 1 otherwise.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.dirname(HERE)
CONFIGS = ((16, 64, 128, 1, 4, 3), (64, 128, 64, 16, 8, 4), (32, 64, 128, 1, 4, 2))
SIZES = (1, 64, 1024)

STEP = r'''
import json, os, sys
sys.path.insert(0, %(agent)r)
step = sys.argv[1]
if step == "precompile":
    from moetune_agent.backends.cpu_compile import hide_gpus
    hide_gpus()
from moetune_agent.backends.server_backend import ServerBackend
from moetune_agent.kernel_types import KernelConfig, Shape
shape = Shape(128, 768, 2048, 8, "bf16")
cache = sys.argv[2]
cfgs = [KernelConfig(*c) for c in %(configs)r]
out = {}
if step == "info":
    b = ServerBackend(shape, 0, cache, framework="vllm")
    out = b.cpu_compile_info()
    out["can_cpu_precompile"] = b.can_cpu_precompile()
elif step == "precompile":
    b = ServerBackend(shape, 0, cache, framework="vllm", cpu_compile=json.loads(sys.argv[3]))
    fails = []
    for c in cfgs:
        for m in %(sizes)r:
            try:
                b.precompile("both", c, m)
            except Exception as e:
                fails.append("%%s m=%%d: %%s: %%s" %% (c.key(), m, type(e).__name__, str(e)[:200]))
    out = {"failed": fails}
else:
    b = ServerBackend(shape, 0, cache, framework="vllm")
    res = []
    for c in cfgs:
        for m in %(sizes)r:
            try:
                t = b.measure("both", c, m, 3)
                res.append([c.key(), m, min(t.samples_us)])
            except Exception as e:
                res.append([c.key(), m, "%%s: %%s" %% (type(e).__name__, str(e)[:200])])
    out = {"measured": res}
print("RESULT " + json.dumps(out))
'''


def kernels_in(cache):
    """Cache entries (folders) holding a compiled fused_moe_kernel."""
    n = set()
    for dp, _dn, fns in os.walk(cache):
        if any(f.startswith("fused_moe_kernel") and f.endswith(".json") for f in fns):
            n.add(dp)
    return n


def step(name, cache, *extra, gpu=True):
    env = dict(os.environ, TRITON_CACHE_DIR=cache, MOETUNE_COMPILE_CACHE="0")
    if not gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    code = STEP % {"agent": AGENT, "configs": CONFIGS, "sizes": SIZES}
    p = subprocess.run([sys.executable, "-c", code, name, cache] + list(extra), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=400)
    for line in p.stdout.decode().splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit("%s failed (rc %d): %s" % (name, p.returncode, p.stderr.decode()[-3000:]))


def main():
    cache = tempfile.mkdtemp(prefix="moetune-vllm-pc-")
    info = step("info", cache)
    print("GPU worker: %s, can_cpu_precompile=%s" % ({k: info[k] for k in ("capability", "device_name")},
                                                    info["can_cpu_precompile"]), flush=True)
    base = kernels_in(cache)
    pc = step("precompile", cache, json.dumps(info), gpu=False)
    after_pc = kernels_in(cache)
    print("precompile: %d of %d units failed%s; fused_moe_kernel entries %d -> %d" % (
        len(pc["failed"]), len(CONFIGS) * len(SIZES), (": " + "; ".join(pc["failed"][:3])) if pc["failed"] else "",
        len(base), len(after_pc)), flush=True)
    ms = step("measure", cache)
    after = kernels_in(cache)
    new = after - after_pc
    bad = [r for r in ms["measured"] if isinstance(r[2], str)]
    print("GPU measure: %d units, %d failed%s; new fused_moe_kernel entries compiled on the GPU: %d" % (
        len(ms["measured"]), len(bad), (": " + "; ".join("%s m=%d %s" % tuple(b) for b in bad[:3])) if bad else "",
        len(new)), flush=True)
    ok = not pc["failed"] and not bad and not new and len(after_pc) > len(base)
    print("VLLM_PRECOMPILE %s" % ("OK: every kernel the GPU ran was precompiled" if ok else "NOT OK"), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
