# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Search space and pruning: the reference counts, the shared-memory rule, block-quant divisibility in
each server's direction, and the BLOCK_SIZE_M cap."""

import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)
from moetune_agent import space
from moetune_agent.kernel_types import KernelConfig, Shape

QWEN = Shape(128, 768, 2048, 8)                      # Qwen3-30B-A3B at TP1, bf16
FP8_BLOCK = Shape(256, 256, 7168, 8, "fp8_w8a8", (128, 128))


class Counts(unittest.TestCase):
    def test_reference_space(self):
        self.assertEqual(len(space.reference_configs()), 1920)
        self.assertEqual(len(space.reference_configs(separate=True)), 2560)
        self.assertEqual(len(set(space.reference_configs())), 1920)

    def test_unpruned_when_limits_are_off(self):
        sp = space.build_space(QWEN, [1, 4096], ["both"], smem_limit=10 ** 9, options={"prune_m": False})
        self.assertEqual(len(sp[("both", 1)]), 1920)
        sp = space.build_space(QWEN, [1], ["up", "down"], smem_limit=10 ** 9, options={"prune_m": False})
        self.assertEqual(len(sp[("up", 1)]), 2560)
        self.assertEqual(len(sp[("down", 1)]), 2560)

    def test_hopper_bf16_counts(self):
        st = space.PruneStats()
        sp = space.build_space(QWEN, [1, 4096], ["both"], stats=st)
        # Every config is either kept or pruned for one counted reason.
        self.assertEqual(st.total, 1920)
        self.assertEqual(st.kept_hard + st.smem + st.block_quant, 1920)
        self.assertEqual(st.block_quant, 0)
        self.assertEqual(len(sp[("both", 4096)]), st.kept_hard)
        # Independent count of the rule: (stages - [BM<64]) * (BM+BN) * BK * 2 <= 232448.
        expect = sum(1 for c in space.reference_configs()
                     if (c.num_stages - (c.BLOCK_SIZE_M < 64)) * (c.BLOCK_SIZE_M + c.BLOCK_SIZE_N)
                     * c.BLOCK_SIZE_K * 2 <= 232448)
        self.assertEqual(st.kept_hard, expect)
        self.assertLess(len(sp[("both", 1)]), len(sp[("both", 4096)]))


class SharedMemory(unittest.TestCase):
    ROWS = [
        # (cfg, dtype, bytes)
        (KernelConfig(64, 128, 128, 1, 4, 3), "bf16", 3 * (64 + 128) * 128 * 2),
        (KernelConfig(32, 128, 128, 1, 4, 3), "bf16", 2 * (32 + 128) * 128 * 2),   # BM < 64: one buffer less
        (KernelConfig(16, 256, 256, 1, 4, 5), "bf16", 4 * (16 + 256) * 256 * 2),
        (KernelConfig(64, 128, 128, 1, 4, 3), "fp8_w8a8", 3 * (64 + 128) * 128 * 1),
        (KernelConfig(64, 128, 128, 1, 4, 3), "int8_w8a16", 3 * (64 * 2 + 128) * 128),
    ]

    def test_rule(self):
        for cfg, dt, b in self.ROWS:
            with self.subTest(cfg=cfg.key(), dtype=dt):
                self.assertEqual(space.smem_bytes(cfg, dt), b)

    def test_limit_is_inclusive(self):
        c = KernelConfig(64, 64, 128, 1, 4, 3)
        need = space.smem_bytes(c, "bf16")
        self.assertEqual(len(space.hard_filter([c], QWEN, "sglang", need)), 1)
        self.assertEqual(len(space.hard_filter([c], QWEN, "sglang", need - 1)), 0)

    def test_rule_is_replaceable(self):
        old = space.SMEM_RULE
        try:
            space.SMEM_RULE = lambda cfg, dtype: 0
            self.assertEqual(len(space.hard_filter(space.reference_configs(), QWEN, "sglang", 1)), 1920)
        finally:
            space.SMEM_RULE = old

    def test_fp8_keeps_more(self):
        bf = space.hard_filter(space.reference_configs(), QWEN, "sglang", space.HOPPER_SMEM_LIMIT)
        f8 = space.hard_filter(space.reference_configs(), Shape(128, 768, 2048, 8, "fp8_w8a8"), "sglang",
                               space.HOPPER_SMEM_LIMIT)
        self.assertGreater(len(f8), len(bf))


class BlockQuant(unittest.TestCase):
    def test_directions(self):
        rows = [
            # (BN, BK, block_shape, framework, ok)
            (64, 64, (128, 128), "sglang", True),     # 128 % 64 == 0
            (64, 128, (128, 128), "sglang", True),
            (64, 256, (128, 128), "sglang", False),   # 128 % 256 != 0
            (32, 32, (128, 128), "sglang", True),
            (128, 128, (128, 128), "vllm", True),     # 128 % 128, 128 % 128
            (128, 256, (128, 128), "vllm", True),
            (128, 64, (128, 128), "vllm", False),     # 64 % 128 != 0
            (64, 128, (128, 128), "vllm", False),     # BN 64 % 128 != 0
            (256, 256, (128, 128), "vllm", True),
            (64, 64, None, "vllm", True),
        ]
        for bn, bk, bs, fw, ok in rows:
            with self.subTest(bn=bn, bk=bk, fw=fw):
                self.assertEqual(space.block_quant_ok(KernelConfig(16, bn, bk, 1, 4, 3), bs, fw), ok)

    def test_space_respects_direction(self):
        sg = space.build_space(FP8_BLOCK, [4096], ["both"], "sglang")[("both", 4096)]
        vl = space.build_space(FP8_BLOCK, [4096], ["both"], "vllm")[("both", 4096)]
        self.assertTrue(sg and vl)
        self.assertEqual({c.BLOCK_SIZE_K for c in sg}, {64, 128})
        self.assertEqual({c.BLOCK_SIZE_K for c in vl}, {128, 256})
        self.assertEqual({c.BLOCK_SIZE_N for c in vl}, {128, 256})
        st = space.PruneStats()
        space.build_space(FP8_BLOCK, [4096], ["both"], "vllm", stats=st)
        self.assertGreater(st.block_quant, 0)


class BlockMCap(unittest.TestCase):
    def test_cap(self):
        rows = [(1, 16), (16, 16), (64, 16), (128, 16), (256, 32), (512, 64), (1024, 128), (2048, 256),
                (4096, 512)]
        for m, cap in rows:
            with self.subTest(m=m):
                # Qwen3: t = m * 8 / 128; cap = pow2 >= max(16, 2t)
                self.assertEqual(space.block_m_cap(QWEN, m), cap)

    def test_space_per_m(self):
        sp = space.build_space(QWEN, [1, 256, 4096], ["up", "down"])
        self.assertEqual(max(c.BLOCK_SIZE_M for c in sp[("up", 1)]), 16)
        self.assertEqual(max(c.BLOCK_SIZE_M for c in sp[("up", 256)]), 32)
        self.assertEqual(max(c.BLOCK_SIZE_M for c in sp[("down", 4096)]), 256)
        self.assertEqual(sp[("up", 1)], sp[("down", 1)])

    def test_factor_and_off(self):
        sp = space.build_space(QWEN, [256], ["both"], options={"prune_m_factor": 8})
        self.assertEqual(max(c.BLOCK_SIZE_M for c in sp[("both", 256)]), 128)
        sp = space.build_space(QWEN, [1], ["both"], options={"prune_m": False})
        self.assertEqual(max(c.BLOCK_SIZE_M for c in sp[("both", 1)]), 256)

    def test_axes_restricted(self):
        sp = space.build_space(QWEN, [4096], ["both"], options={"BLOCK_SIZE_N": [64], "num_warps": [4]})
        self.assertTrue(all(c.BLOCK_SIZE_N == 64 and c.num_warps == 4 for c in sp[("both", 4096)]))


class Defaults(unittest.TestCase):
    def test_server_default(self):
        self.assertEqual(space.server_default_config(QWEN, 64), KernelConfig(16, 32, 64, 1, 4, 3))
        self.assertEqual(space.server_default_config(QWEN, 129), KernelConfig(64, 64, 32, 8, 4, 3))
        self.assertEqual(space.server_default_config(FP8_BLOCK, 1).BLOCK_SIZE_K, 128)



class ConfigKey(unittest.TestCase):
    def test_from_key_inverts_key_over_the_whole_reference_space(self):
        cfgs = space.reference_configs(separate=True) + [KernelConfig(64, 128, 64, 16, 4, 3, USE_TMA=True)]
        for c in cfgs:
            self.assertEqual(KernelConfig.from_key(c.key()), c)
        self.assertEqual(KernelConfig.from_key("m64n128k64g16w4s3t").USE_TMA, True)

    def test_from_key_rejects_other_text(self):
        for bad in ("", "m64n128k64g16w4", "m64n128k64g16w4s3x", "x64n128k64g16w4s3", "m-1n1k1g1w1s1",
                    " m64n128k64g16w4s3"):
            with self.subTest(bad=bad):
                with self.assertRaises(ValueError):
                    KernelConfig.from_key(bad)


class PerDtype(unittest.TestCase):
    """Pruning per quantisation variant, as each server's tuner does (space.py module comment)."""

    def kept(self, dtype, block_shape=None, framework="sglang", pcq=False):
        shape = Shape(E=64, N=1024, K=2048, topk=8, dtype=dtype, block_shape=block_shape, per_channel_quant=pcq)
        st = space.PruneStats()
        cfgs = space.hard_filter(space.reference_configs(), shape, framework, space.HOPPER_SMEM_LIMIT, st)
        return cfgs, st

    def test_block_rules_only_for_block_quant(self):
        for dtype, bs, pcq in (("fp8_w8a8", None, False), ("fp8_w8a8", None, True), ("int8_w8a8", None, True),
                               ("int8_w8a16", None, False), ("int4_w4a16", (0, 128), False),
                               ("int4_w4a16", (0, 32), False)):
            for fw in ("sglang", "vllm"):
                with self.subTest(dtype=dtype, block_shape=bs, framework=fw):
                    cfgs, st = self.kept(dtype, bs, fw, pcq)
                    self.assertEqual(st.block_quant, 0)
                    self.assertEqual(st.total, 1920)
                    # a group of 32 still allows BLOCK_SIZE_K 256: scales are loaded per element
                    self.assertEqual(sorted(set(c.BLOCK_SIZE_K for c in cfgs)), [64, 128, 256])

    def test_block_fp8_in_each_servers_direction(self):
        sg, _ = self.kept("fp8_w8a8", (128, 128), "sglang")
        vl, _ = self.kept("fp8_w8a8", (128, 128), "vllm")
        self.assertEqual(sorted(set(c.BLOCK_SIZE_K for c in sg)), [64, 128])
        self.assertEqual(sorted(set(c.BLOCK_SIZE_K for c in vl)), [128, 256])
        self.assertEqual(sorted(set(c.BLOCK_SIZE_N for c in vl)), [128, 256])

    def test_element_sizes_order_the_smem_bound(self):
        # one-byte operands fit more configs than two-byte ones; w8a16 / w4a16 sit between
        n = {d: len(self.kept(d, (0, 128) if d == "int4_w4a16" else None, pcq=d == "int8_w8a8")[0])
             for d in ("bf16", "fp8_w8a8", "int8_w8a8", "int8_w8a16", "int4_w4a16")}
        self.assertEqual(n["fp8_w8a8"], n["int8_w8a8"])
        self.assertEqual(n["int8_w8a16"], n["int4_w4a16"])
        self.assertLess(n["bf16"], n["int8_w8a16"])
        self.assertLess(n["int8_w8a16"], n["fp8_w8a8"])
        cfg = KernelConfig(64, 128, 128, 1, 4, 4)
        self.assertEqual(space.smem_bytes(cfg, "int4_w4a16"), 4 * (64 * 2 + 128 * 1) * 128)
        self.assertEqual(space.smem_bytes(cfg, "int8_w8a8"), 4 * (64 + 128) * 128)

class DequantRegisters(unittest.TestCase):
    """Rule 4: int4_w4a16 configs whose weight tile spills its dequantised elements (more than 64 a thread)
    are left out of the space; other dtypes keep them; the spec's prune_dequant false keeps them."""
    INT4 = Shape(E=128, N=768, K=2048, topk=8, dtype="int4_w4a16", block_shape=(0, 128))
    BF16 = Shape(E=128, N=768, K=2048, topk=8, dtype="bf16")

    def test_the_threshold_is_inclusive_and_counts_warps(self):
        # 128 x 128 over 8 warps is 64 a thread (kept); over 4 warps 128 (cut); 256 x 256 is cut with 8
        self.assertTrue(space.dequant_regs_ok(KernelConfig(16, 128, 128, 1, 8, 3), "int4_w4a16"))
        self.assertFalse(space.dequant_regs_ok(KernelConfig(16, 128, 128, 1, 4, 3), "int4_w4a16"))
        self.assertFalse(space.dequant_regs_ok(KernelConfig(16, 256, 256, 1, 8, 3), "int4_w4a16"))
        self.assertTrue(space.dequant_regs_ok(KernelConfig(16, 256, 64, 1, 8, 3), "int4_w4a16"))
        for dtype in ("bf16", "fp8_w8a8", "int8_w8a16", None):
            self.assertTrue(space.dequant_regs_ok(KernelConfig(128, 256, 256, 1, 4, 2), dtype))

    def test_int4_space_holds_no_spilling_tile(self):
        st = space.PruneStats()
        sp = space.build_space(self.INT4, [1, 64, 1024], ("both",), stats=st)
        full = space.build_space(self.INT4, [1, 64, 1024], ("both",), options={"prune_dequant": False})
        self.assertGreater(st.dequant, 0)
        self.assertEqual(st.as_dict()["pruned_dequant"], st.dequant)
        for k, cfgs in sp.items():
            self.assertTrue(cfgs)
            self.assertTrue(all(space.dequant_elems_per_thread(c) <= 64 for c in cfgs))
            cut = [c for c in full[k] if c not in cfgs]
            self.assertTrue(cut)
            self.assertTrue(all(space.dequant_elems_per_thread(c) > 64 for c in cut))
        # the server's default and the best tiles of the recorded int4 tunes stay in
        self.assertIn(KernelConfig(16, 32, 64, 1, 4, 3), sp[("both", 1)])
        self.assertIn(KernelConfig(64, 32, 64, 1, 4, 3), sp[("both", 1024)])

    def test_other_dtypes_and_the_switches_keep_everything(self):
        st = space.PruneStats()
        space.build_space(self.BF16, [1, 1024], ("both",), stats=st)
        self.assertEqual(st.dequant, 0)
        on = space.build_space(self.INT4, [64], ("both",))[("both", 64)]
        off = space.build_space(self.INT4, [64], ("both",), options={"prune_dequant": False})[("both", 64)]
        self.assertLess(len(on), len(off))


if __name__ == "__main__":
    unittest.main()


def _program_tiles(em, n, gm, bm, bn):
    """kernels/fused_moe._tile_of in plain Python: (pid_m, pid_n) of every program of the grid."""
    num_pid_m, num_pid_n = -(-em // bm), -(-n // bn)
    out = []
    for pid in range(num_pid_m * num_pid_n):
        in_group = gm * num_pid_n
        first = (pid // in_group) * gm
        size = min(num_pid_m - first, gm)
        out.append((first + (pid % in_group) % size, (pid % in_group) // size))
    return out


class SameLaunch(unittest.TestCase):
    """space.same_launch: configs equal but for a GROUP_SIZE_M at or above the grid's M tiles map every
    program of moetune's own kernel to the same tile (checked against _tile_of's arithmetic)."""
    SHAPE = Shape(E=128, N=768, K=2048, topk=8, dtype="bf16")

    def test_row_tiles_follow_the_kernels_padding_bound(self):
        self.assertEqual(space.row_tiles(self.SHAPE, 1, 16), 8)        # 8 routed rows, 16 each
        self.assertEqual(space.row_tiles(self.SHAPE, 4096, 128), 383)  # 32768 + 128 x 127 rows

    def test_same_launch_is_the_same_program_order(self):
        n = 2 * self.SHAPE.N
        for m in (1, 2, 4, 8, 16, 64, 1024):
            for bm, bn in ((16, 32), (16, 64), (32, 128), (64, 64)):
                em = space.row_tiles(self.SHAPE, m, bm) * bm
                for ga in (1, 16, 32, 64):
                    for gb in (1, 16, 32, 64):
                        a, b = KernelConfig(bm, bn, 64, ga, 4, 3), KernelConfig(bm, bn, 64, gb, 4, 3)
                        same = space.same_launch(a, b, self.SHAPE, m)
                        order_a, order_b = _program_tiles(em, n, ga, bm, bn), _program_tiles(em, n, gb, bm, bn)
                        if same:
                            self.assertEqual(order_a, order_b, (m, bm, bn, ga, gb))
                        elif ga != gb and em > bm:
                            self.assertNotEqual(order_a, order_b, (m, bm, bn, ga, gb))

    def test_other_axes_are_never_one_launch(self):
        a = KernelConfig(16, 32, 128, 16, 4, 3)
        self.assertTrue(space.same_launch(a, KernelConfig(16, 32, 128, 32, 4, 3), self.SHAPE, 1))
        self.assertFalse(space.same_launch(a, KernelConfig(16, 32, 128, 1, 4, 3), self.SHAPE, 1))
        self.assertFalse(space.same_launch(a, KernelConfig(16, 32, 128, 32, 4, 4), self.SHAPE, 1))
        self.assertFalse(space.same_launch(a, KernelConfig(16, 32, 64, 32, 4, 3), self.SHAPE, 1))
        self.assertFalse(space.same_launch(a, KernelConfig(16, 32, 128, 32, 4, 3), self.SHAPE, 4096))
