# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scheduler with real spawned worker processes on the synthetic backend (the labelled GPU double):
every unit measured once with the backend's own numbers, a precompile pool, compiled-first dispatch."""

import json
import os
import signal
import tempfile
import threading
import time
import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)
from moetune_agent import space
from moetune_agent.backends.synthetic import SyntheticBackend
from moetune_agent.kernel_types import CandidateError, KernelConfig as K, Shape
from moetune_agent.engine.pool import POOL_EXIT_S
from moetune_agent.engine.scheduler import Cancelled, Scheduler
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


class PrecompileClasses(unittest.TestCase):
    """A kernel that specialises on batch sizes (the server's): one precompile per (op, config, class) of
    server_backend.specialisation_class, not one per size (no classes known: per size)."""

    def submitted(self, classes):
        from moetune_agent.backends.server_backend import classes_for

        cfgs = space.build_space(SHAPE, [64], ["both"])[("both", 64)][:3]
        us = [Unit("both", c, m, 1, 0) for c in cfgs for m in (1, 2, 4, 16, 24, 64, 256, 4096)]
        s = Scheduler(DESC, [0], None, 1)
        s.precompile_classes = classes_for("sglang", Shape(128, 768, 2048, 8)) if classes else None
        s.start()
        try:
            s.start_precompile({"capability": 90, "device_name": "SIMULATED_GPU", "smem": 232448}, per_m=True)
            keys = s.precompile(us)
            got = []
            s.measure(us, got.append, simulated=True)
            self.assertEqual(len(got), len(us))
            self.assertTrue(all(m.ok for m in got))
            return len(keys), s.precompile_stats
        finally:
            s.close()

    def test_one_compile_per_class(self):
        n, st = self.submitted(True)
        self.assertEqual(n, 3 * 3)  # m = 1 | 2, 4, 16 | 24, 64, 256, 4096
        self.assertEqual((st["submitted"], st["ok"], st["failed"]), (9, 9, 0))
        n, st = self.submitted(False)
        self.assertEqual(n, 3 * 8)


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

    def test_a_slow_pool_that_makes_progress_is_waited_for(self):
        """A pool whose kernels take longer in all than COMPILE_WAIT_S but that keeps finishing them (int4:
        0.3-8 s a kernel) is waited for: the worker compiles nothing itself. Before, one wait past
        COMPILE_WAIT_S gave up on the pool for the rest of the run, and the worker compiled on its own."""
        cache = tempfile.mkdtemp(prefix="moetune-slow-pool-")
        os.environ["MOETUNE_SYNTHETIC_COMPILE_MS"] = "120"
        self.addCleanup(os.environ.pop, "MOETUNE_SYNTHETIC_COMPILE_MS", None)
        every = [u for u in units(40) if not SyntheticBackend(SHAPE)._fails("both", u.cfg)]  # pylint: disable=protected-access
        ahead, us = every[:12], every[12:20]  # the pool finishes 12 other kernels (0.72 s) before these
        self.assertEqual(len(us), 8)
        s = Scheduler(DESC, [0], cache, 2)
        s.COMPILE_WAIT_S = 0.4  # below the wait for the first of us, far above the time between two compiles
        s.start(early_pool=True)
        got = []
        try:
            s.start_precompile({"capability": 90, "device_name": "SIMULATED_GPU", "smem": 232448})
            s.precompile(every[20:22])  # the pool's processes started and compiling (as at a run's start)
            for r in list(s._precompiled.values()):  # pylint: disable=protected-access
                r.wait(30)
            s.precompile(ahead)
            s.precompile(us)
            s.measure(us, got.append, simulated=True)
        finally:
            s.close()
        folder = os.path.join(cache, "synthetic-compiled")
        writers = []
        for name in os.listdir(folder):
            with open(os.path.join(folder, name)) as f:
                writers.append(f.read())
        self.assertEqual(len(got), len(us))
        self.assertFalse(s._wait_gave_up)  # pylint: disable=protected-access
        self.assertEqual([w for w in writers if w.startswith("moetune-gpu")], [])
        self.assertEqual(len(writers), len({u.cfg.key() for u in every[:22]}))

    def test_early_facts_warm_every_pool_process_before_the_info(self):
        """The GPU worker sends what a CPU compile targets before the rest of its start-up; each early pool
        process builds its backend then (for the server backend: imports the server), so by the time the
        slow info call returns the pool is ready (issue 22: the SGLang check waited 9.4 s for compiles
        queued behind 14 server imports)."""
        cache = tempfile.mkdtemp(prefix="moetune-early-facts-")
        log = os.path.join(cache, "warm.log")
        env = {"MOETUNE_SYNTHETIC_COMPILE_MS": "1", "MOETUNE_TEST_WARM_LOG": log,
               "MOETUNE_SYNTHETIC_CHECK_MS": "1500"}  # a slow smoke call in the info (a server's first JIT)
        for k, v in env.items():
            os.environ[k] = v
            self.addCleanup(os.environ.pop, k, None)
        s = Scheduler(DESC, [0], cache, 2)
        s.start(early_pool=True)
        try:
            info = s.info(["both"], [64])
            t_info = time.time()
            facts = info["extra"]["cpu_compile_info"]
            self.assertIn("facts_s", s.precompile_stats)
            self.assertLess(s.precompile_stats["facts_s"], t_info - s._t_start)  # pylint: disable=protected-access
            self.assertFalse(s.precompiling)  # warmed, but not compiling before start_precompile
            s.start_precompile(facts)
            self.assertTrue(s.precompiling)
            pool = s._pool  # pylint: disable=protected-access
            us = units(6)
            s.precompile(us)
            for r in list(s._precompiled.values()):  # pylint: disable=protected-access
                r.wait(30)
            self.assertIs(s._pool, pool)  # pylint: disable=protected-access
        finally:
            s.close()
        with open(log, encoding="utf-8") as f:
            lines = [ln.split() for ln in f if ln.strip()]
        self.assertEqual(len(lines), 2)  # one warm-up per pool process
        self.assertEqual(len({name for name, _t in lines}), 2)
        self.assertLess(max(float(t) for _n, t in lines), t_info)

    def test_early_facts_that_differ_from_the_info_restart_the_pool(self):
        os.environ["MOETUNE_SYNTHETIC_COMPILE_MS"] = "1"
        self.addCleanup(os.environ.pop, "MOETUNE_SYNTHETIC_COMPILE_MS", None)
        s = Scheduler(DESC, [0], None, 1)
        s.start(early_pool=True)
        try:
            info = s.info(["both"], [64])
            warmed = s._pool  # pylint: disable=protected-access
            self.assertIsNotNone(s._warm_desc)  # pylint: disable=protected-access
            other = dict(info["extra"]["cpu_compile_info"], capability=80)
            s.start_precompile(other)
            self.assertIsNot(s._pool, warmed)  # pylint: disable=protected-access
            self.assertTrue(s.precompiling)
            s.precompile(units(3))
            for r in list(s._precompiled.values()):  # pylint: disable=protected-access
                r.wait(30)
            self.assertEqual(s.precompile_stats["ok"] + s.precompile_stats["failed"], 3)
        finally:
            s.close()

    def test_no_facts_without_an_early_pool(self):
        os.environ["MOETUNE_SYNTHETIC_COMPILE_MS"] = "1"
        self.addCleanup(os.environ.pop, "MOETUNE_SYNTHETIC_COMPILE_MS", None)
        s = Scheduler(DESC, [0], None, 1)
        s.start()
        try:
            s.info(["both"], [64])
            self.assertNotIn("facts_s", s.precompile_stats)
            self.assertIsNone(s._warm_desc)  # pylint: disable=protected-access
        finally:
            s.close()

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

    def test_first_phase_compiles_while_the_gpu_worker_starts(self):
        """The GPU worker's early facts start the pool on the strategy's first phase during the rest of its
        start-up (a slow smoke call here, as a server's first JIT); the run's choices are the same as
        without a pool (the synthetic backend's numbers do not depend on who compiled)."""
        sp = self.write_spec(agenttest.small_spec(strategy="fast"))
        r = self.run_agent("tune", sp, "--foreground",
                           env={"MOETUNE_SYNTHETIC_COMPILE_MS": "2", "MOETUNE_PRECOMPILE_WORKERS": "2",
                                "MOETUNE_SYNTHETIC_CHECK_MS": "1000"}, timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        base = self.run_agent("tune", self.write_spec(agenttest.small_spec(strategy="fast")), "--foreground",
                              timeout=300)
        self.assertEqual(base.rc, 0, base.stderr)

        def result(run):
            res = [e for e in run.events if e["type"] == "result_written" and e["kind"] == "result"][0]
            with open(res["path"]) as f:
                return json.load(f)
        got, want = result(r), result(base)
        pc = got["timings"]["precompile"]
        self.assertGreater(pc["at_facts"], 10, pc)
        self.assertIsNone(pc.get("at_facts_error"), pc)
        self.assertEqual(pc["ok"] + pc["failed"], pc["submitted"], pc)
        from moetune_agent.tunerun.runner import first_units
        spec = agenttest.small_spec(strategy="fast")
        self.assertTrue(first_units(dict(spec, space=spec.get("space") or {}), ("both",), spec["batch_sizes"],
                                    232448, 1000))
        self.assertEqual(json.dumps(got["per_batch"], sort_keys=True), json.dumps(want["per_batch"], sort_keys=True))

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


class Cancel(unittest.TestCase):
    """A cancel signals the run's whole process group (cli._cancel): the GPU workers and the pool die by
    SIGTERM while the run process winds down."""

    def test_close_ends_a_pool_whose_processes_a_cancel_killed(self):
        s = Scheduler(DESC, [0], None, 0)
        s.start()
        s.info(["both"], [1])
        s._pool = s.ctx.Pool(3)  # pylint: disable=protected-access
        s._pool.map(abs, [1, 2, 3])  # pylint: disable=protected-access  (in their loop: one holds the queue's lock)
        procs = list(s._pool._pool)  # pylint: disable=protected-access
        time.sleep(0.3)
        for p in procs:
            os.kill(p.pid, signal.SIGTERM)
        for p in procs:
            p.join(5)
        t0 = time.time()
        s.close()
        took = time.time() - t0
        self.assertLess(took, POOL_EXIT_S + 2.0)  # Pool.terminate() alone waits forever here
        self.assertTrue(s.close_s.get("pool_killed"), s.close_s)
        self.assertFalse(any(p.is_alive() for p in procs))

    def test_a_normal_close_terminates_the_pool(self):
        s = Scheduler(DESC, [0], None, 0)
        s.start()
        s._pool = s.ctx.Pool(2)  # pylint: disable=protected-access
        s._pool.map(abs, [1, 2])  # pylint: disable=protected-access
        procs = list(s._pool._pool)  # pylint: disable=protected-access
        s.close()
        self.assertNotIn("pool_killed", s.close_s)
        self.assertFalse(any(p.is_alive() for p in procs))
        self.assertEqual(s.workers, {})

    def test_workers_are_terminated(self):
        s = Scheduler(DESC, [0], None, 0)
        s.start()
        s.info(["both"], [1])
        worker = s.workers[0][0]
        s.close()
        self.assertEqual(worker.exitcode, -signal.SIGTERM)

    def test_a_worker_killed_by_the_cancel_is_no_crash_and_not_restarted(self):
        us = units(6)
        os.environ["MOETUNE_TEST_HANG_UNIT"] = us[1].ident()
        try:
            s = Scheduler(DESC, [0], None)
            s.start()
        finally:
            del os.environ["MOETUNE_TEST_HANG_UNIT"]
        worker = s.workers[0][0]
        got = []

        def cancel():
            while len(got) < 1:
                time.sleep(0.05)
            time.sleep(0.3)  # the worker is in the hanging unit now
            s.stop = True    # what the run's SIGTERM handler does
            os.kill(worker.pid, signal.SIGTERM)  # what the group signal does to the worker

        t = threading.Thread(target=cancel, daemon=True)
        t.start()
        try:
            with self.assertRaises(Cancelled):
                s.measure(us, got.append, simulated=True)
        finally:
            t.join(5)
            s.close()
        self.assertEqual([m.error_kind for m in got if m.error_kind == "crash"], [])
        self.assertEqual(s.crashes, 0)
        self.assertIs(s.workers.get(0), None)  # closed, and no replacement was started before that


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



class Fillers(unittest.TestCase):
    """Fillers (Scheduler.measure): units timed only while the worker would wait for the pool's compiles,
    one at a time; the call returns once its own units are done, with the fillers left untimed. TEST DOUBLE:
    the pool is a labelled stand-in whose compiles of the phase's kernels finish at a set time."""

    class At(object):
        def __init__(self, t):
            self.t = t

        def ready(self):
            return time.time() >= self.t

    def run_with(self, ready_after_s, n_fillers=60):
        every = [u for u in units(80) if not SyntheticBackend(SHAPE)._fails("both", u.cfg)]  # pylint: disable=protected-access
        us = every[:6]
        fill = [Unit("both", u.cfg, 64, 10, 200) for u in every[6:6 + n_fillers]]
        os.environ["MOETUNE_SYNTHETIC_DELAY_MS"] = "25"
        self.addCleanup(os.environ.pop, "MOETUNE_SYNTHETIC_DELAY_MS", None)
        s = Scheduler(DESC, [0], None, 0)
        s.start()
        got = []
        try:
            s.info(["both"], [64])  # the worker is up before the clock starts
            s._pool, s._pool_early = object(), False  # pylint: disable=protected-access
            t_ready = time.time() + ready_after_s
            for u in us:
                s._precompiled[s._pc_key(u.op, u.cfg, u.m)] = self.At(t_ready)  # pylint: disable=protected-access
            t0 = time.time()
            s.measure(us, lambda m: got.append((time.time(), m)), simulated=True, fillers=fill)
            wall = time.time() - t0
        finally:
            s._pool = None  # pylint: disable=protected-access
            s.close()
        return us, fill, got, wall, t_ready, s

    def test_fillers_run_while_the_pool_compiles(self):
        us, fill, got, wall, t_ready, s = self.run_with(1.0)
        mine = [(t, m) for t, m in got if m.unit.round == 0]
        extra = [(t, m) for t, m in got if m.unit.round == 200]
        self.assertEqual(sorted(m.unit.ident() for _t, m in mine), sorted(u.ident() for u in us))
        self.assertGreater(len(extra), 5)              # ~1 s of waiting at 25 ms a unit
        self.assertLess(len(extra), len(fill))         # the rest were left: the call did not wait for them
        self.assertTrue(all(t <= t_ready + 0.2 for t, _m in extra[:-1]))  # during the wait (the last may end after)
        self.assertTrue(all(m.ok for _t, m in extra))
        self.assertEqual(s.precompile_stats["fillers"], len(extra))
        self.assertLess(wall, 1.0 + 6 * 0.025 + 1.0)
        self.assertLess(s.precompile_stats["wait_s"], 0.5)  # the GPU had fillers to time: hardly idle

    def test_no_filler_when_the_units_are_ready(self):
        _us, _fill, got, _wall, _t, s = self.run_with(0.0)
        self.assertEqual([m for _t, m in got if m.unit.round == 200], [])
        self.assertNotIn("fillers", s.precompile_stats)


class Lookahead(unittest.TestCase):
    """The precompile lookahead (Scheduler._speculate): while a phase is timed, the pool compiles what the
    strategy will probably measure next, once the pool has nothing else to compile."""

    def setUp(self):
        os.environ["MOETUNE_SYNTHETIC_COMPILE_MS"] = "5"
        self.addCleanup(os.environ.pop, "MOETUNE_SYNTHETIC_COMPILE_MS", None)

    def run_phase(self, lookahead):
        allc = units(30)
        now, later = allc[:20], allc[20:]  # 10 next: within one guess's cap (6 per pool process)
        s = Scheduler(DESC, [0], tempfile.mkdtemp(prefix="moetune-lookahead-"), 2)
        s.start()
        got, asked = [], []

        def guess(remaining):
            asked.append(len(remaining))
            return lookahead(remaining, later)

        try:
            s.start_precompile({"capability": 90, "device_name": "SIMULATED_GPU", "smem": 232448})
            s.precompile(now)
            s.measure(now, got.append, simulated=True, lookahead=guess)
            submitted = {k[1] for k in s._precompiled}  # pylint: disable=protected-access
            s.measure(later, got.append, simulated=True)
        finally:
            s.close()
        return s, now, later, got, asked, submitted

    def test_the_next_phase_compiles_during_this_one(self):
        s, now, later, got, asked, submitted = self.run_phase(lambda remaining, later: later)
        self.assertTrue(asked, "the lookahead was never asked")
        self.assertTrue(all(n < len(now) for n in asked), asked)  # asked with part of the phase measured
        self.assertTrue({u.cfg.key() for u in later} <= submitted, "the guessed phase was not precompiled")
        st = s.precompile_stats
        self.assertEqual(st["lookahead"], len({u.cfg.key() for u in later} - {u.cfg.key() for u in now}))
        self.assertEqual(st["lookahead_used"], st["lookahead"])  # every guess was measured later
        self.assertEqual(sorted(m.unit.ident() for m in got), sorted(u.ident() for u in now + later))
        self.assertEqual([w[0] for w in st["waits"]], [len(now), len(later)])

    def test_a_failing_guess_costs_nothing(self):
        def boom(remaining, later):
            raise RuntimeError("strategy bug")
        s, now, later, got, asked, submitted = self.run_phase(boom)
        self.assertTrue(asked)
        self.assertEqual(s.precompile_stats["lookahead"], 0)
        self.assertFalse({u.cfg.key() for u in later} & submitted - {u.cfg.key() for u in now})
        self.assertEqual(len(got), len(now) + len(later))

    def test_a_guess_is_capped(self):
        s, _now, _later, _got, asked, _submitted = self.run_phase(lambda remaining, later: later)
        self.assertLessEqual(s.precompile_stats["lookahead"], 6 * 2 * len(asked))


class StrategyLookahead(unittest.TestCase):
    """tunerun/phases._lookahead: the fast strategy's next phase with this phase's unmeasured units counted as
    failed - other units than this phase's, and it leaves the strategy's plan untouched."""

    def test_guess_is_the_next_phase(self):
        from moetune_agent.tunerun import phases  # pylint: disable=import-outside-toplevel
        from moetune_agent.strategies import make_strategy  # pylint: disable=import-outside-toplevel
        from moetune_agent.work import Measurement  # pylint: disable=import-outside-toplevel
        sizes = [1, 16, 256, 4096]
        sp = space.build_space(SHAPE, sizes, ["up"])
        strat = make_strategy("fast", sp, sizes, ["up"], SHAPE)
        be = SyntheticBackend(SHAPE, delay_s=0)
        first = strat.next_phase([])
        half = []
        for u in first[: len(first) // 2]:
            try:
                half.append(Measurement(u, be.measure(u.op, u.cfg, u.m).samples_us))
            except CandidateError as e:
                half.append(Measurement(u, None, e.kind, e.message))

        class S(object):
            simulated = True

            @staticmethod
            def strategy_view():
                return list(half)

        guess = phases._lookahead(S(), strat)(first[len(first) // 2:])  # pylint: disable=protected-access
        self.assertTrue(guess)
        idents = {u.ident() for u in first}
        self.assertFalse([u for u in guess if u.ident() in idents], "the guess repeats this phase")
        self.assertEqual([u.ident() for u in strat.next_phase([])], [u.ident() for u in first])
