# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The prewarm after a headroom check (issue 22) and the precompile pool's longest-first order, on the
SYNTHETIC backend with a simulated compile cost (a TEST DOUBLE for Triton's compiler: each config
"compiles" by sleeping and leaves a marker file in the host's compile cache, as Triton leaves a binary):
the check starts a detached process that compiles the tune's first phase into the host cache; a tune
afterwards finds those kernels there; a tune or a check started meanwhile stops it; a pid file naming
another process is never signalled."""

import json
import math
import os
import subprocess
import sys
import time
import unittest

import agenttest
from moetune_agent import prewarm, space as space_mod, spec as spec_mod
from moetune_agent.strategies import firstphase
from moetune_agent.kernel_types import KernelConfig
from moetune_agent.tunerun.runner import first_units
from moetune_agent.engine.scheduler import Scheduler
from moetune_agent.work import Unit

HERE = os.path.dirname(os.path.abspath(__file__))
SMEM = space_mod.HOPPER_SMEM_LIMIT
RECORDINGS = os.path.join(os.path.dirname(HERE), "bench", "recordings", "h200-bytecode-warm")

SPEC = {"framework": "sglang", "E": 64, "N": 512, "K": 1024, "topk": 4, "batch_sizes": [1, 16, 64, 256, 1024],
        "backend": "synthetic", "strategy": "fast", "ops": "up"}


def _cmdlines():
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    out.append((int(p), f.read().replace(b"\0", b" ").decode("utf-8", "replace")))
            except OSError:
                pass
    return out


class PrewarmCase(agenttest.AgentCase):
    def setUp(self):
        super().setUp()
        self.env.update(MOETUNE_COMPILE_CACHE="1", MOETUNE_PRECOMPILE_WORKERS="3")
        self.env.pop("MOETUNE_PREWARM", None)
        self.addCleanup(lambda: prewarm.stop(self.home))

    def check(self, compile_ms, **env):
        r = self.run_agent("headroom", self.write_spec(SPEC),
                           env=dict({"MOETUNE_SYNTHETIC_COMPILE_MS": str(compile_ms)}, **env), timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        return r.one("headroom")

    def status(self):
        return prewarm.read_status(self.home) or {}

    def wait_state(self, states, timeout=120):
        t0 = time.time()
        while time.time() - t0 < timeout:
            if self.status().get("state") in states:
                return self.status()
            time.sleep(0.1)
        self.fail("prewarm never reached %s: %s" % (states, self.status()))

    @staticmethod
    def result(r):
        with open(os.path.join(r.one("run_started")["run_dir"], "result.json")) as f:
            return json.load(f)

    def markers(self):
        out = {}
        top = os.path.join(self.home, "triton_cache")
        for dp, _dn, fns in os.walk(top):
            if os.path.basename(dp) == "synthetic-compiled":
                for f in fns:
                    out[f] = os.path.getmtime(os.path.join(dp, f))
        return out


class AfterCheck(PrewarmCase):
    def test_check_prewarms_the_tunes_first_phase_and_the_tune_finds_it(self):
        ev = self.check(40)
        self.assertIsNotNone(ev["prewarm"], ev)
        self.assertGreater(ev["prewarm"]["units"], 0)
        st = self.wait_state(("done",))
        self.assertEqual(st["ok"] + st["failed"], st["kernels"])
        self.assertGreater(st["ok"], 0)
        # every kernel of the tune's first phase is in the host cache (a marker per compiled config) ...
        sp = spec_mod.normalise(dict(SPEC))
        want = {"%s-%s" % (u.op, u.cfg.key()) for u in first_units(sp, spec_mod.strategy_ops(sp),
                                                                     sp["batch_sizes"], SMEM, 1 << 30)}
        self.assertGreater(len(want), 20)
        have = self.markers()
        failed = st["failed"]
        self.assertGreaterEqual(len(want & set(have)), len(want) - failed, sorted(want - set(have))[:5])
        # ... before the tune starts, which finds the prewarm done and waits for no compile in that phase
        t_tune = time.time()
        r = self.run_agent("tune", self.write_spec(SPEC), "--foreground", "--new",
                           env={"MOETUNE_SYNTHETIC_COMPILE_MS": "40"}, timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertTrue(all(have[k] < t_tune for k in want & set(have)))
        res = self.result(r)
        self.assertEqual(res["timings"]["prewarm"]["state"], "done")
        waits = res["timings"]["precompile"]["waits"]
        self.assertLess(waits[0][1], 0.3, waits[:3])

    def test_a_cold_tune_waits_for_its_first_phase(self):
        # the same tune without a check before it: the first phase waits for its compiles (what the
        # prewarm saves; this is the figure the test above compares with)
        r = self.run_agent("tune", self.write_spec(SPEC), "--foreground", "--new",
                           env={"MOETUNE_SYNTHETIC_COMPILE_MS": "40"}, timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        res = self.result(r)
        self.assertIsNone(res["timings"]["prewarm"])
        self.assertGreater(res["timings"]["precompile"]["waits"][0][1], 0.3)

    def test_a_tune_stops_a_running_prewarm(self):
        ev = self.check(400)  # slow compiles: the prewarm is still at work when the tune starts
        pid = ev["prewarm"]["pid"]
        self.wait_state(("running",))
        self.assertTrue(any(prewarm.CMD in c for p, c in _cmdlines() if p == pid))
        r = self.run_agent("tune", self.write_spec(SPEC), "--foreground", "--new",
                           env={"MOETUNE_SYNTHETIC_COMPILE_MS": "5"}, timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(self.status()["state"], "stopped")
        self.assertFalse(os.path.exists("/proc/%d" % pid) and prewarm._alive(pid))
        # none of its pool processes is left either (they die with their process group)
        time.sleep(0.5)
        self.assertEqual([p for p, c in _cmdlines() if self.home in c and prewarm.CMD in c], [])
        res = self.result(r)
        self.assertIs(res["timings"]["prewarm"]["stopped_by_us"], True)
        self.assertEqual(res["timings"]["prewarm"]["state"], "stopped")

    def test_a_second_check_replaces_the_prewarm(self):
        first = self.check(400)["prewarm"]["pid"]
        self.wait_state(("running",))
        ev = self.check(5)
        self.assertTrue(ev["timings"]["prewarm_stopped"])
        self.assertEqual(ev["timings"]["prewarm_stopped"]["state"], "stopped")
        self.assertNotEqual(ev["prewarm"]["pid"], first)
        self.assertFalse(prewarm._alive(first))

    def _prewarms(self):
        return [p for p, c in _cmdlines() if self.home in c and prewarm.CMD in c and prewarm._alive(p)]

    def test_a_second_prewarm_of_the_home_ends_at_once(self):
        first = self.check(400)["prewarm"]["pid"]
        self.wait_state(("running",))
        d = prewarm.state_dir(self.home)
        p = subprocess.run([sys.executable, "-m", "moetune_agent", prewarm.CMD, d], cwd=d, timeout=60,
                           env=self.env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr[-500:])
        self.assertIn("another prewarm of this home is running", p.stderr)
        self.assertTrue(prewarm._alive(first))
        self.assertEqual(self.status()["state"], "running")
        self.assertEqual(self._prewarms(), [first])

    def test_checks_ending_together_leave_one_prewarm(self):
        import threading
        from unittest import mock
        self.check(400)
        self.wait_state(("running",))
        with open(os.path.join(prewarm.state_dir(self.home), "job.json")) as f:
            job = json.load(f)
        units = [prewarm._unit_from_json(x) for x in job["units"]]
        got = []
        env = {"MOETUNE_COMPILE_CACHE": "1", "MOETUNE_SYNTHETIC_COMPILE_MS": "400",
               "MOETUNE_PRECOMPILE_WORKERS": "1", "PYTHONPATH": self.env["PYTHONPATH"]}
        with mock.patch.dict(os.environ, env):
            threads = [threading.Thread(target=lambda: got.append(
                prewarm.start(job["spec"], job["desc"], units, job["bounds"], home=self.home))) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
        self.assertEqual(len([g for g in got if g]), 4, got)
        time.sleep(1.0)  # a second one, were there one, would be compiling by now
        alive = self._prewarms()
        self.assertEqual(len(alive), 1, (alive, got))
        self.assertIn(alive[0], [g["pid"] for g in got])

    def test_off_switch(self):
        ev = self.check(40, MOETUNE_PREWARM="0")
        self.assertIsNone(ev["prewarm"])
        self.assertFalse(os.path.exists(os.path.join(self.home, "prewarm", "pid")))

    def test_no_prewarm_without_a_host_cache(self):
        ev = self.check(40, MOETUNE_COMPILE_CACHE="0")
        self.assertIsNone(ev["prewarm"])


class Stop(unittest.TestCase):
    def test_a_pid_file_naming_another_process_is_never_signalled(self):
        import tempfile
        home = tempfile.mkdtemp(prefix="moetune-prewarm-")
        victim = subprocess.Popen(["sleep", "30"], start_new_session=True)
        self.addCleanup(victim.kill)
        os.makedirs(os.path.join(home, "prewarm"))
        with open(os.path.join(home, "prewarm", "pid"), "w") as f:
            f.write("%d\n" % victim.pid)
        self.assertIsNone(prewarm.stop(home))
        time.sleep(0.2)
        self.assertIsNone(victim.poll())
        for text in ("garbage", "", "1", str(os.getpid())):  # damaged, init, ourselves
            with open(os.path.join(home, "prewarm", "pid"), "w") as f:
                f.write(text)
            self.assertIsNone(prewarm.stop(home))
        self.assertIsNone(victim.poll())


class ForeignFolder(unittest.TestCase):
    def test_a_job_in_a_folder_others_can_write_is_never_read(self):
        # issue 42: the job file says what to compile and where to load from: another user's is refused
        import tempfile
        d = tempfile.mkdtemp(prefix="moetune-prewarm-foreign-")
        with open(os.path.join(d, "job.json"), "w") as f:
            f.write("{not json")
        os.chmod(d, 0o777)
        p = subprocess.run([sys.executable, "-m", "moetune_agent", prewarm.CMD, d], cwd=d, timeout=60,
                           env=dict(os.environ, PYTHONPATH=os.path.dirname(HERE)), capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stderr[-500:])
        self.assertIn("the prewarm's folder %s is writable by other users (mode 0777)" % d, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(d, "status.json")))  # job.json never read


class DamagedJob(unittest.TestCase):
    def test_a_damaged_job_file_is_reported_and_compiles_nothing(self):
        import tempfile
        for text in ("{not json", '{"units": [["both", "garbage", 1]]}', '{"units": 7}', '[1, 2]',
                     '{"units": [], "bounds": ["x"]}'):
            d = tempfile.mkdtemp(prefix="moetune-prewarm-job-")
            with open(os.path.join(d, "job.json"), "w") as f:
                f.write(text)
            p = subprocess.run([sys.executable, "-m", "moetune_agent", prewarm.CMD, d], cwd=d, timeout=60,
                               env=dict(os.environ, PYTHONPATH=os.path.dirname(HERE)), capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, (text, p.stderr[-500:]))
            with open(os.path.join(d, "status.json")) as f:
                st = json.load(f)
            self.assertEqual(st["state"], "damaged", text)
            self.assertTrue(st["first_error"].startswith("job.json: "), st)


class Plan(unittest.TestCase):
    def test_without_check_timings_the_first_phase_then_the_seeds(self):
        sp = spec_mod.normalise(dict(SPEC))
        units, bounds = firstphase.prewarm_plan(sp, SMEM, [])
        self.assertEqual(len(bounds), 2)
        self.assertGreater(bounds[0], 20)
        self.assertEqual(len(units), bounds[1])
        shape, ops = spec_mod.shape_of(sp), spec_mod.strategy_ops(sp)
        phase1, seeds = firstphase.first_batches(sp, ops, sp["batch_sizes"], SMEM, 1 << 30)
        self.assertEqual([u.ident() for u in units[:bounds[0]]], [u.ident() for u in phase1])
        self.assertTrue(set(u.ident() for u in units[bounds[0]:]) <= set(u.ident() for u in seeds))
        self.assertIsNotNone(shape)

    def test_the_surrogate_follows_the_checks_fastest_tile(self):
        # the check timed one tile far faster than another at every size: the later phases the plan
        # guesses explore that tile's warps x stages variants (the fast strategy's second phase)
        from moetune_agent.work import Measurement
        sp = spec_mod.normalise(dict(SPEC))
        fast_tile = (16, 128, 128)
        meas = []
        for m in sp["batch_sizes"]:
            for bn in (64, 128):
                c = KernelConfig(16, bn, 128, 1, 4, 3)
                meas.append(Measurement(Unit("both", c, m, 2, 0), [10.0 if bn == 128 else 50.0] * 2))
        units, bounds = firstphase.prewarm_plan(sp, SMEM, meas)
        self.assertGreater(len(bounds), 3)  # several phases guessed
        guess = units[bounds[0]:]
        self.assertTrue(guess)
        variants = {(u.cfg.num_warps, u.cfg.num_stages) for u in guess
                    if (u.cfg.BLOCK_SIZE_M, u.cfg.BLOCK_SIZE_N, u.cfg.BLOCK_SIZE_K) == fast_tile}
        self.assertGreater(len(variants), 2)
        est = firstphase.surrogate(meas)
        near = est("both", KernelConfig(16, 128, 128, 1, 8, 3), 64)
        far = est("both", KernelConfig(128, 32, 64, 1, 8, 3), 64)
        self.assertLess(10.0, near)
        self.assertLess(near, far)
        self.assertIsNone(est("up", KernelConfig(16, 128, 128, 1, 8, 3), 64))

    def test_on_replayed_h200_landscapes_the_plan_covers_the_tunes_kernels(self):
        # bench/prewarm_replay.py: the check on a recorded landscape (a TEST DOUBLE of the GPU), the plan
        # from its timings, then the tune on the same landscape: nearly every binary the tune measures was
        # in the plan (qwen3 174 of 180, fp8 block 110 of 110 when written), far more than the first phase
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))
        import prewarm_replay  # pylint: disable=import-outside-toplevel
        for name in ("qwen3", "fp8block"):
            r = prewarm_replay.evaluate(name)
            sur, first = r["plans"]["surrogate"], r["plans"]["phase1"]
            self.assertGreaterEqual(sur["covered"], 0.9 * r["tune_kernels"], (name, sur))
            self.assertGreater(sur["covered_later"], first["covered_later"] + 20, (name, sur, first))
            self.assertLess(sur["wasted"], 0.2 * sur["kernels"], (name, sur))


class LongestFirst(unittest.TestCase):
    def test_compile_cost_ranks_the_h200s_compile_times(self):
        for name in ("call6_bf16_compile.json", "call6_int4_compile.json"):
            with open(os.path.join(RECORDINGS, name)) as f:
                rows = [r for r in json.load(f)["rows"] if r["s"] and not r["error"]]
            xs = [math.log(space_mod.compile_cost(KernelConfig(k[0], k[1], k[2], 1, k[3], k[4])))
                  for k in (r["kernel"] for r in rows)]
            ys = [math.log(r["s"]) for r in rows]
            mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
            cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
            r = cov / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))
            self.assertGreater(r, 0.85, name)

    def _submitted(self, units, per_m=False):
        class Pool(object):
            def __init__(self):
                self.order = []

            def apply_async(self, fn, args, callback=None):
                self.order.append((args[1].key(), args[2]))
                return None

        s = Scheduler({"name": "synthetic", "shape": {}}, [0], None, 0)
        s._pool = Pool()
        s.precompile_per_m = per_m
        s.precompile(units)
        return s._pool.order

    def test_costly_kernels_go_to_the_pool_first(self):
        cheap = KernelConfig(16, 32, 64, 1, 8, 3)
        dear = KernelConfig(128, 256, 64, 1, 4, 2)
        mid = KernelConfig(64, 128, 64, 1, 4, 3)
        units = [Unit("up", cheap, 1), Unit("up", mid, 1), Unit("up", dear, 1)]
        self.assertEqual([k for k, _m in self._submitted(units)], [dear.key(), mid.key(), cheap.key()])

    def test_per_size_kernels_keep_every_configs_first_size_in_front(self):
        cheap = KernelConfig(16, 32, 64, 1, 8, 3)
        dear = KernelConfig(128, 256, 64, 1, 4, 2)
        units = [Unit("up", cheap, 1), Unit("up", cheap, 64), Unit("up", dear, 1), Unit("up", dear, 64)]
        self.assertEqual(self._submitted(units, per_m=True),
                         [(dear.key(), 1), (cheap.key(), 1), (cheap.key(), 64), (dear.key(), 64)])


if __name__ == "__main__":
    unittest.main()
