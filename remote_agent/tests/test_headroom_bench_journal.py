# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/headroom_bench.tune_timings reads a tune's journal: damaged and hostile lines are skipped, the
good ones counted (median of the screening medians per size and config)."""

import json
import os
import sys
import tempfile
import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)

sys.path.insert(0, os.path.join(agenttest.AGENT_ROOT, "bench"))
import headroom_bench  # noqa: E402  # pylint: disable=wrong-import-position,import-error

CFG = {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4,
       "num_stages": 3}


class TuneTimings(unittest.TestCase):
    def test_hostile_lines_are_skipped(self):
        d = tempfile.mkdtemp(prefix="moetune-hb-journal-")
        good = [dict(type="measurement", op="up", m=64, config=CFG, round=0, median_us=v) for v in (10.0, 12.0, 11.0)]
        bad = ["{not json", json.dumps({"type": "measurement", "op": "up"}),
               json.dumps(dict(good[0], m="sixty-four")), json.dumps(dict(good[0], config=None)),
               json.dumps(dict(good[0], config={"BLOCK_SIZE_M": "x"})), json.dumps(dict(good[0], median_us=[1])),
               json.dumps(dict(good[0], round=100, median_us=1.0)),  # a head-to-head round: not screening
               json.dumps(dict(good[0], op="down", median_us=1.0)), json.dumps([1, 2]), "\x00" * 64]
        with open(os.path.join(d, "journal.jsonl"), "w", encoding="utf-8") as f:
            for line in bad[:5] + [json.dumps(g) for g in good] + bad[5:]:
                f.write(line + "\n")
        got = headroom_bench.tune_timings(d)
        self.assertEqual(got, {(64, "m16n64k128g1w4s3"): 11.0})

    def test_missing_journal(self):
        self.assertEqual(headroom_bench.tune_timings(tempfile.mkdtemp(prefix="moetune-hb-none-")), {})


if __name__ == "__main__":
    unittest.main()
