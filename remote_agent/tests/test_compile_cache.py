# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host's persistent compile cache (issue 22): one folder per Triton version under the agent's state
folder, used by every scheduler (tune and the headroom check), so a second run on a host compiles
nothing the first one compiled."""

import json
import os
import shutil
import tempfile
import time
import unittest

import agenttest  # noqa: F401  (sets sys.path)
from moetune_agent.runs import compile_cache
from moetune_agent.engine.scheduler import Scheduler

DESC = {"name": "triton", "shape": {"E": 8, "N": 64, "K": 64, "topk": 2}, "framework": "sglang"}


class HostCacheFolder(unittest.TestCase):
    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="moetune-cc-")
        self.addCleanup(shutil.rmtree, self.home, True)
        self._flag = os.environ.pop("MOETUNE_COMPILE_CACHE", None)
        self.addCleanup(self._restore)

    def _restore(self):
        os.environ.pop("MOETUNE_COMPILE_CACHE", None)
        if self._flag is not None:
            os.environ["MOETUNE_COMPILE_CACHE"] = self._flag

    def test_keyed_by_triton_version(self):
        a = compile_cache.host_compile_cache(DESC, self.home, triton_version="3.6.0")
        b = compile_cache.host_compile_cache(DESC, self.home, triton_version="3.6.0")
        c = compile_cache.host_compile_cache(DESC, self.home, triton_version="3.7.0+git1234/x")
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)
        self.assertTrue(os.path.isdir(a) and os.path.isdir(c))
        self.assertEqual(os.path.dirname(a), os.path.join(self.home, compile_cache.COMPILE_CACHE))
        self.assertEqual(os.path.basename(c), "triton-3.7.0+git1234_x")  # no path separator from a version

    def test_a_cache_others_can_write_is_never_used(self):
        # issue 42: Triton loads the compiled kernels it finds there, so another user's folder is refused
        top = os.path.join(self.home, compile_cache.COMPILE_CACHE)
        os.makedirs(os.path.join(top, "triton-3.6.0"))
        os.chmod(top, 0o777)
        self.assertIsNone(compile_cache.host_compile_cache(DESC, self.home, triton_version="3.6.0"))
        os.chmod(top, 0o700)
        os.chmod(os.path.join(top, "triton-3.6.0"), 0o770)
        self.assertIsNone(compile_cache.host_compile_cache(DESC, self.home, triton_version="3.6.0"))
        os.chmod(os.path.join(top, "triton-3.6.0"), 0o755)  # readable by others, writable by us alone: fine
        self.assertEqual(compile_cache.host_compile_cache(DESC, self.home, triton_version="3.6.0"),
                         os.path.join(top, "triton-3.6.0"))
        fresh = compile_cache.host_compile_cache(DESC, self.home, triton_version="3.7.0")
        self.assertEqual(os.stat(fresh).st_mode & 0o777, 0o700)

    def test_no_triton_no_host_cache(self):
        self.assertIsNone(compile_cache.host_compile_cache(DESC, self.home, triton_version=None))

    def test_switched_off(self):
        os.environ["MOETUNE_COMPILE_CACHE"] = "0"
        self.assertIsNone(compile_cache.host_compile_cache(DESC, self.home, triton_version="3.6.0"))

    def test_synthetic_only_when_asked_and_per_shape(self):
        syn = dict(DESC, name="synthetic")
        self.assertIsNone(compile_cache.host_compile_cache(syn, self.home))
        os.environ["MOETUNE_COMPILE_CACHE"] = "1"
        a = compile_cache.host_compile_cache(syn, self.home)
        b = compile_cache.host_compile_cache(dict(syn, shape=dict(DESC["shape"], N=128)), self.home)
        self.assertIsNotNone(a)
        self.assertNotEqual(a, b)

    def test_the_check_uses_the_tunes_folder_on_a_pytorch_triton_host(self):
        """The headroom check's folder (check_cache_dir) is the tune's (host_compile_cache) wherever Triton is
        installed under one of its names: on a host with only `pytorch-triton` (PyTorch's wheel index) the
        check once fell back to a temporary folder while the tune used the host's cache."""
        from importlib import metadata
        from unittest import mock

        def version(dist):
            if dist == "pytorch-triton":
                return "3.1.0+cf34004b8a"
            raise metadata.PackageNotFoundError(dist)

        with mock.patch.object(metadata, "version", version):
            self.assertEqual(compile_cache.installed_triton_version(), "3.1.0+cf34004b8a")
            tune = compile_cache.host_compile_cache(DESC, self.home)
            check, persistent = compile_cache.check_cache_dir(DESC, self.home)
        self.assertTrue(persistent)
        self.assertEqual(check, tune)
        self.assertEqual(os.path.basename(check), "triton-3.1.0+cf34004b8a")
        # no Triton, the synthetic backend, or the cache switched off: a private temporary folder
        for desc, version_, flag in ((DESC, None, None), (dict(DESC, name="synthetic"), "3.6.0", None),
                                     (DESC, "3.6.0", "0")):
            if flag is not None:
                os.environ["MOETUNE_COMPILE_CACHE"] = flag
            path, persistent = compile_cache.check_cache_dir(desc, self.home, triton_version=version_)
            os.environ.pop("MOETUNE_COMPILE_CACHE", None)
            self.assertFalse(persistent, desc)
            self.assertFalse(path.startswith(self.home), path)
            shutil.rmtree(path)

    def test_old_versions_pruned_beyond_keep(self):
        paths = []
        for i in range(compile_cache.COMPILE_CACHE_KEEP + 2):
            p = compile_cache.host_compile_cache(DESC, self.home, triton_version="3.%d.0" % i)
            with open(os.path.join(p, "kernel.cubin"), "w") as f:
                f.write("x")
            os.utime(p, (time.time() - 1000 + i, time.time() - 1000 + i))
            paths.append(p)
        compile_cache.prune_compile_caches(os.path.join(self.home, compile_cache.COMPILE_CACHE))
        left = sorted(os.listdir(os.path.join(self.home, compile_cache.COMPILE_CACHE)))
        self.assertEqual(left, sorted(os.path.basename(p) for p in paths[-compile_cache.COMPILE_CACHE_KEEP:]))

    def test_prune_leaves_a_planted_symlink_and_its_target(self):
        top = os.path.join(self.home, compile_cache.COMPILE_CACHE)
        os.makedirs(top)
        outside = os.path.join(self.home, "precious")
        os.makedirs(outside)
        with open(os.path.join(outside, "keep.txt"), "w") as f:
            f.write("x")
        link = os.path.join(top, "triton-0.0.1")
        os.symlink(outside, link)
        os.utime(link, (1, 1), follow_symlinks=False)
        self.assertEqual(compile_cache.prune_compile_caches(top, keep=0), [])
        self.assertTrue(os.path.islink(link))
        self.assertTrue(os.path.isfile(os.path.join(outside, "keep.txt")))

    def test_scheduler_takes_the_host_cache_over_its_private_folder(self):
        private = os.path.join(self.home, "private")
        os.environ["MOETUNE_COMPILE_CACHE"] = "1"
        s = Scheduler(dict(DESC, name="synthetic"), [0], private, 0, home=self.home)
        self.assertTrue(s.host_cache)
        self.assertTrue(s.cache_dir.startswith(os.path.join(self.home, compile_cache.COMPILE_CACHE)))
        os.environ["MOETUNE_COMPILE_CACHE"] = "0"
        s = Scheduler(dict(DESC, name="synthetic"), [0], private, 0, home=self.home)
        self.assertFalse(s.host_cache)
        self.assertEqual(s.cache_dir, private)


class SecondRunReusesCompiles(agenttest.AgentCase):
    """Two synthetic runs of one shape with a simulated compile cost and the host cache on: the second
    starts with every kernel the first compiled (the markers Triton's cache stands for)."""

    def test_second_run_starts_with_the_first_runs_kernels(self):
        env = {"MOETUNE_SYNTHETIC_COMPILE_MS": "2", "MOETUNE_PRECOMPILE_WORKERS": "1", "MOETUNE_COMPILE_CACHE": "1"}
        got = []
        for i in range(2):
            sp = self.write_spec(agenttest.small_spec(strategy="fast"), name="spec%d.json" % i)
            r = self.run_agent("tune", sp, "--foreground", "--new", env=env, timeout=300)
            self.assertEqual(r.rc, 0, r.stderr)
            res = [e for e in r.events if e["type"] == "result_written" and e["kind"] == "result"][0]
            with open(res["path"]) as f:
                got.append(json.load(f)["timings"]["compile_cache"])
        first, second = got
        self.assertTrue(first["host"] and second["host"])
        self.assertEqual(first["dir"], second["dir"])
        self.assertTrue(first["dir"].startswith(os.path.join(self.home, compile_cache.COMPILE_CACHE)))
        self.assertEqual(first["files_at_start"], 0)
        self.assertGreater(first["files_at_end"], 0)
        self.assertEqual(second["files_at_start"], first["files_at_end"])


if __name__ == "__main__":
    unittest.main()
