# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers for the agent's tests: run the real CLI in a subprocess and check the protocol framing."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
if AGENT_ROOT not in sys.path:
    sys.path.insert(0, AGENT_ROOT)


def data_dir():
    d = os.environ.get("MOETUNE_TEST_DATA_DIR")
    if d:
        return d
    return os.path.join(os.path.dirname(AGENT_ROOT), "tests", "data")


class Result(object):
    def __init__(self, rc, lines, events, stderr):
        self.rc = rc
        self.lines = lines
        self.events = events
        self.stderr = stderr

    def of(self, typ):
        return [e for e in self.events if e.get("type") == typ]

    def one(self, typ):
        evs = self.of(typ)
        if len(evs) != 1:
            raise AssertionError("expected one %s event, got %d: %s" % (typ, len(evs), self.lines))
        return evs[0]


class AgentCase(unittest.TestCase):
    """Gives each test its own MOETUNE_HOME and runs `python -m moetune_agent` (or a .pyz)."""

    agent = None  # a .pyz path to run instead of the source package

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="moetune agent test ")
        self.home = os.path.join(self.tmp, "home")
        self.env = dict(os.environ)
        self.env["MOETUNE_HOME"] = self.home
        self.env["PYTHONPATH"] = AGENT_ROOT
        self.env.pop("MOETUNE_SYNTHETIC_DELAY_MS", None)
        self.env.pop("MOETUNE_TEST_CRASH_UNIT", None)
        self.addCleanup(self._cleanup)

    def _cleanup(self):
        # Stop any run this test started (by its recorded pid only).
        runs = os.path.join(self.home, "runs")
        if os.path.isdir(runs):
            for r in os.listdir(runs):
                from moetune_agent.runs import store
                d = os.path.join(runs, r)
                pid = store.get_pid(d)
                if store.pid_alive(pid, d):  # only the run's own process, never a recycled pid
                    try:
                        os.killpg(pid, 9)
                    except OSError:
                        pass
        try:  # a check's background compile (prewarm.py), where this test's check started one
            from moetune_agent import prewarm
            prewarm.stop(self.home)
        except Exception:  # noqa: BLE001
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def cmd(self):
        if self.agent:
            return [sys.executable, self.agent]
        return [sys.executable, "-m", "moetune_agent"]

    def run_agent(self, *args, **kw):
        env = dict(self.env)
        env.update(kw.pop("env", {}) or {})
        timeout = kw.pop("timeout", 120)
        p = subprocess.run(self.cmd() + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, timeout=timeout, cwd=kw.pop("cwd", self.tmp))
        return self.parse(p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace"))

    def parse(self, rc, out, err):
        lines = out.splitlines()
        events = []
        for line in lines:
            try:
                ev = json.loads(line)
            except ValueError:
                self.fail("stdout line is not JSON: %r\nstderr: %s" % (line, err))
            self.assertIsInstance(ev, dict, line)
            self.assertIsInstance(ev.get("type"), str, line)
            events.append(ev)
        self.assertTrue(events, "no output; stderr: %s" % err)
        self.assertEqual(events[0]["type"], "hello", lines[0])
        self.assertEqual(events[0]["protocol"], 1)
        return Result(rc, lines, events, err)

    def write_spec(self, spec, name="spec.json"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            json.dump(spec, f)
        return path

    def run_dir(self, run_id):
        return os.path.join(self.home, "runs", run_id)

    def wait_for(self, pred, timeout=60.0, what="condition"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred():
                return
            time.sleep(0.05)
        self.fail("timed out waiting for %s" % what)


def small_spec(**over):
    spec = {"framework": "sglang", "E": 64, "N": 512, "K": 1024, "topk": 4, "batch_sizes": [1, 64, 512],
            "backend": "synthetic", "strategy": "exhaustive",
            "space": {"BLOCK_SIZE_N": [64, 128], "GROUP_SIZE_M": [1, 16], "num_stages": [2, 3],
                      "num_warps": [4]}}
    spec.update(over)
    return spec


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]
