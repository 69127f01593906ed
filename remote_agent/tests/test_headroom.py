# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The headroom check (issue 19): the estimator on REPLAYED REAL H200 landscapes (bench/replay.py's
ReplayBackend, a TEST DOUBLE for the GPU serving recorded samples), the verdict, and the agent command
on the synthetic backend (the labelled test double: every number SIMULATED)."""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))

from agenttest import AgentCase  # noqa: E402
import headroom_replay  # noqa: E402
from moetune_agent import headroom, work  # noqa: E402
from moetune_agent.strategies import screen


def _within(res, pp=2.0):
    return sum(1 for r in res["rows"] if abs(r["error_pp"]) <= pp)


class EstimatorOnReplays(unittest.TestCase):
    """Estimate vs the landscape's true gain (stand-in default's recorded median / the recorded best)."""

    def test_server_heuristic_within_2pp(self):
        """The issue's figure: SGLang's heuristic (or the recorded config nearest to it) as the server's
        config, both landscapes, 5 recorded sizes each: within 2 pp at >= 9 of the 10."""
        rows = [r for name in ("qwen3", "fp8block") for r in headroom_replay.evaluate(name, "heuristic")["rows"]]
        within = sum(1 for r in rows if abs(r["error_pp"]) <= 2.0)
        self.assertGreaterEqual(within, 9, rows)
        # a gain the landscape really has is seen (not "nothing" everywhere)
        self.assertTrue(any(r["estimate"] >= 1.05 for r in rows), rows)

    def test_near_best_default_says_nothing_to_gain(self):
        """A server whose config is already the landscape's best, or its 3rd best: the estimate stays
        within 2 pp of the truth at every size (no phantom gain from the screen's noise)."""
        for name in ("qwen3", "fp8block"):
            for kind in ("best", "rank3"):
                res = headroom_replay.evaluate(name, kind)
                self.assertEqual(_within(res), len(res["rows"]), (name, kind, res["rows"]))
            rows = headroom_replay.evaluate(name, "best")["rows"]
            self.assertLessEqual(max(r["estimate"] for r in rows), 1.02, rows)

    def test_slow_default_gain_is_seen(self):
        """A median config of the landscape as the server's (gains 1.1-2x): within 2 pp at >= 8 of 10."""
        rows = [r for name in ("qwen3", "fp8block") for r in headroom_replay.evaluate(name, "p50")["rows"]]
        self.assertGreaterEqual(sum(1 for r in rows if abs(r["error_pp"]) <= 2.0), 8, rows)
        self.assertTrue(all(r["estimate"] > 1.05 for r in rows if r["true_gain"] > 1.10), rows)

    def test_cost_per_size(self):
        """The screen's work per batch size stays small (18 sizes must fit the 15 s on one H200)."""
        res = headroom_replay.evaluate("qwen3", "heuristic")
        self.assertLessEqual(res["units"] / float(res["sizes"]), 16)

    def test_candidates_respect_the_space(self):
        from moetune_agent import space as space_mod
        from moetune_agent.kernel_types import Shape
        shape = Shape(256, 256, 7168, 8, "fp8_w8a8", (128, 128))
        sizes = [1, 64, 4096]
        sp = space_mod.build_space(shape, sizes, ("both",))
        defaults = {("both", m): space_mod.server_default_config(shape, m) for m in sizes}
        plan = screen.HeadroomPlan(shape, sizes, ("both",), sp, defaults)
        for m in sizes:
            cands = plan.candidates("both", m)
            self.assertTrue(cands)
            self.assertLessEqual(len(cands), screen.NEAREST + 3)
            for c in cands:
                self.assertIn(c, sp[("both", m)])
                self.assertNotEqual(c, defaults[("both", m)])


SIZES18 = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096]


class LeanScreen(unittest.TestCase):
    """Issue 19's wall-time goal (<= 15 s on one H200; 18.1 s measured with 231 units, 32 kernels):
    fewer units and fewer distinct kernels, at the accuracy above."""

    def plan(self):
        from moetune_agent import space as space_mod
        from moetune_agent.backends import defaults as defaults_mod
        from moetune_agent.kernel_types import Shape
        shape = Shape(128, 768, 2048, 8)
        sp = space_mod.build_space(shape, SIZES18, ("both",))
        d = {("both", m): defaults_mod.heuristic("sglang", shape, m) for m in SIZES18}
        return screen.HeadroomPlan(shape, SIZES18, ("both",), sp, d)

    def test_bf16_qwen3_screen_units_and_kernels(self):
        units = self.plan().screen_units()
        self.assertLessEqual(len(units), 5.5 * len(SIZES18))       # was 123 (6.8 per size)
        self.assertLessEqual(len({u.cfg for u in units}), 27)       # was 32

    def test_replayed_cost(self):
        """Measure calls per replayed landscape with the server's heuristic as its config (was 70 and 63;
        52 and 33 before the re-timing rounds paired each challenger with the default, 57 and 34 since:
        the default is timed beside each of round 1's two challengers)."""
        for name in ("qwen3", "fp8block"):
            res = headroom_replay.evaluate(name, "heuristic")
            self.assertLessEqual(res["units"], 58, name)

    def test_retime_replays_follow_the_call_time(self):
        self.assertEqual(screen.HeadroomPlan.retime_replays(55.0), work.TIMED_MAX_REPLAYS)
        self.assertEqual(screen.HeadroomPlan.retime_replays(1500.0), work.TIMED_MIN_REPLAYS)
        self.assertEqual(screen.HeadroomPlan.retime_replays(None), work.TIMED_MIN_REPLAYS)
        # the head-to-head's rule: 20 ms of timed GPU time, 10 calls a replay
        self.assertEqual(screen.HeadroomPlan.retime_replays(300.0), 7)
        self.assertEqual(work.timed_replays(300.0), screen.HeadroomPlan.retime_replays(300.0))
        self.assertEqual(work.timed_replays(None, unknown=10), 10)

    def test_one_config_per_group_family(self):
        plan = self.plan()
        for m in SIZES18:
            fams = [screen._but_group(c) for c in plan.candidates("both", m)]
            self.assertEqual(len(fams), len(set(fams)), m)

    def test_screened_candidates_are_the_screen(self):
        plan = self.plan()
        sc = screen.screened_candidates(plan.shape, plan.sizes, plan.ops, plan.space, plan.defaults)
        units = plan.screen_units()
        for (op, m), cands in sc.items():
            self.assertTrue(cands, m)
            self.assertEqual(set(cands) | {plan.defaults[(op, m)]}, {u.cfg for u in units if u.m == m})

    def test_likely_units_hold_the_screens_catalogue_part(self):
        """What the check compiles before the defaults are known (the GPU worker's early facts) holds
        every screened config but the defaults and their pipeline neighbours, whatever the defaults."""
        plan = self.plan()
        likely = {(u.op, u.m, u.cfg) for u in plan.likely_units()}
        self.assertLessEqual(len(likely), (screen.NEAREST + 1) * len(SIZES18))
        from moetune_agent.kernel_types import KernelConfig
        for dkey in (None, "m16n64k128g1w4s4", "m64n128k64g16w4s3"):
            d = dict(plan.defaults) if dkey is None else {k: KernelConfig.from_key(dkey) for k in plan.defaults}
            p2 = screen.HeadroomPlan(plan.shape, plan.sizes, plan.ops, plan.space, d, neighbours=False)
            for u in p2.screen_units():
                if u.cfg != d[(u.op, u.m)]:
                    self.assertIn((u.op, u.m, u.cfg), likely, (dkey, u.m, u.cfg.key()))


def trials(m, default_key, gain, seeds, noise, clock=0.0, on_retime=None):
    """A TEST DOUBLE of a GPU for the check at one size, run once per seed: the default takes 1.0, the
    first screened candidate 1/gain, every other 1/1.3 (M >= 256) or 1.02 (smaller M) of a base time;
    each sample has Gaussian `noise`; each unit runs at its own clock (+-clock, uniform), shared by both
    sides of a paired unit. -> (plan, the default, the estimated gain per seed); on_retime(units) sees
    every re-timing phase."""
    import random
    from moetune_agent import space as space_mod
    from moetune_agent.kernel_types import KernelConfig, Shape
    from moetune_agent.work import Measurement
    shape = Shape(128, 768, 2048, 8)
    d = KernelConfig.from_key(default_key)
    plan = screen.HeadroomPlan(shape, [m], ("both",), space_mod.build_space(shape, [m], ("both",)),
                                 {("both", m): d})
    best = plan.candidates("both", m)[0]
    base = 3000.0 if m >= 256 else 70.0
    other = base / 1.3 if m >= 256 else base * 1.02
    gains = []
    for seed in range(seeds):
        rng = random.Random(seed)

        def truth(c):
            return base if c == d else (base / gain if c == best else other)

        def timed(c, f, n):
            return [truth(c) * f * (1 + rng.gauss(0, noise)) for _ in range(n)]

        def meas(units):
            out = []
            for u in units:
                f = 1.0 + rng.uniform(-clock, clock) if clock else 1.0
                x = Measurement(u, timed(u.cfg, f, u.replays))
                if u.pair is not None:
                    x.pair_samples_us = timed(u.pair, f, u.replays)
                out.append(x)
            return out
        measured = meas(plan.screen_units())
        for _phase in range(4):  # the re-timing ends by itself within 2 phases
            more = plan.retime_units(measured)
            if not more:
                break
            if on_retime is not None:
                on_retime(more)
            measured += meas(more)
        assert plan.retime_units(measured) == []
        gains.append(plan.estimate(measured)[0]["gain"])
    return plan, d, gains


class SmallMNoise(unittest.TestCase):
    """M=2 on the H200 missed by 2.4 pp: a TEST DOUBLE of per-sample noise (3%, Gaussian, seeded) around
    a true 1.045x: the paired re-timing rounds with the replays of a cheap call keep the estimate within
    2 pp in >= 75% of 200 trials (the previous re-timing: 125 of 200)."""

    def test_noise(self):
        _plan, _d, gains = trials(2, "m16n32k64g1w4s3", 1.045, 200, 0.03)
        self.assertGreaterEqual(sum(abs(g - 1.045) <= 0.02 for g in gains), 150)


class LargeMDrift(unittest.TestCase):
    """M=4096 on the H200 missed by 11.7 pp: the same two configs timed 1.50x-1.70x apart in separate
    units (the GPU's clock moves between units). A TEST DOUBLE of that: every unit runs at its own clock
    (+-8%, seeded), shared by both sides of a paired unit, 0.5% noise per sample, a true 1.55x: the
    re-timing's units pair each challenger with the default, so the estimate stays within 2 pp in >= 95 of
    100 trials (unpaired, the units' clocks went into the ratio: 14 of 100 before this change)."""

    def test_drift(self):
        from moetune_agent.kernel_types import KernelConfig
        d = KernelConfig.from_key("m64n64k32g8w4s3")
        _plan, _d, gains = trials(4096, d.key(), 1.55, 100, 0.005, clock=0.08,
                                  on_retime=lambda more: self.assertTrue(all(u.pair == d and u.cfg != d
                                                                             for u in more)))
        self.assertGreaterEqual(sum(abs(g - 1.55) <= 0.02 for g in gains), 95)


class PrecompileOrder(unittest.TestCase):
    def test_precompile_order(self):
        from moetune_agent.kernel_types import KernelConfig
        from moetune_agent.work import Unit
        a, b = KernelConfig.from_key("m16n32k64g1w4s3"), KernelConfig.from_key("m16n64k128g1w4s3")
        units = [Unit("both", a, 1), Unit("both", b, 1), Unit("both", a, 2), Unit("both", b, 2)]
        self.assertEqual([(u.cfg, u.m) for u in headroom.precompile_order(units, per_m=True)],
                         [(a, 1), (b, 1), (a, 2), (b, 2)])
        units = [Unit("both", a, 1), Unit("both", a, 2), Unit("both", b, 1)]
        self.assertEqual([(u.cfg, u.m) for u in headroom.precompile_order(units, per_m=True)],
                         [(a, 1), (b, 1), (a, 2)])
        self.assertEqual(len(headroom.precompile_order(units)), 2)


class Assumption(unittest.TestCase):
    def test_data(self):
        cases = [  # (backend, default_source kind, server_error, expected piece or None)
            ("server", "file", None, None),
            ("triton", "heuristic", None, "cannot import the server"),
            ("triton", "heuristic", "the server backend cannot run here: x", "cannot run here: x"),
            ("synthetic", "heuristic", None, "SIMULATED"),
        ]
        for backend, kind, err, piece in cases:
            with self.subTest(backend=backend, err=err):
                text = headroom._assumption(backend, "sglang", {"kind": kind}, err)
                if piece is None:
                    self.assertIsNone(text)
                else:
                    self.assertIn(piece, text)
                    if backend == "triton":
                        self.assertIn("assumed to be the sglang built-in heuristic", text)


class Verdict(unittest.TestCase):
    def rows(self, gains):
        return [{"m": m, "gain": g} for m, g in gains]

    def test_data(self):
        cases = [  # (name, gains, kind, text pieces)
            ("worth", [(1, 1.0), (16, 1.01), (256, 1.3), (1024, 1.35)], "worth_tuning",
             ["worth tuning", "about 1.32x at M >= 256", "nothing at M <= 16"]),
            ("little", [(1, 1.0), (64, 1.015), (4096, 1.0)], "little_to_gain",
             ["little to gain", "within 2%"]),
            ("some", [(1, 1.05), (2, 1.06), (4, 1.0)], "some_gain", ["some gain", "M <= 2", "nothing at M = 4"]),
            ("unknown", [(1, None)], "unknown", ["could not time"]),
        ]
        for name, gains, kind, pieces in cases:
            with self.subTest(name):
                v = headroom.verdict(self.rows(gains))
                self.assertEqual(v["kind"], kind, v)
                for p in pieces:
                    self.assertIn(p, v["text"])

    def test_ranges_cover_every_size_once(self):
        v = headroom.verdict(self.rows([(1, 1.0), (2, 1.04), (4, 1.2), (8, 1.21), (16, 1.0)]))
        self.assertEqual([(r["m_from"], r["m_to"], r["class"]) for r in v["ranges"]],
                         [(1, 1, "none"), (2, 2, "small"), (4, 8, "large"), (16, 16, "none")])
        self.assertEqual(v["ranges"][2]["gain_min"], 1.2)


SPEC = {"framework": "sglang", "E": 128, "N": 768, "K": 2048, "topk": 8, "backend": "synthetic",
        "batch_sizes": [1, 16, 256, 1024]}


class HeadroomCommand(AgentCase):
    def test_events_on_the_synthetic_backend(self):
        res = self.run_agent("headroom", self.write_spec(SPEC))
        self.assertEqual(res.rc, 0, res.stderr)
        types = [e["type"] for e in res.events]
        self.assertEqual(types[0], "hello")
        self.assertEqual(types[1], "headroom_started")
        self.assertEqual(types[-2:], ["headroom", "done"])
        self.assertIn("progress", types)
        sizes = res.of("headroom_size")
        self.assertEqual([e["m"] for e in sizes], [1, 16, 256, 1024])
        for e in res.events[1:]:
            if e["type"] in ("headroom_started", "headroom_size", "headroom", "progress"):
                self.assertIs(e.get("simulated"), True, e)
        for e in sizes:
            self.assertGreater(e["default_us"], 0)
            self.assertLessEqual(e["best_us"], e["default_us"])
            self.assertGreaterEqual(e["gain"], 1.0)
            self.assertGreater(e["floor_us"], 0)
            self.assertLess(e["floor_us"], e["best_us"])
        h = res.one("headroom")
        self.assertTrue(h["verdict"].startswith("SIMULATED: "), h["verdict"])
        self.assertIn("SIMULATED", h["assumed"])
        self.assertEqual(h["backend"], "synthetic")
        self.assertEqual(sum(len(r["sizes"]) for r in h["ranges"]), 4)
        # the synthetic default at M >= 256 (BM64 BN64 BK32) is far from the best: a gain is seen there
        self.assertGreater([e for e in sizes if e["m"] == 1024][0]["gain"], 1.05)
        t = h["timings"]
        self.assertEqual(t["screen_units"] + t["retime_units"], h["units"])
        self.assertGreater(t["distinct_configs"], 0)
        self.assertEqual(res.one("done")["status"], "ok")

    def test_screen_compiles_while_the_gpu_worker_starts(self):
        """With a precompile pool, the screen's catalogue configs are compiled from the GPU worker's early
        facts, during its (here slow: a server's first JIT) smoke call; the estimate is the one without.
        Synthetic backend with a SIMULATED compile cost."""
        base = self.run_agent("headroom", self.write_spec(SPEC))
        self.assertEqual(base.rc, 0, base.stderr)
        env = {"MOETUNE_PRECOMPILE_WORKERS": "2", "MOETUNE_SYNTHETIC_COMPILE_MS": "20",
               "MOETUNE_SYNTHETIC_CHECK_MS": "1200"}
        res = self.run_agent("headroom", self.write_spec(SPEC), env=env)
        self.assertEqual(res.rc, 0, res.stderr)
        pc = res.one("headroom")["timings"]["precompile"]
        self.assertGreater(pc["at_facts"], 0, pc)
        self.assertLess(pc["facts_s"], res.one("headroom")["timings"]["startup_s"], pc)
        self.assertEqual(pc["failed"] + pc["ok"], pc["submitted"], pc)
        self.assertIsNone(pc.get("at_facts_error"), pc)
        self.assertEqual([(e["m"], e["gain"], e["best_config"]) for e in res.of("headroom_size")],
                         [(e["m"], e["gain"], e["best_config"]) for e in base.of("headroom_size")])

    def test_server_file_already_best_says_little_to_gain(self):
        """The server's existing file holds what the screen finds best: nothing to gain. The file is the
        check's own best configs, taken again from the check on that file until they stop changing (a
        file of one check's bests can make the next screen pick other candidates around it, one of
        which may be a little faster in the synthetic landscape): at most three rounds."""
        first = self.run_agent("headroom", self.write_spec(SPEC))
        entries = {}
        for e in first.of("headroom_size"):
            entries[str(e["m"])] = e["best_config"]
        path = os.path.join(self.tmp, "E=128,N=768,device_name=SIMULATED_GPU.json")
        h, res = None, None
        for _round in range(3):
            with open(path, "w") as f:
                json.dump(entries, f)
            res = self.run_agent("headroom", self.write_spec(SPEC), env={"MOETUNE_SYNTHETIC_DEFAULT_FILE": path})
            self.assertEqual(res.rc, 0, res.stderr)
            h = res.one("headroom")
            if h["kind"] == "little_to_gain":
                break
            entries = {str(e["m"]): e["best_config"] for e in res.of("headroom_size")}
        self.assertEqual(h["kind"], "little_to_gain", h["verdict"])
        self.assertEqual(h["default_source"]["kind"], "file")
        for e in res.of("headroom_size"):
            self.assertLess(e["gain"], 1.02, e)

    def test_nothing_measurable_fails(self):
        res = self.run_agent("headroom", self.write_spec(SPEC), env={"MOETUNE_TEST_FAIL_MEASURE": "boom"})
        self.assertEqual(res.rc, 1)
        err = res.one("error")
        self.assertEqual(err["code"], "backend_failed")
        self.assertEqual(res.events[-1]["status"], "failed")

    def test_bad_spec_is_a_spec_error(self):
        res = self.run_agent("headroom", self.write_spec(dict(SPEC, E=0)))
        self.assertEqual(res.rc, 1)
        self.assertEqual(res.one("error")["code"], "spec_invalid")

    def test_no_backend_is_a_sentence_through_the_specs_interpreter(self):
        """A spec naming another interpreter runs the check under it (here a wrapper script of this
        Python, which has no torch here): the inner process's error is the protocol's no_backend."""
        wrapper = os.path.join(self.tmp, "python-wrapper")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec %s \"$@\"\n" % sys.executable)
        os.chmod(wrapper, 0o755)
        try:
            import torch  # noqa: F401  # pylint: disable=unused-import,import-outside-toplevel
            self.skipTest("torch is importable here: auto would find a backend")
        except ImportError:
            pass
        spec = dict(SPEC, backend="auto", python=wrapper)
        res = self.run_agent("headroom", self.write_spec(spec))
        self.assertEqual(res.rc, 1)
        self.assertEqual(res.one("error")["code"], "no_backend")
        self.assertEqual([e["type"] for e in res.events].count("hello"), 1)
        self.assertEqual(res.events[-1]["type"], "done")

    def test_capability(self):
        res = self.run_agent("version")
        self.assertIn("headroom", res.events[0]["capabilities"])


if __name__ == "__main__":
    unittest.main()
