# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The early head-to-head (tunerun/phases._early_head_to_head): at the batch sizes the fast strategy has settled,
the head-to-head's rounds are timed while the GPU would wait for the pool's compiles, and the final
head-to-head goes on from them. Whole synthetic runs (the labelled GPU double) with a simulated compile cost
and a precompile pool, as on a GPU host; the same run without a pool (so without early rounds) is the
reference."""

import json
import unittest

import agenttest
from moetune_agent import space as space_mod
from moetune_agent.backends.synthetic import SyntheticBackend
from moetune_agent.kernel_types import CandidateError, Shape
from moetune_agent.strategies import make_strategy
from moetune_agent.work import Measurement

SIZES = [1, 4, 16, 64, 128, 256, 512]


class Settled(unittest.TestCase):
    def test_no_unit_at_a_size_once_settled(self):
        """Driven to the end on the synthetic landscape: a size the strategy called settled never gets
        another unit, the anchors settle before the last level, and every size is settled at the end."""
        shape = Shape(E=128, N=768, K=2048, topk=8)
        sizes = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)
        space = space_mod.build_space(shape, sizes, ("up",))
        st = make_strategy("fast", space, sizes, ("up",), shape)
        be = SyntheticBackend(shape)
        meas, settled_at = [], {}
        n = 0
        while True:
            for m in st.settled(meas):
                settled_at.setdefault(m, n)
            ph = st.next_phase(meas)
            if ph is None:
                break
            for u in ph:
                self.assertNotIn(u.m, settled_at, "phase %d measures at settled size %d" % (n, u.m))
                try:
                    meas.append(Measurement(u, be.measure(u.op, u.cfg, u.m, u.replays).samples_us))
                except CandidateError as e:
                    meas.append(Measurement(u, None, e.kind, e.message))
            n += 1
        self.assertEqual(sorted(settled_at), sorted(sizes))
        self.assertTrue(all(settled_at[a] < n - 3 for a in st.anchors), (settled_at, n))
        self.assertEqual(make_strategy("exhaustive", space, sizes, ("up",), shape).settled(meas), [])


class EarlyRun(agenttest.AgentCase):
    def tune(self, early):
        spec = agenttest.small_spec(strategy="fast", batch_sizes=SIZES)
        r = self.run_agent("tune", self.write_spec(spec), "--foreground",
                           env={"MOETUNE_SYNTHETIC_COMPILE_MS": "120", "MOETUNE_PRECOMPILE_WORKERS": "2" if early else "0",
                                "MOETUNE_SYNTHETIC_DELAY_MS": "4"}, timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        res = [e for e in r.events if e["type"] == "result_written" and e["kind"] == "result"][0]
        with open(res["path"]) as f:
            return r, json.load(f)

    def test_rounds_timed_during_the_search_and_the_same_decisions(self):
        r, got = self.tune(True)
        _base_r, want = self.tune(False)
        self.assertGreater(got["timings"]["precompile"].get("fillers", 0), 0, got["timings"]["precompile"])
        self.assertNotIn("fillers", want["timings"]["precompile"])
        # head-to-head measurements came before the search's last measurement
        ms = [e for e in r.events if e["type"] == "measurement"]
        last_search = max(i for i, e in enumerate(ms) if 0 <= e["round"] < 200)
        self.assertTrue(any(e["round"] >= 200 for e in ms[:last_search]))
        # the same winners and head-to-head decisions as a run without it (the synthetic numbers are exact)
        pick = lambda res: sorted((w["op"], w["m"], json.dumps(w["config"], sort_keys=True))  # noqa: E731
                                  for w in res["winners"])
        self.assertEqual(len(pick(got)), len(SIZES))
        self.assertEqual(pick(got), pick(want))
        dec = lambda res: [(p["m"], p.get("decision"), p.get("chosen_default"), p.get("rounds"))  # noqa: E731
                           for p in res["per_batch"]]
        self.assertTrue(all(d[1] is not None for d in dec(got)), dec(got))
        self.assertEqual([d[:3] for d in dec(got)], [d[:3] for d in dec(want)])


if __name__ == "__main__":
    unittest.main()


class Broken(unittest.TestCase):
    def test_a_failure_turns_it_off_with_a_warning(self):
        """A bug in the early head-to-head costs only its speed-up: one warning, no fillers, the run goes on.
        TEST DOUBLE: a stand-in session with what the early head-to-head reads before it fails."""
        from moetune_agent.tunerun import phases

        class Sched(object):
            precompile_workers = 2

        class Session(object):
            sched = Sched()
            sizes = [1, 64]

            def __init__(self):
                self.warnings = []

            def strategy_view(self):
                return []

            def warn(self, msg):
                self.warnings.append(msg)

        class Strategy(object):
            def settled(self, _measured):
                raise RuntimeError("strategy bug")

        s = Session()
        early = phases._early_head_to_head(s, Strategy())  # pylint: disable=protected-access
        self.assertEqual((early(), early()), ([], []))
        self.assertEqual(len(s.warnings), 1)
        self.assertIn("strategy bug", s.warnings[0])
