# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Config file names and contents vs the shared vectors (tests/data/moe_vectors.json), which the C++
core checks too, plus cases of our own."""

import json
import os
import unittest

import agenttest  # noqa: F401  (sets sys.path)
from moetune_agent.kernel_types import KernelConfig
from moetune_agent.serverconfig import configjson, naming


def load_vectors():
    path = os.path.join(agenttest.data_dir(), "moe_vectors.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


VECTORS = load_vectors()


class SharedVectors(unittest.TestCase):
    def setUp(self):
        if VECTORS is None:
            self.skipTest("tests/data/moe_vectors.json is not in the tree yet")

    def test_version(self):
        self.assertEqual(VECTORS["version"], 1)

    def test_names_parse_and_format(self):
        self.assertTrue(VECTORS["names"])
        for v in VECTORS["names"]:
            with self.subTest(name=v["name"]):
                n = naming.parse_name(v["name"])
                self.assertEqual(n.E, v["E"])
                self.assertEqual(n.N, v["N"])
                self.assertEqual(n.device_name, v["device_name"])
                self.assertEqual(n.dtype, v["dtype"])
                self.assertEqual(list(n.block_shape) if n.block_shape else None, v["block_shape"])
                self.assertEqual(n.per_channel_quant, v["per_channel_quant"])
                self.assertEqual(n.down, v["down"])
                self.assertEqual(n.file_name(v["dialect"]), v["name"])

    def test_server_names_of_a_logical_shape(self):
        rows = VECTORS.get("server_names")
        self.assertTrue(rows, "moe_vectors.json lacks server_names")
        for v in rows:
            with self.subTest(framework=v["framework"], name=v["name"]):
                n = naming.server_config_name(v["framework"], v["E"], v["N"], v["device_name"], v["dtype"],
                                              v["block_shape"], v["per_channel_quant"], v["down"])
                self.assertEqual(n.file_name(v["framework"]), v["name"])
                self.assertEqual(naming.parse_name(v["name"]), n)   # and the name reads back as built

    def test_run_output_names_follow_each_server(self):
        from moetune_agent.serverconfig.naming import file_names
        for v in VECTORS["server_names"]:
            if v["down"]:
                continue
            with self.subTest(name=v["name"]):
                spec = {"E": v["E"], "N": v["N"], "dtype": v["dtype"], "block_shape": v["block_shape"],
                        "per_channel_quant": v["per_channel_quant"], "ops": "up"}
                self.assertEqual(file_names(spec, v["device_name"])[v["framework"]], v["name"])

    def test_invalid_names(self):
        for bad in VECTORS.get("invalid_names", []):
            with self.subTest(name=bad):
                self.assertIsNone(naming.try_parse_name(bad))
                with self.assertRaises(naming.ConfigNameError):
                    naming.parse_name(bad)

    def test_triton_versions(self):
        for v in VECTORS["triton_versions"]:
            with self.subTest(version=v["version"]):
                self.assertEqual(naming.triton_folder(v["version"]), v["folder"])

    def test_files_exact_bytes(self):
        self.assertTrue(VECTORS["files"])
        for v in VECTORS["files"]:
            with self.subTest(text=v["text"][:60]):
                entries, tv = configjson.parse_config_text(v["text"])
                self.assertEqual(tv, v.get("triton_version"))
                self.assertEqual({str(k): e for k, e in entries.items()}, v["entries"])
                text = configjson.format_config_text(entries, v["dialect"], v.get("triton_version"))
                self.assertEqual(text, v["text"])


class OwnNames(unittest.TestCase):
    ROWS = [
        # (name, dialect, E, N, device, dtype, block_shape, pcq, down)
        ("E=128,N=768,device_name=NVIDIA_H200.json", "sglang", 128, 768, "NVIDIA_H200", None, None, False, False),
        ("E=257,N=256,device_name=NVIDIA_H20-3e,dtype=fp8_w8a8,block_shape=[128, 128].json", "sglang", 257, 256,
         "NVIDIA_H20-3e", "fp8_w8a8", (128, 128), False, False),
        ("E=257,N=256,device_name=NVIDIA_H20-3e,dtype=fp8_w8a8,block_shape=[128,128].json", "vllm", 257, 256,
         "NVIDIA_H20-3e", "fp8_w8a8", (128, 128), False, False),
        ("E=8,N=7168,device_name=Intel(R)_Arc(TM)_B580_Graphics,dtype=int8_w8a8,per_channel_quant=True_down.json",
         "sglang", 8, 7168, "Intel(R)_Arc(TM)_B580_Graphics", "int8_w8a8", None, True, True),
        ("E=16,N=1024,device_name=.json", "sglang", 16, 1024, "", None, None, False, False),
        ("E=385,N=128,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=int4_w4a16.json", "vllm",
         385, 128, "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition", "int4_w4a16", None, False, False),
    ]

    def test_round_trip(self):
        for name, dialect, e, n, dev, dt, bs, pcq, down in self.ROWS:
            with self.subTest(name=name):
                c = naming.parse_name("/some/dir with space/" + name)
                self.assertEqual((c.E, c.N, c.device_name, c.dtype, c.block_shape, c.per_channel_quant, c.down),
                                 (e, n, dev, dt, bs, pcq, down))
                self.assertEqual(c.file_name(dialect), name)

    def test_dialects_differ_only_where_the_servers_do(self):
        c = naming.ConfigName(128, 768, "NVIDIA_H200", "fp8_w8a8", (128, 128), True, True)
        self.assertEqual(c.file_name("sglang"),
                         "E=128,N=768,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128],"
                         "per_channel_quant=True_down.json")
        self.assertEqual(c.file_name("vllm"), "E=128,N=768,device_name=NVIDIA_H200,dtype=fp8_w8a8,"
                                              "block_shape=[128,128].json")

    def test_invalid(self):
        for bad in ["E=128,N=768.json", "e=128,N=768,device_name=X.json", "E=128,N=768,device_name=X.txt",
                    "E=0,N=768,device_name=X.json", "E=-1,N=768,device_name=X.json",
                    "E=128,N=768,device_name=X,block_shape=[0, 128].json", "E=128,N=768,device_name=X,foo=1.json",
                    "", "config.json"]:
            with self.subTest(name=bad):
                self.assertIsNone(naming.try_parse_name(bad))

    def test_unknown_dtype_still_parses(self):
        # A dtype newer than this agent must not make a server's file invisible to the diagnosis.
        self.assertEqual(naming.parse_name("E=8,N=64,device_name=X,dtype=mxfp4.json").dtype, "mxfp4")

    def test_device_names(self):
        self.assertEqual(naming.device_file_name("NVIDIA H100 80GB HBM3"), "NVIDIA_H100_80GB_HBM3")
        self.assertEqual(naming.device_file_name("NVIDIA H20-3e"), "NVIDIA_H20-3e")

    def test_triton_folders(self):
        for v, folder in [("3.6.0", "triton_3_6_0"), ("3.6", "triton_3_6_0"), ("3.5.1+git1234", "triton_3_5_1"),
                          ("triton_3_4_0", "triton_3_4_0"), ("/x/configs/triton_3_7_0/", "triton_3_7_0")]:
            with self.subTest(v=v):
                self.assertEqual(naming.triton_folder(v), folder)
        with self.assertRaises(ValueError):
            naming.triton_folder("latest")


class OwnContents(unittest.TestCase):
    def test_format_is_json_dump_indent_4_with_newline(self):
        cfgs = {16: KernelConfig(16, 64, 128, 1, 4, 3), 1: KernelConfig(16, 32, 64, 1, 4, 2)}
        text = configjson.format_config_text(cfgs, "sglang")
        self.assertTrue(text.endswith("}\n") and not text.endswith("\n\n"))
        self.assertEqual(text.splitlines()[1], '    "1": {')
        self.assertEqual(text.splitlines()[2], '        "BLOCK_SIZE_M": 16,')
        self.assertLess(text.index('"1"'), text.index('"16"'))  # numeric order, not text order
        entries, tv = configjson.parse_config_text(text)
        self.assertIsNone(tv)
        self.assertEqual(entries[16]["BLOCK_SIZE_K"], 128)

    def test_vllm_has_triton_version_first(self):
        text = configjson.format_config_text({1: KernelConfig(16, 32, 64, 1, 4, 2)}, "vllm", "3.6.0")
        self.assertTrue(text.startswith('{\n    "triton_version": "3.6.0",\n    "1": {'))
        self.assertEqual(configjson.parse_config_text(text)[1], "3.6.0")
        # SGLang's files never carry it.
        self.assertNotIn("triton_version", configjson.format_config_text({1: KernelConfig(16, 32, 64, 1, 4, 2)},
                                                                          "sglang", "3.6.0"))

    def test_use_tma_kept(self):
        text = configjson.format_config_text({8: KernelConfig(16, 32, 64, 1, 4, 2, USE_TMA=True)}, "sglang")
        self.assertIn('"num_stages": 2,\n        "USE_TMA": true', text)

    def test_invalid_contents(self):
        rows = [("[]", "JSON object"), ("{}", "no batch-size"), ('{"x": {}}', "not a batch size"),
                ('{"1": {"BLOCK_SIZE_M": 16}}', "lacks BLOCK_SIZE_N"),
                ('{"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, '
                 '"num_warps": 4, "num_stages": true}}', "positive integer"),
                ('{"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, '
                 '"num_warps": 4, "num_stages": 2, "bogus": 1}}', "unknown key"),
                ("{not json", "not JSON")]
        for text, msg in rows:
            with self.subTest(text=text):
                with self.assertRaises(configjson.ConfigFileError) as cm:
                    configjson.parse_config_text(text)
                self.assertIn(msg, str(cm.exception))

    def test_nearest_key(self):
        e = {1: 0, 16: 0, 64: 0}
        self.assertEqual(configjson.nearest_key(e, 41), 64)
        self.assertEqual(configjson.nearest_key(e, 40), 16)  # 24 from both: the smaller
        self.assertEqual(configjson.nearest_key(e, 8), 1)
        self.assertEqual(configjson.nearest_key({2: 0, 4: 0}, 3), 2)  # a tie takes the smaller


if __name__ == "__main__":
    unittest.main()
