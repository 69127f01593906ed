# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Detached runs on the synthetic backend: the run outlives the command that started it, attach --from,
cancel, SIGKILL + resume without measuring a unit twice, a torn journal line, clear start-up errors."""

import json
import os
import signal
import time
import unittest

import agenttest
from agenttest import read_jsonl, small_spec
from test_runs import RunCase, gone


class Detached(RunCase):
    def start(self, spec, delay_ms=20):
        env = {"MOETUNE_SYNTHETIC_DELAY_MS": str(delay_ms)}
        t0 = time.time()
        r = self.run_agent("tune", self.write_spec(spec), env=env)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertLess(time.time() - t0, 30)
        done = r.events[-1]
        self.assertEqual((done["type"], done["status"]), ("done", "detached"))
        st = r.one("run_started")
        return st["run_id"], st["run_dir"], st["pid"]

    def test_survives_parent_and_attach_follows(self):
        run_id, _run_dir, pid = self.start(small_spec())
        # The tune command has exited; the run lives on in its own session, not our child.
        self.assertTrue(agenttest.os.path.exists("/proc/%d" % pid))
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ppid, pgid, sid = int(fields[1]), int(fields[2]), int(fields[3])
        self.assertNotEqual(ppid, os.getpid())
        self.assertEqual(pgid, pid)
        self.assertNotEqual(sid, os.getsid(0))
        r = self.run_agent("attach", run_id, timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.events[-1]["type"], "done")
        self.assertEqual(r.events[-1]["status"], "ok")
        self.assertEqual(len(r.of("done")), 1)
        self.assertEqual([e["seq"] for e in r.events[1:]], list(range(len(r.events) - 1)))
        # attach --from N starts exactly at N.
        n = 7
        r2 = self.run_agent("attach", run_id, "--from", str(n))
        self.assertEqual(r2.events[1]["seq"], n)
        self.assertEqual(r2.lines[1:], r.lines[1 + n:])
        runs = self.run_agent("runs")
        self.assertEqual(runs.one("run")["state"], "finished")

    def test_same_spec_while_running_is_refused(self):
        spec = small_spec()
        run_id, _run_dir, _pid = self.start(spec, delay_ms=50)
        r = self.run_agent("tune", self.write_spec(spec, "same.json"))
        self.assertEqual(r.rc, 1)
        self.assertEqual(r.one("error")["code"], "run_active")
        self.assertIn(run_id, r.one("error")["message"])
        self.assertEqual(len(self.run_agent("runs").of("run")), 1)
        self.run_agent("cancel", run_id)

    def test_cancel(self):
        run_id, run_dir, pid = self.start(small_spec(), delay_ms=50)
        self.wait_for(lambda: os.path.exists(os.path.join(run_dir, "journal.jsonl"))
                      and len(read_jsonl(os.path.join(run_dir, "journal.jsonl"))) >= 3, what="measurements")
        t0 = time.time()
        r = self.run_agent("cancel", run_id)
        took = time.time() - t0
        c = r.one("cancelled")
        self.assertTrue(c["signalled"])
        self.assertEqual(c["state"], "cancelled")
        self.assertTrue(gone(pid))
        self.assertLess(took, 10.0)  # the run ended by itself, not by the cancel's SIGKILL 15 s later
        a = self.run_agent("attach", run_id)
        self.assertEqual(a.events[-1]["status"], "cancelled")
        self.assertIn("precompile", a.events[-1])  # the run's own done event, with its counters
        self.assertEqual(a.rc, 3)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "result.json")))
        # the unit the cancel's signal interrupted is not a crash of its config (a resume would skip it)
        crashes = [e for e in read_jsonl(os.path.join(run_dir, "journal.jsonl")) if e.get("kind") == "crash"]
        self.assertEqual(crashes, [])

    def test_kill_and_resume_measures_nothing_twice(self):
        spec = small_spec(ops="up+down")
        ref = self.finished_run(spec)
        ref_winners = self.winners(ref.one("run_started")["run_dir"])
        run_id, run_dir, pid = self.start(spec, delay_ms=20)
        journal = os.path.join(run_dir, "journal.jsonl")
        self.wait_for(lambda: os.path.exists(journal) and len(read_jsonl(journal)) >= 40, what="40 measurements")
        os.killpg(pid, signal.SIGKILL)
        self.wait_for(lambda: gone(pid), what="death")
        before = len(read_jsonl(journal))
        states = {e["run_id"]: e["state"] for e in self.run_agent("runs").of("run")}
        self.assertEqual(states[run_id], "dead")
        # `tune` with the same spec continues the dead run instead of starting over.
        r = self.run_agent("tune", self.write_spec(spec, "again.json"))
        self.assertEqual(r.one("run_started")["run_id"], run_id)
        self.assertTrue(r.one("run_started")["resumed"])
        self.assertEqual(r.one("run_started")["journal_entries"], before)
        a = self.run_agent("attach", run_id, timeout=300)
        self.assertEqual(a.events[-1]["status"], "ok", a.stderr)
        units = [j["unit"] for j in read_jsonl(journal)]
        self.assertEqual(len(units), len(set(units)))              # no unit measured twice
        self.assertEqual(len(units), len(read_jsonl(os.path.join(ref.one("run_started")["run_dir"],
                                                                  "journal.jsonl"))))
        self.assertEqual(self.winners(run_dir), ref_winners)      # same answer as the uninterrupted run

    def test_torn_journal_line_is_remeasured(self):
        spec = small_spec(batch_sizes=[1])
        ref = self.finished_run(spec)
        run_dir = ref.one("run_started")["run_dir"]
        journal = os.path.join(run_dir, "journal.jsonl")
        with open(journal) as f:
            lines = f.read().splitlines(True)
        # Simulate a crash mid-append: drop the tail and leave half a line.
        with open(journal, "w") as f:
            f.writelines(lines[:10])
            f.write(lines[10][:25])
        with open(os.path.join(run_dir, "state"), "w") as f:
            f.write("running\n")
        r = self.run_agent("resume", ref.one("run_started")["run_id"], "--foreground")
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.one("run_started")["journal_entries"], 10)
        new = read_jsonl(journal)
        self.assertEqual(len(new), len(lines))
        self.assertEqual(len({j["unit"] for j in new}), len(new))

    def test_time_budget_writes_best_so_far(self):
        spec = small_spec(time_budget_s=0.5)
        r = self.run_agent("tune", self.write_spec(spec), "--foreground",
                           env={"MOETUNE_SYNTHETIC_DELAY_MS": "15"})
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertTrue(any("time budget" in e["message"] for e in r.of("log")))
        with open(os.path.join(r.one("run_started")["run_dir"], "result.json")) as f:
            res = json.load(f)
        self.assertTrue(res["budget_hit"])
        self.assertIn("sglang", {e["kind"] for e in r.of("result_written")})

    def test_auto_backend_without_gpu_is_a_clear_error(self):
        import importlib.util
        if importlib.util.find_spec("torch") is not None:
            self.skipTest("torch is importable here: auto picks a GPU backend")
        r = self.run_agent("tune", self.write_spec(small_spec(backend="auto")))
        self.assertEqual(r.rc, 1)
        e = r.one("error")
        self.assertEqual(e["code"], "no_backend")
        self.assertIn("synthetic", e["message"])          # says how to get a simulated run instead
        self.assertEqual(r.events[-1]["status"], "failed")

    def test_triton_backend_without_torch_fails_clearly(self):
        import importlib.util
        if importlib.util.find_spec("torch") is not None:
            self.skipTest("torch is importable here")
        r = self.run_agent("tune", self.write_spec(small_spec(backend="triton")))
        self.assertEqual(r.rc, 1)
        e = r.one("error")
        self.assertEqual(e["code"], "backend_failed")
        self.assertIn("torch", e["message"])
        run_dir = self.run_dir(e["run_id"])
        with open(os.path.join(run_dir, "state")) as f:
            self.assertEqual(f.read().strip(), "failed")

    def test_runs_lists_a_damaged_run(self):
        d = os.path.join(self.home, "runs", "20260101-000000-abcdef")
        os.makedirs(d)
        with open(os.path.join(d, "spec.json"), "w") as f:
            f.write("{garbage")
        r = self.run_agent("runs")
        self.assertEqual(r.rc, 0)
        run = r.one("run")
        self.assertEqual((run["run_id"], run["state"], run["spec"]), ("20260101-000000-abcdef", "damaged", {}))
        self.assertIn("spec.json is not JSON", run["damaged"])

    def test_runs_survives_every_kind_of_damaged_folder(self):
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1])), "--foreground")
        good = r.one("run_started")["run_id"]
        runs = os.path.join(self.home, "runs")
        damage = {"20260101-000001-aaaaaa": ("spec.json", "[1, 2]", "not a JSON object"),
                  "20260101-000002-bbbbbb": ("spec.json", None, "no spec.json"),
                  "20260101-000003-cccccc": ("journal.jsonl", None, "journal.jsonl")}
        for rid, (name, text, _) in damage.items():
            d = os.path.join(runs, rid)
            os.makedirs(d)
            if rid.endswith("cccccc"):
                with open(os.path.join(d, "spec.json"), "w") as f:
                    json.dump(agenttest.small_spec(), f)
            if text is None:
                os.makedirs(os.path.join(d, name))     # a folder where a file belongs
            else:
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
        r = self.run_agent("runs")
        self.assertEqual(r.rc, 0, r.lines)
        by_id = {e["run_id"]: e for e in r.of("run")}
        self.assertEqual(set(by_id), set(damage) | {good})
        self.assertEqual(by_id[good]["state"], "finished")
        self.assertTrue(by_id[good]["simulated"])
        for rid, (_, _, words) in damage.items():
            with self.subTest(run=rid):
                self.assertEqual(by_id[rid]["state"], "damaged")
                self.assertIn(words, by_id[rid]["damaged"])

    def test_attach_unknown_run(self):
        r = self.run_agent("attach", "20990101-000000-abcdef")
        self.assertEqual(r.one("error")["code"], "run_not_found")
        self.assertEqual(r.rc, 1)



if __name__ == "__main__":
    unittest.main()
