# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The synthetic backend: deterministic, simulated, a landscape with structure, deterministic failures.
(It is itself the labelled test double for a GPU.)"""

import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)
from moetune_agent import space
from moetune_agent.backends.synthetic import SIM_DEVICE, SyntheticBackend
from moetune_agent.kernel_types import CandidateError, KernelConfig, Shape

QWEN = Shape(128, 768, 2048, 8)


class Synthetic(unittest.TestCase):
    def setUp(self):
        self.b = SyntheticBackend(QWEN, delay_s=0)

    def test_labelled_simulated(self):
        self.assertTrue(self.b.simulated)
        self.assertEqual(self.b.device_name(), SIM_DEVICE)
        self.assertEqual(SyntheticBackend(QWEN, device_name="X", delay_s=0).device_name(), "X")

    def test_deterministic(self):
        c = KernelConfig(16, 64, 128, 1, 4, 3)
        a = SyntheticBackend(QWEN, delay_s=0).measure("both", c, 16).samples_us
        b = SyntheticBackend(QWEN, delay_s=0).measure("both", c, 16).samples_us
        self.assertEqual(a, b)
        self.assertEqual(len(a), 10)
        self.assertGreater(max(a), min(a))  # pseudo-noise exists

    def test_landscape(self):
        good = []
        for m in (1, 64, 1024, 4096):
            with self.subTest(m=m):
                ts = []
                for c in space.build_space(QWEN, [m], ["both"])[("both", m)]:
                    try:
                        ts.append((self.b.measure("both", c, m).median_us, c))
                    except CandidateError:
                        pass
                ts.sort(key=lambda t: t[0])
                self.assertGreater(ts[-1][0] / ts[0][0], 1.1)   # configs matter
                dft = self.b.measure("both", self.b.default_config("both", m), m).median_us
                self.assertGreaterEqual(dft, ts[0][0])
                self.assertGreater(ts[0][0], self.b.roofline_us("both", m))  # never below the floor
                good.append(ts[0][1])
        # Large batches prefer larger BLOCK_SIZE_M than decode sizes.
        self.assertGreater(good[-1].BLOCK_SIZE_M, good[0].BLOCK_SIZE_M)

    def test_failures(self):
        with self.assertRaises(CandidateError) as cm:
            self.b.measure("up", KernelConfig(256, 256, 256, 1, 4, 5), 64)
        self.assertEqual(cm.exception.kind, "resources")
        with self.assertRaises(CandidateError) as cm:
            self.b.measure("up", KernelConfig(256, 256, 32, 1, 4, 2), 64)   # 512 accumulators per thread
        self.assertEqual(cm.exception.kind, "resources")
        kinds = set()
        for c in space.reference_configs(True):
            try:
                self.b.precompile("up", c)
            except CandidateError as e:
                kinds.add(e.kind)
        self.assertEqual(kinds, {"resources", "compile"})

    def test_ops(self):
        c = KernelConfig(16, 64, 128, 1, 4, 3)
        up = self.b.measure("up", c, 64).median_us
        down = self.b.measure("down", c, 64).median_us
        both = self.b.measure("both", c, 64).median_us
        self.assertGreater(both, up)
        self.assertGreater(both, down)


if __name__ == "__main__":
    unittest.main()
