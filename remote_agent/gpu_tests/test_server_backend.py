# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The server backend against the real SGLang / vLLM kernel code (../shared/upstream: SGLang main, vLLM
main, and the last vLLM with inplace=), on a real GPU. Skipped without CUDA or without the trees.

    MOETUNE_UPSTREAM=/path/to/shared/upstream PYTHONUNBUFFERED=1 \\
        python3 -m unittest discover -s remote_agent/gpu_tests -p 'test_server*' -v

Each tree runs in its own process (server_tree_check.py with that tree on PYTHONPATH): the import and
API generation, forward calls against the torch reference, the server's own default, CPU precompile
without a CUDA context, and a short tune through `backend: auto`. MOETUNE_GPU_TEST_OUT=DIR keeps each
tree's JSON report there. The trees' CUDA extensions are torch stand-ins (their README): timings through
them are not the servers' own, correctness and the call path are.
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM = os.environ.get("MOETUNE_UPSTREAM")

try:
    import torch
    HAVE_GPU = torch.cuda.is_available()
except ImportError:  # pragma: no cover
    HAVE_GPU = False

TREES = (("sglang_head", "sglang", "sglang-runner"), ("vllm_head", "vllm", "vllm-quant-config"),
         ("vllm_compat", "vllm", "vllm-inplace"))


@unittest.skipUnless(HAVE_GPU and UPSTREAM and os.path.isdir(UPSTREAM or ""),
                     "needs a CUDA GPU and MOETUNE_UPSTREAM=<shared/upstream>")
class ServerTrees(unittest.TestCase):
    reports = {}

    def report(self, tree, framework):
        if tree not in self.reports:
            out_dir = os.environ.get("MOETUNE_GPU_TEST_OUT")
            out = os.path.join(out_dir, "tree_%s.json" % tree) if out_dir else None
            env = dict(os.environ, PYTHONPATH=os.path.join(UPSTREAM, tree))
            cmd = [sys.executable, os.path.join(HERE, "server_tree_check.py"), "--framework", framework, "--tune"]
            if out:
                cmd += ["--out", out]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=900)
            self.assertEqual(p.returncode, 0, p.stderr.decode()[-3000:])
            self.reports[tree] = json.loads(p.stdout.decode())
        return self.reports[tree]

    def check_tree(self, tree, framework, generation):
        r = self.report(tree, framework)
        st = r["steps"]
        for name, s in st.items():
            self.assertTrue(s["ok"], "%s/%s: %s\n%s" % (tree, name, s.get("error"), s.get("tb", "")))
        self.assertEqual(st["import"]["result"]["generation"], generation)
        fwd = st["forward"]["result"]
        for k, err in fwd.items():
            if k.startswith(("both|", "up|", "down|", "down_tma|")):
                self.assertLess(err, 2e-2, k)          # bf16 against the float32 reference
        self.assertGreater(fwd["measure_both_64_median_us"], 0)
        src = st["default"]["result"]["source"]
        # both servers ship an H200 file for E=128, N=768 (SGLang: for this Triton's folder)
        self.assertEqual(src["kind"], "file", src)
        self.assertIn("NVIDIA_H200", src["file_name"])
        rt = st["routing"]["result"]
        self.assertTrue(rt["replayed_exactly"])                      # the router picked the recorded experts
        self.assertEqual(rt["info"]["kind"], "recorded")
        self.assertLess(rt["check_err"], 2e-2)
        pc = st["cpu_precompile"]["result"]
        keys = ["triton|both|64"]
        if framework == "sglang":
            self.assertTrue(pc["supported"])
            keys += ["server|up|64", "server|down|256"]
        for key in keys:
            with self.subTest(precompile=key):
                child = pc[key]["child"]
                self.assertTrue(child["ok"], child)
                self.assertFalse(child["cuda_initialized"])           # no CUDA context in the worker
                self.assertGreater(pc[key]["files_by_cpu_compile"], 0)  # it compiled into the cache
                self.assertEqual(pc[key]["files_by_gpu_measure"], 0, pc[key])  # the GPU then compiled nothing
        for name in ("tune_up", "tune_up_down"):
            if name not in st:
                continue
            t = st[name]["result"]
            self.assertEqual((t["rc"], t["status"]), (0, "ok"), t)
            self.assertEqual(t["backend"], "server")
            self.assertEqual(t["default_source"]["kind"], "file")
            self.assertTrue(t["head_to_head"])
            for h in t["head_to_head"]:
                self.assertGreaterEqual(h["speedup"], 1.0, h)

    def test_sglang_head(self):
        self.check_tree(*TREES[0])

    def test_vllm_head(self):
        self.check_tree(*TREES[1])

    def test_vllm_compat_inplace(self):
        self.check_tree(*TREES[2])


if __name__ == "__main__":
    unittest.main()
