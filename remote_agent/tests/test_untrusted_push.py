# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 42 item 7, the agent's half: install-config reads other runs' push records and a run's
result.json non-blocking (a FIFO there is skipped, never waited on), and a malformed head-to-head
entry of the result is invalid_config, not a traceback."""

import json
import os

from untrusted import NAME, Case  # first: puts the agent on sys.path


class Untrusted(Case):
    def test_a_fifo_as_another_runs_push_record_is_skipped(self):
        os.makedirs(self.root)
        first = self.install(self.result_json(), "--replace")
        self.assertEqual(first.rc, 0, first.lines)
        other = os.path.join(self.home, "runs", "20261201-101010-abcdef")
        os.makedirs(other)
        with open(os.path.join(other, "spec.json"), "w") as f:
            json.dump({"K": 4096}, f)
        os.mkfifo(os.path.join(other, "push.json"))
        r, secs = self.call("install-config", self.result_json(bn=128), "--framework", "sglang", "--root",
                            self.root, "--replace", timeout=60)
        self.assertEqual(r.rc, 0, r.lines)
        self.assertLess(secs, 30)
        self.assertEqual(r.one("installed")["target"], os.path.join(self.root, NAME))

    def test_malformed_head_to_head_is_invalid_config(self):
        os.makedirs(self.root)
        self.assertEqual(self.install(self.result_json(), "--replace").rc, 0)
        for what, h2h in (("m not a number", [{"m": "x"}]), ("m missing", [{"median_us": 1.0}]),
                          ("not a list", {"m": 1}), ("entry not an object", [7]),
                          ("default not an object", [{"m": 1, "default": "x"}]),
                          ("configs not an object", [{"m": 1, "default": {"configs": [1]}}])):
            with self.subTest(what):
                r = self.install(self.result_json(bn=128, head_to_head=h2h), "--replace")
                err = self.assert_refused(r, "invalid_config", "head_to_head", "nothing was installed")
                self.assertNotIn("Traceback", err["message"])
