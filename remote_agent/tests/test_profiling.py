# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The opt-in profiles (moetune_agent/profiling.py) and their summary (tools/prof_summary.py): a profile is
written whole or not at all, and one damaged profile does not hide the others."""

import glob
import os
import subprocess
import sys
import tempfile
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

    def test_off_by_default(self):
        env = {k: v for k, v in os.environ.items() if k != "MOETUNE_PROFILE_DIR"}
        code = ("import sys; sys.path.insert(0, %r)\nfrom moetune_agent import profiling\n"
                "profiling.start('run'); print(profiling.stop())\n" % AGENT_ROOT)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                           check=False)
        self.assertEqual(r.stdout.strip(), "None", r.stderr)


if __name__ == "__main__":
    unittest.main()
