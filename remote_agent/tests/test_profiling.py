# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The opt-in profiles (moetune_agent/profiling.py) and their summary (tools/prof_summary.py): a profile is
written whole or not at all, and one damaged profile does not hide the others."""

import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)


class Profiles(unittest.TestCase):
    def test_profile_written_whole_and_summarised_beside_a_damaged_one(self):
        folder = tempfile.mkdtemp(prefix="moetune-prof-")
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from moetune_agent import profiling\n"
                "profiling.start('worker-gpu0')\n"
                "def busy():\n    return sum(i * i for i in range(200000))\n"
                "busy(); profiling.mark('backend_made'); busy()\n"
                "print(profiling.stop())\n" % AGENT_ROOT)
        r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, MOETUNE_PROFILE_DIR=folder),
                           capture_output=True, text=True, timeout=60, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        path = r.stdout.strip()
        self.assertTrue(path.endswith(".prof") and os.path.isfile(path), r.stdout)
        self.assertEqual(glob.glob(os.path.join(folder, "*.tmp")), [])
        with open(os.path.join(folder, "precompile-99.prof"), "wb") as f:  # a process killed mid-write
            f.write(b"\xe3\x00\x01")
        r = subprocess.run([sys.executable, os.path.join(AGENT_ROOT, "tools", "prof_summary.py"), folder, "--top", "5"],
                           capture_output=True, text=True, timeout=60, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("precompile-99.prof\n  unreadable profile", r.stdout)
        self.assertIn(os.path.basename(path), r.stdout)
        self.assertIn("backend_made", r.stdout)
        self.assertIn("busy", r.stdout)

    def test_a_second_sigterm_does_not_cut_the_profile_short(self):
        """A cancel signals the run's whole process group, then the run's close() terminates its workers
        again: the profile being written on the first SIGTERM is still written whole (the write is slowed
        here so the second signal lands in it)."""
        folder = tempfile.mkdtemp(prefix="moetune-prof-")
        code = ("import sys, time; sys.path.insert(0, %r)\n"
                "import cProfile\n"
                "from moetune_agent import profiling\nfrom moetune_agent.engine import worker\n"
                "class Slow(cProfile.Profile):\n"
                "    def dump_stats(self, file):\n        time.sleep(0.8)\n        return super().dump_stats(file)\n"
                "cProfile.Profile = Slow\n"
                "profiling.start('worker-gpu0')\n"
                "worker.profile_on_sigterm()\n"
                "print('ready', flush=True)\n"
                "while True:\n    sum(range(1000))\n" % AGENT_ROOT)
        p = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ, MOETUNE_PROFILE_DIR=folder),
                             stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline().strip(), "ready")
            p.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            p.send_signal(signal.SIGTERM)  # while the first one's profile is being written
            self.assertEqual(p.wait(timeout=30), 0)
        finally:
            if p.poll() is None:
                p.kill()
            p.stdout.close()
        self.assertEqual(len(glob.glob(os.path.join(folder, "worker-gpu0-*.prof"))), 1, os.listdir(folder))
        self.assertEqual(glob.glob(os.path.join(folder, "*.tmp")), [])

    def test_off_by_default(self):
        env = {k: v for k, v in os.environ.items() if k != "MOETUNE_PROFILE_DIR"}
        code = ("import sys; sys.path.insert(0, %r)\nfrom moetune_agent import profiling\n"
                "profiling.start('run'); print(profiling.stop())\n" % AGENT_ROOT)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                           check=False)
        self.assertEqual(r.stdout.strip(), "None", r.stderr)


if __name__ == "__main__":
    unittest.main()
