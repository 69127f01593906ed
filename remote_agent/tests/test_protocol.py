# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Protocol framing for every command: stdout is JSON lines only, hello first, one done last; errors carry
a code and a sentence; PROTOCOL.md's example lines are valid and match what the agent emits."""

import json
import os
import re
import unittest

import agenttest

PROTOCOL_MD = os.path.join(agenttest.AGENT_ROOT, "PROTOCOL.md")


class Framing(agenttest.AgentCase):
    COMMANDS = [
        (["version"], 0),
        (["runs"], 0),
        (["probe"], 0),
        (["--help"], 0),
        (["tune", "--help"], 0),
        (["attach", "nope"], 1),
        (["cancel", "nope"], 1),
        (["result", "nope"], 1),
        (["resume", "nope"], 1),
        (["install-config", "/nonexistent/x.json", "--framework", "sglang"], 1),
        (["install-config", "x.json"], 2),
        (["tune"], 2),
        (["bogus"], 2),
    ]

    def test_every_command(self):
        for args, rc in self.COMMANDS:
            with self.subTest(args=args):
                r = self.run_agent(*args)        # parse() asserts JSON lines and hello first
                self.assertEqual(r.rc, rc, r.lines)
                self.assertEqual(r.events[-1]["type"], "done")
                self.assertEqual(len(r.of("done")), 1)
                self.assertEqual(len(r.of("hello")), 1)
                self.assertEqual(r.events[-1]["status"], "ok" if rc == 0 else "failed")
                for e in r.of("error"):
                    self.assertRegex(e["code"], r"^[a-z_]+$")
                    self.assertGreater(len(e["message"]), 10)
                if args == ["--help"]:
                    self.assertIn("usage", r.stderr)   # help text goes to stderr, never stdout

    def test_hello(self):
        h = self.run_agent("version").events[0]
        self.assertEqual(h["protocol"], 1)
        self.assertRegex(h["agent_version"], r"^\d+\.\d+\.\d+$")
        for cap in ("probe", "tune", "attach", "cancel", "runs", "install-config", "backend:synthetic",
                    "strategy:exhaustive"):
            self.assertIn(cap, h["capabilities"])

    def test_run_events_have_documented_fields(self):
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1, 64])), "--foreground")
        required = {
            "run_started": ["run_id", "run_dir", "pid", "resumed", "journal_entries", "spec", "backend",
                            "device_name", "gpus", "triton_version", "space_size", "strategy"],
            "phase": ["index", "name", "units", "already_measured"],
            "measurement": ["op", "m", "config", "config_down", "round", "replays", "median_us", "min_us",
                            "max_us", "spread", "samples_us", "gpu", "index"],
            "progress": ["done", "total", "phase", "elapsed_s", "eta_s"],
            "best": ["op", "m", "config", "median_us", "default_us", "speedup", "final"],
            "result_written": ["kind", "path", "file_name", "sha256"],
            "done": ["status", "wall_s"],
        }
        for typ, fields in required.items():
            evs = r.of(typ)
            self.assertTrue(evs, typ)
            for e in evs:
                for f in fields + ["run_id", "seq", "ts", "simulated"]:
                    self.assertIn(f, e, (typ, f))
        for e in r.of("measurement"):
            self.assertEqual(sorted(e["config"]), sorted(["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                                          "GROUP_SIZE_M", "num_warps", "num_stages"]))
            self.assertLessEqual(e["min_us"], e["median_us"])
            self.assertLessEqual(e["median_us"], e["max_us"])


class Document(unittest.TestCase):
    def test_examples_are_valid_json(self):
        with open(PROTOCOL_MD, encoding="utf-8") as f:
            text = f.read()
        lines = [l for l in text.splitlines() if l.startswith('{"type":')]
        self.assertGreaterEqual(len(lines), 15)
        types = set()
        for line in lines:
            ev = json.loads(line)
            types.add(ev["type"])
        for t in ("hello", "done", "error", "log", "probe", "run_started", "phase", "measurement",
                  "candidate_error", "progress", "best", "result_written", "run", "cancelled", "diff", "installed"):
            self.assertIn(t, types)

    def test_error_codes_documented(self):
        with open(PROTOCOL_MD, encoding="utf-8") as f:
            text = f.read()
        src = ""
        for dirpath, _, files in os.walk(os.path.join(agenttest.AGENT_ROOT, "moetune_agent")):
            for n in files:
                if n.endswith(".py"):
                    with open(os.path.join(dirpath, n), encoding="utf-8") as f:
                        src += f.read()
        codes = set(re.findall(r'(?:RunError|\.error)\(\s*"([a-z_]+)"', src))
        codes |= set(re.findall(r'"code": "([a-z_]+)"', src))
        self.assertIn("spec_invalid", codes)
        for c in sorted(codes):
            self.assertTrue("`%s`" % c in text, "error code %s is not in PROTOCOL.md" % c)


if __name__ == "__main__":
    unittest.main()
