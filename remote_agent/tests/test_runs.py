"""Runs end to end on the synthetic backend: output files, detached runs, attach --from, cancel,
SIGKILL + resume without measuring a unit twice, a crashing worker."""

import json
import os
import signal
import subprocess
import sys
import time
import unittest

import agenttest
from agenttest import read_jsonl, small_spec
from moetune_agent import configjson, naming, space
from moetune_agent.backends.base import Shape
from moetune_agent.work import Unit


def gone(pid):
    """The process no longer runs (absent, or a zombie waiting for init to reap it)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


class RunCase(agenttest.AgentCase):
    def finished_run(self, spec):
        r = self.run_agent("tune", self.write_spec(spec), "--foreground", "--new")
        self.assertEqual(r.rc, 0, r.stderr)
        return r

    def winners(self, run_dir):
        with open(os.path.join(run_dir, "result.json")) as f:
            res = json.load(f)
        return {(w["op"], w["m"]): w["config"] for w in res["winners"]}


class Foreground(RunCase):
    def test_up_down_files_and_result(self):
        r = self.finished_run(small_spec(ops="up+down"))
        self.assertEqual([e["type"] for e in r.events[:2]], ["hello", "run_started"])
        self.assertEqual(r.events[-1], dict(r.events[-1], type="done", status="ok"))
        for e in r.events[1:]:
            self.assertIs(e.get("simulated"), True, e)                  # every run event is labelled
        seqs = [e["seq"] for e in r.events[1:]]
        self.assertEqual(seqs, list(range(len(seqs))))
        started = r.one("run_started")
        self.assertEqual(started["device_name"], "SIMULATED_GPU")
        self.assertEqual(started["strategy"], "exhaustive")
        run_dir = started["run_dir"]
        meas = r.of("measurement") + r.of("candidate_error")
        journal = read_jsonl(os.path.join(run_dir, "journal.jsonl"))
        checks = [j for j in journal if j["op"].startswith("check:")]
        self.assertEqual({j["type"] for j in checks}, {"measurement"})   # every winner passed its check
        self.assertEqual(len(journal) - len(checks), len(meas))
        self.assertEqual([j["index"] for j in journal], list(range(len(journal))))
        written = {e["kind"]: e for e in r.of("result_written")}
        self.assertEqual(set(written), {"sglang", "sglang_down", "vllm", "result"})
        self.assertEqual(written["sglang"]["file_name"], "E=64,N=512,device_name=SIMULATED_GPU.json")
        self.assertEqual(written["sglang_down"]["file_name"], "E=64,N=512,device_name=SIMULATED_GPU_down.json")
        with open(written["sglang"]["path"]) as f:
            up, tv = configjson.parse_config_text(f.read())
        with open(written["sglang_down"]["path"]) as f:
            down, _ = configjson.parse_config_text(f.read())
        self.assertEqual(sorted(up), [1, 64, 512])
        for m in up:
            self.assertEqual(up[m]["BLOCK_SIZE_M"], down[m]["BLOCK_SIZE_M"], m)   # SGLang's assert
        finals = [e for e in r.of("best") if e["final"]]
        self.assertEqual(len(finals), 6)
        with open(os.path.join(run_dir, "result.json")) as f:
            res = json.load(f)
        self.assertTrue(res["simulated"])
        self.assertEqual(res["format"], "moetune-result")
        self.assertEqual(res["ops"], ["up", "down"])
        self.assertEqual([p["m"] for p in res["per_batch"]], [1, 64, 512])
        for p in res["per_batch"]:
            self.assertGreaterEqual(p["speedup"], 1.0)
            self.assertGreater(p["roofline_fraction"], 0.0)
            self.assertLessEqual(p["roofline_fraction"], 1.0)
        self.assertEqual(len([x for x in res["measurements"] if x["round"] == -1]), 6)   # default configs
        with open(os.path.join(run_dir, "state")) as f:
            self.assertEqual(f.read().strip(), "finished")

    def test_fast_matches_exhaustive_with_fewer_measurements(self):
        base = {"framework": "sglang", "E": 128, "N": 768, "K": 2048, "topk": 8, "backend": "synthetic",
                "batch_sizes": [1, 256, 2048], "ops": "up"}
        res = {}
        for st in ("fast", "exhaustive"):
            r = self.finished_run(dict(base, strategy=st))
            with open(os.path.join(r.one("run_started")["run_dir"], "result.json")) as f:
                res[st] = json.load(f)
        self.assertEqual(res["fast"]["strategy"], "fast")
        n_fast = len(res["fast"]["measurements"])
        n_exh = len(res["exhaustive"]["measurements"])
        self.assertLess(n_fast * 4, n_exh)
        exh = {p["m"]: p["best_us"] for p in res["exhaustive"]["per_batch"]}
        for p in res["fast"]["per_batch"]:
            self.assertLessEqual(p["best_us"] / exh[p["m"]], 1.03, p["m"])   # regret on the synthetic model

    def test_vllm_block_quant_name(self):
        r = self.finished_run(small_spec(framework="vllm", dtype="fp8_w8a8", block_shape=[128, 128],
                                         space={"num_warps": [4], "GROUP_SIZE_M": [1], "num_stages": [3]}))
        names = {e["kind"]: e["file_name"] for e in r.of("result_written")}
        self.assertEqual(names["vllm"], "E=64,N=512,device_name=SIMULATED_GPU,dtype=fp8_w8a8,block_shape=[128,128].json")
        self.assertEqual(names["sglang"],
                         "E=64,N=512,device_name=SIMULATED_GPU,dtype=fp8_w8a8,block_shape=[128, 128].json")
        for e in r.of("measurement"):
            self.assertEqual(e["config"]["BLOCK_SIZE_K"] % 128, 0)   # vLLM's divisibility direction

    def test_two_workers_share_the_queue(self):
        # 30 ms per unit, as a GPU would take, so both workers are up long before the work runs out.
        r = self.run_agent("tune", self.write_spec(small_spec(gpus=[0, 1])), "--foreground",
                           env={"MOETUNE_SYNTHETIC_DELAY_MS": "30"})
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.one("run_started")["gpus"], [0, 1])
        meas = r.of("measurement")
        by_gpu = {0: 0, 1: 0}
        for e in meas:
            by_gpu[e["gpu"]] += 1
        self.assertGreater(by_gpu[0], len(meas) // 10)     # both pulled a real share of the work
        self.assertGreater(by_gpu[1], len(meas) // 10)
        units = [(e["op"], e["m"], json.dumps(e["config"], sort_keys=True), e["round"]) for e in meas]
        self.assertEqual(len(units), len(set(units)))

    def test_winner_failing_its_check_is_replaced(self):
        sp = small_spec(batch_sizes=[64])
        first = self.finished_run(sp)
        win = [e for e in first.of("best") if e["final"]][0]["config"]
        key = "m%dn%dk%dg%dw%ds%d" % tuple(win[k] for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                                             "GROUP_SIZE_M", "num_warps", "num_stages"))
        r = self.run_agent("tune", self.write_spec(sp), "--foreground", "--new",
                           env={"MOETUNE_TEST_MISMATCH_CFG": key})
        self.assertEqual(r.rc, 0, r.stderr)
        mism = [e for e in r.of("candidate_error") if e["kind"] == "mismatch"]
        self.assertEqual(len(mism), 1)
        self.assertEqual(mism[0]["config"], win)
        final = [e for e in r.of("best") if e["final"]][0]
        self.assertNotEqual(final["config"], win)
        with open([e for e in r.of("result_written") if e["kind"] == "sglang"][0]["path"]) as f:
            self.assertNotEqual(configjson.parse_config_text(f.read())[0][64], win)

    def test_hung_worker_is_replaced(self):
        sp = small_spec(batch_sizes=[1])
        cfg = space.build_space(Shape(64, 512, 1024, 4), [1], ["both"], options=dict(sp["space"]))[("both", 1)][2]
        ident = Unit("both", cfg, 1, 10, 0).ident()
        r = self.run_agent("tune", self.write_spec(sp), "--foreground",
                           env={"MOETUNE_TEST_HANG_UNIT": ident, "MOETUNE_UNIT_TIMEOUT_S": "2"})
        self.assertEqual(r.rc, 0, r.stderr)
        hung = [e for e in r.of("candidate_error") if e["kind"] == "crash"]
        self.assertEqual(len(hung), 1)
        self.assertIn("timed out", hung[0]["message"])
        self.assertEqual(hung[0]["config"], cfg.as_dict())

    def test_worker_crash_is_recorded(self):
        sp = small_spec(batch_sizes=[1])
        shape = Shape(64, 512, 1024, 4)
        opts = dict(sp["space"])
        cfg = space.build_space(shape, [1], ["both"], options=opts)[("both", 1)][3]
        ident = Unit("both", cfg, 1, 10, 0).ident()
        r = self.run_agent("tune", self.write_spec(sp), "--foreground", env={"MOETUNE_TEST_CRASH_UNIT": ident})
        self.assertEqual(r.rc, 0, r.stderr)
        crashes = [e for e in r.of("candidate_error") if e["kind"] == "crash"]
        self.assertEqual(len(crashes), 1)
        self.assertEqual(crashes[0]["config"], cfg.as_dict())
        with open(os.path.join(r.one("run_started")["run_dir"], "result.json")) as f:
            self.assertEqual(json.load(f)["timings"]["worker_crashes"], 1)
        # The work after the crash was still measured.
        self.assertGreater(len(r.of("measurement")), 5)


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
        run_id, run_dir, pid = self.start(small_spec())
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
        run_id, run_dir, pid = self.start(spec, delay_ms=50)
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
        r = self.run_agent("cancel", run_id)
        c = r.one("cancelled")
        self.assertTrue(c["signalled"])
        self.assertEqual(c["state"], "cancelled")
        self.assertTrue(gone(pid))
        a = self.run_agent("attach", run_id)
        self.assertEqual(a.events[-1]["status"], "cancelled")
        self.assertEqual(a.rc, 3)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "result.json")))

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
        self.assertEqual((run["run_id"], run["state"], run["spec"]), ("20260101-000000-abcdef", "dead", {}))

    def test_attach_unknown_run(self):
        r = self.run_agent("attach", "20990101-000000-abcdef")
        self.assertEqual(r.one("error")["code"], "run_not_found")
        self.assertEqual(r.rc, 1)


if __name__ == "__main__":
    unittest.main()
