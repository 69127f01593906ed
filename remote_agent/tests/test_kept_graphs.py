# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kept re-timing graphs of the Triton (and server) backend: which units keep their prepared call
and graph, the memory budget, least-recently-used eviction, and that a unit's own sides are never
evicted under it. TEST DOUBLE: there is no GPU here, so torch.cuda's memory counters and the prepare
step are replaced by a labelled fake that allocates a given number of bytes per prepared call; the real
path runs in gpu_tests/test_fused_moe.py on the H200."""

import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)
from moetune_agent.backends import triton_backend as tb
from moetune_agent.kernel_types import KernelConfig as K, Shape


class FakeGraph(object):
    """TEST DOUBLE of a captured CUDA graph: counts replays, refuses them once reset."""

    def __init__(self, name):
        self.name = name
        self.live = True
        self.replays = 0

    def reset(self):
        self.live = False

    def replay(self):
        assert self.live, "replay of a released graph %s" % self.name
        self.replays += 1


class FakeCuda(object):
    """TEST DOUBLE of torch.cuda's memory counters: reserved bytes grow with each prepared call."""

    def __init__(self, total):
        self.total = total
        self.reserved = 0

    def mem_get_info(self, _dev=None):
        return self.total - self.reserved, self.total

    def memory_reserved(self, _dev=None):
        return self.reserved

    def empty_cache(self):
        pass


class FakeTorch(object):
    def __init__(self, total):
        self.cuda = FakeCuda(total)

    @staticmethod
    def device(*_a):
        return "cuda:0"


class Backend(tb.TritonBackend):
    """The real TritonBackend's keep logic over the fakes: _prepare 'allocates' bytes_of(cfg)."""

    def __init__(self, total, bytes_of):
        super().__init__(Shape(128, 768, 2048, 8), 0, None)
        self._torch = FakeTorch(total)
        self.bytes_of = bytes_of
        self.prepared = []
        self.released = []

    def weights(self):
        return None

    def _inputs(self, m):
        return None, None, None

    def _prepare(self, op, cfg, m, calls, cfg_down=None):
        self.prepared.append((cfg.key(), m))
        self._torch.cuda.reserved += self.bytes_of(cfg, m)
        return ("call", cfg.key(), m), FakeGraph(cfg.key())

    def _release(self, graphs):
        for g in graphs:
            if g is not None:
                g.reset()
                self.released.append(g.name)
                self._torch.cuda.reserved -= self.bytes_of(K.from_key(g.name), 0)


A, B, C, D = (K.from_key(k) for k in ("m16n64k64g1w4s3", "m32n64k64g1w4s3", "m64n64k64g1w4s3", "m64n128k64g1w4s3"))
MB = 1 << 20


class Keep(unittest.TestCase):
    def test_only_re_timing_units_of_a_slow_call_path_keep(self):
        be = Backend(100 * 1024 * MB, lambda c, m: 10 * MB)  # budget 5% of 100 GB = 5 GB
        self.assertFalse(be._keeps(tb.SCREEN_MAX_REPLAYS + 1, "up"))   # a fast (or unknown) capture
        be._capture_ms["up"] = [4.6] * 5                                # the SGLang test tree's
        self.assertFalse(be._keeps(tb.SCREEN_MAX_REPLAYS, "up"))
        self.assertTrue(be._keeps(tb.SCREEN_MAX_REPLAYS + 1, "up"))
        self.assertFalse(be._keeps(10, "down"))
        for flag in (False, True):  # the open experiment's setting (a benchmark's)
            be.keep_graphs = flag
            self.assertEqual(be._keeps(10, "up"), flag)
            self.assertEqual(be._keeps(10, "down"), flag)
            self.assertFalse(be._keeps(1, "down"))

    def test_a_kept_side_is_prepared_once(self):
        be = Backend(100 * 1024 * MB, lambda c, m: 10 * MB)
        for _round in range(5):
            for cfg in (A, B):
                _call, graph, kept = be._side("up", cfg, 64, 10, None, True)
                self.assertTrue(kept)
                graph.replay()
        self.assertEqual(be.prepared, [("m16n64k64g1w4s3", 64), ("m32n64k64g1w4s3", 64)])
        self.assertEqual(kept_counts(be), {"hits": 8, "kept": 2, "evicted": 0})
        # another size or another calls count is another graph
        be._side("up", A, 128, 10, None, True)
        be._side("up", A, 64, 2, None, True)
        self.assertEqual(len(be.prepared), 4)
        be.close()
        self.assertEqual(sorted(be.released), sorted(["m16n64k64g1w4s3"] * 3 + ["m32n64k64g1w4s3"]))
        self.assertEqual(be._kept_bytes, 0)

    def test_the_budget_evicts_the_least_recently_used(self):
        E = K.from_key("m128n64k64g1w4s3")
        be = Backend(2000 * MB, lambda c, m: 24 * MB)  # budget 100 MB (5%): four sides fit
        for cfg in (A, B, C, D):
            be._side("up", cfg, 64, 10, None, True)
        be._side("up", A, 64, 10, None, True)        # A used last: B is the oldest
        be._side("up", E, 64, 10, None, True)
        self.assertEqual(be.released, ["m32n64k64g1w4s3"])
        self.assertEqual([k[1].key() for k in be._kept],
                         ["m64n64k64g1w4s3", "m64n128k64g1w4s3", "m16n64k64g1w4s3", "m128n64k64g1w4s3"])
        self.assertEqual(be._kept_bytes, 96 * MB)
        self.assertEqual(kept_counts(be), {"hits": 1, "kept": 5, "evicted": 1})

    def test_a_side_too_large_for_a_quarter_of_the_budget_is_not_kept(self):
        be = Backend(2000 * MB, lambda c, m: 20 * MB if c != D else 30 * MB)  # a quarter: 25 MB
        _call, graph, kept = be._side("up", D, 4096, 10, None, True)
        self.assertFalse(kept)
        self.assertEqual(len(be._kept), 0)
        self.assertTrue(graph.live)  # the caller releases it after its unit
        self.assertTrue(be._side("up", A, 4096, 10, None, True)[2])

    def test_the_units_other_side_is_never_evicted_under_it(self):
        be = Backend(2000 * MB, lambda c, m: 24 * MB)  # four fit
        for cfg in (A, B, C):
            be._side("up", cfg, 64, 10, None, True)
        _c, mine, kept = be._side("up", A, 64, 10, None, True)  # a hit: A is now the newest
        self.assertTrue(kept)
        be._side("up", D, 64, 10, None, True)
        # the pair (A, E): E needs room; B, the oldest, goes, A (pinned) stays
        E = K.from_key("m128n64k64g1w4s3")
        _c, theirs, kept = be._side("up", E, 64, 10, None, True, pinned=(("up", A, None, 64, 10),))
        self.assertTrue(kept)
        mine.replay()
        theirs.replay()
        self.assertEqual(be.released, ["m32n64k64g1w4s3"])
        # with the only kept side pinned and no room (one entry allowed), the newcomer is not kept
        be2 = Backend(2000 * MB, lambda c, m: 24 * MB)
        saved = tb.KEEP_MAX
        tb.KEEP_MAX = 1
        try:
            _c, g1, k1 = be2._side("up", A, 64, 10, None, True)
            _c, g2, k2 = be2._side("up", B, 64, 10, None, True, pinned=(("up", A, None, 64, 10),))
            _c, g3, k3 = be2._side("up", C, 64, 10, None, True)
        finally:
            tb.KEEP_MAX = saved
        self.assertEqual((k1, k2, k3), (True, False, True))
        self.assertEqual(be2.released, ["m16n64k64g1w4s3"])  # A went for C, once no longer pinned
        self.assertFalse(g1.live)
        g2.replay()
        g3.replay()


def kept_counts(be):
    return {k: be.kept_stats[k] for k in ("hits", "kept", "evicted")}


class Warmup(unittest.TestCase):
    """Warm-up replays: a screening unit as many as it times; a re-timing unit RETIME_WARMUP_REPLAYS (2)."""

    def test_warmup_replays(self):
        self.assertEqual([tb.warmup_replays(r) for r in (1, 2)], [1, 2])
        self.assertEqual([tb.warmup_replays(r) for r in (3, 10)], [2, 2])


class SlowCapture(unittest.TestCase):
    """A call path slow to capture (the SGLang test tree's Python stand-ins: ~4.6 ms a call on the H200)
    gets re-timing graphs of SLOW_GRAPH_CALLS calls launched back to back: the same calls per sample."""

    def test_protocol(self):
        be = Backend(100 * 1024 * MB, lambda c, m: MB)
        self.assertEqual(be._protocol("up", 64, 10), (tb.GRAPH_CALLS, 1, tb.RETIME_WARMUP_REPLAYS))   # nothing captured yet
        be._capture_ms["up"] = [4.6, 4.4, 4.9]
        calls, launches, warm = be._protocol("up", 64, 10)
        self.assertEqual((calls, launches, warm), (tb.SLOW_GRAPH_CALLS, tb.GRAPH_CALLS // tb.SLOW_GRAPH_CALLS,
                                                  tb.RETIME_WARMUP_REPLAYS))
        self.assertEqual(calls * launches, tb.GRAPH_CALLS)
        self.assertEqual(be._protocol("up", 64, 1)[0], tb.SCREEN_GRAPH_CALLS)  # screening units as before
        self.assertEqual(be._protocol("down", 64, 10), (tb.GRAPH_CALLS, 1, tb.RETIME_WARMUP_REPLAYS))  # per op
        be._capture_ms["up"].append(0.3)  # one fast capture among the last: not slow
        self.assertEqual(be._protocol("up", 64, 10), (tb.GRAPH_CALLS, 1, tb.RETIME_WARMUP_REPLAYS))
        be._capture_ms["up"] = [4.6] * 5
        be.slow_capture_graphs = False
        self.assertEqual(be._protocol("up", 64, 10), (tb.GRAPH_CALLS, 1, tb.RETIME_WARMUP_REPLAYS))


if __name__ == "__main__":
    unittest.main()


class _Clock(object):
    """TEST DOUBLE of the GPU's timeline: graph replays add their calls' time, events read it."""

    def __init__(self):
        self.us = 0.0


class _TimedGraph(object):
    """TEST DOUBLE of a captured graph of `calls` calls of call_us each on the clock."""

    def __init__(self, clock, calls, call_us):
        self.clock, self.calls, self.call_us = clock, calls, call_us
        self.replays = 0

    def replay(self):
        self.replays += 1
        self.clock.us += self.calls * self.call_us


class _Event(object):
    def __init__(self, clock):
        self.clock = clock
        self.at = 0.0

    def record(self):
        self.at = self.clock.us

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.at - self.at) / 1000.0  # milliseconds, as torch's


class _Logits(object):
    def copy_(self, _x):
        return self


class _Call(object):
    def __init__(self):
        self.logits = _Logits()


class SizedLaunches(unittest.TestCase):
    """A screening unit's launches per sample follow its call's time, measured by a first warm-up
    replay of one launch (tb.sized_launches), never above the floor's count. TEST DOUBLE: the GPU's
    timeline is a labelled fake clock that graph replays advance; the real path runs in
    gpu_tests/test_fused_moe.py on the H200."""

    def run_unit(self, call_us, launches, replays=1, sides=1, warm=None):
        clock = _Clock()
        be = Backend(100 * 1024 * MB, lambda c, m: MB)
        be._torch.cuda.Event = lambda enable_timing=True: _Event(clock)
        be._inputs = lambda m: (None, [None] * 4, None)
        graphs = [_TimedGraph(clock, tb.SCREEN_GRAPH_CALLS, us) for us in ([call_us] * sides)]
        warm = tb.warmup_replays(replays) if warm is None else warm
        got = be._replays([(_Call(), g) for g in graphs], 64, replays, tb.SCREEN_GRAPH_CALLS, launches, warm)
        return be, graphs, got

    def test_the_rule(self):
        self.assertEqual(tb.sized_launches(5, 10.0), 5)      # near the floor: the floor's count
        self.assertEqual(tb.sized_launches(5, 100.0), 3)     # 500 us / (2 calls x 100 us)
        self.assertEqual(tb.sized_launches(5, 1700.0), 1)    # int4's slow calls: one launch
        self.assertEqual(tb.sized_launches(2, 10.0), 2)      # never above the floor's count
        self.assertEqual(tb.sized_launches(1, 1700.0), 1)
        self.assertEqual(tb.sized_launches(5, None), 5)

    def test_a_slow_call_launches_once_a_sample(self):
        be, (g,), got = self.run_unit(1700.0, 5, replays=2)
        # 2 warm-up replays (the first one sizes) and 2 samples, one launch each: 4, not 4 x 5
        self.assertEqual(g.replays, 4)
        self.assertEqual(got, [[1700.0, 1700.0]])
        self.assertEqual((be.kept_stats["sized_units"], be.kept_stats["sized_launches"]), (1, 1))

    def test_a_fast_call_keeps_the_floors_protocol(self):
        be, (g,), got = self.run_unit(20.0, 5, replays=1)
        # warm-up replay: 1 timed + 4 more = 5 launches as before; the sample: 5 launches
        self.assertEqual(g.replays, 10)
        self.assertEqual(got, [[20.0]])
        self.assertEqual(be.kept_stats["sized_launches"], 5)

    def test_a_pair_is_sized_by_its_faster_side(self):
        clock = _Clock()
        be = Backend(100 * 1024 * MB, lambda c, m: MB)
        be._torch.cuda.Event = lambda enable_timing=True: _Event(clock)
        be._inputs = lambda m: (None, [None] * 4, None)
        fast, slow = _TimedGraph(clock, 2, 100.0), _TimedGraph(clock, 2, 1700.0)
        got = be._replays([(_Call(), fast), (_Call(), slow)], 64, 2, 2, 5, 2)
        self.assertEqual(got, [[100.0, 100.0], [1700.0, 1700.0]])
        # both sides: 3 launches per sample (from the 100 us side), warm-ups 1 + 2 and 3
        self.assertEqual((fast.replays, slow.replays), (3 + 3 + 3 + 3, 3 + 3 + 3 + 3))

    def test_re_timing_units_are_not_sized(self):
        be, (g,), _got = self.run_unit(1700.0, 1, replays=10, warm=2)  # a re-timing unit: 1 launch
        self.assertEqual(g.replays, 12)
        self.assertEqual(be.kept_stats["sized_units"], 0)
