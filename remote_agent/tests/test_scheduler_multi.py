# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 14's scheduler cases on the synthetic backend (the labelled GPU double), with real spawned
worker processes, one per "GPU": a crash on one GPU while the others run, one GPU much slower than the
others (test hook MOETUNE_SYNTHETIC_SLOW_GPU="INDEX:MS"), and uneven batch sizes in a whole run."""

import json
import os
import time
import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)
from agenttest import read_jsonl, small_spec
from moetune_agent import space
from moetune_agent.kernel_types import Shape
from moetune_agent.engine.scheduler import Scheduler
from moetune_agent.work import Unit
from test_runs import RunCase

SHAPE = Shape(64, 512, 1024, 4)
DESC = {"name": "synthetic", "shape": {"E": 64, "N": 512, "K": 1024, "topk": 4, "dtype": None, "block_shape": None,
                                       "per_channel_quant": False}}


def units(n, m=64):
    cfgs = space.build_space(SHAPE, [m], ["both"])[("both", m)][:n]
    return [Unit("both", c, m, 10, 0) for c in cfgs]


class Env(object):
    def __init__(self, **kw):
        self.kw = kw
        self.old = {}

    def __enter__(self):
        for k, v in self.kw.items():
            self.old[k] = os.environ.get(k)
            os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class MultiGpu(unittest.TestCase):
    def run_units(self, us, gpus, **env):
        with Env(**env):
            s = Scheduler(DESC, gpus, None)
            s.start()
        got = []
        t0 = time.time()
        try:
            s.measure(us, got.append, simulated=True)
        finally:
            s.close()
        return got, time.time() - t0, s

    def test_crash_on_one_gpu_while_others_run(self):
        us = units(30)
        victim = us[7]
        got, _wall, s = self.run_units(us, [0, 1, 2], MOETUNE_TEST_CRASH_UNIT=victim.ident(),
                                       MOETUNE_SYNTHETIC_DELAY_MS="20")
        self.assertEqual(sorted(m.unit.ident() for m in got), sorted(u.ident() for u in us))  # each once
        crashed = [m for m in got if m.error_kind == "crash"]
        self.assertEqual([m.unit for m in crashed], [victim])
        self.assertEqual(s.crashes, 1)
        dead_gpu = crashed[0].gpu
        after = got[got.index(crashed[0]) + 1:]
        # the others kept measuring, and the crashed GPU's replacement worker got work again
        self.assertTrue(any(m.gpu != dead_gpu and m.ok for m in after))
        self.assertTrue(any(m.gpu == dead_gpu and m.ok for m in after), [m.gpu for m in after])
        self.assertEqual({m.gpu for m in got}, {0, 1, 2})

    def test_a_much_slower_gpu_gets_less_work(self):
        us = units(40)
        got, wall, _s = self.run_units(us, [0, 1], MOETUNE_SYNTHETIC_DELAY_MS="10",
                                       MOETUNE_SYNTHETIC_SLOW_GPU="1:250")
        self.assertEqual(sorted(m.unit.ident() for m in got), sorted(u.ident() for u in us))
        slow = sum(1 for m in got if m.gpu == 1)
        self.assertLessEqual(slow, 8, "a static split would give the slow GPU 20 units")
        # a static split would take 20 x 0.26 s = 5.2 s on the slow GPU alone
        self.assertLess(wall, 4.0)


class UnevenSizes(RunCase):
    def test_uneven_batch_sizes_on_three_gpus(self):
        sizes = [1, 3, 7, 200, 4096]
        r = self.run_agent("tune", self.write_spec(small_spec(strategy="fast", batch_sizes=sizes, gpus=[0, 1, 2])),
                           "--foreground", "--new", env={"MOETUNE_SYNTHETIC_DELAY_MS": "2"})
        self.assertEqual(r.rc, 0, r.stderr)
        run_dir = r.one("run_started")["run_dir"]
        journal = read_jsonl(os.path.join(run_dir, "journal.jsonl"))
        idents = [j["unit"] for j in journal]
        self.assertEqual(len(idents), len(set(idents)))           # no unit measured twice
        self.assertEqual({j["gpu"] for j in journal if j["round"] >= 0}, {0, 1, 2})
        with open(os.path.join(run_dir, "result.json")) as f:
            res = json.load(f)
        self.assertEqual([h["m"] for h in res["head_to_head"]], sizes)
        self.assertEqual(sorted(int(k) for k in res["files"][0]["entries"]), sizes)
        for h in res["head_to_head"]:
            self.assertGreaterEqual(h["speedup"], 1.0)


if __name__ == "__main__":
    unittest.main()
