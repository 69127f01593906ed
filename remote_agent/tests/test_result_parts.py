# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""`result` of a result.json larger than one protocol line may be (an exhaustive up+down sweep of 40 batch
sizes writes ~40 MB; the app reads lines of at most 16 MiB): sent as result_part lines, then a result line
whose parts put back together are the result, byte for byte (issue 45 point 2)."""

import hashlib
import json
import os
import unittest

import agenttest

APP_LINE_LIMIT = 16 << 20  # AgentProtocolParser::kMaxLineBytes


class ResultParts(agenttest.AgentCase):
    def finished_run(self):
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1, 64])), "--foreground")
        self.assertEqual(r.rc, 0, r.lines)
        return r.one("run_started")["run_id"]

    def test_small_result_is_one_line(self):
        rid = self.finished_run()
        r = self.run_agent("result", rid)
        self.assertEqual(r.rc, 0, r.lines)
        self.assertEqual(r.of("result_part"), [])
        self.assertEqual(r.one("result")["result"]["run_id"], rid)

    def test_large_result_travels_in_parts_under_the_line_limit(self):
        rid = self.finished_run()
        path = os.path.join(self.run_dir(rid), "result.json")
        with open(path) as f:
            res = json.load(f)
        # ~40 MB of measurements, as a 40-size exhaustive up+down sweep writes; quotes and backslashes
        # in it make the escaped parts longer than their text
        one = dict(res["measurements"][0])
        one["error"] = 'a "quoted" \\ message'
        res["measurements"] = [dict(one, round=i) for i in range(110000)]
        with open(path, "w") as f:
            json.dump(res, f, indent=1)
        self.assertGreater(os.path.getsize(path), 36 << 20)
        r = self.run_agent("result", rid)
        self.assertEqual(r.rc, 0, r.stderr[-2000:])
        for line in r.lines:
            self.assertLess(len(line.encode()), APP_LINE_LIMIT)
        parts = r.of("result_part")
        self.assertGreater(len(parts), 2)
        self.assertEqual([p["index"] for p in parts], list(range(len(parts))))
        self.assertTrue(all(p["count"] == len(parts) and p["run_id"] == rid for p in parts))
        final = r.one("result")
        self.assertIsNone(final["result"])
        self.assertEqual(final["parts"], len(parts))
        text = "".join(p["data"] for p in parts)
        self.assertEqual(final["chars"], len(text))
        self.assertEqual(final["sha256"], hashlib.sha256(text.encode("ascii")).hexdigest())
        self.assertEqual(json.loads(text), res)
        self.assertEqual(r.events[-1]["type"], "done")


if __name__ == "__main__":
    unittest.main()
