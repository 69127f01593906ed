# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scheduler with real spawned worker processes on the synthetic backend (the labelled GPU double):
every unit measured once with the backend's own numbers, a precompile pool, compiled-first dispatch."""

import json
import os
import tempfile
import time
import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)
from moetune_agent import space
from moetune_agent.backends.synthetic import SyntheticBackend
from moetune_agent.kernel_types import KernelConfig as K, Shape
from moetune_agent.scheduler import Scheduler
from moetune_agent.work import Unit

SHAPE = Shape(64, 512, 1024, 4)
DESC = {"name": "synthetic", "shape": {"E": 64, "N": 512, "K": 1024, "topk": 4, "dtype": None, "block_shape": None,
                                       "per_channel_quant": False}}


def units(n):
    cfgs = space.build_space(SHAPE, [64], ["both"])[("both", 64)][:n]
    return [Unit("both", c, 64, 10, 0) for c in cfgs]


class Workers(unittest.TestCase):
    def run_units(self, gpus, precompile):
        us = units(40)
        s = Scheduler(DESC, gpus, None, precompile)
        s.start()
        got = []
        try:
            if precompile:
                # what the GPU worker reports for a CPU-only compile (the synthetic backend ignores it)
                s.start_precompile({"capability": 90, "device_name": "SIMULATED_GPU", "smem": 232448})
                s.precompile(us)
            s.measure(us, got.append, simulated=True)
        finally:
            s.close()
        return us, got

    def check(self, us, got, gpus):
        self.assertEqual(sorted(m.unit.ident() for m in got), sorted(u.ident() for u in us))
        direct = SyntheticBackend(SHAPE, delay_s=0)
        for m in got:
            self.assertIn(m.gpu, gpus)
            if m.ok:
                self.assertEqual(m.samples_us, direct.measure("both", m.unit.cfg, 64).samples_us)
            else:
                self.assertIn(m.error_kind, ("compile", "resources"))

    def test_two_workers(self):
        us, got = self.run_units([0, 1], 0)
        self.check(us, got, [0, 1])

    def test_precompile_pool(self):
        us, got = self.run_units([0], 1)
        self.check(us, got, [0])

    def test_no_precompile_pool_without_cpu_compile_facts(self):
        s = Scheduler(DESC, [0], None, 2)
        s.start()
        try:
            s.start_precompile(None)   # the GPU worker could not say what to compile for
            s.precompile(units(4))
            self.assertIsNone(s._pool)  # pylint: disable=protected-access
            self.assertEqual(s.precompile_stats["submitted"], 0)
        finally:
            s.close()


class EarlyPool(unittest.TestCase):
    """The precompile pool started with the GPU workers (issue 13), told what to compile for later."""

    def test_early_pool_learns_the_target_with_its_first_task(self):
        cache = tempfile.mkdtemp(prefix="moetune-early-pool-")
        os.environ["MOETUNE_SYNTHETIC_COMPILE_MS"] = "1"
        self.addCleanup(os.environ.pop, "MOETUNE_SYNTHETIC_COMPILE_MS", None)
        us = units(12)
        s = Scheduler(DESC, [0], cache, 2)
        s.start(early_pool=True)
        got = []
        try:
            self.assertIsNotNone(s._pool)  # pylint: disable=protected-access
            self.assertFalse(s.precompiling)  # not before it knows the target
            s.precompile(us)
            self.assertEqual(s.precompile_stats["submitted"], 0)
            s.start_precompile({"capability": 90, "device_name": "SIMULATED_GPU", "smem": 232448})
            self.assertTrue(s.precompiling)
            s.precompile(us)
            s.measure(us, got.append, simulated=True)
            for r in list(s._precompiled.values()):  # pylint: disable=protected-access
                r.wait(30)
        finally:
            s.close()
        st = s.precompile_stats
        self.assertEqual(st["submitted"], len(us))
        self.assertEqual(st["ok"] + st["failed"], len(us))
        self.assertGreater(st["ok"], 0)
        ok = [u for u in us if not SyntheticBackend(SHAPE)._fails("both", u.cfg)]  # pylint: disable=protected-access
        marks = set(os.listdir(os.path.join(cache, "synthetic-compiled")))
        self.assertEqual(marks, {"both-" + u.cfg.key() for u in ok})
        self.assertEqual(sorted(m.unit.ident() for m in got), sorted(u.ident() for u in us))

    def test_worker_waits_for_the_pool_instead_of_compiling(self):
        """Nothing compiled yet when the first units are due: the GPU worker waits for the pool's compiles
        (many at once) rather than compiling the next unit's kernel itself, one at a time (issue 22: a cold
        host's first units were compiled serially on the worker, and by the pool a second time)."""
        cache = tempfile.mkdtemp(prefix="moetune-wait-pool-")
        os.environ["MOETUNE_SYNTHETIC_COMPILE_MS"] = "150"
        self.addCleanup(os.environ.pop, "MOETUNE_SYNTHETIC_COMPILE_MS", None)
        us = [u for u in units(10) if not SyntheticBackend(SHAPE)._fails("both", u.cfg)]  # pylint: disable=protected-access
        s = Scheduler(DESC, [0], cache, 3)
        s.start(early_pool=True)
        got = []
        try:
            s.start_precompile({"capability": 90, "device_name": "SIMULATED_GPU", "smem": 232448})
            s.precompile(us)
            s.measure(us, got.append, simulated=True)
        finally:
            s.close()
        folder = os.path.join(cache, "synthetic-compiled")
        by = {}
        for name in os.listdir(folder):
            with open(os.path.join(folder, name)) as f:
                by.setdefault(f.read(), []).append(name)
        self.assertEqual(sum(len(v) for v in by.values()), len({u.cfg.key() for u in us}))
        self.assertEqual([k for k in by if k.startswith("moetune-gpu")], [], by)
        self.assertEqual(sorted(m.unit.ident() for m in got), sorted(u.ident() for u in us))

    def test_a_pool_that_never_answers_is_waited_for_once(self):
        """A precompile that never completes (its pool process died mid-compile): the worker waits
        COMPILE_WAIT_S once, then compiles itself, and is not kept waiting again in this run."""
        us = [u for u in units(14) if not SyntheticBackend(SHAPE)._fails("both", u.cfg)]  # pylint: disable=protected-access
        self.assertGreaterEqual(len(us), 8)

        class Never(object):
            def ready(self):
                return False

        s = Scheduler(DESC, [0], None, 0)
        s.COMPILE_WAIT_S = 0.3
        s.start()
        got = []
        try:
            s._pool, s._pool_early = object(), False  # pylint: disable=protected-access
            for u in us:
                s._precompiled[s._pc_key(u.op, u.cfg, u.m)] = Never()  # pylint: disable=protected-access
            t0 = time.time()
            s.measure(us, got.append, simulated=True)
            wall = time.time() - t0
        finally:
            s._pool = None  # pylint: disable=protected-access
            s.close()
        self.assertEqual(len(got), len(us))
        self.assertGreaterEqual(wall, 0.3)
        self.assertLess(wall, 0.3 * 2 + 1.0)  # one wait, not one per unit (>= 8 x 0.3 s)

    def test_early_pool_ends_when_the_backend_cannot_precompile(self):
        s = Scheduler(DESC, [0], None, 2)
        s.start(early_pool=True)
        try:
            pool = s._pool  # pylint: disable=protected-access
            self.assertIsNotNone(pool)
            s.start_precompile(None)
            self.assertIsNone(s._pool)  # pylint: disable=protected-access
            self.assertFalse(s.precompiling)
        finally:
            s.close()


class RunWithPrecompile(agenttest.AgentCase):
    """A whole synthetic run with a simulated compile cost and a precompile pool (what a GPU host does):
    the pool compiles what the strategy measures, and the run's result says so."""

    def test_run_precompiles_on_cpu_workers(self):
        sp = self.write_spec(agenttest.small_spec(strategy="fast"))
        r = self.run_agent("tune", sp, "--foreground",
                           env={"MOETUNE_SYNTHETIC_COMPILE_MS": "2", "MOETUNE_PRECOMPILE_WORKERS": "2"}, timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        res = [e for e in r.events if e["type"] == "result_written" and e["kind"] == "result"][0]
        with open(res["path"]) as f:
            result = json.load(f)
        pc = result["timings"]["precompile"]
        self.assertGreater(pc["submitted"], 10, pc)
        self.assertGreater(pc["ok"], 0, pc)
        self.assertFalse(any(e["type"] == "log" and "no CPU precompile" in e["message"] for e in r.events))
        marks = os.listdir(os.path.join(os.path.dirname(res["path"]), "triton_cache", "synthetic-compiled"))
        self.assertGreaterEqual(len(marks), pc["ok"])

    def test_without_compile_cost_no_pool(self):
        sp = self.write_spec(agenttest.small_spec(strategy="fast"))
        r = self.run_agent("tune", sp, "--foreground", env={"MOETUNE_PRECOMPILE_WORKERS": "2"}, timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        logs = [e["message"] for e in r.events if e["type"] == "log"]
        self.assertTrue(any("no CPU precompile for the synthetic backend" in m for m in logs), logs)


class Crash(unittest.TestCase):
    def test_crash_charged_to_running_unit_and_queued_one_requeued(self):
        us = units(12)
        victim = us[4]
        os.environ["MOETUNE_TEST_CRASH_UNIT"] = victim.ident()
        try:
            s = Scheduler(DESC, [0], None)
            s.start()
        finally:
            del os.environ["MOETUNE_TEST_CRASH_UNIT"]
        got = []
        try:
            s.measure(us, got.append, simulated=True)
        finally:
            s.close()
        self.assertEqual(sorted(m.unit.ident() for m in got), sorted(u.ident() for u in us))  # each once
        crashed = [m for m in got if m.error_kind == "crash"]
        self.assertEqual([m.unit for m in crashed], [victim])
        self.assertEqual(s.crashes, 1)


class Pick(unittest.TestCase):
    class Ready(object):
        def __init__(self, v):
            self.v = v

        def ready(self):
            return self.v

    def test_compiled_first(self):
        a, b, c = K(16, 32, 64, 1, 4, 2), K(16, 64, 64, 1, 4, 2), K(32, 64, 64, 1, 4, 2)
        tasks = [("measure", Unit("both", x, 1)) for x in (a, b, c)]
        pending = [2, 1, 0]   # next task is the last entry
        s = Scheduler(DESC, [0], None)
        rows = [({}, 0),
                ({a.key(): False, b.key(): True, c.key(): True}, 1),
                ({a.key(): False, b.key(): False, c.key(): True}, 2),
                ({a.key(): False, b.key(): False, c.key(): False}, 0),
                ({a.key(): True, b.key(): True, c.key(): True}, 0)]
        for ready, want in rows:
            with self.subTest(ready=ready):
                s._precompiled = {("both", k): self.Ready(v) for k, v in ready.items()}
                self.assertEqual(pending[s._pick(tasks, pending)], want)


if __name__ == "__main__":
    unittest.main()


def _pool_facts():
    """Run in a pool process: what it inherited."""
    import sys as _sys  # pylint: disable=import-outside-toplevel,reimported
    return os.getpid(), os.getppid(), "moetune_agent.pool_preload" in _sys.modules, os.environ.get("CUDA_VISIBLE_DEVICES")


class ForkServerPool(unittest.TestCase):
    """The precompile pool forked by a fork server that imported torch and Triton once
    (scheduler.pool_context, pool_preload): its processes inherit the preload, see no GPU, and end with
    the run process, also when the run is SIGKILLed (the OOM killer)."""

    def setUp(self):
        os.environ["MOETUNE_POOL_FORKSERVER"] = "force"
        self.addCleanup(os.environ.pop, "MOETUNE_POOL_FORKSERVER", None)

    def test_pool_processes_come_from_the_preloaded_fork_server(self):
        s = Scheduler(DESC, [0], None, 2)
        self.assertEqual(s.pool_ctx.get_start_method(), "forkserver")
        s.start(early_pool=True)
        try:
            facts = [s._pool.apply_async(_pool_facts).get(60) for _ in range(4)]  # pylint: disable=protected-access
        finally:
            s.close()
        for pid, ppid, preloaded, cvd in facts:
            self.assertNotEqual(ppid, os.getpid(), "a pool process is the fork server's child, not the run's")
            self.assertTrue(preloaded, "the fork server imported pool_preload before forking")
            self.assertEqual(cvd, "", "a pool process never sees a GPU")
            self.assertNotEqual(pid, os.getpid())

    def test_synthetic_runs_measure_the_same_through_the_fork_server(self):
        us, got = Workers.run_units(self, [0], 2)
        Workers.check(self, us, got, [0])

    def test_pool_dies_with_a_killed_run(self):
        import signal as _signal  # pylint: disable=import-outside-toplevel
        import subprocess  # pylint: disable=import-outside-toplevel
        import sys as _sys  # pylint: disable=import-outside-toplevel,reimported
        code = ("import json, os, sys, time\n"
                "sys.path.insert(0, %r)\n"
                "from moetune_agent.scheduler import Scheduler\n"
                "from test_scheduler import DESC, _pool_facts\n"
                "s = Scheduler(DESC, [0], None, 2)\n"
                "s.start(early_pool=True)\n"
                "pids = sorted({s._pool.apply_async(_pool_facts).get(60)[0] for _ in range(6)})\n"
                "print(json.dumps(pids), flush=True)\n"
                "time.sleep(120)\n" % os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        p = subprocess.Popen([_sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             cwd=os.path.dirname(os.path.abspath(__file__)), env=dict(os.environ))
        try:
            pids = json.loads(p.stdout.readline())
            self.assertTrue(pids)
            for pid in pids:
                os.kill(pid, 0)  # alive while the run is
            p.send_signal(_signal.SIGKILL)
            p.wait(10)
            deadline = time.time() + 10
            alive = list(pids)
            while alive and time.time() < deadline:
                time.sleep(0.1)
                alive = [pid for pid in alive if _alive(pid)]
            self.assertEqual(alive, [], "pool processes outlived the SIGKILLed run")
        finally:
            if p.poll() is None:
                p.kill()
            p.stdout.close()


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
