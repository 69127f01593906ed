# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Malformed specs get clear errors naming the key; nothing is started for them."""

import os
import unittest

import agenttest
from moetune_agent import spec as spec_mod

BASE = {"framework": "sglang", "E": 128, "N": 768, "K": 2048, "topk": 8}


class Normalise(unittest.TestCase):
    def test_defaults(self):
        s = spec_mod.normalise(dict(BASE))
        self.assertEqual(s["batch_sizes"], [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048,
                                            3072, 4096])
        self.assertEqual(s["ops"], "up")
        self.assertEqual(s["backend"], "auto")
        self.assertEqual(s["gpus"], "all")
        self.assertIsNone(s["strategy"])
        self.assertIsNone(s["dtype"])
        self.assertEqual(spec_mod.strategy_ops(s), ("both",))
        self.assertEqual(spec_mod.strategy_ops(dict(s, ops="up+down")), ("up", "down"))

    def test_batch_sizes_sorted_unique(self):
        s = spec_mod.normalise(dict(BASE, batch_sizes=[64, 1, 64, 16]))
        self.assertEqual(s["batch_sizes"], [1, 16, 64])

    BAD = [
        # (change, key, words in the message)
        ({"E": -4}, "E", "integer > 0"),
        ({"E": 0}, "E", "integer > 0"),
        ({"E": "128"}, "E", "integer > 0"),
        ({"E": True}, "E", "integer > 0"),
        ({"N": 7.5}, "N", "integer > 0"),
        ({"topk": 200}, "topk", "cannot exceed"),
        ({"framework": "tgi"}, "framework", "sglang"),
        ({"dtype": "fp4"}, "dtype", "must be one of"),
        ({"block_shape": [128]}, "block_shape", "[n, k]"),
        ({"block_shape": [128, 0]}, "block_shape", "[n, k]"),
        ({"ops": "down"}, "ops", "up+down"),
        ({"ops": "up+down", "framework": "vllm"}, "ops", "SGLang-only"),
        ({"batch_sizes": []}, "batch_sizes", "non-empty"),
        ({"batch_sizes": [1, -2]}, "batch_sizes", "> 0"),
        ({"gpus": [0, 0]}, "gpus", "distinct"),
        ({"gpus": "some"}, "gpus", "all"),
        ({"time_budget_s": 0}, "time_budget_s", "> 0"),
        ({"backend": "gpu"}, "backend", "must be one of"),
        ({"space": {"BLOCK_SIZE_M": [16, "32"]}}, "space.BLOCK_SIZE_M", "integers"),
        ({"space": {"BLOCK_M": [16]}}, "space.BLOCK_M", "unknown key"),
        ({"space": {"prune_m": "yes"}}, "space.prune_m", "true or false"),
        ({"space": {"prune_dequant": 0}}, "space.prune_dequant", "true or false"),
        ({"per_channel_quant": 1}, "per_channel_quant", "true or false"),
        ({"bacth_sizes": [1]}, "bacth_sizes", "unknown key"),
        ({"device_name": "NVIDIA/H200"}, "device_name", "cannot contain '/'"),
        ({"device_name": "NVIDIA_H200,dtype=fp8_w8a8"}, "device_name", "cannot contain ','"),
        ({"device_name": "GPU\n0"}, "device_name", "control characters"),
        ({"device_name": "NVIDIA_H200_down"}, "device_name", "_down"),
        ({"time_budget_s": float("nan")}, "time_budget_s", "> 0"),
        ({"time_budget_s": float("inf")}, "time_budget_s", "> 0"),
        ({"space": {"prune_m_factor": float("inf")}}, "space.prune_m_factor", "number > 0"),
        # (backend, dtype) pairs: what cannot be tuned says so, naming the backends that can
        ({"dtype": "int4_w4a16", "block_shape": [128, 128]}, "block_shape", "[0, group]"),
        ({"dtype": "int4_w4a16", "block_shape": [0, 100]}, "block_shape", "group size must be one of"),
        ({"dtype": "int4_w4a16", "block_shape": [0, 256], "N": 640}, "N", "multiple of the quantisation group"),
        ({"dtype": "int4_w4a16", "backend": "server"}, "backend", "server backend cannot tune int4_w4a16 group"),
        ({"dtype": "int8_w8a8", "backend": "triton"}, "backend", "cannot tune int8_w8a8 per-tensor; no GPU backend"),
        ({"dtype": "int8_w8a8", "per_channel_quant": True, "backend": "server"}, "backend",
         "backends that can: triton"),
        ({"dtype": "float32"}, "dtype", "no backend here can tune float32"),
        ({"dtype": "int8_w8a16", "block_shape": [0, 128]}, "dtype", "int8_w8a16 group-quantised"),
        ({"dtype": "fp8_w8a8", "block_shape": [0, 128]}, "block_shape", "applies to int4_w4a16 and int8_w8a16"),
        ({"per_channel_quant": True}, "per_channel_quant", "applies to fp8_w8a8 and int8_w8a8"),
        ({"dtype": "fp8_w8a8", "block_shape": [128, 128], "per_channel_quant": True}, "per_channel_quant",
         "exclude each other"),
        ({"dtype": "int8_w8a16", "block_shape": [128, 128]}, "block_shape", "fp8_w8a8 and int8_w8a8 only"),
    ]

    def test_quantisation_variants_and_auto(self):
        s = spec_mod.normalise(dict(BASE, dtype="int4_w4a16"))
        self.assertEqual((s["block_shape"], s["backend"]), ([0, 128], "triton"))   # only our kernel can
        s = spec_mod.normalise(dict(BASE, dtype="fp8_w8a8", per_channel_quant=True))
        self.assertEqual(s["backend"], "triton")
        s = spec_mod.normalise(dict(BASE, dtype="fp8_w8a8", block_shape=[128, 128]))
        self.assertEqual(s["backend"], "auto")                                     # the server's kernel can too
        s = spec_mod.normalise(dict(BASE, framework="vllm", dtype="int8_w8a8"))
        self.assertEqual((s["per_channel_quant"], s["backend"]), (True, "triton"))
        self.assertEqual(spec_mod.normalise(s), s)                                 # normalising is idempotent
        s = spec_mod.normalise(dict(BASE, dtype="float32", backend="synthetic"))
        self.assertEqual(s["backend"], "synthetic")
        table = {r["variant"]: r["backends"] for r in spec_mod.capability_table()}
        self.assertEqual(table["int4_w4a16:group"], ["triton", "synthetic"])
        self.assertEqual(table["fp8_w8a8:block"], ["server", "triton", "synthetic"])
        self.assertEqual(table["int8_w8a16:group"], ["synthetic"])

    def test_bad(self):
        for change, key, words in self.BAD:
            with self.subTest(change=change):
                with self.assertRaises(spec_mod.SpecError) as cm:
                    spec_mod.normalise(dict(BASE, **change))
                self.assertEqual(cm.exception.key, key)
                self.assertIn(words, str(cm.exception))

    def test_missing_required(self):
        for k in BASE:
            with self.subTest(missing=k):
                d = dict(BASE)
                del d[k]
                with self.assertRaises(spec_mod.SpecError) as cm:
                    spec_mod.normalise(d)
                self.assertEqual(cm.exception.key, k)

    def test_not_an_object(self):
        with self.assertRaises(spec_mod.SpecError):
            spec_mod.normalise([1, 2])


class CommandLine(agenttest.AgentCase):
    # Text json.loads accepts (or dies on) that must fail here, as spec_invalid naming the field.
    RAW = [
        ('{"framework": "sglang", "E": 8, "N": 64, "K": 64, "topk": 2, "time_budget_s": NaN}', "time_budget_s",
         "'time_budget_s' is NaN"),
        ('{"framework": "sglang", "E": 8, "N": 64, "K": 64, "topk": 2, "time_budget_s": -Infinity}',
         "time_budget_s", "'time_budget_s' is -Infinity"),
        ('{"framework": "sglang", "E": 8, "N": 64, "K": 64, "topk": 2, "time_budget_s": 1e999}', "time_budget_s",
         "number of seconds"),
        ('{"framework": "sglang", "E": 8, "N": 64, "K": 64, "topk": 2, "E": 128}', "E", "'E' appears twice"),
        ('{"framework": "sglang", "E": 8, "N": 64, "K": 64, "topk": 2, "space": {"num_warps": [4], '
         '"num_warps": [8]}}', "num_warps", "'num_warps' appears twice"),
        ('{"framework": "sglang", "E": 8, "N": 64, "K": 64, "topk": 2, "space": {"BLOCK_SIZE_M": '
         + "[" * 200000 + "]" * 200000 + "}}", "space", "nests deeper than 8 levels under key 'space'"),
    ]

    def test_raw_json_traps_are_spec_errors_naming_the_field(self):
        for text, key, words in self.RAW:
            with self.subTest(text=text[:90]):
                path = self.write_text(text)
                r = self.run_agent("tune", path, "--foreground")
                self.assertEqual(r.rc, 1, r.lines[-3:])
                e = r.one("error")
                self.assertEqual(e["code"], "spec_invalid", e)
                self.assertEqual(e["detail"], key)
                self.assertIn(words, e["message"])
                self.assertFalse(os.path.isdir(os.path.join(self.home, "runs")), "a run was created")

    def write_text(self, text):
        path = os.path.join(self.tmp, "raw.json")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_bad_spec_is_an_error_event_and_starts_nothing(self):
        path = self.write_spec(dict(BASE, E=-4, backend="synthetic"))
        r = self.run_agent("tune", path)
        self.assertEqual(r.rc, 1)
        err = r.one("error")
        self.assertEqual(err["code"], "spec_invalid")
        self.assertEqual(err["detail"], "E")
        self.assertIn("'E' must be an integer > 0 (got -4)", err["message"])
        self.assertEqual(r.events[-1]["type"], "done")
        self.assertEqual(r.events[-1]["status"], "failed")
        self.assertFalse(os.path.isdir(os.path.join(self.home, "runs")) and os.listdir(os.path.join(self.home, "runs")))

    def test_unreadable_and_not_json(self):
        r = self.run_agent("tune", os.path.join(self.tmp, "missing.json"))
        self.assertEqual(r.one("error")["code"], "spec_invalid")
        self.assertIn("cannot read spec", r.one("error")["message"])
        p = os.path.join(self.tmp, "bad.json")
        with open(p, "w") as f:
            f.write("{\"E\": 12,")
        r = self.run_agent("tune", p)
        self.assertIn("not valid JSON", r.one("error")["message"])

    def test_unknown_strategy(self):
        r = self.run_agent("tune", self.write_spec(dict(BASE, backend="synthetic", strategy="genius")))
        e = r.one("error")
        self.assertEqual(e["detail"], "strategy")
        self.assertIn("exhaustive", e["message"])  # names the known ones

    def test_routing_file(self):
        rows = [("[[0, 1], [2, 3]]", None), ("not json", "cannot read"), ("[]", "non-empty"),
                ("[[0, 1, 2]]", "row 0 must list 2 expert ids"), ("[[0, 9]]", "in [0, 8)")]
        for text, words in rows:
            with self.subTest(text=text):
                path = os.path.join(self.tmp, "routing.json")
                with open(path, "w") as f:
                    f.write(text)
                spec = dict(BASE, E=8, topk=2, backend="synthetic", routing_file=path, batch_sizes=[1],
                            space={"BLOCK_SIZE_N": [64], "BLOCK_SIZE_K": [64], "GROUP_SIZE_M": [1],
                                   "num_warps": [4], "num_stages": [2]})
                r = self.run_agent("tune", self.write_spec(spec), "--foreground", "--new")
                if words is None:
                    self.assertEqual(r.rc, 0, r.lines)
                    # The synthetic backend cannot replay routing: it says so instead of pretending.
                    self.assertTrue(any("recorded routing" in e["message"] for e in r.of("log")))
                else:
                    self.assertEqual(r.one("error")["detail"], "routing_file")
                    self.assertIn(words, r.one("error")["message"])

    def test_usage(self):
        r = self.run_agent("frobnicate")
        self.assertEqual(r.rc, 2)
        self.assertEqual(r.one("error")["code"], "usage")
        r = self.run_agent()
        self.assertEqual(r.rc, 2)
        self.assertEqual(r.events[-1]["type"], "done")


if __name__ == "__main__":
    unittest.main()
