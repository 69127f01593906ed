# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The final decision per (op, batch size): finalists against the server's default in interleaved rounds.

Unit tests of HeadToHead on measurements made here (noise with a known spread), on REPLAYED REAL H200
measurements (tests/data/h200_qwen3_exhaustive.json.gz, see test_strategies_replay.py; a test double
for the GPU), and whole synthetic runs where an existing config file is the server's default.
"""

import json
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from agenttest import small_spec  # noqa: E402
from moetune_agent.kernel_types import KernelConfig  # noqa: E402
from moetune_agent.serverconfig import configjson  # noqa: E402
from moetune_agent.strategies.headtohead import (EARLY_ROUNDS, FIRST_ROUNDS, H2H_ROUND,  # noqa: E402
                                                 MAX_ROUNDS, MIN_ROUNDS, QUIET_WIN, TIE, HeadToHead)
from moetune_agent.work import Measurement  # noqa: E402
from test_runs import RunCase  # noqa: E402
from test_strategies_replay import DATA, load_recording  # noqa: E402

parse_key = KernelConfig.from_key

D = KernelConfig(16, 32, 64, 1, 4, 3)
A = KernelConfig(16, 64, 128, 1, 4, 3)
B = KernelConfig(16, 128, 128, 1, 8, 2)
C64 = KernelConfig(64, 128, 64, 8, 8, 3)


def drive(h2h, timing, limit=100):
    """Run h2h's rounds with timing(op, cfg, m, round) -> samples; returns every measurement."""
    measured = []
    for _ in range(limit):
        units = h2h.next_units(measured)
        if units is None:
            return measured
        for u in units:
            s = timing(u.op, u.cfg, u.m, u.round - H2H_ROUND)
            meas = Measurement(u, s) if s is not None else Measurement(u, None, "other", "failed")
            if u.pair is not None:  # a paired unit: the default timed beside it (or failed)
                meas.pair_samples_us = timing(u.op, u.pair, u.m, u.round - H2H_ROUND)
                meas.pair_error = None if meas.pair_samples_us is not None else "other: failed"
            measured.append(meas)
    raise AssertionError("head-to-head never ended")


def noisy(true_us, rel_noise, seed=0):
    rng = random.Random(seed)

    def timing(op, cfg, m, rnd):
        t = true_us[(op, cfg.key(), m)]
        if t is None:
            return None
        return [t * (1.0 + rng.uniform(-rel_noise, rel_noise)) for _ in range(10)]
    return timing


class Decisions(unittest.TestCase):
    def test_default_faster_keeps_default_config(self):
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A, B]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 52.0,
                               ("both", B.key(), 1): 55.0}, 0.01))
        self.assertEqual(h.winners(meas), {("both", 1): D})
        row = h.report(meas)[0]
        self.assertEqual(row["decision"], "default_fastest")
        self.assertTrue(row["chosen_default"])
        self.assertEqual(row["speedup"], 1.0)
        # 4% slower in every round: unmistakable after the first rounds
        self.assertEqual(row["rounds"], FIRST_ROUNDS)
        self.assertEqual(row["chosen"]["configs"]["both"], D.as_dict())

    def test_early_decision_only_when_unmistakable(self):
        # 2% faster in every round, rounds apart by more than EVEN_SPREAD (2% noise): clear of the spread,
        # but under the 3% of an early decision, so the full minimum of rounds runs before the tuned config
        # replaces the default
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 49.0}, 0.02, seed=1))
        row = h.report(meas)[0]
        self.assertEqual(row["rounds"], MIN_ROUNDS)
        self.assertEqual(row["decision"], "tuned_faster")
        # ... the same gain in quiet rounds (the paired ratios on a GPU): decided after FIRST_ROUNDS
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 49.0}, 0.002))
        self.assertEqual((h.report(meas)[0]["rounds"], h.report(meas)[0]["decision"]), (FIRST_ROUNDS, "tuned_faster"))
        # 5% faster in every round: decided after FIRST_ROUNDS
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 47.5}, 0.01))
        row = h.report(meas)[0]
        self.assertEqual((row["rounds"], row["decision"]), (FIRST_ROUNDS, "tuned_faster"))
        # 10% faster, every round apart by more than BIG_MARGIN: certain after EARLY_ROUNDS (issue 22)
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 45.0}, 0.01))
        row = h.report(meas)[0]
        self.assertEqual((row["rounds"], row["decision"]), (EARLY_ROUNDS, "tuned_faster"))
        # ... and the same with the default 12% faster
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A, B]})
        meas = drive(h, noisy({("both", D.key(), 1): 40.0, ("both", A.key(), 1): 45.0,
                               ("both", B.key(), 1): 47.0}, 0.01))
        row = h.report(meas)[0]
        self.assertEqual((row["rounds"], row["decision"]), (EARLY_ROUNDS, "default_fastest"))
        # ... but not when one tuned contender is within the margin of the default
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A, B]})
        meas = drive(h, noisy({("both", D.key(), 1): 40.0, ("both", A.key(), 1): 42.0,
                               ("both", B.key(), 1): 47.0}, 0.01))
        self.assertGreaterEqual(h.report(meas)[0]["rounds"], FIRST_ROUNDS)
        # the old schedule (early_rounds=0): FIRST_ROUNDS at least
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A]}, early_rounds=0)
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 45.0}, 0.01))
        self.assertEqual(h.report(meas)[0]["rounds"], FIRST_ROUNDS)
        # one failed round of the challenger: never decided early
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A]})
        base = noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 45.0}, 0.01)
        meas = drive(h, lambda op, cfg, m, rnd: None if (cfg == A and rnd == 1) else base(op, cfg, m, rnd))
        self.assertGreaterEqual(h.report(meas)[0]["rounds"], MIN_ROUNDS)

    def test_an_even_key_keeps_the_default_after_the_first_rounds(self):
        # the server paths' usual key (issue 22): the tuned config within 0.1% of the default, quiet rounds
        for true_a, want in ((50.0 * 0.999, "tie_default_kept"), (50.0 * 1.002, "default_fastest")):
            h = HeadToHead(("both",), [64], {("both", 64): D}, {("both", 64): [A]})
            meas = drive(h, noisy({("both", D.key(), 64): 50.0, ("both", A.key(), 64): true_a}, 0.0005))
            row = h.report(meas)[0]
            self.assertEqual((row["rounds"], row["decision"]), (FIRST_ROUNDS, want))
            self.assertEqual(h.winners(meas), {("both", 64): D})
            # off (the agent before): the full minimum of rounds, the same choice
            h = HeadToHead(("both",), [64], {("both", 64): D}, {("both", 64): [A]}, even_spread=0.0)
            meas = drive(h, noisy({("both", D.key(), 64): 50.0, ("both", A.key(), 64): true_a}, 0.0005))
            self.assertEqual(h.report(meas)[0]["rounds"], MIN_ROUNDS)
            self.assertEqual(h.winners(meas), {("both", 64): D})

    def test_quiet_rules_never_cut_a_noisy_or_unclear_key_short(self):
        # 0.6% faster, quiet: every round more than QUIET_WIN faster -> tuned, after FIRST_ROUNDS
        self.assertGreater(0.006, QUIET_WIN)
        h = HeadToHead(("both",), [64], {("both", 64): D}, {("both", 64): [A]})
        meas = drive(h, noisy({("both", D.key(), 64): 50.0, ("both", A.key(), 64): 50.0 * 0.994}, 0.0005))
        row = h.report(meas)[0]
        self.assertEqual((row["rounds"], row["decision"]), (FIRST_ROUNDS, "tuned_faster"))
        # 0.25% faster, quiet: neither even (outside TIE) nor a quiet win -> MIN_ROUNDS, then tuned
        self.assertTrue(TIE < 0.0025 < QUIET_WIN)
        h = HeadToHead(("both",), [64], {("both", 64): D}, {("both", 64): [A]})
        meas = drive(h, noisy({("both", D.key(), 64): 50.0, ("both", A.key(), 64): 50.0 * 0.9975}, 0.0002))
        row = h.report(meas)[0]
        self.assertEqual((row["rounds"], row["decision"]), (MIN_ROUNDS, "tuned_faster"))
        # even medians but rounds 2% apart (noise): three rounds do not tell, at least MIN_ROUNDS run
        h = HeadToHead(("both",), [64], {("both", 64): D}, {("both", 64): [A]})
        meas = drive(h, noisy({("both", D.key(), 64): 50.0, ("both", A.key(), 64): 50.0}, 0.03, seed=5))
        self.assertGreaterEqual(h.report(meas)[0]["rounds"], MIN_ROUNDS)
        # a second tuned contender 0.8% faster in one round, its rounds 1.2% apart: not quiet, not even
        h = HeadToHead(("both",), [64], {("both", 64): D}, {("both", 64): [A, B]})

        def timing(op, cfg, m, rnd):
            t = {D.key(): 50.0, A.key(): 50.0, B.key(): 50.2 if rnd else 49.6}[cfg.key()]
            return [t] * 10
        meas = drive(h, timing)
        self.assertGreater(h.report(meas)[0]["rounds"], FIRST_ROUNDS)
        # a challenger that failed a round is never judged even
        h = HeadToHead(("both",), [64], {("both", 64): D}, {("both", 64): [A]})
        base = noisy({("both", D.key(), 64): 50.0, ("both", A.key(), 64): 50.0}, 0.0005)
        meas = drive(h, lambda op, cfg, m, rnd: None if (cfg == A and rnd == 2) else base(op, cfg, m, rnd))
        self.assertGreaterEqual(h.report(meas)[0]["rounds"], MIN_ROUNDS)

    def test_clear_win_outside_spread(self):
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A, B]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 45.0,
                               ("both", B.key(), 1): 47.0}, 0.01))
        self.assertEqual(h.winners(meas), {("both", 1): A})
        row = h.report(meas)[0]
        self.assertEqual(row["decision"], "tuned_faster")
        self.assertGreater(row["chosen"]["q75_us"] * 1.0, 0)
        self.assertLess(row["chosen"]["q75_us"], row["default"]["q25_us"])   # margin outside the spread
        self.assertAlmostEqual(row["speedup"], row["default_median_us"] / row["median_us"])
        self.assertGreater(row["speedup"], 1.08)
        # every round timed every contender: the interleaving is complete
        rounds = {}
        for mm in meas:
            rounds.setdefault(mm.unit.round, set()).update(c.key() for c in (mm.unit.cfg, mm.unit.pair) if c)
        self.assertTrue(all(v == {D.key(), A.key(), B.key()} for v in rounds.values()))

    def test_small_margin_inside_noise_runs_more_rounds_then_keeps_default(self):
        # 1% faster, 8% noise (B=1 on an H200 varies this much): not outside the spread -> tie
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 49.5}, 0.08, seed=3))
        row = h.report(meas)[0]
        self.assertEqual(row["rounds"], MAX_ROUNDS)
        self.assertEqual(row["decision"], "tie_default_kept")
        self.assertEqual(h.winners(meas), {("both", 1): D})

    def test_clear_loser_drops_out_after_the_early_rounds(self):
        # B 6% behind A in both early rounds: not timed after them; A and the default keep every round
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A, B]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 49.0,
                               ("both", B.key(), 1): 52.0}, 0.003))
        row = h.report(meas)[0]
        per = {}
        for mm in meas:
            for c in (mm.unit.cfg, mm.unit.pair):
                if c is not None:
                    per.setdefault(c.key(), set()).add(mm.unit.round - H2H_ROUND)
        self.assertEqual(per[B.key()], set(range(EARLY_ROUNDS)))
        self.assertEqual(per[A.key()], per[D.key()])
        self.assertGreater(len(per[A.key()]), EARLY_ROUNDS)
        self.assertEqual(row["dropped"], [B.key()])
        self.assertEqual(row["challenger"]["configs"]["both"], A.as_dict())
        # resumed from the same measurements: the same drop, nothing more to run
        again = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A, B]})
        self.assertIsNone(again.next_units(meas))
        self.assertEqual(again.report(meas)[0]["dropped"], [B.key()])

    def test_close_tuned_contenders_both_stay(self):
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A, B]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 49.0,
                               ("both", B.key(), 1): 49.5}, 0.003))
        rounds = {}
        for mm in meas:
            rounds.setdefault(mm.unit.round, set()).update(c.key() for c in (mm.unit.cfg, mm.unit.pair) if c)
        self.assertTrue(all(v == {D.key(), A.key(), B.key()} for v in rounds.values()))
        self.assertEqual(h.report(meas)[0]["dropped"], [])

    def test_tie_within_threshold_is_default(self):
        h = HeadToHead(("both",), [4], {("both", 4): D}, {("both", 4): [A]})
        meas = drive(h, noisy({("both", D.key(), 4): 50.0, ("both", A.key(), 4): 49.96}, 0.0005))
        self.assertEqual(h.report(meas)[0]["decision"], "tie_default_kept")
        self.assertEqual(h.winners(meas)[("both", 4)], D)

    def test_failed_contender_never_wins_and_default_failure_is_reported(self):
        h = HeadToHead(("both",), [1, 2], {("both", 1): D, ("both", 2): D}, {("both", 1): [A], ("both", 2): [A]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): None,
                               ("both", D.key(), 2): None, ("both", A.key(), 2): 40.0}, 0.01))
        rows = {r["m"]: r for r in h.report(meas)}
        self.assertEqual(rows[1]["decision"], "default_fastest")
        self.assertEqual(h.winners(meas)[("both", 1)], D)
        self.assertEqual(rows[2]["decision"], "default_failed")
        self.assertEqual(h.winners(meas)[("both", 2)], A)

    def test_up_down_pairs_share_block_m_and_sum(self):
        du, dd = D, KernelConfig(16, 64, 64, 1, 4, 3)
        u64, d64 = C64, KernelConfig(64, 64, 128, 1, 4, 3)
        d16 = KernelConfig(16, 128, 64, 1, 4, 2)
        h = HeadToHead(("up", "down"), [64], {("up", 64): du, ("down", 64): dd},
                       {("up", 64): [u64], ("down", 64): [d64, d16]})
        # up64 alone is much faster, but its only BLOCK_SIZE_M partner (d64) is slow: the pair (du, d16)
        # with a shared BLOCK_SIZE_M 16 wins on the sum.
        true = {("up", du.key(), 64): 100.0, ("up", u64.key(), 64): 80.0,
                ("down", dd.key(), 64): 60.0, ("down", d64.key(), 64): 95.0, ("down", d16.key(), 64): 45.0}
        meas = drive(h, noisy(true, 0.005))
        w = h.winners(meas)
        self.assertEqual((w[("up", 64)], w[("down", 64)]), (du, d16))
        self.assertEqual(w[("up", 64)].BLOCK_SIZE_M, w[("down", 64)].BLOCK_SIZE_M)
        row = h.report(meas)[0]
        self.assertAlmostEqual(row["speedup"], 160.0 / 145.0, delta=0.01)

    def test_resumed_measurements_give_the_same_decision(self):
        h = HeadToHead(("both",), [1, 8], {("both", 1): D, ("both", 8): D}, {("both", 1): [A], ("both", 8): [B]})
        t = noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 49.0, ("both", D.key(), 8): 80.0,
                   ("both", B.key(), 8): 60.0}, 0.03, seed=5)
        meas = drive(h, t)
        again = HeadToHead(("both",), [1, 8], {("both", 1): D, ("both", 8): D}, {("both", 1): [A], ("both", 8): [B]})
        self.assertEqual(again.winners(meas), h.winners(meas))
        self.assertIsNone(again.next_units(meas))


class PairedDecisions(Decisions):
    """Every decision above, with the tuned configs timed in units paired with the default (Unit.pair,
    as a tune runs them): on drift-free timings the paired head-to-head decides as the unpaired one."""

    def setUp(self):
        global HeadToHead
        self._plain = HeadToHead
        plain = self._plain
        HeadToHead = lambda *a, **kw: plain(*a, **dict(kw, paired=True))  # noqa: E731

    def tearDown(self):
        global HeadToHead
        HeadToHead = self._plain

    def test_small_margin_inside_noise_runs_more_rounds_then_keeps_default(self):
        # Paired, the ratio of each unit is judged: a 1% gain under 8% noise may be found or not; a
        # challenger 1% slower under that noise is never chosen, whatever the noise draws (20 seeds).
        for seed in range(20):
            h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A]})
            meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 50.5}, 0.08, seed=seed))
            self.assertEqual(h.winners(meas), {("both", 1): D}, seed)
        h = HeadToHead(("both",), [1], {("both", 1): D}, {("both", 1): [A]})
        meas = drive(h, noisy({("both", D.key(), 1): 50.0, ("both", A.key(), 1): 49.5}, 0.08, seed=3))
        self.assertIn(h.report(meas)[0]["decision"], ("tie_default_kept", "tuned_faster", "default_fastest"))


def drifting(true_us, drift, rel_noise, seed=0):
    """Per round the GPU's clock moves every config by the same factor (round 0 fast, then 1 - drift,
    1 + drift, ...), as large-M units on an H200 do between rounds; within a round, rel_noise."""
    rng = random.Random(seed)

    def timing(op, cfg, m, rnd):
        f = 1.0 + drift * (rnd % 3 - 1)
        return [true_us[(op, cfg.key(), m)] * f * (1.0 + rng.uniform(-rel_noise, rel_noise)) for _ in range(3)]
    return timing


class Paired(unittest.TestCase):
    def test_units_pair_every_tuned_config_with_the_default(self):
        h = HeadToHead(("up", "down"), [4], {("up", 4): D, ("down", 4): D}, {("up", 4): [A, B], ("down", 4): []},
                       paired=True)
        units = h.next_units([])
        first = [u for u in units if u.round == H2H_ROUND]
        self.assertEqual(sorted((u.op, u.cfg.key(), u.pair.key() if u.pair else None) for u in first),
                         sorted([("up", A.key(), D.key()), ("up", B.key(), D.key()), ("down", D.key(), None)]))
        self.assertEqual(len({u.ident() for u in units}), len(units))
        self.assertIn("|pair:" + D.key(), first[0].ident() if first[0].pair else first[1].ident())

    def test_drift_between_rounds_cannot_hide_a_steady_gain(self):
        # 2.5% faster in every unit, 6% clock drift between rounds: paired, the ratio decides at once; the
        # unpaired head-to-head sees overlapping rounds and keeps the default after every round it has
        true = {("both", D.key(), 4096): 1000.0, ("both", A.key(), 4096): 975.0}
        paired = HeadToHead(("both",), [4096], {("both", 4096): D}, {("both", 4096): [A]}, paired=True)
        row = paired.report(drive(paired, drifting(true, 0.06, 0.002)))[0]
        self.assertEqual(row["decision"], "tuned_faster")
        self.assertAlmostEqual(row["speedup"], 1000.0 / 975.0, delta=0.006)
        plain = HeadToHead(("both",), [4096], {("both", 4096): D}, {("both", 4096): [A]})
        row = plain.report(drive(plain, drifting(true, 0.06, 0.002)))[0]
        self.assertEqual(row["decision"], "tie_default_kept")
        self.assertEqual(row["rounds"], MAX_ROUNDS)

    def test_a_failed_default_leaves_the_tuned_config(self):
        h = HeadToHead(("both",), [8], {("both", 8): D}, {("both", 8): [A]}, paired=True)
        base = noisy({("both", D.key(), 8): 50.0, ("both", A.key(), 8): 48.0}, 0.01)
        meas = drive(h, lambda op, cfg, m, rnd: None if cfg == D else base(op, cfg, m, rnd))
        self.assertTrue(all(x.ok and not x.paired and x.pair_error for x in meas))
        row = h.report(meas)[0]
        self.assertEqual(row["decision"], "default_failed")
        self.assertEqual(h.winners(meas), {("both", 8): A})

    def test_paired_measurements_survive_the_journal(self):
        from moetune_agent.runs.logs import measurement_from_record, measurement_record
        from moetune_agent.work import Unit

        u = Unit("up", A, 64, 10, H2H_ROUND + 1, pair=D)
        for meas in (Measurement(u, [2.0, 2.1], pair_samples_us=[3.0, 3.2]),
                     Measurement(u, [2.0], pair_error="resources: out of shared memory")):
            rec = json.loads(json.dumps(measurement_record(meas, 7)))
            back = measurement_from_record(rec)
            self.assertEqual(back.unit, u)
            self.assertEqual(back.unit.ident(), rec["unit"])
            self.assertEqual((back.samples_us, back.pair_samples_us, back.pair_error),
                             (meas.samples_us, meas.pair_samples_us, meas.pair_error))
        # a damaged or hostile pair in a journal line: an error the journal counts as damage (re-measured)
        good = measurement_record(Measurement(u, [2.0], pair_samples_us=[3.0]), 1)
        for bad in ({"pair": "m16"}, {"pair": {"BLOCK_SIZE_M": "x"}}, {"pair_samples_us": "abc"},
                    {"pair_samples_us": [None]}, {"pair": [1, 2]}):
            with self.assertRaises((ValueError, KeyError, TypeError, AttributeError), msg=bad):
                measurement_from_record(dict(good, **bad))


class PartialRounds(unittest.TestCase):
    """A round timed only in part (the early head-to-head's fillers left over when a phase ended) is not
    counted as run: next_units asks for its missing unit and no decision rests on it; once timed, the
    decision is the one of a head-to-head whose rounds were all whole."""

    def test_a_partial_round_is_completed_before_it_counts(self):
        true_us = {("both", D.key(), 8): 100.0, ("both", A.key(), 8): 90.0, ("both", B.key(), 8): 95.0}
        timing = noisy(true_us, 0.002, seed=3)
        h = HeadToHead(("both",), [8], {("both", 8): D}, {("both", 8): [A, B]}, paired=True)
        whole = drive(h, timing)

        def meas_of(u):
            m = Measurement(u, timing(u.op, u.cfg, u.m, u.round - H2H_ROUND))
            m.pair_samples_us = timing(u.op, u.pair, u.m, u.round - H2H_ROUND)
            return m
        first = h.next_units([])
        self.assertEqual(len(first), 2 * EARLY_ROUNDS)  # A and B, each paired with D, per round
        measured = [meas_of(u) for u in first if u.round - H2H_ROUND == 0] + [meas_of(first[-1])]
        # round 0 whole, round 1 with one of its two units: one round run, round 1's other unit asked for
        self.assertEqual(h.decisions(measured)[8]["rounds"], 1)
        again = h.next_units(measured)
        missing = [u for u in first if u.round - H2H_ROUND == 1 and u.ident() != first[-1].ident()]
        done = {x.unit.ident() for x in measured}
        self.assertEqual([u.ident() for u in again if u.round - H2H_ROUND == 1 and u.ident() not in done],
                         [u.ident() for u in missing])
        for _ in range(20):  # go on to the end, the already timed units left out as the session does
            done = {x.unit.ident() for x in measured}
            units = h.next_units(measured)
            if units is None:
                break
            measured += [meas_of(u) for u in units if u.ident() not in done]
        self.assertEqual(h.winners(measured), h.winners(whole))
        self.assertEqual(h.decisions(measured)[8]["rounds"], h.decisions(whole)[8]["rounds"])


class ReplayedH200(unittest.TestCase):
    """Contenders and defaults served from the recorded H200 samples (test double for the GPU): each
    round's unit gets 10 samples drawn from that config's recorded ones."""

    @classmethod
    def setUpClass(cls):
        rec = load_recording(DATA)
        cls.samples = {(int(m), k): v for m, d in rec["samples"].items() for k, v in d.items()}

    def timing(self, seed):
        rng = random.Random(seed)

        def t(op, cfg, m, rnd):
            rec = self.samples[(m, cfg.key())]
            return [rng.choice(rec) for _ in range(10)]
        return t

    def med(self, m, k):
        s = sorted(self.samples[(m, k)])
        return 0.5 * (s[4] + s[5])

    def test_default_kept_where_tuned_is_not_faster_and_tuned_where_it_is(self):
        default = KernelConfig(16, 32, 64, 1, 4, 3)   # SGLang's heuristic for M <= E
        for m in (1, 16, 64):
            keys = [k for (mm, k) in self.samples if mm == m]
            dm = self.med(m, default.key())
            slower = [k for k in keys if self.med(m, k) > dm * 1.05][:2]
            best = min(keys, key=lambda k: self.med(m, k))
            near = min((k for k in keys if k != default.key()), key=lambda k: abs(self.med(m, k) / dm - 1.0))
            with self.subTest(m=m):
                h = HeadToHead(("both",), [m], {("both", m): default}, {("both", m): [parse_key(k) for k in slower]})
                meas = drive(h, self.timing(m))
                self.assertEqual(h.winners(meas)[("both", m)], default)   # the default winning -> its config
                h = HeadToHead(("both",), [m], {("both", m): default},
                               {("both", m): [parse_key(best)] + [parse_key(k) for k in slower]})
                meas = drive(h, self.timing(m + 1))
                row = h.report(meas)[0]
                if self.med(m, best) < dm * 0.97:
                    self.assertEqual(h.winners(meas)[("both", m)], parse_key(best))
                    self.assertGreater(row["speedup"], 1.0)
                self.assertGreaterEqual(row["speedup"], 1.0)   # never slower than the default
                h = HeadToHead(("both",), [m], {("both", m): default}, {("both", m): [parse_key(near)]})
                meas = drive(h, self.timing(m + 2))
                self.assertGreaterEqual(h.report(meas)[0]["speedup"], 1.0)


class WholeRuns(RunCase):
    """Synthetic runs (simulated) end to end: result.json records the head-to-head per key."""

    def test_result_records_head_to_head(self):
        r = self.finished_run(small_spec(strategy="fast", ops="up+down"))
        run_dir = r.one("run_started")["run_dir"]
        with open(os.path.join(run_dir, "result.json")) as f:
            res = json.load(f)
        self.assertEqual([h["m"] for h in res["head_to_head"]], [1, 64, 512])
        for h in res["head_to_head"]:
            self.assertGreaterEqual(h["rounds"], EARLY_ROUNDS)
            self.assertIn(h["decision"], ("tuned_faster", "default_fastest", "tie_default_kept"))
            self.assertGreaterEqual(h["speedup"], 1.0)
            self.assertIsNotNone(h["default"]["spread"])
            pb = next(p for p in res["per_batch"] if p["m"] == h["m"])
            self.assertEqual(pb["speedup"], h["speedup"])
        self.assertEqual(res["default_source"]["kind"], "heuristic")
        self.assertEqual(res["routing"]["kind"], "random")
        finals = [e for e in r.of("best") if e["final"]]
        self.assertEqual(len(finals), 6)

    def test_existing_file_as_baseline_keeps_it(self):
        # First run: tune. Second run: that run's own file is the server's existing file (the default):
        # every key's head-to-head then compares the same configs and the file keeps them.
        r1 = self.finished_run(small_spec(strategy="fast"))
        written = {e["kind"]: e for e in r1.of("result_written")}
        path = written["sglang"]["path"]
        with open(path) as f:
            first, _ = configjson.parse_config_text(f.read())
        r2 = self.run_agent("tune", self.write_spec(small_spec(strategy="fast"), "again.json"), "--foreground",
                            "--new", env={"MOETUNE_SYNTHETIC_DEFAULT_FILE": path})
        self.assertEqual(r2.rc, 0, r2.stderr)
        self.assertEqual(r2.one("run_started")["default_source"]["kind"], "file")
        with open(os.path.join(r2.one("run_started")["run_dir"], "result.json")) as f:
            res = json.load(f)
        for h in res["head_to_head"]:
            self.assertTrue(h["chosen_default"], h)
        second = {e["kind"]: e for e in r2.of("result_written")}
        with open(second["sglang"]["path"]) as f:
            again, _ = configjson.parse_config_text(f.read())
        self.assertEqual(again, first)

    def test_single_file_run_warns_about_an_existing_down_file(self):
        up = os.path.join(self.tmp, "cfg.json")
        entries = {1: KernelConfig(16, 64, 64, 1, 4, 2), 64: KernelConfig(16, 64, 64, 1, 4, 2),
                   512: KernelConfig(64, 64, 64, 1, 4, 2)}
        for path in (up, os.path.join(self.tmp, "cfg_down.json")):
            with open(path, "w") as f:
                f.write(configjson.format_config_text(entries))
        r = self.run_agent("tune", self.write_spec(small_spec()), "--foreground", "--new",
                           env={"MOETUNE_SYNTHETIC_DEFAULT_FILE": up})
        self.assertEqual(r.rc, 0, r.stderr)
        warn = [e["message"] for e in r.of("log") if "for the down GEMM" in e["message"]]
        self.assertEqual(len(warn), 1)
        self.assertIn("cfg_down.json", warn[0])
        r2 = self.run_agent("tune", self.write_spec(small_spec(ops="up+down"), "ud.json"), "--foreground", "--new",
                            env={"MOETUNE_SYNTHETIC_DEFAULT_FILE": up})
        self.assertEqual([e for e in r2.of("log") if "for the down GEMM" in e["message"]], [])

    def test_bad_existing_file_is_replaced_where_tuned_wins(self):
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as f:
            f.write(configjson.format_config_text({1: KernelConfig(16, 64, 64, 1, 4, 2),
                                                   64: KernelConfig(16, 64, 64, 1, 4, 2),
                                                   512: KernelConfig(16, 64, 64, 1, 4, 2)}))
        r = self.run_agent("tune", self.write_spec(small_spec(strategy="fast")), "--foreground", "--new",
                           env={"MOETUNE_SYNTHETIC_DEFAULT_FILE": bad})
        self.assertEqual(r.rc, 0, r.stderr)
        with open(os.path.join(r.one("run_started")["run_dir"], "result.json")) as f:
            res = json.load(f)
        by_m = {h["m"]: h for h in res["head_to_head"]}
        self.assertEqual(by_m[512]["decision"], "tuned_faster")   # BLOCK_SIZE_M 16 at 512 tokens is far off
        for h in by_m.values():
            self.assertGreaterEqual(h["speedup"], 1.0)


if __name__ == "__main__":
    unittest.main()


class TimedReplays(unittest.TestCase):
    """How many replays a timed unit gets (issue 22): one rule for the head-to-head and the headroom
    check, from the default's measured call; screening units time back-to-back launches of a 2-call graph
    from the call's HBM floor."""

    D = KernelConfig(64, 64, 32, 8, 4, 3)
    T = KernelConfig(128, 256, 64, 1, 8, 4)

    def test_rule(self):
        from moetune_agent import work

        self.assertEqual(work.timed_replays(55.0), 10)     # M = 1: 10 calls of 55 us a replay
        self.assertEqual(work.timed_replays(300.0), 7)     # M = 64
        self.assertEqual(work.timed_replays(1500.0), 3)    # M = 4096's default
        self.assertEqual(work.timed_replays(None), work.TIMED_MIN_REPLAYS)
        self.assertEqual(work.timed_replays(float("inf"), unknown=10), 10)

    def test_head_to_head_units_follow_the_default_call(self):
        sizes = [1, 4096]
        defaults = {("up", m): self.D for m in sizes}
        cont = {("up", m): [self.T] for m in sizes}
        h = HeadToHead(("up",), sizes, defaults, cont, call_us={("up", 1): 55.0, ("up", 4096): 1500.0})
        reps = {(u.m, u.cfg.key()): u.replays for u in h.next_units([])}
        self.assertEqual(reps, {(1, self.D.key()): 10, (1, self.T.key()): 10,
                                (4096, self.D.key()): 3, (4096, self.T.key()): 3})
        # without the default's times (a resumed run of an agent before this rule): 10 everywhere
        old = HeadToHead(("up",), sizes, defaults, cont)
        self.assertEqual({u.replays for u in old.next_units([])}, {10})
        # a size whose default failed: the default replays
        h2 = HeadToHead(("up",), sizes, defaults, cont, call_us={("up", 1): None, ("up", 4096): 1500.0})
        self.assertEqual({u.replays for u in h2.next_units([]) if u.m == 1}, {10})

    def test_screening_launches_from_the_floor(self):
        from moetune_agent.backends import triton_backend as tb
        from moetune_agent.kernel_types import Shape

        qwen = Shape(128, 768, 2048, 8, "bf16", None, False)
        calls = [tb.screen_calls(qwen, "up", m) for m in (1, 16, 64, 256, 1024, 4096)]
        self.assertEqual(calls[0], tb.SCREEN_GRAPH_CALLS * tb.SCREEN_MAX_LAUNCHES)  # a 10 us call: 10 calls
        self.assertEqual(calls[-1], 4)   # ~175 us floor (every expert's weights): 2 launches of 2 calls
        self.assertEqual(calls, sorted(calls, reverse=True))
        self.assertEqual(tb.screen_launches(None), tb.SCREEN_MAX_LAUNCHES)
        self.assertEqual(tb.screen_launches(5000.0), 1)
        # the measured floor and the nominal one share the bytes
        self.assertAlmostEqual(tb.floor_bytes(qwen, "up", 4096) / 4.8e12 * 1e6,
                               tb.TritonBackend(qwen).call_floor_us("up", 4096), places=6)
