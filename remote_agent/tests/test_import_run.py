# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""import-run: a result.json tuned on another host becomes a finished run here, which install-config and
`runs` treat as any run; the same bytes give the same run; a bad source imports nothing."""

import json
import os

import agenttest


class ImportRun(agenttest.AgentCase):
    def test_import_then_runs_lists_it_and_reimport_reuses(self):
        src = os.path.join(self.tmp, "result.json")
        result = {"format": "moetune-result", "version": 1, "run_id": "20261208-010101-abcdef",
                  "framework": "sglang", "backend": "synthetic", "simulated": True,
                  "device_name": "SIMULATED_GPU", "shape": {"E": 8, "N": 128}, "files": []}
        with open(src, "w") as f:
            json.dump(result, f)
        first = self.run_agent("import-run", src, "--from-host", "gpu-1", "--from-run", "r1").one("imported")
        self.assertFalse(first["reused"])
        self.assertTrue(os.path.isfile(os.path.join(first["run_dir"], "result.json")))
        with open(os.path.join(first["run_dir"], "imported.json")) as f:
            mark = json.load(f)
        self.assertEqual((mark["from_host"], mark["from_run"]), ("gpu-1", "r1"))
        runs = [e for e in self.run_agent("runs").events if e.get("type") == "run"]
        mine = [r for r in runs if r["run_id"] == first["run_id"]]
        self.assertEqual(len(mine), 1)
        self.assertEqual(mine[0]["state"], "finished")
        self.assertTrue(mine[0]["simulated"])  # a simulated source stays simulated
        again = self.run_agent("import-run", src).one("imported")
        self.assertTrue(again["reused"])
        self.assertEqual(again["run_id"], first["run_id"])

    def test_not_a_result_imports_nothing(self):
        src = os.path.join(self.tmp, "x.json")
        with open(src, "w") as f:
            f.write("{\"format\": \"other\"}")
        r = self.run_agent("import-run", src)
        self.assertEqual(r.one("error")["code"], "invalid_config")
        self.assertEqual([e for e in self.run_agent("runs").events if e.get("type") == "run"], [])
        r = self.run_agent("import-run", src, "--from-host", "bad host;rm")
        self.assertEqual(r.one("error")["code"], "usage")
