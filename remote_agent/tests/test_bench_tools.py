# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The user-path and tuner-quality benchmarks (written for issue 22) and the fast strategy's seeding, on the
CPU: user_path_bench's breakdown from a run folder, one user_path_bench row and tuner_quality's
regret/repeat on the SYNTHETIC backend (simulated timings: what is checked is the plumbing and the
arithmetic, not a figure), and the headroom seeds."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import agenttest  # noqa: F401  (sets sys.path)

TOOLS = os.path.join(agenttest.AGENT_ROOT, "tools")
BENCH = os.path.join(agenttest.AGENT_ROOT, "bench")
sys.path.insert(0, TOOLS)
sys.path.insert(0, BENCH)

import tuner_quality  # noqa: E402
import user_path_bench as upb  # noqa: E402
from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.backends.synthetic import SyntheticBackend  # noqa: E402
from moetune_agent.kernel_types import CandidateError, KernelConfig, Shape  # noqa: E402
from moetune_agent.tunerun.runner import headroom_seeds  # noqa: E402
from moetune_agent.strategies import make_strategy  # noqa: E402
from moetune_agent.work import Measurement  # noqa: E402


class Breakdown(unittest.TestCase):
    def test_stages_from_files_and_event_timestamps(self):
        d = tempfile.mkdtemp(prefix="moetune-upb-")
        for name, t in (("spec.json", 100.5), ("pid", 101.0)):
            with open(os.path.join(d, name), "w") as f:
                f.write("x")
            os.utime(os.path.join(d, name), (t, t))
        evs = [{"type": "run_started", "ts": 104.0}, {"type": "phase", "name": "default", "ts": 104.25},
               {"type": "phase", "name": "fast", "ts": 106.0}, {"type": "phase", "name": "fast", "ts": 110.0},
               {"type": "phase", "name": "head-to-head", "ts": 120.0}, {"type": "phase", "name": "head-to-head",
                                                                         "ts": 123.0},
               {"type": "result_written", "ts": 125.0}, {"type": "result_written", "ts": 125.2},
               {"type": "done", "ts": 125.5}]
        st = upb.breakdown(100.0, 126.0, d, evs)
        self.assertEqual(st, {"cli_start": 0.5, "detach": 0.5, "backend_start": 3.0,
                              "space_and_first_phase_setup": 0.25, "default": 1.75, "strategy": 14.0,
                              "head-to-head": 5.0, "result_write": 0.5, "exit_and_attach": 0.5})
        self.assertAlmostEqual(sum(st.values()), 126.0 - 100.0)


class Rows(unittest.TestCase):
    def test_one_row_on_the_synthetic_backend(self):
        out = os.path.join(tempfile.mkdtemp(prefix="moetune-upb-"), "r.json")
        p = subprocess.run([sys.executable, os.path.join(TOOLS, "user_path_bench.py"), "--synthetic", "--rows",
                            "bf16_3", "--json", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr.decode()[-2000:])
        with open(out) as f:
            res = json.load(f)
        row = res["rows"][0]
        self.assertEqual(row["status"], "ok")
        self.assertTrue(res["simulated"])
        self.assertEqual(row["spec"]["batch_sizes"], [1, 64, 1024])
        self.assertTrue(os.path.isfile(row["result_path"]))
        for k in ("backend_start", "default", "strategy", "head-to-head"):
            self.assertIn(k, row["stages_s"])
        self.assertLessEqual(sum(row["stages_s"].values()), row["wall_s"] + 0.05)
        self.assertIn("bf16_3", p.stdout.decode())


def fake_result(path, winners, backend=None):
    with open(path, "w") as f:
        json.dump({"winners": [{"op": "both", "m": m, "config": c.as_dict()} for m, c in winners.items()],
                   "backend": backend}, f)


class Quality(unittest.TestCase):
    SIZES = (1, 64, 2048)

    def test_regret_of_the_landscape_best_is_one_and_of_a_poor_choice_above(self):
        be = SyntheticBackend(tuner_quality.SHAPE)
        good, poor = {}, {}
        for m in self.SIZES:
            cs = tuner_quality.landscape_space(m)
            timed = sorted((be.measure("both", c, m, 3).samples_us[0], c.key(), c) for c in cs
                           if not be._fails("both", c))  # pylint: disable=protected-access
            good[m], poor[m] = timed[0][2], timed[len(timed) // 2][2]
        tmp = tempfile.mkdtemp(prefix="moetune-quality-")
        res = {}
        for name, w in (("good", good), ("poor", poor)):
            fake_result(os.path.join(tmp, name + ".json"), w)
            out = os.path.join(tmp, name + "-regret.json")
            rc = tuner_quality.main(["regret", "--backend", "synthetic",
                                     "--fast-result", os.path.join(tmp, name + ".json"),
                                     "--fast-wall", "12.5", "--sizes", ",".join(map(str, self.SIZES)), "--out", out])
            self.assertEqual(rc, 0)
            with open(out) as f:
                res[name] = json.load(f)
        self.assertEqual(res["good"]["summary"]["wall_fast18_s"], 12.5)
        self.assertAlmostEqual(res["good"]["summary"]["regret_geomean"], 1.0, places=2)
        self.assertGreater(res["poor"]["summary"]["regret_geomean"], 1.02)
        for r in res["poor"]["per_m"]:
            self.assertGreaterEqual(r["regret"], 1.0)
            self.assertTrue(r["fast_in_landscape"])

    def test_repeat_counts_sizes_within_one_percent(self):
        be = SyntheticBackend(tuner_quality.SHAPE)
        a, b = {}, {}
        for m in self.SIZES:
            cs = sorted((be.measure("both", c, m, 3).samples_us[0], c.key(), c)
                        for c in tuner_quality.landscape_space(m)
                        if not be._fails("both", c))  # pylint: disable=protected-access
            a[m] = cs[0][2]
            b[m] = cs[0][2] if m != 64 else cs[-1][2]   # one size where the second run chose badly
        tmp = tempfile.mkdtemp(prefix="moetune-quality-")
        fake_result(os.path.join(tmp, "a.json"), a)
        fake_result(os.path.join(tmp, "b.json"), b)
        out = os.path.join(tmp, "rep.json")
        self.assertEqual(tuner_quality.main(["repeat", "--backend", "synthetic",
                                             "--results", os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json"),
                                             "--out", out]), 0)
        with open(out) as f:
            rep = json.load(f)
        self.assertEqual(rep["summary"]["sizes"], 3)
        self.assertEqual(rep["summary"]["within_1pct"], 2)
        self.assertEqual([r["m"] for r in rep["per_m"] if not r["within_1pct"]], [64])

    def test_repeat_takes_one_launch_as_one_config(self):
        """Winners equal but for a GROUP_SIZE_M at or above the grid's M tiles are one launch of the own
        kernel (space.same_launch): not re-timed, within 1%; the servers' kernels are compared strictly."""
        base = KernelConfig(16, 32, 128, 16, 4, 3)
        big = KernelConfig(128, 256, 64, 1, 8, 4)
        a = {1: base, 2048: big}
        b = {1: KernelConfig(16, 32, 128, 32, 4, 3), 2048: KernelConfig(128, 256, 64, 16, 8, 4)}
        tmp = tempfile.mkdtemp(prefix="moetune-quality-")
        got = {}
        for backend in ("triton", "server"):
            fake_result(os.path.join(tmp, "a.json"), a, backend)
            fake_result(os.path.join(tmp, "b.json"), b, backend)
            out = os.path.join(tmp, "rep-%s.json" % backend)
            self.assertEqual(tuner_quality.main(["repeat", "--backend", "synthetic", "--results",
                                                 os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json"),
                                                 "--out", out]), 0)
            with open(out) as f:
                got[backend] = {r["m"]: r for r in json.load(f)["per_m"]}
        self.assertTrue(got["triton"][1]["same_launch"])
        self.assertFalse(got["triton"][1]["same_config"])
        self.assertEqual(got["triton"][1]["a_over_b"], 1.0)
        self.assertFalse(got["triton"][2048]["same_launch"])   # 255 M tiles: GROUP_SIZE_M 1 and 16 differ
        self.assertFalse(got["server"][1]["same_launch"])
        self.assertIsNotNone(got["server"][1]["a_over_b"])       # re-timed

    def test_repeat_times_both_configs_in_one_paired_unit(self):
        """The two runs' configs at a size are re-timed in one paired unit per round (replay by replay,
        the order reversed every other replay): timed in separate units, a always first, the same two
        configs came out 0.948 and 1.068 at M = 1 on one H100 (stop 38). a/b is the median over the
        rounds of each round's median ratio."""
        a = {1: KernelConfig(16, 32, 128, 1, 4, 3), 64: KernelConfig(16, 64, 128, 1, 4, 4)}
        b = {1: KernelConfig(16, 32, 64, 1, 4, 5), 64: KernelConfig(16, 64, 128, 1, 4, 4)}
        tmp = tempfile.mkdtemp(prefix="moetune-quality-")
        fake_result(os.path.join(tmp, "a.json"), a)
        fake_result(os.path.join(tmp, "b.json"), b)
        seen = []
        orig = tuner_quality.Scheduler.measure

        def spy(sched, units, on_result, *args, **kw):
            def rec(meas):
                seen.append(meas)
                on_result(meas)
            return orig(sched, units, rec, *args, **kw)
        tuner_quality.Scheduler.measure = spy
        try:
            out = os.path.join(tmp, "rep.json")
            self.assertEqual(tuner_quality.main(["repeat", "--backend", "synthetic", "--results",
                                                 os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json"),
                                                 "--out", out]), 0)
        finally:
            tuner_quality.Scheduler.measure = orig
        with open(out) as f:
            per = {r["m"]: r for r in json.load(f)["per_m"]}
        timed = [x for x in seen if x.unit.m == 1]
        self.assertEqual(len(timed), tuner_quality.RETIME_ROUNDS)   # one unit a round, no unpaired ones
        self.assertEqual(len({x.unit.round for x in timed}), tuner_quality.RETIME_ROUNDS)
        for x in timed:
            self.assertEqual((x.unit.cfg, x.unit.pair), (a[1], b[1]))
            self.assertEqual(len(x.samples_us), len(x.pair_samples_us))
        ratios = sorted(tuner_quality.median(x.samples_us) / tuner_quality.median(x.pair_samples_us)
                        for x in timed)
        self.assertAlmostEqual(per[1]["a_over_b"], ratios[len(ratios) // 2], places=9)
        self.assertFalse([x for x in seen if x.unit.m == 64])       # the same config: not re-timed
        self.assertEqual(per[64]["a_over_b"], 1.0)

    def test_landscape_group_m_is_the_fast_strategys(self):
        for m in (1, 256, 4096):
            for c in tuner_quality.landscape_space(m):
                self.assertEqual(c.GROUP_SIZE_M, 16 if m * 8 / 128 > c.BLOCK_SIZE_M else 1)


class HeadroomSeeds(unittest.TestCase):
    def test_seeds_are_measured_at_every_size(self):
        shape = Shape(E=128, N=768, K=2048, topk=8)
        sizes = [1, 4, 16, 64, 256, 1024, 2048, 4096]
        ops = ("both",)
        be = SyntheticBackend(shape)
        space = space_mod.build_space(shape, sizes, ops)
        defaults = {(op, m): be.default_config(op, m) for op in ops for m in sizes}
        seeds = headroom_seeds(shape, sizes, ops, space, defaults)
        self.assertEqual(set(seeds), set(defaults))
        self.assertTrue(all(seeds[k] for k in seeds))
        st = make_strategy("fast", space, sizes, ops, shape, extra_seeds=seeds)
        meas = []
        while True:
            ph = st.next_phase(meas)
            if not ph:
                break
            for u in ph:
                try:
                    meas.append(Measurement(u, be.measure(u.op, u.cfg, u.m, u.replays).samples_us))
                except CandidateError as e:
                    meas.append(Measurement(u, None, e.kind, e.message))
        measured = {(x.unit.m, x.unit.cfg.key()) for x in meas}
        for (op, m), cs in seeds.items():
            in_space = {c.key() for c in space[(op, m)]}
            for c in cs:
                if c.key() in in_space:
                    self.assertIn((m, c.key()), measured, (m, c.key()))
        # away from the anchors the winner is the best screened config: never slower than the best seed
        from moetune_agent.strategies.common import Book
        book = Book(meas)
        w = st.winners(meas)
        for m in sizes:
            if m in st.anchors:
                continue
            best_seed = min(book.score("both", m, c, tier=0) for c in st.extra_seeds[("both", m)]
                            if not book.is_failed("both", m, c))
            self.assertLessEqual(book.score("both", m, w[("both", m)], tier=0), best_seed)

    def test_a_seed_outside_the_space_is_left_out(self):
        shape = Shape(E=128, N=768, K=2048, topk=8)
        space = space_mod.build_space(shape, [1], ("both",))
        odd = KernelConfig(256, 256, 256, 1, 4, 3)    # BLOCK_SIZE_M 256 is not in the space at m=1
        ok = space[("both", 1)][0]
        st = make_strategy("fast", space, [1], ("both",), shape, extra_seeds={("both", 1): [odd, ok, ok]})
        self.assertEqual(st.extra_seeds[("both", 1)], [ok])


class CompileTimes(unittest.TestCase):
    """tools/compile_times.py: the space's distinct kernels, sampled, compiled one per process call."""

    def test_the_sample_is_the_spaces_distinct_kernels(self):
        import compile_times  # pylint: disable=import-outside-toplevel

        shape = (128, 768, 2048, 8, "int4_w4a16", (0, 128), False)
        every = compile_times.sample_space(shape, [1, 64, 1024], 0)
        sp = space_mod.build_space(Shape(*shape), [1, 64, 1024], ["up"], "sglang", space_mod.HOPPER_SMEM_LIMIT)
        self.assertEqual(set(every), {(c.BLOCK_SIZE_M, c.BLOCK_SIZE_N, c.BLOCK_SIZE_K, c.num_warps, c.num_stages)
                                      for cfgs in sp.values() for c in cfgs})
        some = compile_times.sample_space(shape, [1, 64, 1024], 20)
        self.assertEqual(len(some), 20)
        self.assertTrue(set(some) <= set(every))
        self.assertEqual(some, compile_times.sample_space(shape, [1, 64, 1024], 20))  # the same draw each time

    def test_a_run_times_every_sampled_kernel(self):
        out = os.path.join(tempfile.mkdtemp(prefix="moetune-ct-"), "ct.json")
        p = subprocess.run([sys.executable, os.path.join(TOOLS, "compile_times.py"), "--backend", "synthetic",
                            "--sample", "5", "--workers", "2", "--json", out], capture_output=True, text=True,
                           timeout=120, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, encoding="utf-8") as f:
            got = json.load(f)
        self.assertTrue(got["simulated"])
        self.assertEqual(len(got["rows"]), 5)
        self.assertEqual([r["error"] for r in got["rows"]], [None] * 5)
        self.assertIn("5 kernels compiled, 0 failed", p.stdout)


if __name__ == "__main__":
    unittest.main()


class RowsTable(unittest.TestCase):
    """tools/rows_table.py: a row's line from a tar of row files and a tar of result files."""

    def test_a_rows_line_from_tars(self):
        import io
        import tarfile

        import rows_table

        d = tempfile.mkdtemp(prefix="moetune-rows-")
        result_path = os.path.join(d, "home", "runs", "r1", "result.json")
        row = {"row": "own_up", "wall_s": 41.25, "status": "ok", "capped": False, "units": 900,
               "result_path": result_path, "speedups": {"1": 1.0, "64": 1.21, "4096": 1.44},
               "stages_s": {"backend_start": 7.5, "strategy": 25.0, "head-to-head": 6.25},
               "timings": {"precompile": {"submitted": 400, "fillers": 37, "wait_s": 12.0,
                                          "waits": [[231, 6.5], [84, 2.0]]},
                           "kept_graphs": {"sized_units": 120, "sized_launches": 480}}}
        result = {"per_batch": [{"m": 1, "rounds": 3}, {"m": 64, "rounds": 5}, {"m": 4096, "rounds": 2}]}

        def tar_of(path, members):
            with tarfile.open(path, "w:gz") as tar:
                for name, doc in members:
                    data = json.dumps(doc).encode()
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        tar_of(os.path.join(d, "rows.tar.gz"), [("after_cold.json", {"rows": [row]})])
        tar_of(os.path.join(d, "results.tar.gz"), [(result_path.lstrip("/"), result)])
        results = rows_table._results(os.path.join(d, "results.tar.gz"))
        rows = [r for _, doc in rows_table._jsons(os.path.join(d, "rows.tar.gz")) for r in doc["rows"]]
        line = rows_table.row_line("after_cold", rows[0], results)
        cols = line.split()
        self.assertEqual(cols[:4], ["after_cold", "own_up", "41.2", "7.5"])
        self.assertIn("6.5/12.0", cols)   # the first phase's wait, then all waits
        self.assertIn("37", cols)         # fillers
        self.assertIn("120/480", cols)    # sized screening units / launches
        self.assertIn("%.4f" % ((1.21 * 1.44) ** (1 / 3.0)), cols)
        self.assertEqual(cols[-1], "10/5")  # rounds over all keys / the most at one key
        row["capped"] = True
        self.assertTrue(rows_table.row_line("x", row, {}).endswith("CAPPED"))
        self.assertIsNone(rows_table.geomean([]))
