# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs that cannot measure end failed, with the first error (never "done: ok" with no winners), and
`backend: auto` never picks a backend that cannot run. Synthetic backend (simulated) with test hooks:
MOETUNE_TEST_FAIL_MEASURE (every measurement fails), MOETUNE_TEST_FAIL_CALL (the kernel cannot be
called at all, like a server API the call does not match)."""

import json
import os
import sys
import unittest

import agenttest
from agenttest import small_spec
from test_runs import RunCase

sys.path.insert(0, agenttest.AGENT_ROOT)

from moetune_agent.tunerun import runner as runner_mod  # noqa: E402
from moetune_agent.runs import store  # noqa: E402


class FailedRuns(RunCase):
    def test_every_candidate_failing_ends_failed_with_the_first_error(self):
        msg = "TypeError: fused_experts() got an unexpected keyword argument 'inplace'"
        r = self.run_agent("tune", self.write_spec(small_spec()), "--foreground", "--new",
                           env={"MOETUNE_TEST_FAIL_MEASURE": msg})
        self.assertEqual(r.rc, 1, r.stderr)
        self.assertEqual(r.events[-1]["status"], "failed")
        err = r.one("error")
        self.assertEqual(err["code"], "backend_failed")
        self.assertIn("every one of the", err["message"])
        self.assertIn(msg, err["message"])
        self.assertEqual(r.of("result_written"), [])
        self.assertEqual([e for e in r.of("best") if e.get("final")], [])
        runs = self.run_agent("runs")
        self.assertEqual(runs.one("run")["state"], "failed")

    def test_a_kernel_that_cannot_be_called_fails_at_once(self):
        msg = "SGLang 0.4.3: fused_experts(hidden_states, w1, w2, topk_weights, topk_ids) is an API this agent does not know"
        r = self.run_agent("tune", self.write_spec(small_spec()), "--foreground", "--new",
                           env={"MOETUNE_TEST_FAIL_CALL": msg})
        self.assertEqual(r.rc, 1, r.stderr)
        err = r.one("error")
        self.assertEqual(err["code"], "backend_failed")
        self.assertIn(msg, err["message"])
        self.assertEqual(r.of("measurement"), [])   # nothing was timed: it failed before any work
        self.assertEqual(r.of("run_started"), [])


class Auto(RunCase):
    """In-process run so auto's candidate list can be set (the workers are real spawned processes)."""

    def run_in_process(self, spec, candidates):
        run_dir = os.path.join(self.tmp, "run")
        os.makedirs(run_dir)
        with open(os.path.join(run_dir, "spec.json"), "w") as f:
            json.dump(spec, f)
        saved = runner_mod.auto_candidates
        runner_mod.auto_candidates = lambda framework: list(candidates)
        try:
            rc = runner_mod.Run(run_dir).main()
        finally:
            runner_mod.auto_candidates = saved
        return rc, agenttest.read_jsonl(os.path.join(run_dir, "events.jsonl"))

    def test_auto_skips_a_backend_that_cannot_run(self):
        # "triton" cannot run here (no torch, no GPU): auto proves it with one call, says why, moves on.
        rc, events = self.run_in_process(small_spec(backend="auto", batch_sizes=[1, 64]), ["triton", "synthetic"])
        self.assertEqual(rc, 0)
        warn = [e for e in events if e["type"] == "log" and e["message"].startswith("auto: the triton backend")]
        self.assertEqual(len(warn), 1, events[:3])
        started = [e for e in events if e["type"] == "run_started"]
        self.assertEqual(started[0]["backend"], "synthetic")
        self.assertEqual(events[-1]["status"], "ok")

    def test_auto_with_no_runnable_backend_fails_with_the_reason(self):
        rc, events = self.run_in_process(small_spec(backend="auto"), ["triton"])
        self.assertEqual(rc, 1)
        err = [e for e in events if e["type"] == "error"][0]
        self.assertEqual(err["code"], "backend_failed")
        self.assertIn("triton", err["message"])
        self.assertEqual(store.get_state(os.path.join(self.tmp, "run")), "failed")


if __name__ == "__main__":
    unittest.main()
