# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Strategies on REPLAYED REAL MEASUREMENTS (no GPU here).

tests/data/h200_qwen3_exhaustive.json.gz holds every sample of an exhaustive run of moetune's Triton
kernel on an NVIDIA H200 (Qwen3-30B-A3B at TP1: E=128, top-k 8, K=2048, N=768, bf16; batch sizes
1, 16, 64, 256, 1024; the pruned space of space.py; 10 timed replays per config), made by
remote_agent/bench/bench_h200.py. ReplayBackend is a TEST DOUBLE standing in for the GPU: it serves
those recorded samples back, so the strategies face the real landscape and its real noise.
"""

import gzip
import json
import math
import os
import sys
import unittest
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.backends.base import Backend, CandidateError, Shape, Timing  # noqa: E402
from moetune_agent.strategies import make_strategy  # noqa: E402
from moetune_agent.work import Measurement  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "h200_qwen3_exhaustive.json.gz")


def load_recording(path=DATA):
    with gzip.open(path, "rt") as f:
        return json.load(f)


class ReplayBackend(Backend):
    """Test double: serves recorded H200 samples (see the module comment); marked simulated."""

    name = "replay"
    simulated = True

    def __init__(self, rec):
        f = rec["shape"]
        bs = tuple(f["block_shape"]) if f.get("block_shape") else None
        super().__init__(Shape(E=f["E"], N=f["N"], K=f["K"], topk=f["topk"], dtype=f["dtype"], block_shape=bs))
        self.samples = {(int(m), k): v for m, d in rec["samples"].items() for k, v in d.items()}
        self.calls = 0
        self.replays = 0
        self.seq = {}

    def device_name(self):
        return "NVIDIA_H200"

    def shared_memory_per_block(self):
        return space_mod.HOPPER_SMEM_LIMIT

    def measure(self, op, cfg, m, replays=10, cfg_down=None):
        rec = self.samples.get((m, cfg.key()))
        if rec is None:
            raise CandidateError("other", "not recorded: %s at %d" % (cfg.key(), m))
        self.calls += 1
        self.replays += replays
        # which recorded samples a call gets depends on the call's identity only (deterministic replays)
        self.seq[(m, cfg.key(), replays)] = self.seq.get((m, cfg.key(), replays), 0) + 1
        start = zlib.crc32(("%s|%d|%d|%d" % (cfg.key(), m, replays, self.seq[(m, cfg.key(), replays)])).encode())
        start %= len(rec)
        return Timing([rec[(start + i) % len(rec)] for i in range(replays)])

    def check(self, op, cfg, m):
        return 0.0

    def default_config(self, op, m):
        return space_mod.server_default_config(self.shape, m)

    def truth(self, m, cfg):
        s = sorted(self.samples[(m, cfg.key())])
        return 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2]) if len(s) % 2 == 0 else s[len(s) // 2]


def drive(strategy, backend):
    measured = []
    while True:
        phase = strategy.next_phase(measured)
        if phase is None:
            return measured
        for u in phase:
            try:
                measured.append(Measurement(u, backend.measure(u.op, u.cfg, u.m, u.replays).samples_us))
            except CandidateError as e:
                measured.append(Measurement(u, None, e.kind, e.message))


class ReplayTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rec = load_recording()
        cls.sizes = sorted(int(m) for m in cls.rec["samples"])
        be = ReplayBackend(cls.rec)
        cls.space = space_mod.build_space(be.shape, cls.sizes, ("both",))

    def test_recording_covers_the_pruned_space(self):
        be = ReplayBackend(self.rec)
        for m in self.sizes:
            for c in self.space[("both", m)]:
                self.assertIn((m, c.key()), be.samples)

    def test_exhaustive_finds_the_recorded_best(self):
        be = ReplayBackend(self.rec)
        st = make_strategy("exhaustive", self.space, self.sizes, ("both",), be.shape)
        win = st.winners(drive(st, be))
        for m in self.sizes:
            best = min(self.space[("both", m)], key=lambda c: be.truth(m, c))
            self.assertLessEqual(be.truth(m, win[("both", m)]), be.truth(m, best) * 1.005)

    def test_fast_regret_and_cost(self):
        """Issue 3's goals on the real landscape: regret geomean <= 1.01, worst <= 1.03, with far
        fewer timed replays than the exhaustive search."""
        be_f = ReplayBackend(self.rec)
        st = make_strategy("fast", self.space, self.sizes, ("both",), be_f.shape)
        win = st.winners(drive(st, be_f))
        be_e = ReplayBackend(self.rec)
        ex = make_strategy("exhaustive", self.space, self.sizes, ("both",), be_e.shape)
        drive(ex, be_e)
        regrets = []
        for m in self.sizes:
            best = min(be_f.truth(m, c) for c in self.space[("both", m)])
            regrets.append(be_f.truth(m, win[("both", m)]) / best)
        geo = math.exp(sum(math.log(r) for r in regrets) / len(regrets))
        self.assertLessEqual(geo, 1.01, regrets)
        self.assertLessEqual(max(regrets), 1.03, regrets)
        self.assertLess(be_f.calls * 4, be_e.calls, "fast measured too many configs")
        self.assertLess(be_f.replays * 10, be_e.replays, "fast spent too many replays")

    def test_fast_resume_repeats_nothing(self):
        be = ReplayBackend(self.rec)
        st = make_strategy("fast", self.space, self.sizes, ("both",), be.shape)
        full = drive(st, be)
        # a run killed after half its measurements, resumed: the same winners, no unit twice
        half = full[: len(full) // 2]
        st2 = make_strategy("fast", self.space, self.sizes, ("both",), be.shape)
        be2 = ReplayBackend(self.rec)
        for x in half:  # the resumed backend has seen the journal's calls
            be2.seq[(x.unit.m, x.unit.cfg.key(), x.unit.replays)] = be2.seq.get(
                (x.unit.m, x.unit.cfg.key(), x.unit.replays), 0) + 1
        resumed = drive_from(st2, be2, half)
        ids = [x.unit.ident() for x in resumed]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertEqual(st2.winners(resumed), st.winners(full))


def drive_from(strategy, backend, measured):
    measured = list(measured)
    while True:
        phase = strategy.next_phase(measured)
        if phase is None:
            return measured
        for u in phase:
            measured.append(Measurement(u, backend.measure(u.op, u.cfg, u.m, u.replays).samples_us))


if __name__ == "__main__":
    unittest.main()
