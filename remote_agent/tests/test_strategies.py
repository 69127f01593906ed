# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Strategies on a deterministic landscape (no GPU): exhaustive finds the true best, separate up/down
winners share BLOCK_SIZE_M, failures are skipped, a resumed run repeats nothing, unknown names are
refused. The fast strategy's regret and cost are checked in test_strategies_replay.py and below."""

import itertools
import math
import os
import random
import sys
import unittest
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from moetune_agent.kernel_types import KernelConfig, Shape  # noqa: E402
from moetune_agent.strategies import STRATEGIES, make_strategy  # noqa: E402
from moetune_agent.work import Measurement, Unit  # noqa: E402

SHAPE = Shape(E=128, N=768, K=2048, topk=8)
BATCHES = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)


def full_space():
    out = []
    for bm, bn, bk, gm, w, s in itertools.product((16, 32, 64, 128, 256), (32, 64, 128, 256), (64, 128, 256),
                                                  (1, 16, 32, 64), (4, 8), (2, 3, 4, 5)):
        if (s - (1 if bm < 64 else 0)) * (bm + bn) * bk * 2 <= 232448:
            out.append(KernelConfig(bm, bn, bk, gm, w, s))
    return out


def landscape(op, cfg, m, noise_seed=None):
    """A made-up but structured latency model in microseconds (a test double standing in for a GPU):
    padding waste from BLOCK_SIZE_M vs tokens per expert, tile efficiency, warps/stages preferences
    that move with m, and a small deterministic per-config ripple; optional multiplicative noise."""
    tpe = max(1.0, m * SHAPE.topk / SHAPE.E)
    bm, bn, bk = cfg.BLOCK_SIZE_M, cfg.BLOCK_SIZE_N, cfg.BLOCK_SIZE_K
    pad = math.ceil(tpe / bm) * bm / tpe
    work = (m * SHAPE.topk * (2 if op == "up" else 1)) * pad
    eff = 1.0 / (1.0 + 32.0 / bn + 16.0 / bk + (0.3 if cfg.num_warps == 8 and bm * bn < 8192 else 0.0))
    big = math.log2(m + 1) / 12.0
    stage_pref = abs(cfg.num_stages - (2 + 2 * big)) * 0.02
    gm_pref = (0.0 if cfg.GROUP_SIZE_M in (1, 16) else 0.01) * big
    ripple = ((zlib.crc32((op + cfg.key()).encode()) % 1000) / 1000.0) * 0.03
    base = 20.0 + work * 0.02 / eff
    t = base * (1.0 + stage_pref + gm_pref + ripple)
    if noise_seed is not None:
        t *= 1.0 + random.Random(noise_seed).gauss(0.0, 0.005)
    return t


def run(strategy, fail=lambda u: None, measured=None, noise=False):
    """Drive a strategy the way the scheduler does; returns (measurements, total replays spent)."""
    measured = list(measured or [])
    spent = 0
    phases = 0
    while True:
        phase = strategy.next_phase(measured)
        if phase is None:
            break
        phases += 1
        assert phases < 1000, "strategy does not terminate"
        for u in phase:
            err = fail(u)
            if err:
                measured.append(Measurement(u, None, err, "failed"))
                continue
            seed = zlib.crc32(u.ident().encode()) if noise else None
            samples = [landscape(u.op, u.cfg, u.m, None if seed is None else seed + i) for i in range(u.replays)]
            spent += u.replays + 5
            measured.append(Measurement(u, samples))
    return measured, spent


def space_for(ops, batches=BATCHES):
    sp = full_space()
    return {(op, m): sp for op in ops for m in batches}


class ExhaustiveTest(unittest.TestCase):
    def test_finds_true_best(self):
        batches = (1, 64, 4096)
        for ops in (("both",), ("up",)):
            with self.subTest(ops=ops):
                space = space_for(ops, batches)
                st = make_strategy("exhaustive", space, batches, ops, SHAPE)
                meas, _ = run(st)
                self.assertEqual(len(meas), sum(len(v) for v in space.values()))
                win = st.winners(meas)
                for m in batches:
                    truth = min(space[(ops[0], m)], key=lambda c: landscape(ops[0], c, m))
                    self.assertEqual(win[(ops[0], m)], truth)

    def test_up_down_share_block_m(self):
        batches = (1, 16, 256, 4096)
        space = space_for(("up", "down"), batches)
        st = make_strategy("exhaustive", space, batches, ("up", "down"), SHAPE)
        meas, _ = run(st)
        win = st.winners(meas)
        for m in batches:
            self.assertEqual(win[("up", m)].BLOCK_SIZE_M, win[("down", m)].BLOCK_SIZE_M)
            best = {}
            for op in ("up", "down"):
                for c in space[(op, m)]:
                    t = landscape(op, c, m)
                    if t < best.get((op, c.BLOCK_SIZE_M), float("inf")):
                        best[(op, c.BLOCK_SIZE_M)] = t
            best_pair = min(best[("up", b)] + best[("down", b)] for b in (16, 32, 64, 128, 256))
            got = landscape("up", win[("up", m)], m) + landscape("down", win[("down", m)], m)
            self.assertAlmostEqual(got, best_pair, places=6)

    def test_failures_skipped_and_resume_repeats_nothing(self):
        batches = (8, 512)
        space = space_for(("both",), batches)
        truth = {m: min(space[("both", m)], key=lambda c: landscape("both", c, m)) for m in batches}
        # the true best fails to compile: the runner-up must win, and it must not be fatal
        bad = {truth[8].key()}
        st = make_strategy("exhaustive", space, batches, ("both",), SHAPE)
        half = st.next_phase([])[: len(space[("both", 8)])]
        partial = [Measurement(u, [landscape(u.op, u.cfg, u.m)] * u.replays) for u in half
                   if u.cfg.key() not in bad]
        meas, _ = run(st, fail=lambda u: "compile" if u.cfg.key() in bad else None, measured=partial)
        idents = [x.unit.ident() for x in meas]
        self.assertEqual(len(idents), len(set(idents)), "a resumed run measured a unit twice")
        win = st.winners(meas)
        self.assertNotEqual(win[("both", 8)].key(), truth[8].key())
        if truth[512].key() not in bad:
            self.assertEqual(win[("both", 512)], truth[512])

    def test_unknown_strategy_is_refused(self):
        with self.assertRaises(ValueError) as cm:
            make_strategy("bogus", {}, (1,), ("both",), SHAPE)
        self.assertIn("exhaustive", str(cm.exception))
        self.assertIn("exhaustive", STRATEGIES)


def run_backend(strategy, backend):
    """Drive a strategy against a Backend; returns (measurements, units, replays)."""
    from moetune_agent.kernel_types import CandidateError
    measured, units, replays = [], 0, 0
    while True:
        phase = strategy.next_phase(measured)
        if phase is None:
            return measured, units, replays
        for u in phase:
            units += 1
            replays += u.replays
            try:
                t = backend.measure(u.op, u.cfg, u.m, u.replays, u.cfg_down)
                measured.append(Measurement(u, t.samples_us))
            except CandidateError as e:
                measured.append(Measurement(u, None, e.kind, e.message))


class FastOnSyntheticTest(unittest.TestCase):
    """The fast strategy against the agent's synthetic backend (a simulated latency model with
    failures and noise): near-exhaustive answers for a small fraction of the work."""

    SIZES = (1, 4, 16, 64, 256, 1024, 4096)

    def compare(self, shape, ops):
        from moetune_agent import space as space_mod
        from moetune_agent.backends.synthetic import SyntheticBackend
        be = SyntheticBackend(shape)
        space = space_mod.build_space(shape, self.SIZES, ops)
        ex = make_strategy("exhaustive", space, self.SIZES, ops, shape)
        me, ue, re_ = run_backend(ex, be)
        fa = make_strategy("fast", space, self.SIZES, ops, shape)
        mf, uf, rf = run_backend(fa, be)
        we, wf = ex.winners(me), fa.winners(mf)
        regrets = []
        for m in self.SIZES:
            te = sum(be.model_us(op, we[(op, m)], m) for op in ops)
            tf = sum(be.model_us(op, wf[(op, m)], m) for op in ops)
            regrets.append(tf / te)
        return regrets, (ue, re_), (uf, rf), wf

    def test_bf16_and_fp8_regret_and_cost(self):
        for shape in (SHAPE, Shape(E=256, N=256, K=7168, topk=8, dtype="fp8_w8a8", block_shape=(128, 128))):
            with self.subTest(dtype=shape.dtype):
                regrets, (ue, re_), (uf, rf), _ = self.compare(shape, ("both",))
                geo = math.exp(sum(math.log(r) for r in regrets) / len(regrets))
                self.assertLessEqual(geo, 1.01, regrets)
                self.assertLessEqual(max(regrets), 1.03, regrets)
                self.assertLess(uf * 5, ue, "fast measured more than a fifth of the units")
                self.assertLess(rf * 10, re_, "fast spent more than a tenth of the replays")

    def test_separate_up_down_share_block_m(self):
        regrets, _, _, wf = self.compare(SHAPE, ("up", "down"))
        for m in self.SIZES:
            self.assertEqual(wf[("up", m)].BLOCK_SIZE_M, wf[("down", m)].BLOCK_SIZE_M)
        self.assertLessEqual(max(regrets), 1.03, regrets)

    def test_every_batch_size_gets_a_winner_from_its_space(self):
        from moetune_agent import space as space_mod
        from moetune_agent.backends.synthetic import SyntheticBackend
        sizes = BATCHES
        space = space_mod.build_space(SHAPE, sizes, ("both",))
        fa = make_strategy("fast", space, sizes, ("both",), SHAPE)
        meas, _, _ = run_backend(fa, SyntheticBackend(SHAPE))
        win = fa.winners(meas)
        for m in sizes:
            self.assertIn(win[("both", m)], space[("both", m)])
        idents = [x.unit.ident() for x in meas]
        self.assertEqual(len(idents), len(set(idents)), "a unit was measured twice")
        self.assertIn(1, fa.anchors)
        self.assertIn(4096, fa.anchors)


class SharedGroupSizeScreen(unittest.TestCase):
    """kernel_classes (the servers' kernels: GROUP_SIZE_M compiled in, binaries shared within a batch-size
    class): an anchor screens each tile with the GROUP_SIZE_M of the largest anchor of its class, so the
    first phase compiles fewer binaries (SGLang main, 18 sizes: 272 -> 208), and every other anchor keeps
    its own."""

    # the BLOCK_SIZE_M floor of the screen (ScreenBlockMFloor) drops the tiles whose binaries the shared
    # GROUP_SIZE_M saved at M = 4096; this is the mechanism without it (screen_bm_floor=False throughout)
    def test_fewer_binaries_and_same_tiles(self):
        from moetune_agent import space as space_mod
        from moetune_agent.backends.server_backend import classes_for
        from moetune_agent.engine.pool import precompile_key

        sizes = BATCHES
        for fw in ("sglang", "vllm"):
            classes = classes_for(fw, SHAPE)
            space = space_mod.build_space(SHAPE, sizes, ("up",))
            own = make_strategy("fast", space, sizes, ("up",), SHAPE, screen_bm_floor=False).next_phase([])
            st = make_strategy("fast", space, sizes, ("up",), SHAPE, screen_bm_floor=False, kernel_classes=classes)
            shared = st.next_phase([])
            self.assertEqual(st.anchors, [1, 16, 256, 4096])

            def keys(units):
                return {precompile_key(u.op, u.cfg, u.m, True, classes) for u in units}  # pylint: disable=cell-var-from-loop

            self.assertEqual(len(shared), len(own))
            self.assertLess(len(keys(shared)), len(keys(own)) * 0.8, fw)
            # the same tiles and warps at every anchor; only GROUP_SIZE_M moved, at 256 (4096's class; for vLLM
            # some tiles' binaries at 16 too), never at the largest anchor nor at 1 (a class of its own)
            strip = lambda us: sorted((u.m, u.cfg.BLOCK_SIZE_M, u.cfg.BLOCK_SIZE_N, u.cfg.BLOCK_SIZE_K,  # noqa: E731
                                       u.cfg.num_warps, u.cfg.num_stages) for u in us)
            self.assertEqual(strip(shared), strip(own))
            moved = {u.m for u in shared} - {u.m for u in own if u in set(shared)}
            self.assertEqual(moved, {256} if fw == "sglang" else {16, 256}, fw)
            at256 = {u.cfg for u in shared if u.m == 256}
            at4096 = {u.cfg for u in shared if u.m == 4096}
            self.assertTrue(all(c.GROUP_SIZE_M == 16 for c in at256))
            self.assertGreater(len(at256 & at4096), len(at256) // 2)

    def test_no_classes_or_unknown_class_keeps_each_anchors_own(self):
        from moetune_agent import space as space_mod

        sizes = BATCHES
        space = space_mod.build_space(SHAPE, sizes, ("up",))
        own = make_strategy("fast", space, sizes, ("up",), SHAPE, screen_bm_floor=False).next_phase([])
        unknown = make_strategy("fast", space, sizes, ("up",), SHAPE, screen_bm_floor=False,
                                kernel_classes=lambda op, cfg, m: None).next_phase([])
        self.assertEqual(own, unknown)

        def broken(op, cfg, m):
            raise KeyError(m)

        self.assertEqual(make_strategy("fast", space, sizes, ("up",), SHAPE, screen_bm_floor=False, kernel_classes=broken).next_phase([]), own)


if __name__ == "__main__":
    unittest.main()


class WideTiles(unittest.TestCase):
    """Wide tiles (BLOCK_SIZE_M >= 64, BLOCK_SIZE_N >= 256) are screened with 8 warps only (fast.wide_tile):
    their 4-warp kernels never won on the recorded H200 landscapes and are the slowest to compile; every
    other tile keeps both warps counts, and a leading wide tile still gets 4 warps in the later phases."""

    def screen(self, wide_tiles_w8=True):
        from moetune_agent import space as space_mod
        space = space_mod.build_space(SHAPE, [1, 4096], ("up",))
        return space, make_strategy("fast", space, [1, 4096], ("up",), SHAPE,
                                    wide_tiles_w8=wide_tiles_w8).next_phase([])

    def test_wide_tiles_screen_with_8_warps_only(self):
        _space, units = self.screen()
        by_tile = {}
        for u in units:
            c = u.cfg
            by_tile.setdefault((u.m, c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K), set()).add(c.num_warps)
        wide = {t: w for t, w in by_tile.items() if t[1] >= 64 and t[2] >= 256}
        self.assertTrue(wide)
        self.assertTrue(all(w == {8} for w in wide.values()), wide)
        narrow = [w for t, w in by_tile.items() if not (t[1] >= 64 and t[2] >= 256)]
        self.assertTrue(all(w == {4, 8} for w in narrow))
        _space, before = self.screen(wide_tiles_w8=False)
        self.assertEqual(len(before) - len(units), len(wide))

    def test_a_leading_wide_tile_gets_4_warps_later(self):
        space, units = self.screen()
        st = make_strategy("fast", space, [1, 4096], ("up",), SHAPE)
        lead = next(u for u in units if u.m == 4096 and u.cfg.BLOCK_SIZE_M == 128 and u.cfg.BLOCK_SIZE_N == 256)
        meas = [Measurement(u, [10.0 if u is lead else 50.0 + (zlib.crc32(u.cfg.key().encode()) % 7)]) for u in units]
        later = []
        while True:
            ph = st.next_phase(meas + later)
            if ph is None:
                break
            later += [Measurement(u, [10.0 if u.cfg.num_warps == 4 and u.cfg.BLOCK_SIZE_N == 256 else 60.0])
                      for u in ph]
        tried = {(u.unit.cfg.BLOCK_SIZE_M, u.unit.cfg.BLOCK_SIZE_N, u.unit.cfg.num_warps) for u in later
                 if u.unit.m == 4096}
        self.assertIn((128, 256, 4), tried)


class ScreenBlockMFloor(unittest.TestCase):
    """The tile screen skips BLOCK_SIZE_M below a quarter of the size's largest (fast.SCREEN_BM_FLOOR_DIV): at
    M = 4096 (cap 256) no tile of 16 or 32 rows, at M = 1 (cap 16) every tile; screen_bm_floor=False screens
    them all."""

    def first(self, screen_bm_floor=True):
        from moetune_agent import space as space_mod
        space = space_mod.build_space(SHAPE, [1, 1024, 4096], ("up",))
        return make_strategy("fast", space, [1, 1024, 4096], ("up",), SHAPE,
                             screen_bm_floor=screen_bm_floor).next_phase([])

    def test_floor(self):
        bms = lambda us, m: sorted({u.cfg.BLOCK_SIZE_M for u in us if u.m == m})  # noqa: E731
        units = self.first()
        self.assertEqual(bms(units, 1), [16])
        self.assertEqual(bms(units, 1024), [32, 64, 128])
        self.assertEqual(bms(units, 4096), [64, 128, 256])
        every = self.first(screen_bm_floor=False)
        self.assertEqual(bms(every, 1024), [16, 32, 64, 128])
        self.assertEqual(bms(every, 4096), [16, 32, 64, 128, 256])


class SameLaunch(unittest.TestCase):
    """On moetune's own kernel (strategies.strategy_options: same_launch) the fast strategy times one launch
    once per size and tier: a config equal to a measured one but for a GROUP_SIZE_M at or above the grid's M
    tiles (space.launch_key) is not proposed, and the head-to-head's next best passes over one as well."""

    def drive(self, same):
        from moetune_agent import space as space_mod
        from moetune_agent.backends.synthetic import SyntheticBackend
        sizes = [1, 2, 4, 64, 1024]
        space = space_mod.build_space(SHAPE, sizes, ("up",))
        st = make_strategy("fast", space, sizes, ("up",), SHAPE, **({"same_launch": True} if same else {}))
        measured, _units, _replays = run_backend(st, SyntheticBackend(SHAPE))
        return st, measured

    def test_one_launch_is_timed_once_per_size_and_tier(self):
        from moetune_agent import space as space_mod
        from moetune_agent.strategies.common import TIER
        _st, off = self.drive(False)
        st, on = self.drive(True)

        def repeats(measured):
            seen, n = {}, 0
            for x in measured:
                u = x.unit
                k = (u.m, u.round // TIER, space_mod.launch_key(u.cfg, SHAPE, u.m))
                if seen.setdefault(k, u.cfg.key()) != u.cfg.key():
                    n += 1
            return n
        self.assertGreater(repeats(off), 0)   # without the rule the GROUP_SIZE_M sweeps at M <= 4 repeat launches
        self.assertEqual(repeats(on), 0)
        self.assertLess(len(on), len(off))
        self.assertEqual({u.m for u in (x.unit for x in off)} - {u.m for u in (x.unit for x in on)}, set())
        self.assertEqual(set(st.winners(on)), {("up", m) for m in (1, 2, 4, 64, 1024)})

    def test_the_head_to_heads_next_best_is_another_launch(self):
        from moetune_agent.strategies.common import Book
        from moetune_agent.strategies.headtohead import pick_contenders
        a = KernelConfig(16, 32, 128, 16, 4, 3)
        twin = KernelConfig(16, 32, 128, 32, 4, 3)   # one launch with a at M = 1 (8 M tiles)
        other = KernelConfig(16, 64, 128, 1, 4, 3)
        meas = [Measurement(Unit("up", c, 1, 10, 100), [t]) for c, t in ((a, 10.0), (twin, 10.1), (other, 11.0))]
        got = pick_contenders(Book(meas), {("up", 1): a}, ("up",), [1], finalists=2, launch_shape=SHAPE)
        self.assertEqual(got[("up", 1)], [a, other])
        self.assertEqual(pick_contenders(Book(meas), {("up", 1): a}, ("up",), [1], finalists=2)[("up", 1)],
                         [a, twin])
