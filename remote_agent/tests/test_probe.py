"""probe: GPUs through nvidia-smi, the interpreter's packages and config folders, running servers and
their model's MoE shape. nvidia-smi is replaced by a script printing recorded H200 output (a labelled
test double: there is no GPU here); the SGLang/vLLM trees are plain folders on PYTHONPATH; the server
is a real process whose command line looks like `python -m sglang.launch_server ...`."""

import json
import os
import subprocess
import sys
import unittest

import agenttest
from moetune_agent import probe as probe_mod

FAKE_SMI = r'''#!/bin/sh
case "$1" in
  --query-gpu=*) printf '0, NVIDIA H200, GPU-aaaa, 143771, 120034, 9.0\n1, NVIDIA H200, GPU-bbbb, 143771, 5, 9.0\n' ;;
  --query-compute-apps=*) printf 'GPU-aaaa, 4242, python3, 120000\n' ;;
  *) exit 2 ;;
esac
'''


class Gpus(agenttest.AgentCase):
    def test_fake_nvidia_smi(self):
        smi = os.path.join(self.tmp, "nvidia-smi")
        with open(smi, "w") as f:
            f.write(FAKE_SMI)
        os.chmod(smi, 0o755)
        r = self.run_agent("probe", env={"MOETUNE_NVIDIA_SMI": smi})
        p = r.one("probe")
        self.assertIsNone(p["gpu_error"])
        self.assertEqual([g["name"] for g in p["gpus"]], ["NVIDIA_H200", "NVIDIA_H200"])
        g0 = p["gpus"][0]
        self.assertEqual((g0["raw_name"], g0["memory_total_mib"], g0["memory_used_mib"], g0["compute_capability"]),
                         ("NVIDIA H200", 143771, 120034, "9.0"))
        self.assertEqual(g0["processes"], [{"pid": 4242, "name": "python3", "used_memory_mib": 120000}])
        self.assertEqual(p["gpus"][1]["processes"], [])
        tun = {t["variant"]: t for t in p["tunable"]}
        self.assertEqual(tun["int4_w4a16:group"]["backends"], ["triton", "synthetic"])
        self.assertEqual(tun["int8_w8a16:group"]["backends"], ["synthetic"])
        self.assertIn("per-token", tun["int8_w8a8:channel"]["description"])
        gpu_stack = bool(p["python"]["torch"] and p["python"]["triton"])
        server = any(f["importable"] for f in p["frameworks"])
        self.assertEqual(tun["bf16"]["usable_here"], (["server"] if gpu_stack and server else []) +
                         (["triton"] if gpu_stack else []) + ["synthetic"])
        if not gpu_stack:
            self.assertIn("has no torch", tun["bf16"]["not_usable_here"]["triton"])
        self.assertIn("only the synthetic backend", tun["int8_w8a16:group"]["not_usable_here"]["any GPU backend"])

    def test_tunable_says_why_a_backend_cannot_run(self):
        """probe's tunable table per host situation (pure function of the facts probe gathered)."""
        from moetune_agent.probe import _tunable
        full = {"executable": "/opt/venv/bin/python", "torch": "2.11.0", "triton": "3.6.0"}
        sgl = [{"name": "sglang", "importable": True}, {"name": "vllm", "importable": False}]
        h200 = [{"index": 0, "name": "NVIDIA_H200"}]
        rows = {r["variant"]: r for r in _tunable(full, sgl, h200)}
        self.assertEqual(rows["fp8_w8a8:block"]["usable_here"], ["server", "triton", "synthetic"])
        self.assertEqual(rows["fp8_w8a8:block"]["not_usable_here"], {})
        self.assertEqual(rows["int4_w4a16:group"]["usable_here"], ["triton", "synthetic"])
        rows = {r["variant"]: r for r in _tunable(full, [{"name": "sglang", "importable": False}], h200)}
        self.assertEqual(rows["bf16"]["usable_here"], ["triton", "synthetic"])
        self.assertEqual(rows["bf16"]["not_usable_here"],
                         {"server": "neither SGLang nor vLLM is importable with /opt/venv/bin/python"})
        rows = {r["variant"]: r for r in _tunable(full, sgl, [])}
        self.assertEqual(rows["bf16"]["usable_here"], ["synthetic"])
        self.assertEqual(rows["bf16"]["not_usable_here"]["triton"], "no NVIDIA GPU was found on this host")
        rows = {r["variant"]: r for r in _tunable({"executable": "/usr/bin/python3", "torch": "2.11.0"}, sgl, h200)}
        self.assertEqual(rows["bf16"]["not_usable_here"]["server"], "/usr/bin/python3 has no triton")

    def test_no_nvidia_smi_degrades(self):
        r = self.run_agent("probe", env={"MOETUNE_NVIDIA_SMI": os.path.join(self.tmp, "absent")})
        self.assertEqual(r.rc, 0)
        p = r.one("probe")
        self.assertEqual(p["gpus"], [])
        self.assertIn("not found", p["gpu_error"])
        self.assertIsNotNone(p["python"]["version"])
        self.assertEqual(r.events[-1]["status"], "ok")


class Frameworks(agenttest.AgentCase):
    def make_tree(self, newer=True):
        site = os.path.join(self.tmp, "site")
        os.makedirs(os.path.join(site, "triton"))
        with open(os.path.join(site, "triton", "__init__.py"), "w") as f:
            f.write('__version__ = "3.6.0"\n')
        parts = ("moe_runner", "triton_utils") if newer else ("fused_moe_triton",)
        root = os.path.join(site, "sglang", "srt", "layers", "moe", *parts, "configs")
        for folder, files in [("triton_3_4_0", ["E=128,N=768,device_name=NVIDIA_H200.json"]),
                              ("triton_3_2_0", ["E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json"])]:
            os.makedirs(os.path.join(root, folder))
            for n in files:
                open(os.path.join(root, folder, n), "w").close()
        open(os.path.join(site, "sglang", "__init__.py"), "w").close()
        return site, root

    def test_sglang_tree(self):
        for newer in (True, False):
            with self.subTest(newer=newer):
                site, root = self.make_tree(newer)
                r = self.run_agent("probe", "--python", sys.executable,
                                   env={"PYTHONPATH": agenttest.AGENT_ROOT + os.pathsep + site})
                p = r.one("probe")
                self.assertEqual(p["python"]["triton"], "3.6.0")
                sg = [f for f in p["frameworks"] if f["name"] == "sglang"][0]
                self.assertTrue(sg["importable"])
                self.assertEqual(sg["config_root"], root)
                self.assertEqual(sg["config_root_source"], "module")
                self.assertEqual(sg["triton_folder"], "triton_3_6_0")
                self.assertFalse(sg["triton_folder_exists"])
                self.assertEqual([t["name"] for t in sg["triton_folders"]], ["triton_3_4_0", "triton_3_2_0"])
                self.assertEqual(sg["triton_folders"][0]["files"], ["E=128,N=768,device_name=NVIDIA_H200.json"])
                vl = [f for f in p["frameworks"] if f["name"] == "vllm"][0]
                self.assertFalse(vl["importable"])
                self.assertIn("No module named", vl["error"])
                import shutil
                shutil.rmtree(site)

    def test_env_overrides(self):
        site, _ = self.make_tree()
        d = os.path.join(self.tmp, "override")
        os.makedirs(os.path.join(d, "configs", "triton_3_6_0"))
        r = self.run_agent("probe", env={"PYTHONPATH": agenttest.AGENT_ROOT + os.pathsep + site,
                                         "SGLANG_MOE_CONFIG_DIR": d, "VLLM_TUNED_CONFIG_FOLDER": d})
        fws = {f["name"]: f for f in r.one("probe")["frameworks"]}
        self.assertEqual(fws["sglang"]["config_root"], os.path.join(d, "configs"))
        self.assertEqual(fws["sglang"]["config_root_source"], "SGLANG_MOE_CONFIG_DIR")
        self.assertTrue(fws["sglang"]["triton_folder_exists"])
        self.assertEqual(fws["vllm"]["user_folder"], d)

    def test_bad_interpreter(self):
        r = self.run_agent("probe", "--python", os.path.join(self.tmp, "no python"))
        self.assertEqual(r.rc, 0)
        p = r.one("probe")
        self.assertIn("cannot run", p["python"]["error"])
        self.assertEqual(p["frameworks"], [])


class Servers(agenttest.AgentCase):
    QWEN = {"architectures": ["Qwen3MoeForCausalLM"], "num_experts": 128, "num_experts_per_tok": 8,
            "hidden_size": 2048, "moe_intermediate_size": 768, "torch_dtype": "bfloat16"}
    DSV3 = {"n_routed_experts": 256, "num_experts_per_tok": 8, "hidden_size": 7168, "moe_intermediate_size": 2048,
            "n_shared_experts": 1, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}

    def start_fake_server(self, argv):
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"] + argv)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        return p

    def model_dir(self, name, cfg):
        d = os.path.join(self.tmp, "models", name)
        os.makedirs(d)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f)
        return d

    def test_servers_and_suggested_specs(self):
        q = self.model_dir("Qwen3-30B-A3B", self.QWEN)
        ds = self.model_dir("DeepSeek V3", self.DSV3)
        p1 = self.start_fake_server(["-m", "sglang.launch_server", "--model-path", q, "--tp", "2"])
        p2 = self.start_fake_server(["vllm", "serve", ds, "--tensor-parallel-size=8"])
        r = self.run_agent("probe")
        servers = {s["pid"]: s for s in r.one("probe")["servers"]}
        s1, s2 = servers[p1.pid], servers[p2.pid]
        self.assertEqual((s1["framework"], s1["model"], s1["tp"]), ("sglang", q, 2))
        self.assertEqual(s1["suggested_spec"], {"framework": "sglang", "E": 128, "N": 384, "K": 2048, "topk": 8,
                                                "dtype": None, "block_shape": None})
        self.assertEqual((s2["framework"], s2["model"], s2["tp"]), ("vllm", ds, 8))
        self.assertEqual(s2["moe"]["weight_block_size"], [128, 128])
        self.assertEqual(s2["suggested_spec"], {"framework": "vllm", "E": 256, "N": 256, "K": 7168, "topk": 8,
                                                "dtype": "fp8_w8a8", "block_shape": [128, 128]})

    def test_unreadable_model(self):
        p = self.start_fake_server(["-m", "sglang.launch_server", "--model-path", "/nonexistent/model"])
        s = [x for x in self_probe(self) if x["pid"] == p.pid][0]
        self.assertIsNone(s["moe"])
        self.assertIn("not found", s["error"])

    def test_classify(self):
        rows = [(["python3", "-m", "sglang.launch_server"], "sglang"), (["python", "-m", "sglang.launch_server"], "sglang"),
                (["/venv/bin/vllm", "serve", "m"], "vllm"),
                (["python", "-m", "vllm.entrypoints.openai.api_server"], "vllm"), (["python", "train.py"], None),
                (["grep", "sglang"], None)]
        for args, fw in rows:
            with self.subTest(args=args):
                self.assertEqual(probe_mod.classify_cmdline(args), fw)


def self_probe(case):
    return case.run_agent("probe").one("probe")["servers"]


if __name__ == "__main__":
    unittest.main()
