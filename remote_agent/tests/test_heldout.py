# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The held-out suite (issue 43): the shape list's promises, the leave-one-shape-out replay and the
held-out landscape benchmark's arithmetic, and the benchmark end to end on the synthetic backend (a TEST
DOUBLE for the GPU)."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
HELDOUT = os.path.join(AGENT_ROOT, "bench", "heldout")
sys.path.insert(0, AGENT_ROOT)
sys.path.insert(0, os.path.join(AGENT_ROOT, "bench"))
sys.path.insert(0, HELDOUT)

import heldout_bench as hb  # noqa: E402  # pylint: disable=wrong-import-position,import-error
import catalogue_heldout as ch  # noqa: E402  # pylint: disable=wrong-import-position,import-error
import leave_one_out as loo  # noqa: E402  # pylint: disable=wrong-import-position,import-error
from replay import RECORDINGS, load_recording  # noqa: E402  # pylint: disable=wrong-import-position,import-error
from moetune_agent import space as space_mod  # noqa: E402  # pylint: disable=wrong-import-position
from moetune_agent.strategies import screen
from moetune_agent.kernel_types import KernelConfig, Shape  # noqa: E402  # pylint: disable=wrong-import-position


def _experts(cfg):
    for k in ("num_experts", "n_routed_experts", "num_local_experts"):
        if k in cfg:
            return cfg[k]
    raise KeyError("no expert count in %s" % cfg)


class ShapeListTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(HELDOUT, "shapes.json"), encoding="utf-8") as f:
            self.doc = json.load(f)
        self.shapes = self.doc["shapes"]

    def test_per_rank_facts_follow_from_the_model_config(self):
        for s in self.shapes:
            c = s["config"]
            inter = c.get("moe_intermediate_size", c.get("intermediate_size"))
            self.assertEqual(inter % s["tp"], 0, s["name"])
            self.assertEqual(s["N"], inter // s["tp"], s["name"])   # docs/servers.md section 2
            self.assertEqual(s["K"], c["hidden_size"], s["name"])
            self.assertEqual(s["E"], _experts(c), s["name"])
            self.assertEqual(s["topk"], c["num_experts_per_tok"], s["name"])

    def test_the_issue_coverage(self):
        self.assertGreaterEqual(len(self.shapes), 6)
        self.assertEqual(len({s["name"] for s in self.shapes}), len(self.shapes))
        has = {
            "fp8 block": any(s["dtype"] == "fp8_w8a8" and s["block_shape"] == [128, 128] for s in self.shapes),
            "fp8 per-channel or per-tensor": any(s["dtype"] == "fp8_w8a8" and not s["block_shape"] for s in self.shapes),
            "int4": any(s["dtype"] == "int4_w4a16" for s in self.shapes),
            "E <= 16": any(s["E"] <= 16 for s in self.shapes),
            "E >= 256": any(s["E"] >= 256 for s in self.shapes),
            "N <= 256": any(s["N"] <= 256 for s in self.shapes),
            "K >= 7168": any(s["K"] >= 7168 for s in self.shapes),
        }
        self.assertEqual([k for k, v in has.items() if not v], [])

    def test_no_recorded_shape_is_held_out(self):
        recorded = []
        for path in RECORDINGS.values():
            f = load_recording(path)["shape"]
            recorded.append((f["E"], f["N"], f["K"], f["topk"], f["dtype"], f.get("block_shape")))
        excluded = [(x["E"], x["N"], x["K"], x["topk"], x["dtype"], x.get("block_shape")) for x in self.doc["excluded"]]
        self.assertEqual(sorted(recorded, key=str), sorted(excluded, key=str))
        for s in self.shapes:
            self.assertNotIn((s["E"], s["N"], s["K"], s["topk"], s["dtype"], s["block_shape"]), recorded)

    def test_every_shape_is_a_valid_tune_spec(self):
        from moetune_agent import spec  # pylint: disable=import-outside-toplevel

        for s in self.shapes:
            n = spec.normalise(hb.spec_of(s, synthetic=True))
            self.assertEqual(spec.shape_of(n), hb.shape_of(s))


class LeaveOneOutTest(unittest.TestCase):
    def test_catalogue_variants(self):
        for name in RECORDINGS:
            out = loo.catalogue_for(name, "leave-one-out")
            self.assertTrue(out)
            self.assertFalse([e for e in out if loo.source_shape(e) == name])
            self.assertEqual(len(out), sum(1 for e in screen.CATALOGUE if loo.source_shape(e) != name))
        self.assertEqual(loo.catalogue_for("qwen3", "shipped"), tuple(screen.CATALOGUE))
        self.assertEqual(loo.catalogue_for("qwen3", "none"), ())
        with self.assertRaises(ValueError):
            loo.catalogue_for("qwen3", "other")

    def test_reindexing_by_weight_bytes(self):
        cat = (("m16n128k128g16w4s3", 0.5, 1, "exhaustive:fp8block"), ("m16n64k128g1w4s3", 1.0, 2, "exhaustive:qwen3"))
        out = loo.by_bytes(cat, 2)   # for a bf16 target: fp8's BK 128 moves the bytes of bf16's BK 64
        self.assertEqual(out[0][:3], ("m16n128k64g16w4s3", 0.5, 2))
        self.assertEqual(out[1], cat[1])

    def test_leaving_the_shape_out_removes_its_winners(self):
        # in-sample the catalogue's seeds hold the landscape's winner at every size; with the shape's own
        # entries removed they do not (the catalogue was fitted on it), and the replayed tune still ends
        # at a recorded config whose regret is >= 1
        shipped = loo.evaluate("qwen3", "shipped")
        left = loo.evaluate("qwen3", "leave-one-out")
        self.assertEqual(shipped["seed_regret_geomean"], 1.0)
        self.assertGreater(left["seed_regret_geomean"], 1.0)
        self.assertEqual(left["catalogue_entries"], len(loo.catalogue_for("qwen3", "leave-one-out")))
        for r in left["per_m"]:
            self.assertGreaterEqual(r["final_regret"], 1.0)
        self.assertEqual(left["check_sizes"], len(left["sizes"]))


class CatalogueOnHeldOutTest(unittest.TestCase):
    entry = {"name": "x", "E": 128, "N": 384, "K": 4096, "topk": 8, "dtype": "fp8_w8a8", "block_shape": [128, 128]}

    def test_reference_is_the_retimed_winner(self):
        r = {"best": "a", "landscape": {"a": 0.5, "b": 0.9, "c": 0.95}, "retimed": {"b": 0.97, "c": 1.01}}
        self.assertEqual(ch.reference(r), 0.9)     # b beat the landscape's (lucky) best on re-timing
        r["retimed"] = {"b": 1.02}
        self.assertEqual(ch.reference(r), 0.5)

    def test_screen_in_landscape(self):
        m = 64
        shape = hb.shape_of(self.entry)
        default = space_mod.server_default_config(shape, m)
        space = space_mod.build_space(shape, [m], ("both",))
        screened = screen.screened_candidates(shape, [m], ("both",), space, {("both", m): default})[("both", m)]
        self.assertTrue(screened)
        # a landscape where the first screened config is the winner: seed 1.0, rank 1
        land = {c.key(): 1.0 + 0.01 * i for i, c in enumerate(space[("both", m)])}
        land[screened[0].key()] = 0.5
        seed, rank, n = ch.screen_in_landscape(self.entry, m, land, default.key(), screen.CATALOGUE)
        self.assertEqual((seed, rank, n), (1.0, 1, len(screened)))
        # no catalogue: the default's pipeline neighbours alone (none is the winner here)
        seed, rank, _n = ch.screen_in_landscape(self.entry, m, land, default.key(), ())
        self.assertTrue(seed is None or seed > 1.0)


class BenchArithmeticTest(unittest.TestCase):
    shape = Shape(E=512, N=128, K=2048, topk=10, dtype="bf16")

    def test_landscape_is_the_space_one_config_per_launch(self):
        for m in (1, 4096):
            cfgs = hb.landscape_configs(self.shape, m)
            keys = [space_mod.launch_key(c, self.shape, m) for c in cfgs]
            self.assertEqual(len(keys), len(set(keys)))
            full = space_mod.build_space(self.shape, [m], ("both",))[("both", m)]
            self.assertEqual(set(keys), {space_mod.launch_key(c, self.shape, m) for c in full})
            self.assertEqual({c.GROUP_SIZE_M for c in full} & {1, 16, 32, 64}, {1, 16, 32, 64})
        # at M = 4096 every GROUP_SIZE_M is its own launch: the landscape is the whole space there
        self.assertEqual(len(hb.landscape_configs(self.shape, 4096)),
                         len(space_mod.build_space(self.shape, [4096], ("both",))[("both", 4096)]))

    def test_regret(self):
        best = KernelConfig(64, 128, 64, 1, 4, 3)
        pick = KernelConfig(64, 128, 64, 1, 8, 3)
        other = KernelConfig(32, 128, 64, 1, 4, 3)
        # the pick 2% slower than the landscape's best, nothing re-timed faster than the best
        self.assertAlmostEqual(hb.regret_of(pick, best, {pick.key(): 1.02, other.key(): 1.01}, self.shape, 4096), 1.02)
        # a candidate re-timed 1% faster than the landscape's best becomes the reference
        self.assertAlmostEqual(hb.regret_of(pick, best, {pick.key(): 1.02, other.key(): 0.99}, self.shape, 4096),
                               1.02 / 0.99)
        # the pick is the best: 1.0, or 1/low when a candidate beat it on re-timing
        self.assertEqual(hb.regret_of(best, best, {other.key(): 1.01}, self.shape, 4096), 1.0)
        self.assertAlmostEqual(hb.regret_of(best, best, {other.key(): 0.98}, self.shape, 4096), 1 / 0.98)
        # the pick was not re-timed: no figure
        self.assertIsNone(hb.regret_of(pick, best, {other.key(): 1.01}, self.shape, 4096))

    def test_summary_row_is_null_where_not_measured(self):
        entry = {"name": "x", "E": 8, "N": 7168, "K": 4096, "topk": 2, "dtype": "bf16", "block_shape": None}
        row = hb.summary_row(entry, {})
        for k in ("regret_geomean", "regret_worst", "wall_up_cold_s", "wall_updown_s", "repeat_within_1pct",
                  "headroom_within_2pp", "headroom_wall_s"):
            self.assertIsNone(row[k], k)
        row = hb.summary_row(entry, {"tune": {"wall_s": 12.5}, "per_m": [
            {"m": 1, "regret": 1.01, "floor_fraction": 0.5}, {"m": 64, "regret": 1.0, "floor_fraction": 0.8},
            {"m": 4096, "regret": None}]})
        self.assertEqual(row["sizes"], [1, 64])
        self.assertEqual(row["regret_worst"], 1.01)
        self.assertAlmostEqual(row["regret_geomean"], round((1.01 * 1.0) ** 0.5, 4))
        self.assertEqual(row["wall_up_cold_s"], 12.5)
        self.assertEqual(row["floor_fraction"], {"64": 0.8})

    def test_updown_and_int4_rows(self):
        entry = {"name": "k", "E": 384, "N": 256, "K": 7168, "topk": 8, "dtype": "int4_w4a16", "block_shape": [0, 32]}
        row = hb.summary_row(entry, {"updown": {"wall_s": 40.0}, "int4_3": {"wall_s": 30.0}, "bf16_3": {"wall_s": 20.0}})
        self.assertEqual((row["wall_updown_s"], row["int4_over_bf16"]), (40.0, 1.5))
        row = hb.summary_row(entry, {"int4_3": {"error": "capped", "wall_s": None}, "bf16_3": {"wall_s": 20.0}})
        self.assertIsNone(row["int4_over_bf16"])
        # the bf16 reference of an int4 shape: the same dims, no quantisation
        spec = hb.spec_of(entry, True, "up", hb.INT4_SIZES, "bf16")
        self.assertEqual((spec["dtype"], spec.get("block_shape"), spec["batch_sizes"]), ("bf16", None, [1, 64, 1024]))
        self.assertEqual(hb.spec_of(entry, False, "up+down")["block_shape"], [0, 32])

    def test_rate_learns(self):
        r = hb.Rate(first_s_per_unit=1.0)
        self.assertGreater(r.estimate_s(100), 100)
        r.add(1000, 10.0)
        self.assertLess(r.estimate_s(100), 30)


class SyntheticEndToEndTest(unittest.TestCase):
    """The benchmark's whole path on the SYNTHETIC backend (a test double for the GPU): tune through the pyz,
    the second tune, the landscape, the regret, summary.json."""

    def test_one_shape(self):
        out = tempfile.mkdtemp(prefix="moetune-test-heldout-")
        old = os.environ.get("MOETUNE_HOME")
        try:
            rc = hb.main(["--synthetic", "--shapes", "mixtral-8x7b-tp2", "--sizes", "1", "--out", out,
                          "--repeat", "mixtral-8x7b-tp2", "--commit", "test-commit", "--lease", "none (CPU)"])
        finally:
            if old is not None:
                os.environ["MOETUNE_HOME"] = old
        self.assertEqual(rc, 0)
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
            s = json.load(f)
        self.assertTrue(s["simulated"])
        self.assertEqual(s["commit"], "test-commit")
        self.assertIn("cores", s["cpu"])
        (row,) = s["rows"]
        self.assertEqual(row["shape"], "mixtral-8x7b-tp2")
        self.assertEqual(row["sizes"], [1])
        self.assertGreaterEqual(row["regret_worst"], 1.0)
        self.assertGreater(row["wall_up_cold_s"], 0)
        self.assertEqual(row["repeat_sizes"], 18)
        self.assertIsNone(row["headroom_within_2pp"])   # --check not given: not measured
        self.assertIsNone(row["wall_updown_s"])
        # two runs merged: every row names its run, the suite's figures come from the per-size rows
        merged = hb.merge_runs([out, out])
        self.assertEqual(len(merged["rows"]), 2)
        self.assertEqual(merged["commit"], "test-commit")
        self.assertEqual({r["lease"] for r in merged["rows"]}, {"none (CPU)"})
        self.assertEqual(merged["suite"]["regret_sizes"], 2)
        self.assertEqual(merged["suite"]["repeat_within_1pct"]["sizes"], 36)
        self.assertIsNone(merged["suite"]["headroom_within_2pp"])
        self.assertEqual(merged["not_measured"], [])


if __name__ == "__main__":
    unittest.main()
