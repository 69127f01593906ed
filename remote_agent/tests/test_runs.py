# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Foreground runs end to end on the synthetic backend: output files, result.json, strategies through
the real runner, several workers, a crashing or hung worker, a winner failing its check."""

import json
import os
import unittest

import agenttest
from agenttest import read_jsonl, small_spec
from moetune_agent import space
from moetune_agent.kernel_types import Shape
from moetune_agent.serverconfig import configjson
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
            up, _tv = configjson.parse_config_text(f.read())
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


if __name__ == "__main__":
    unittest.main()
