# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Winners -> files: the shared BLOCK_SIZE_M repair, exact names per ops/dialect, file contents."""

import os
import shutil
import tempfile
import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)
from moetune_agent.kernel_types import KernelConfig as K
from moetune_agent.serverconfig import configjson
from moetune_agent.serverconfig.naming import file_names
from moetune_agent.tunerun.results import latest_score, share_block_m, write_files
from moetune_agent.work import Measurement, Unit


def meas(op, cfg, m, us, rnd=0):
    return Measurement(Unit(op, cfg, m, 10, rnd), [us])


A16, A32 = K(16, 64, 64, 1, 4, 2), K(32, 64, 64, 1, 4, 2)


class ShareBlockM(unittest.TestCase):
    ROWS = [
        # (up16, up32, down16, down32, expected shared BM)
        (10.0, 9.0, 5.0, 7.0, 16),   # 15 < 16
        (10.0, 8.0, 5.0, 6.0, 32),   # 14 < 15
    ]

    def test_repair(self):
        for u16, u32, d16, d32, bm in self.ROWS:
            with self.subTest(bm=bm):
                ms = [meas("up", A16, 8, u16), meas("up", A32, 8, u32), meas("down", A16, 8, d16),
                      meas("down", A32, 8, d32)]
                w, fixed = share_block_m({("up", 8): A32, ("down", 8): A16}, ms, [8])
                self.assertEqual(fixed, [8])
                self.assertEqual(w[("up", 8)].BLOCK_SIZE_M, bm)
                self.assertEqual(w[("down", 8)].BLOCK_SIZE_M, bm)

    def test_agreeing_winners_untouched(self):
        _w, fixed = share_block_m({("up", 8): A16, ("down", 8): A16}, [], [8])
        self.assertEqual(fixed, [])

    def test_latest_round_counts(self):
        ms = [meas("up", A16, 8, 5.0, 0), meas("up", A16, 8, 9.0, 1), meas("up", A16, 8, 11.0, 1)]
        self.assertEqual(latest_score(ms, "up", 8, A16), 10.0)   # the cheap round-0 look is replaced


class Files(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def spec(self, **kw):
        s = {"E": 257, "N": 256, "dtype": "fp8_w8a8", "block_shape": [128, 128], "per_channel_quant": False,
             "ops": "up+down"}
        s.update(kw)
        return s

    def test_names(self):
        n = file_names(self.spec(), "NVIDIA_H200")
        self.assertEqual(n["sglang"], "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json")
        self.assertEqual(n["sglang_down"],
                         "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128]_down.json")
        self.assertEqual(n["vllm"], "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json")
        self.assertNotIn("sglang_down", file_names(self.spec(ops="up"), "X"))
        self.assertEqual(file_names(self.spec(dtype=None, block_shape=None, ops="up"), "X")["sglang"],
                         "E=257,N=256,device_name=X.json")

    def test_contents(self):
        winners = {("up", 1): A16, ("up", 64): A32, ("down", 1): A16, ("down", 64): K(32, 128, 64, 1, 8, 3)}
        files = {f["kind"]: f for f in write_files(self.tmp, self.spec(), "NVIDIA_H200", winners, "3.6.0")}
        self.assertEqual(set(files), {"sglang", "sglang_down", "vllm"})
        with open(files["sglang_down"]["path"]) as f:
            text = f.read()
        self.assertEqual(text, configjson.format_config_text({1: A16, 64: K(32, 128, 64, 1, 8, 3)}, "sglang"))
        with open(files["vllm"]["path"]) as f:
            entries, tv = configjson.parse_config_text(f.read())
        self.assertEqual(tv, "3.6.0")
        self.assertEqual(entries[64], A32.as_dict())   # vLLM gets the up winners
        self.assertEqual(sorted(os.listdir(os.path.join(self.tmp, "sglang"))),
                         sorted([files["sglang"]["file_name"], files["sglang_down"]["file_name"]]))


if __name__ == "__main__":
    unittest.main()
