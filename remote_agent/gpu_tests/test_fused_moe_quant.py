# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Correctness of moetune's Triton kernel for the quantised dtypes (kernels/fused_moe_quant.py) on a real
GPU, and a short tune per dtype through the triton backend (skipped without CUDA + triton).

Run from the repository root:
    PYTHONUNBUFFERED=1 python3 -m unittest discover -s remote_agent/gpu_tests -p 'test_fused_moe_quant.py' -v
MOETUNE_GPU_OUT=<folder> also writes the tune results there (one JSON per dtype).

Every check draws fresh random inputs and routing, poisons the outputs with NaN first (an unwritten element
fails), and compares with a float32 torch reference on the dequantised weights by ||out - ref|| / ||ref||.
"""

import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(HERE, "..")
sys.path.insert(0, AGENT)
sys.path.insert(0, os.path.join(HERE, "..", "..", "kernels"))

try:
    import torch
    import triton  # noqa: F401  # pylint: disable=unused-import
    HAVE_GPU = torch.cuda.is_available()
except ImportError:  # pragma: no cover - CPU-only machines
    HAVE_GPU = False

from moetune_agent.kernel_types import CandidateError, KernelConfig, Shape  # noqa: E402

if HAVE_GPU:
    import fused_moe_quant as fq  # noqa: E402
    from moetune_agent.backends.triton_backend import TritonBackend  # noqa: E402

# K=640 with BLOCK_SIZE_K 256 takes the masked-K path (int4: masked group-scale loads too).
SHAPES = [
    ("fp8_channel", Shape(E=16, N=256, K=512, topk=4, dtype="fp8_w8a8", per_channel_quant=True)),
    ("int8_w8a8_channel", Shape(E=16, N=256, K=512, topk=4, dtype="int8_w8a8", per_channel_quant=True)),
    ("int8_w8a16", Shape(E=16, N=256, K=640, topk=4, dtype="int8_w8a16")),
    ("int4_g128", Shape(E=16, N=256, K=640, topk=4, dtype="int4_w4a16", block_shape=(0, 128))),
    ("int4_g32", Shape(E=8, N=128, K=512, topk=2, dtype="int4_w4a16", block_shape=(0, 32))),
]
CONFIGS = [
    KernelConfig(16, 32, 64, 1, 4, 3),
    KernelConfig(32, 64, 128, 16, 4, 2),
    KernelConfig(64, 128, 256, 1, 8, 3),
    KernelConfig(128, 64, 64, 32, 4, 4),
]
BATCHES = [1, 7, 64, 300]


@unittest.skipUnless(HAVE_GPU, "needs a CUDA GPU with torch and triton")
class QuantKernel(unittest.TestCase):
    def test_int4_packing_round_trip_and_nibble_order(self):
        w = torch.tensor([[[1.0, -1.0, 0.5, 7 / 8, 0.0, -0.25, 0.125, -1.0]]], device="cuda")  # E=1, R=1, C=8
        q, s = fq.quantize_int4_group(w, 8, torch.float32)
        self.assertEqual(tuple(q.shape), (1, 1, 4))
        self.assertAlmostEqual(float(s[0, 0, 0]), 1.0 / 7.0, places=6)
        # q = round(w / s) + 8: 1.0 -> 15, -1.0 -> 1; the even column is the low nibble
        self.assertEqual(int(q[0, 0, 0]), 15 | (1 << 4))
        back = fq.dequantize_int4_group(q, s, 8)
        self.assertLessEqual(float((back - w).abs().max()), float(s.max()) / 2 + 1e-6)
        big = torch.randn(3, 64, 256, device="cuda")
        q, s = fq.quantize_int4_group(big, 64)
        err = (fq.dequantize_int4_group(q, s, 64) - big).abs()
        self.assertTrue(bool((err <= s.float().repeat_interleave(64, dim=2) * 0.5 + 1e-3).all()))

    def test_matches_reference(self):
        for (name, shape), op in itertools.product(SHAPES, ("both", "up", "down")):
            self.assertTrue(fq.handles(shape.dtype, shape.block_shape, shape.per_channel_quant), name)
            be = TritonBackend(shape, 0, seed=3)
            for cfg, m in itertools.product(CONFIGS, BATCHES):
                if op != "both" and m not in (7, 300):
                    continue
                with self.subTest(shape=name, op=op, cfg=cfg.key(), m=m):
                    try:
                        err = be.check(op, cfg, m)
                    except CandidateError as e:
                        if e.kind == "resources":
                            continue
                        raise
                    self.assertLessEqual(err, fq.TOLERANCE[shape.dtype])
            be.close()

    def test_a_wrong_scale_is_a_mismatch(self):
        # The check must be able to fail: the same call against a reference with one expert's scales doubled.
        for name, shape in SHAPES:
            with self.subTest(shape=name):
                w = fq.MoEWeights.random(shape.E, shape.N, shape.K, shape.dtype, shape.block_shape, "cuda", 5)
                moe = fq.FusedMoE(w, 64, shape.topk, KernelConfig(16, 64, 64, 1, 4, 3).as_dict())
                moe.x.normal_()
                moe.logits.normal_()
                moe.poison()
                moe()
                torch.cuda.synchronize()
                ref = fq.reference(moe.x, w, moe.topk_w, moe.topk_ids)
                self.assertLess(fq.rel_error(moe.out, ref), fq.TOLERANCE[shape.dtype])
                w1, w2 = w.dequantized()
                w._deq = (w1 * 2.0, w2)
                self.assertGreater(fq.rel_error(moe.out, fq.reference(moe.x, w, moe.topk_w, moe.topk_ids)), 0.3)

    def test_backend_picks_the_kernel_module(self):
        import fused_moe
        for shape, mod in ((Shape(E=8, N=128, K=256, topk=2, dtype="fp8_w8a8"), fused_moe),
                           (Shape(E=8, N=128, K=256, topk=2, dtype="fp8_w8a8", block_shape=(128, 128)), fused_moe),
                           (Shape(E=8, N=128, K=256, topk=2, dtype="bf16"), fused_moe),
                           (Shape(E=8, N=128, K=256, topk=2, dtype="fp8_w8a8", per_channel_quant=True), fq)):
            with self.subTest(shape=shape):
                be = TritonBackend(shape, 0)
                be.weights()
                self.assertIs(be._fm, mod)  # pylint: disable=protected-access

    def test_backend_measures_graph_timed(self):
        for name, shape in SHAPES[:4]:
            with self.subTest(shape=name):
                be = TritonBackend(shape, 0)
                self.assertIs(be.weights().__class__, fq.MoEWeights)
                be.precompile("both", KernelConfig(64, 128, 128, 1, 4, 3))
                t = be.measure("both", KernelConfig(64, 128, 128, 1, 4, 3), 256, replays=5)
                self.assertEqual(len(t.samples_us), 5)
                self.assertTrue(all(0 < s < 10000 for s in t.samples_us))
                be.close()


@unittest.skipUnless(HAVE_GPU, "needs a CUDA GPU with torch and triton")
class Int4ZeroPoints(unittest.TestCase):
    """int4_w4a16 with zero points (GPTQ/AWQ asymmetric, issue 22): packing, then the kernel against the
    float32 torch reference on the dequantised weights; a reference that ignores the zero points must
    fail (the check can fail)."""

    def test_zero_point_packing(self):
        # one group of 8 in 2 rows: row 0 spans [-1, 2] -> s = 3/15, zero = 5; row 1 spans [0, 1.5]
        w = torch.tensor([[[-1.0, 2.0, 0.0, 1.0, -0.2, 0.4, 1.6, -1.0],
                           [0.0, 1.5, 0.3, 0.6, 0.9, 1.2, 0.1, 0.0]]], device="cuda")
        q, s, z = fq.quantize_int4_group_zp(w, 8, torch.float32)
        self.assertEqual(tuple(q.shape), (1, 2, 4))
        self.assertEqual(tuple(z.shape), (1, 1, 1))
        self.assertAlmostEqual(float(s[0, 0, 0]), 3.0 / 15.0, places=6)
        self.assertEqual(int(z[0, 0, 0]) & 0xF, 5)        # row 0 (even): low nibble
        self.assertEqual(int(z[0, 0, 0]) >> 4, 0)         # row 1: its minimum is 0
        self.assertEqual(int(q[0, 0, 0]) & 0xF, 0)        # -1.0 / 0.2 + 5 = 0
        self.assertEqual(int(q[0, 0, 0]) >> 4, 15)        # 2.0 / 0.2 + 5 = 15
        back = fq.dequantize_int4_group(q, s, 8, z)
        self.assertLessEqual(float((back - w).abs().max()), float(s.max()) / 2 + 1e-6)
        big = torch.randn(3, 64, 256, device="cuda") + 0.7
        q, s, z = fq.quantize_int4_group_zp(big, 64)
        err = (fq.dequantize_int4_group(q, s, 64, z) - big).abs()
        # bf16 scales: the grid can end a hair short of the group maximum, which then clamps to 15
        self.assertTrue(bool((err <= s.float().repeat_interleave(64, dim=2) * 0.6 + 1e-3).all()))
        sym_q, sym_s = fq.quantize_int4_group(big, 64)   # asymmetric is the finer grid for offset groups
        sym_err = (fq.dequantize_int4_group(sym_q, sym_s, 64) - big).abs().mean()
        self.assertLess(float(err.mean()), float(sym_err))

    def test_kernel_matches_reference_with_zero_points(self):
        for shape in (Shape(E=16, N=256, K=640, topk=4, dtype="int4_w4a16", block_shape=(0, 128)),
                      Shape(E=8, N=128, K=512, topk=2, dtype="int4_w4a16", block_shape=(0, 32))):
            w = fq.MoEWeights.random(shape.E, shape.N, shape.K, shape.dtype, shape.block_shape, "cuda", 7,
                                     zero_points=True)
            self.assertTrue(w.has_zp)
            for cfg, m in itertools.product(CONFIGS, BATCHES):
                with self.subTest(shape=shape, cfg=cfg.key(), m=m):
                    try:
                        moe = fq.FusedMoE(w, m, shape.topk, cfg.as_dict())
                    except ValueError:
                        continue
                    moe.x.normal_()
                    moe.logits.normal_()
                    moe.poison()
                    try:
                        moe()
                    except Exception as e:  # noqa: BLE001 - a tile that does not fit this GPU's shared memory
                        if "OutOfResources" in type(e).__name__ or "out of resource" in str(e):
                            continue
                        raise
                    torch.cuda.synchronize()
                    err = fq.rel_error(moe.out, fq.reference(moe.x, w, moe.topk_w, moe.topk_ids))
                    self.assertLessEqual(err, fq.TOLERANCE["int4_w4a16"])
                    if m == 64:  # the same output against a reference that drops the zero points
                        saved = w._deq  # pylint: disable=protected-access
                        w._deq = (fq.dequantize_int4_group(w.w1, w.w1_scale, w.group),  # pylint: disable=protected-access
                                  fq.dequantize_int4_group(w.w2, w.w2_scale, w.group))
                        bad = fq.rel_error(moe.out, fq.reference(moe.x, w, moe.topk_w, moe.topk_ids))
                        w._deq = saved  # pylint: disable=protected-access
                        self.assertGreater(bad, 5 * fq.TOLERANCE["int4_w4a16"])

    def test_symmetric_path_unchanged(self):
        shape = Shape(E=8, N=128, K=512, topk=2, dtype="int4_w4a16", block_shape=(0, 32))
        w = fq.MoEWeights.random(shape.E, shape.N, shape.K, shape.dtype, shape.block_shape, "cuda", 7)
        self.assertFalse(w.has_zp)
        moe = fq.FusedMoE(w, 64, shape.topk, KernelConfig(16, 64, 64, 1, 4, 3).as_dict())
        moe.x.normal_()
        moe.logits.normal_()
        moe.poison()
        moe()
        torch.cuda.synchronize()
        self.assertLessEqual(fq.rel_error(moe.out, fq.reference(moe.x, w, moe.topk_w, moe.topk_ids)),
                             fq.TOLERANCE["int4_w4a16"])


@unittest.skipUnless(HAVE_GPU, "needs a CUDA GPU with torch and triton")
class QuantTune(unittest.TestCase):
    """A short tune per dtype through the agent's CLI and the triton backend: the run finishes, every
    winner passed its correctness check, and the files carry each server's name for the dtype."""

    SPACE = {"BLOCK_SIZE_N": [64, 128], "BLOCK_SIZE_K": [128], "GROUP_SIZE_M": [1], "num_warps": [4],
             "num_stages": [3]}
    CASES = [
        ("fp8_channel", {"dtype": "fp8_w8a8", "per_channel_quant": True},
         "E=64,N=512,device_name=%s,dtype=fp8_w8a8,per_channel_quant=True.json",
         "E=64,N=512,device_name=%s,dtype=fp8_w8a8.json"),
        ("int8_w8a8", {"dtype": "int8_w8a8", "per_channel_quant": True},
         "E=64,N=512,device_name=%s,dtype=int8_w8a8,per_channel_quant=True.json",
         "E=64,N=512,device_name=%s.json"),
        ("int8_w8a16", {"dtype": "int8_w8a16"},
         "E=64,N=512,device_name=%s,dtype=int8_w8a16.json", "E=64,N=512,device_name=%s,dtype=int8_w8a16.json"),
        ("int4_w4a16", {"dtype": "int4_w4a16", "block_shape": [0, 128]},
         "E=64,N=256,device_name=%s,dtype=int4_w4a16.json", "E=64,N=512,device_name=%s,dtype=int4_w4a16.json"),
    ]

    def test_short_tune_per_dtype(self):
        out_dir = os.environ.get("MOETUNE_GPU_OUT")
        dev = torch.cuda.get_device_name(0).replace(" ", "_")
        for name, extra, sg_name, vl_name in self.CASES:
            with self.subTest(dtype=name):
                home = tempfile.mkdtemp(prefix="moetune-gpu-")
                spec = dict({"framework": "sglang", "E": 64, "N": 512, "K": 1024, "topk": 8,
                             "batch_sizes": [1, 64, 512], "backend": "triton", "strategy": "exhaustive",
                             "space": self.SPACE}, **extra)
                path = os.path.join(home, "spec.json")
                with open(path, "w") as f:
                    json.dump(spec, f)
                t0 = time.time()
                p = subprocess.run([sys.executable, "-m", "moetune_agent", "--home", home, "tune", path,
                                    "--foreground"], cwd=AGENT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   timeout=300, env=dict(os.environ, PYTHONPATH=AGENT))
                wall = time.time() - t0
                events = [json.loads(line) for line in p.stdout.decode().splitlines()]
                done = [e for e in events if e["type"] == "done"]
                self.assertEqual(done[-1]["status"], "ok", p.stderr.decode()[-3000:])
                started = [e for e in events if e["type"] == "run_started"][0]
                run_dir = started["run_dir"]
                with open(os.path.join(run_dir, "result.json")) as f:
                    res = json.load(f)
                self.assertFalse(res["simulated"])
                self.assertEqual(sorted(w["m"] for w in res["winners"]), [1, 64, 512])
                names = {f["framework"]: f["file_name"] for f in res["files"]}
                self.assertEqual(names, {"sglang": sg_name % dev, "vllm": vl_name % dev})
                with open(os.path.join(run_dir, "journal.jsonl")) as f:
                    checks = [r for r in (json.loads(line) for line in f) if r["op"].startswith("check:")]
                self.assertTrue(checks and all(r["type"] == "measurement" for r in checks), checks)
                summary = {"dtype": name, "wall_s": round(wall, 1), "units": res["timings"]["units_measured"],
                           "failed": res["timings"]["units_failed"], "per_batch": res["per_batch"],
                           "winners": res["winners"], "files": names,
                           "check_errors": [r["samples_us"][0] for r in checks]}
                print(json.dumps(summary))
                if out_dir:
                    with open(os.path.join(out_dir, "tune_%s.json" % name), "w") as f:
                        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    unittest.main()
