# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A run process that is slow to announce itself (a cold torch import, a busy host) is reported as what it is:
detached and still starting, with its run id, so a client attaches instead of starting a second sweep."""

import os
import stat
import time

import agenttest
from agenttest import small_spec


class SlowStart(agenttest.AgentCase):
    def slow_python(self, seconds):
        """TEST DOUBLE for a slow interpreter: sleeps, then runs the real one (the run process is real)."""
        path = os.path.join(self.tmp, "slow-python")
        with open(path, "w") as f:
            f.write("#!/bin/sh\nsleep %d\nexec %s \"$@\"\n" % (seconds, agenttest.sys.executable))
        os.chmod(path, stat.S_IRWXU)
        return path

    def test_slow_run_is_detached_not_failed(self):
        spec = small_spec(backend="triton", python=self.slow_python(6))
        env = {"MOETUNE_AGENT_START_WAIT_S": "1"}
        t0 = time.time()
        r = self.run_agent("tune", self.write_spec(spec), env=env)
        self.assertLess(time.time() - t0, 5.5, "waited for the slow start instead of answering")
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertFalse(r.of("error"), r.lines)
        done = r.events[-1]
        self.assertEqual((done["type"], done["status"], done.get("starting")), ("done", "detached", True))
        run_id = done["run_id"]
        self.assertTrue(os.path.isdir(self.run_dir(run_id)))
        warning = r.one("log")
        self.assertIn(run_id, warning["message"])
        self.assertIn("still starting", warning["message"])
        # A retry of the same spec meets the run that exists; it does not start a second sweep.
        again = self.run_agent("tune", self.write_spec(spec, "again.json"), env=env)
        self.assertEqual(again.rc, 1, again.lines)
        self.assertEqual(again.one("error")["code"], "run_active")
        self.assertIn(run_id, again.one("error")["message"])
        self.assertEqual(len(self.run_agent("runs").of("run")), 1)

    def test_run_that_dies_early_still_fails(self):
        bad = os.path.join(self.tmp, "broken-python")
        with open(bad, "w") as f:
            f.write("#!/bin/sh\necho 'no such module torch' >&2\nexit 1\n")
        os.chmod(bad, stat.S_IRWXU)
        r = self.run_agent("tune", self.write_spec(small_spec(backend="triton", python=bad)),
                           env={"MOETUNE_AGENT_START_WAIT_S": "20"})
        self.assertEqual(r.rc, 1, r.lines)
        err = r.one("error")
        self.assertEqual(err["code"], "backend_failed")
        self.assertIn("ended before it started working", err["message"])
        self.assertIn("no such module torch", err["message"])
