# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The built single-file agent (moetune-agent.pyz): it runs, is reproducible, carries kernels/, and a
detached run started from it works (the run process re-imports the package from the .pyz)."""

import hashlib
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

import agenttest

BUILD = os.path.join(agenttest.AGENT_ROOT, "build_pyz.py")
KERNELS = os.path.join(os.path.dirname(agenttest.AGENT_ROOT), "kernels")


def build(out):
    subprocess.check_call([sys.executable, BUILD, "--src", agenttest.AGENT_ROOT, "--kernels", KERNELS, "--out", out])


class Pyz(agenttest.AgentCase):
    @classmethod
    def setUpClass(cls):
        cls.build_dir = tempfile.mkdtemp(prefix="moetune pyz ")
        built = os.environ.get("MOETUNE_AGENT_PYZ")
        # The CMake-built archive when ctest provides it; otherwise build one here the same way.
        if built and os.path.isfile(built):
            cls.pyz = built
        else:
            cls.pyz = os.path.join(cls.build_dir, "moetune-agent.pyz")
            build(cls.pyz)

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.build_dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.agent = self.pyz
        self.env.pop("PYTHONPATH", None)   # only the archive may provide the package

    def test_version_and_contents(self):
        r = self.run_agent("version")
        self.assertEqual(r.rc, 0)
        self.assertIn("strategy:exhaustive", r.events[0]["capabilities"])
        with zipfile.ZipFile(self.pyz) as z:
            names = set(z.namelist())
        self.assertIn("__main__.py", names)
        self.assertIn("moetune_agent/cli.py", names)
        self.assertFalse([n for n in names if "__pycache__" in n or n.startswith("tests/")])
        kernels = [n for n in os.listdir(KERNELS) if n.endswith((".py", ".cu"))] if os.path.isdir(KERNELS) else []
        for k in kernels:
            self.assertIn("moetune_agent/kernels/" + k, names)
        if kernels:
            self.assertIn("kernels", r.events[0]["capabilities"])
        with open(self.pyz, "rb") as f:
            self.assertTrue(f.read(2) == b"#!")

    def test_agent_version_is_cmakes_project_version(self):
        want = os.environ.get("MOETUNE_PROJECT_VERSION")
        if not want:  # outside ctest: read the one source the way the build does
            sys.path.insert(0, agenttest.AGENT_ROOT)
            import build_pyz
            want = build_pyz.cmake_project_version(agenttest.AGENT_ROOT)
        self.assertEqual(self.run_agent("version").events[0]["agent_version"], want)
        with zipfile.ZipFile(self.pyz) as z:
            self.assertIn('VERSION = "%s"' % want, z.read("moetune_agent/_version.py").decode())
        # The checkout (no _version.py) says the same.
        env = dict(self.env, PYTHONPATH=agenttest.AGENT_ROOT)
        p = subprocess.run([sys.executable, "-m", "moetune_agent", "version"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, cwd=self.tmp)
        self.assertEqual(self.parse(p.returncode, p.stdout.decode(), p.stderr.decode()).events[0]["agent_version"],
                         want)

    def test_reproducible(self):
        a = os.path.join(self.tmp, "a.pyz")
        b = os.path.join(self.tmp, "b.pyz")
        build(a)
        os.utime(os.path.join(agenttest.AGENT_ROOT, "moetune_agent", "cli.py"))   # mtimes must not matter
        build(b)
        with open(a, "rb") as fa, open(b, "rb") as fb:
            self.assertEqual(hashlib.sha256(fa.read()).hexdigest(), hashlib.sha256(fb.read()).hexdigest())

    def test_detached_run_from_the_archive(self):
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1, 64])))
        self.assertEqual(r.events[-1]["status"], "detached", r.stderr)
        run_id = r.one("run_started")["run_id"]
        a = self.run_agent("attach", run_id, timeout=300)
        self.assertEqual(a.events[-1]["status"], "ok", a.lines[-3:])
        kinds = {e["kind"] for e in a.of("result_written")}
        self.assertEqual(kinds, {"sglang", "vllm", "result"})


if __name__ == "__main__":
    unittest.main()
