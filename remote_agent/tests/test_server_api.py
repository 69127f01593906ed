# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""API-generation detection of the installed SGLang / vLLM, on FAKES of each signature (test doubles:
neither server can be installed here; remote_agent/gpu_tests run the same code against the real
upstream trees on a GPU). Also: quantisation arguments per generation, override_config reset after a
failing call, and the server's own default (shipped file, else its heuristic) through ServerBackend."""

import contextlib
import dataclasses
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from moetune_agent.backends import server_api  # noqa: E402
from moetune_agent.backends.server_backend import ServerBackend, nearest, specialisation_class  # noqa: E402
from moetune_agent.kernel_types import KernelConfig, Shape  # noqa: E402

SG = "sglang.srt.layers.moe.moe_runner.triton_utils"
VL = "vllm.model_executor.layers.fused_moe"


def make_override():
    state = {"cfg": None}

    @contextlib.contextmanager
    def override_config(cfg):  # like both servers: no restore when the body raises
        old = state["cfg"]
        state["cfg"] = cfg
        yield
        state["cfg"] = old
    return override_config, (lambda: state["cfg"]), state


def fake_modules(mods):
    def import_module(name):
        if name in mods:
            return mods[name]
        raise ImportError("No module named %r" % name)
    return import_module


def mod(name, **attrs):
    m = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(m, k, v)
    return m


@dataclasses.dataclass
class MoeRunnerConfig:
    num_experts: int = None
    num_local_experts: int = None
    top_k: int = None
    inplace: bool = True
    activation: str = "silu"


class ServerArgs(object):
    def __init__(self, **kw):
        self.__dict__.update(kw)


def sglang_head(calls=None, down_file=None, up_file=None, tma=True):
    calls = calls if calls is not None else []
    oc, get_config, state = make_override()

    def fused_experts(hidden_states, w1, w2, topk_output, moe_runner_config, b1=None, b2=None,
                      use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False, use_int4_w4a16=False,
                      per_channel_quant=False, w1_scale=None, w2_scale=None, block_shape=None):
        calls.append(("fused_experts", state["cfg"], use_fp8_w8a8, w1_scale, block_shape))

    def invoke_fused_moe_kernel(A, B, bias, C, A_scale, B_scale, B_zp, topk_weights, topk_ids, sorted_token_ids,
                                expert_ids, num_tokens_post_padded, mul_routed_weight, top_k, config, compute_type,
                                use_fp8_w8a8, use_int8_w8a8, use_int8_w8a16, use_int4_w4a16, per_channel_quant,
                                block_shape=None, a_use_tma=False, b_use_tma=False, c_sorted=False,
                                filter_expert=True, router_topk=1):
        calls.append(("invoke", config, a_use_tma, router_topk))

    def get_moe_configs(E, N, dtype, block_n=0, block_k=0, per_channel_quant=False, down_moe=False):
        return down_file if down_moe else up_file

    def get_config_file_name(E, N, dtype, block_shape=None, per_channel_quant=False, down_moe=False):
        return "E=%d,N=%d,device_name=NVIDIA_H200%s.json" % (E, N, "_down" if down_moe else "")

    def get_default_config(M, E, N, K, topk, dtype, is_marlin, block_shape=None):
        return {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1} if M <= E else \
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}

    published = []
    kern = mod(SG + ".fused_moe", fused_experts=fused_experts, invoke_fused_moe_kernel=invoke_fused_moe_kernel,
               support_tensor_descriptor=lambda: tma)
    return fake_modules({
        SG: mod(SG, fused_experts=fused_experts, override_config=oc, get_config=get_config,
                moe_align_block_size=lambda ids, bm, e: ("sorted", "experts", "ntpp")),
        SG + ".fused_moe": kern,
        SG + ".fused_moe_triton_config": mod("cfg", get_moe_configs=get_moe_configs,
                                             get_config_file_name=get_config_file_name,
                                             get_default_config=get_default_config),
        "sglang.srt.layers.moe.moe_runner": mod("r", MoeRunnerConfig=MoeRunnerConfig),
        "sglang.srt.server_args": mod("sa", ServerArgs=ServerArgs,
                                      set_global_server_args_for_scheduler=published.append),
    }), calls, state, published


def vllm_tree(kind, calls=None):
    calls = calls if calls is not None else []
    oc, get_config, state = make_override()
    if kind == "head":
        def fused_experts(hidden_states, w1, w2, topk_weights, topk_ids, activation="silu",
                          apply_router_weight_on_input=False, global_num_experts=-1, expert_map=None,
                          quant_config=None):
            calls.append(("fused_experts", state["cfg"], quant_config))
    elif kind == "compat":
        def fused_experts(hidden_states, w1, w2, topk_weights, topk_ids, inplace=False, activation="silu",
                          apply_router_weight_on_input=False, global_num_experts=-1, expert_map=None,
                          quant_config=None):
            calls.append(("fused_experts", state["cfg"], quant_config, inplace))
    elif kind == "legacy":
        def fused_experts(hidden_states, w1, w2, topk_weights, topk_ids, inplace=False, activation="silu",
                          use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False, use_int4_w4a16=False,
                          w1_scale=None, w2_scale=None, block_shape=None):
            calls.append(("fused_experts", state["cfg"], use_fp8_w8a8, inplace))
    else:  # a future API this agent does not know
        def fused_experts(hidden_states, w1, w2, routing, plan):
            pass

    def fp8_w8a8_moe_quant_config(w1_scale, w2_scale, a1_scale=None, a2_scale=None, per_act_token_quant=False,
                                  block_shape=None):
        return ("fp8-quant-config", w1_scale, w2_scale, block_shape, per_act_token_quant)

    def dispatch_fused_moe_kernel(A, B, C, A_scale, B_scale, B_zp, topk_weights, sorted_token_ids, expert_ids,
                                  num_tokens_post_padded, mul_routed_weight, top_k, config, compute_type,
                                  use_fp8_w8a8, use_int8_w8a8, use_int8_w8a16, use_int4_w4a16, per_channel_quant,
                                  block_shape=None, B_bias=None):
        calls.append(("dispatch", config, mul_routed_weight, top_k))

    gemm = {"dispatch_fused_moe_kernel": dispatch_fused_moe_kernel} if kind == "head" else {}
    return fake_modules({
        VL: mod(VL, fused_experts=fused_experts, override_config=oc, get_config=get_config),
        VL + ".fused_moe": mod("k", fused_experts=fused_experts, **gemm,
                               get_moe_configs=lambda E, N, dtype, block_n=None, block_k=None: None,
                               get_config_file_name=lambda E, N, dtype, block_shape=None: "E=%d,N=%d.json" % (E, N),
                               get_default_config=lambda M, E, N, K, topk, dtype, block_shape=None:
                               {"BLOCK_SIZE_M": 16 if M <= 32 else 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128,
                                "GROUP_SIZE_M": 1, "SPLIT_K": 1, "num_warps": 4, "num_stages": 4}),
        VL + ".config": mod("q", fp8_w8a8_moe_quant_config=fp8_w8a8_moe_quant_config),
    }), calls, state


SIZES = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)


class SpecialisationClasses(unittest.TestCase):
    """The batch-size classes of the server's compiled GEMM kernels (the pool's precompile keys). The
    groups below are what the H200 showed (tools/server_anatomy.py classes, 2026-12-03: four configs
    with BLOCK_SIZE_M 16-128 at the 18 sizes, CPU-compiled in one process, a new kernel exactly at the
    first size of each group: SGLang main up and both, vLLM main both)."""

    def groups(self, framework, shape, op, cfg):
        out = {}
        for m in SIZES:
            out.setdefault(specialisation_class(framework, shape, op, cfg, m), []).append(m)
        return list(out.values())

    def test_qwen3_groups_of_both_servers(self):
        shape = Shape(128, 768, 2048, 8)
        for bm in (16, 32, 64, 128, 256):
            cfg = KernelConfig(bm, 128, 64, 8, 4, 3)
            for op in ("up", "down", "both"):
                self.assertEqual(self.groups("sglang", shape, op, cfg), [[1], [2, 4, 8, 16], list(SIZES[5:])])
            self.assertEqual(self.groups("vllm", shape, "both", cfg), [[1], [2, 4], list(SIZES[3:])])

    def test_what_the_classes_follow(self):
        # SGLang pads over E + 1 slots: with 64 experts and top-k 6, 8 * 6 = 48 routed tokens stay below
        # the 65 slots (EM = 48 * BLOCK_SIZE_M), 16 * 6 = 96 do not (96 + 65 * 15 is odd)
        shape = Shape(64, 1408, 2048, 6)
        cfg = KernelConfig(16, 64, 64, 1, 4, 3)
        self.assertEqual(specialisation_class("sglang", shape, "up", cfg, 8), ("sglang", "16", "16"))
        self.assertEqual(specialisation_class("sglang", shape, "up", cfg, 16), ("sglang", "", "16"))
        self.assertEqual(specialisation_class("sglang", shape, "up", cfg, 3), ("sglang", "16", ""))
        # vLLM's naive assignment (routed tokens x 4 <= E) compiles another kernel
        self.assertEqual(specialisation_class("vllm", shape, "both", cfg, 2)[1], "naive")
        self.assertNotEqual(specialisation_class("vllm", shape, "both", cfg, 3)[1], "naive")
        # the blocked int4/int8 weight-only path never takes the naive one
        wna = Shape(64, 1408, 2048, 6, "int4_w4a16", (0, 128))
        self.assertNotEqual(specialisation_class("vllm", wna, "both", cfg, 2)[1], "naive")
        self.assertIsNone(specialisation_class("tensorrt", shape, "both", cfg, 2))


class FakeTorch(object):
    """Just what ServerBackend._warm_align asks of torch (a test double: torch is not here)."""
    int32 = "int32"

    @staticmethod
    def device(name):
        return name

    @staticmethod
    def zeros(*shape, dtype=None, device=None):
        return FakeTensor(shape)


class FakeTensor(tuple):
    """A zeros tensor's shape, numel() and indexable like the shape (so a test can read ids[1])."""

    def __new__(cls, shape):
        return tuple.__new__(cls, ("zeros", shape))

    @property
    def shape(self):
        return self[1]

    def numel(self):
        n = 1
        for d in self[1]:
            n *= d
        return n


class PrecompileAssignment(unittest.TestCase):
    """The alignment tensors of a CPU compile are made once per (server, m, BLOCK_SIZE_M) in a pool
    process, and the server's alignment runs once before the first task (its lazy imports: ~4 s in
    each H200 pool process of a vLLM tune, on its first compile's path)."""

    def backend(self, framework, api):
        b = ServerBackend(Shape(128, 768, 2048, 8), framework=framework, api=api,
                          cpu_compile={"capability": 90, "smem": 232448})
        b._torch = FakeTorch()
        b._published = True
        return b

    def test_made_once_per_size_and_block(self):
        b = self.backend("vllm", None)
        made = []

        def make(tag):
            return lambda: made.append(tag) or (tag,)

        self.assertEqual(b.assignment("vllm", 1, 16, make("a")), ("a",))
        self.assertEqual(b.assignment("vllm", 1, 16, make("b")), ("a",))
        self.assertEqual(b.assignment("vllm", 1, 32, make("c")), ("c",))
        self.assertEqual(b.assignment("vllm", 2, 16, make("d")), ("d",))
        self.assertEqual(b.assignment("sglang", 1, 16, make("e")), ("e",))
        self.assertEqual(made, ["a", "c", "d", "e"])

    def test_sglang_align_warmed_before_the_first_task(self):
        calls = []
        api = server_api.ServerApi("sglang", "sglang-runner", "0.5", lambda *a: None, lambda c: None, None, None,
                                   {"invoke_gemm": lambda **kw: None,
                                    "align": lambda ids, bm, e: calls.append((ids[1], bm, e)) or ("s", "x", "n")})
        b = self.backend("sglang", api)
        b._warm_align()
        self.assertEqual(calls, [((1, 8), 16, 128), ((64, 8), 16, 128)])
        # the compile at m = 64, BLOCK_SIZE_M 16 finds them; another block size aligns again
        self.assertEqual(b.assignment("sglang", 64, 16, lambda: self.fail("aligned twice")), ("s", "x", "n"))
        self.assertIsNone(b._assign.get(("sglang", 64, 32)))

    def test_vllm_assignment_warmed_through_its_own_prepare(self):
        seen = []

        def prep(ids, config, num_tokens, top_k, e, expert_map, ignore_invalid_experts=False):
            seen.append((ids[1], config["BLOCK_SIZE_M"], num_tokens, top_k, e, ignore_invalid_experts))
            return ("sorted", "experts", "ntpp")

        api = server_api.ServerApi("vllm", "vllm-quant-config", "0.11", lambda *a: None, lambda c: None, None, None,
                                   {"precompile_gemm": lambda **kw: None, "prepare_assignment": prep})
        b = self.backend("vllm", api)
        b._warm_align()
        self.assertEqual(seen, [((1, 8), 16, 1, 8, 128, True), ((64, 8), 16, 64, 8, 128, True)])
        self.assertEqual(b.assignment("vllm", 1, 16, lambda: self.fail("prepared twice")),
                         ("sorted", "experts", "ntpp"))

    def test_warm_never_raises(self):
        def boom(ids, bm, e):
            raise RuntimeError("CUDA only")

        api = server_api.ServerApi("sglang", "sglang-runner", "0.5", lambda *a: None, lambda c: None, None, None,
                                   {"invoke_gemm": lambda **kw: None, "align": boom})
        b = self.backend("sglang", api)
        b._warm_align()  # an align op that only runs on the GPU: nothing warmed, nothing raised
        self.assertEqual(b._assign, {})


class Detection(unittest.TestCase):
    def test_sglang_runner_generation(self):
        imp, _c, _s, _p = sglang_head()
        api = server_api.detect("sglang", imp, "0.5.15+main.8905cbd42")
        self.assertEqual(api.generation, "sglang-runner")
        self.assertTrue(api.supports_separate)
        self.assertTrue(api.supports_tma)
        self.assertEqual(api.extras["MoeRunnerConfig"], MoeRunnerConfig)
        imp, _c, _s, _p = sglang_head(tma=False)
        self.assertFalse(server_api.detect("sglang", imp, "x").supports_tma)   # no tensor descriptors

    def test_vllm_generations(self):
        for kind, gen in (("head", "vllm-quant-config"), ("compat", "vllm-inplace"), ("legacy", "vllm-legacy")):
            with self.subTest(kind=kind):
                imp, _c, _s = vllm_tree(kind)
                api = server_api.detect("vllm", imp, "0.0.0+main")
                self.assertEqual(api.generation, gen)
                self.assertFalse(api.supports_separate)
                self.assertEqual(api.call_kwargs(), {} if kind == "head" else {"inplace": False})

    def test_unknown_versions_fail_with_a_sentence(self):
        imp, _c, _s = vllm_tree("future")
        with self.assertRaises(server_api.ServerApiError) as cm:
            server_api.detect("vllm", imp, "0.99.0")
        msg = str(cm.exception)
        self.assertIn("0.99.0", msg)
        self.assertIn("fused_experts(hidden_states, w1, w2, topk_weights, topk_ids", msg)

        def old_sglang(hidden_states, w1, w2, topk_weights, topk_ids, inplace=False):
            pass
        oc, _g, _s = make_override()
        imp = fake_modules({SG: mod(SG, fused_experts=old_sglang, override_config=oc)})
        with self.assertRaises(server_api.ServerApiError) as cm:
            server_api.detect("sglang", imp, "0.4.3")
        self.assertIn("SGLang 0.4.3", str(cm.exception))
        self.assertIn("topk_output, moe_runner_config", str(cm.exception))
        with self.assertRaises(server_api.ServerApiError) as cm:
            server_api.detect("sglang", fake_modules({}), None)
        self.assertIn("not importable", str(cm.exception))

    def test_quant_arguments_per_generation(self):
        imp, _c, _s, _p = sglang_head()
        api = server_api.detect("sglang", imp, "x")
        kw = api.quant_kwargs("fp8_w8a8", "s1", "s2", (128, 128), False)
        self.assertEqual(kw, {"use_fp8_w8a8": True, "w1_scale": "s1", "w2_scale": "s2", "block_shape": [128, 128],
                              "per_channel_quant": False})
        self.assertEqual(api.quant_kwargs("bf16", None, None, None, False), {})
        imp, _c, _s = vllm_tree("head")
        api = server_api.detect("vllm", imp, "x")
        kw = api.quant_kwargs("fp8_w8a8", "s1", "s2", (128, 128), True)
        self.assertEqual(kw, {"quant_config": ("fp8-quant-config", "s1", "s2", [128, 128], True)})
        with self.assertRaises(server_api.ServerApiError) as cm:   # the fake has no int4 builder
            api.quant_kwargs("int4_w4a16", "s1", "s2", (0, 128), False)
        self.assertIn("int4_w4a16_moe_quant_config", str(cm.exception))
        imp, _c, _s = vllm_tree("legacy")
        api = server_api.detect("vllm", imp, "x")
        self.assertEqual(api.quant_kwargs("int8_w8a16", "s1", "s2", None, False)["use_int8_w8a16"], True)

    def test_override_reset_after_a_failing_call(self):
        imp, _c, state, _p = sglang_head()
        api = server_api.detect("sglang", imp, "x")
        with self.assertRaises(RuntimeError):
            with api.override_config({"BLOCK_SIZE_M": 16}):
                raise RuntimeError("kernel failed")
        self.assertEqual(state["cfg"], {"BLOCK_SIZE_M": 16})   # the server's own context manager leaks it
        server_api.reset_override(api, None)
        self.assertIsNone(state["cfg"])


class Defaults(unittest.TestCase):
    SHAPE = Shape(E=128, N=768, K=2048, topk=8)

    def backend(self, imp, framework="sglang"):
        api = server_api.detect(framework, imp, "x")
        return ServerBackend(self.SHAPE, framework=framework, api=api)

    def test_shipped_file_is_the_default_with_its_source(self):
        up = {1: {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, "num_warps": 4,
                  "num_stages": 5},
              64: {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 8,
                   "num_stages": 2}}
        imp, _c, _s, published = sglang_head(up_file=up)
        b = self.backend(imp)
        self.assertEqual(b.default_config("both", 1), KernelConfig(16, 64, 64, 1, 4, 5))
        self.assertEqual(b.default_config("both", 40), KernelConfig(32, 128, 128, 1, 8, 2))   # nearest key
        self.assertEqual(b.default_config("down", 1), KernelConfig(16, 64, 64, 1, 4, 5))     # reuses up, no TMA
        src = b.default_source()
        self.assertEqual((src["kind"], src["file_name"]), ("file", "E=128,N=768,device_name=NVIDIA_H200.json"))
        self.assertEqual(src["down"]["kind"], "up_config")
        self.assertEqual(len(published), 1)   # SGLang's fused_experts needs a published ServerArgs

    def test_down_file_with_tma_and_block_m_forced_to_up(self):
        up = {1: {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1}}
        down = {1: {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, "num_warps": 4,
                    "num_stages": 3, "USE_TMA": True}}
        imp, _c, _s, _p = sglang_head(up_file=up, down_file=down)
        b = self.backend(imp)
        self.assertEqual(b.default_config("down", 1), KernelConfig(16, 128, 64, 1, 4, 3, USE_TMA=True))
        self.assertEqual(b.default_source()["down"]["kind"], "file")
        imp, _c, _s, _p = sglang_head(up_file=up, down_file=down, tma=False)
        self.assertIsNone(self.backend(imp).default_config("down", 1).USE_TMA)

    def test_no_file_uses_each_servers_own_heuristic(self):
        imp, _c, _s, _p = sglang_head()
        b = self.backend(imp)
        self.assertEqual(b.default_config("both", 1), KernelConfig(16, 32, 64, 1, 4, 3))
        self.assertEqual(b.default_config("both", 4096), KernelConfig(64, 64, 32, 8, 4, 3))
        self.assertEqual(b.default_source()["kind"], "heuristic")
        imp, _c, _s = vllm_tree("head")
        v = self.backend(imp, "vllm")
        self.assertEqual(v.default_config("both", 1), KernelConfig(16, 64, 128, 1, 4, 4))
        self.assertNotEqual(v.default_config("both", 1), b.default_config("both", 1))

    def test_nearest_key_ties_go_to_the_first_in_file_order(self):
        self.assertEqual(nearest({2: "a", 6: "b"}, 4), "a")
        self.assertEqual(nearest({6: "b", 2: "a"}, 4), "b")

    def test_vllm_precompiles_its_two_gemms_but_keeps_one_config(self):
        """vLLM main's one-GEMM entry point is found for the CPU precompile (issue 22) without making vLLM
        look like a server with separate up/down files; quantised dtypes (activations quantised on the
        GPU first) and a vLLM without that entry point have no precompile."""
        imp, _c, _s = vllm_tree("head")
        api = server_api.detect("vllm", imp, "x")
        self.assertIsNotNone(api.extras["precompile_gemm"])
        self.assertFalse(api.supports_separate)
        self.assertTrue(ServerBackend(self.SHAPE, framework="vllm", api=api).can_cpu_precompile())
        fp8 = dataclasses.replace(self.SHAPE, dtype="fp8_w8a8")
        self.assertFalse(ServerBackend(fp8, framework="vllm", api=api).can_cpu_precompile())
        imp, _c, _s = vllm_tree("compat")
        api = server_api.detect("vllm", imp, "x")
        self.assertIsNone(api.extras["precompile_gemm"])
        self.assertFalse(ServerBackend(self.SHAPE, framework="vllm", api=api).can_cpu_precompile())

    def test_vllm_sorted_ids_rows(self):
        # moe_align_block_size's allocation (vLLM main): numel + E*(BM-1), capped at numel*BM below E tokens
        self.assertEqual(ServerBackend.vllm_padded(8 * 8, 16, 128), 64 * 16)
        self.assertEqual(ServerBackend.vllm_padded(2048 * 8, 64, 128), 16384 + 128 * 63)
        self.assertEqual(ServerBackend.vllm_padded(127, 2, 128), 127 * 2)  # the cap: 254 < 127 + 128
        self.assertEqual(ServerBackend.vllm_padded(128, 2, 128), 128 + 128)  # E tokens: no cap

    def test_separate_ops_refused_for_vllm_with_a_sentence(self):
        imp, _c, _s = vllm_tree("head")
        b = self.backend(imp, "vllm")
        with self.assertRaises(Exception) as cm:
            b._check_op("up", KernelConfig(16, 32, 64, 1, 4, 3))
        self.assertIn('tune it with ops "up"', str(cm.exception))
        imp, _c, _s, _p = sglang_head(tma=False)
        b = self.backend(imp)
        with self.assertRaises(Exception) as cm:
            b._check_op("down", KernelConfig(16, 32, 64, 1, 4, 3, USE_TMA=True))
        self.assertIn("not supported", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
