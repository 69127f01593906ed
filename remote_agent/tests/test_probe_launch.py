# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""probe's launch facts of a running server (for the app's server profile suggestion): interpreter,
working folder, log file on stdout, nohup, cgroup unit/container, the server's own environment and the
config root and Triton seen by the SERVER's interpreter (not the agent's). The server is a real process
whose command line looks like `python -m sglang.launch_server ...` (it only sleeps: a labelled stand-in
for a real server, which this machine cannot run)."""

import os
import signal
import subprocess
import sys
import time
import unittest

import agenttest
from moetune_agent import probe as probe_mod


class CgroupFacts(unittest.TestCase):
    ROWS = [
        ("0::/system.slice/sglang.service\n", "sglang.service", False, None),
        ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/vllm-serve.service\n",
         "vllm-serve.service", True, None),
        ("0::/system.slice/docker-" + "ab" * 32 + ".scope\n", None, False, "ab" * 32),
        ("12:memory:/docker/" + "cd" * 32 + "\n0::/\n", None, False, "cd" * 32),
        ("0::/kubepods/burstable/pod1/cri-containerd-" + "ef" * 32 + ".scope\n", None, False, "ef" * 32),
        ("0::/user.slice/user-1000.slice/session-4.scope\n", None, False, None),
        ("", None, False, None),
    ]

    def test_rows(self):
        for text, unit, user, container in self.ROWS:
            with self.subTest(text=text):
                f = probe_mod.cgroup_facts(text)
                self.assertEqual((f["systemd_unit"], f["systemd_user"], f["container_id"]), (unit, user, container))


class KernelSource(unittest.TestCase):
    """The hash of the file that defines fused_moe_kernel: the fleet's groups are formed on it."""

    def test_first_defining_candidate_is_hashed(self):
        import hashlib
        import tempfile

        with tempfile.TemporaryDirectory() as pkg:
            self.assertIsNone(probe_mod.kernel_source("sglang", pkg))
            old = os.path.join(pkg, "srt", "layers", "moe", "fused_moe_triton")
            os.makedirs(old)
            with open(os.path.join(old, "fused_moe.py"), "w") as f:
                f.write("def fused_moe_kernel(a, b):\n    pass\n")
            # A file of that name without the kernel (a wrapper) is not the kernel's source.
            with open(os.path.join(old, "fused_moe_triton_kernels.py"), "w") as f:
                f.write("from .fused_moe import *\n")
            got = probe_mod.kernel_source("sglang", pkg)
            self.assertEqual(got["path"], os.path.join(old, "fused_moe.py"))
            with open(got["path"], "rb") as f:
                self.assertEqual(got["sha256"], hashlib.sha256(f.read()).hexdigest())
            self.assertIsNone(probe_mod.kernel_source("vllm", pkg))
            self.assertIsNone(probe_mod.kernel_source("sglang", None))


class LaunchFacts(agenttest.AgentCase):
    def make_tree(self):
        site = os.path.join(self.tmp, "server site")
        for d in ("sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_4_0", "triton"):
            os.makedirs(os.path.join(site, d))
        open(os.path.join(site, "sglang", "__init__.py"), "w").close()
        with open(os.path.join(site, "triton", "__init__.py"), "w") as f:
            f.write('__version__ = "3.7.1"\n')
        return site

    def test_nohup_server_with_log_and_env(self):
        site = self.make_tree()
        cfgdir = os.path.join(self.tmp, "persistent configs")
        os.makedirs(os.path.join(cfgdir, "configs"))
        log = os.path.join(self.tmp, "server.log")
        env = dict(os.environ, PYTHONPATH=site, SGLANG_MOE_CONFIG_DIR=cfgdir, CUDA_VISIBLE_DEVICES="0,1")
        with open(log, "w") as out:
            p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "-m", "sglang.launch_server",
                                  "--model-path", "/models/x", "--tp", "2"], stdout=out, stderr=subprocess.STDOUT,
                                 env=env, cwd=self.tmp,
                                 preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        time.sleep(0.2)
        r = self.run_agent("probe")
        s = [x for x in r.one("probe")["servers"] if x["pid"] == p.pid][0]
        launch = s["launch"]
        self.assertEqual(launch["log_file"], log)
        self.assertEqual(launch["cwd"], self.tmp)
        self.assertEqual(launch["supervisor"], "nohup")
        self.assertEqual(launch["env"]["CUDA_VISIBLE_DEVICES"], "0,1")
        self.assertEqual(os.path.realpath(launch["exe"]), os.path.realpath(sys.executable))
        view = s["server_view"]
        # The server's interpreter with the server's PYTHONPATH sees Triton 3.7.1 (the agent's sees none).
        self.assertEqual(view["triton"], "3.7.1")
        self.assertEqual(view["config_root"], os.path.join(cfgdir, "configs"))
        self.assertEqual(view["config_root_source"], "SGLANG_MOE_CONFIG_DIR")

    def test_module_root_without_env(self):
        site = self.make_tree()
        env = dict(os.environ, PYTHONPATH=site)
        env.pop("SGLANG_MOE_CONFIG_DIR", None)
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "-m", "sglang.launch_server"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        time.sleep(0.2)
        s = [x for x in self.run_agent("probe").one("probe")["servers"] if x["pid"] == p.pid][0]
        self.assertIsNone(s["launch"]["log_file"])
        self.assertNotEqual(s["launch"]["supervisor"], "nohup")
        self.assertEqual(s["server_view"]["config_root"],
                         os.path.join(site, "sglang/srt/layers/moe/fused_moe_triton/configs"))
        self.assertEqual(s["server_view"]["config_root_source"], "module")


if __name__ == "__main__":
    unittest.main()
