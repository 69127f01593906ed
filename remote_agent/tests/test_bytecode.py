# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The workers' bytecode cache (bytecode.py): real packages written to a temporary sys.path entry, their
bytecode checked the way the import system checks it, and real spawned workers that import from it."""

import contextlib
import importlib
import importlib.util
import os
import py_compile
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import agenttest  # noqa: F401  # pylint: disable=unused-import  (sets sys.path)
from moetune_agent.engine import bytecode
from moetune_agent.engine.scheduler import Scheduler

DESC = {"name": "synthetic", "shape": {"E": 64, "N": 512, "K": 1024, "topk": 4, "dtype": None, "block_shape": None,
                                       "per_channel_quant": False}}


@contextlib.contextmanager
def env(**values):
    """Environment variables set for the block ("" = unset), restored after."""
    old = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v:
                os.environ[k] = v
            else:
                os.environ.pop(k, None)
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _package(root, name, body="X = 1\n", sub=None):
    d = os.path.join(root, name)
    os.makedirs(d)
    src = os.path.join(d, "__init__.py")
    with open(src, "w", encoding="utf-8") as f:
        f.write(body)
    if sub:
        os.makedirs(os.path.join(d, sub))
        with open(os.path.join(d, sub, "__init__.py"), "w", encoding="utf-8") as f:
            f.write("Y = 2\n")
    return src


class Validity(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="moetune-bytecode-")
        sys.path.insert(0, self.root)
        self.addCleanup(sys.path.remove, self.root)
        importlib.invalidate_caches()

    def test_missing_then_compiled_then_stale(self):
        src = _package(self.root, "mt_pkg_a")
        self.assertFalse(bytecode.valid_bytecode(src))             # never compiled
        py_compile.compile(src, doraise=True)
        self.assertTrue(bytecode.valid_bytecode(src))
        # the source changed after its bytecode (a copied tree's new timestamps): stale
        st = os.stat(src)
        os.utime(src, (st.st_atime, st.st_mtime + 100))
        self.assertFalse(bytecode.valid_bytecode(src))
        with open(src, "a", encoding="utf-8") as f:
            f.write("Z = 3\n")
        py_compile.compile(src, doraise=True)
        self.assertTrue(bytecode.valid_bytecode(src))

    def test_a_pyc_of_another_python_is_not_valid(self):
        src = _package(self.root, "mt_pkg_b")
        py_compile.compile(src, doraise=True)
        pyc = importlib.util.cache_from_source(src)
        with open(pyc, "r+b") as f:
            f.write(b"\x00\x00\r\n")  # another magic number
        self.assertFalse(bytecode.valid_bytecode(src))

    def test_the_probe_finds_a_submodule_without_importing_its_package(self):
        _package(self.root, "mt_pkg_c", body="raise RuntimeError('imported')\n", sub="inner")
        got = bytecode.missing(("mt_pkg_c", "mt_pkg_c.inner", "mt_pkg_absent"))
        self.assertEqual(got, {"mt_pkg_c": True, "mt_pkg_c.inner": True})  # an absent module is not listed
        self.assertNotIn("mt_pkg_c", sys.modules)

    def test_host_prefix_only_where_bytecode_is_missing(self):
        src = _package(self.root, "mt_pkg_d")
        home = tempfile.mkdtemp(prefix="moetune-bytecode-home-")
        with env(MOETUNE_PYCACHE="", PYTHONPYCACHEPREFIX=""):
            self.assertEqual(bytecode.host_prefix(home, ("mt_pkg_d",)), os.path.join(home, bytecode.PYCACHE))
            py_compile.compile(src, doraise=True)
            self.assertIsNone(bytecode.host_prefix(home, ("mt_pkg_d",)))   # the package has its own
        with env(MOETUNE_PYCACHE="1", PYTHONPYCACHEPREFIX=""):
            self.assertIsNotNone(bytecode.host_prefix(home, ("mt_pkg_d",)))
        with env(MOETUNE_PYCACHE="0", PYTHONPYCACHEPREFIX=""):
            os.utime(src, (time.time(), time.time() + 50))
            self.assertIsNone(bytecode.host_prefix(home, ("mt_pkg_d",)))
        with env(MOETUNE_PYCACHE="1", PYTHONPYCACHEPREFIX="/somewhere/else"):
            self.assertIsNone(bytecode.host_prefix(home, ("mt_pkg_d",)))  # the user's own prefix wins

    def test_a_planted_symlink_is_not_used(self):
        home = tempfile.mkdtemp(prefix="moetune-bytecode-home-")
        target = tempfile.mkdtemp(prefix="moetune-bytecode-elsewhere-")
        os.symlink(target, os.path.join(home, bytecode.PYCACHE))
        with env(MOETUNE_PYCACHE="1", PYTHONPYCACHEPREFIX=""):
            self.assertIsNone(bytecode.host_prefix(home))

    def test_a_process_with_the_prefix_writes_and_reuses_bytecode_there(self):
        """A read-only package under PYTHONDONTWRITEBYTECODE (as in many server images): without the
        prefix every process compiles it; with it the first writes the bytecode, the second reads it."""
        _package(self.root, "mt_pkg_e", body=textwrap.dedent("""
            import sys
            FROM = sys.modules[__name__].__spec__.cached
            """))
        os.chmod(os.path.join(self.root, "mt_pkg_e"), 0o555)
        self.addCleanup(os.chmod, os.path.join(self.root, "mt_pkg_e"), 0o755)
        prefix = tempfile.mkdtemp(prefix="moetune-bytecode-prefix-")
        code = ("import sys; sys.path.insert(0, %r); sys.path.insert(0, %r); from moetune_agent.engine import bytecode; "
                "bytecode.enable(%r); import mt_pkg_e, os; print(os.path.isfile(mt_pkg_e.FROM), mt_pkg_e.FROM)"
                % (agenttest.AGENT_ROOT, self.root, prefix))
        child_env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        child_env.pop("PYTHONPYCACHEPREFIX", None)
        first = subprocess.run([sys.executable, "-c", code], env=child_env, stdout=subprocess.PIPE, check=True,
                               universal_newlines=True).stdout.split()
        self.assertEqual(first[0], "True")                    # written, though the environment says not to
        self.assertTrue(first[1].startswith(prefix), first)  # under the prefix, not beside the source
        self.assertEqual(bytecode.count_files(prefix), 1)
        mtime = os.stat(first[1]).st_mtime_ns
        second = subprocess.run([sys.executable, "-c", code], env=child_env, stdout=subprocess.PIPE, check=True,
                                universal_newlines=True).stdout.split()
        self.assertEqual(second, first)
        self.assertEqual(os.stat(first[1]).st_mtime_ns, mtime)  # read, not written again
        self.assertFalse(os.path.isdir(os.path.join(self.root, "mt_pkg_e", "__pycache__")))


class Workers(unittest.TestCase):
    def test_workers_use_the_hosts_prefix(self):
        home = tempfile.mkdtemp(prefix="moetune-bytecode-home-")
        with env(MOETUNE_PYCACHE="1", PYTHONPYCACHEPREFIX=""):
            s = Scheduler(DESC, [0], None, 0, home=home)
        try:
            self.assertEqual(s.pycache, os.path.join(home, bytecode.PYCACHE))
            s.start()
            info = s.info(["both"], [1, 64])
            self.assertEqual(info["extra"]["info_steps"]["pycache_prefix"], s.pycache)
            st = bytecode.stats(s.pycache, s.pycache_files_before)
            self.assertEqual(st["files_at_start"], 0)
        finally:
            s.close()

    def test_synthetic_workers_without_it_by_default(self):
        with env(MOETUNE_PYCACHE="", PYTHONPYCACHEPREFIX=""):
            s = Scheduler(DESC, [0], None, 0, home=tempfile.mkdtemp(prefix="moetune-bytecode-home-"))
        try:
            self.assertIsNone(s.pycache)
            s.start()
            info = s.info(["both"], [1])
            self.assertIsNone(info["extra"]["info_steps"]["pycache_prefix"])
        finally:
            s.close()


def _prefix_pyc(prefix, src):
    """Where a process with this bytecode prefix reads src's bytecode from."""
    saved = sys.pycache_prefix
    sys.pycache_prefix = prefix
    try:
        return importlib.util.cache_from_source(src)
    finally:
        sys.pycache_prefix = saved


def _prefix_valid(prefix, src):
    pyc = _prefix_pyc(prefix, src)
    try:
        with open(pyc, "rb") as f:
            head = f.read(16)
    except OSError:
        return False
    st = os.stat(src)
    return (head[:4] == importlib.util.MAGIC_NUMBER and
            int.from_bytes(head[8:12], "little") == (int(st.st_mtime) & 0xFFFFFFFF) and
            int.from_bytes(head[12:16], "little") == (st.st_size & 0xFFFFFFFF))


class Warm(unittest.TestCase):
    """bytecode.warm: a host's first run compiles the packages' sources in parallel child processes."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="moetune-warm-root-")
        self.prefix = tempfile.mkdtemp(prefix="moetune-warm-prefix-")
        sys.path.insert(0, self.root)
        self.addCleanup(sys.path.remove, self.root)
        importlib.invalidate_caches()

    def _tree(self, name, n=60):
        """A package of n modules in three subpackages, and a tests folder no worker imports."""
        srcs = [_package(self.root, name, body="VALUE = 'init'\n")]
        for i in range(n):
            d = os.path.join(self.root, name, "sub%d" % (i % 3))
            os.makedirs(d, exist_ok=True)
            for f in ("__init__.py", "m%d.py" % i):
                path = os.path.join(d, f)
                if path not in srcs:
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write("def f%d(x):\n    return x + %d\n" % (i, i))
                    srcs.append(path)
        os.makedirs(os.path.join(self.root, name, "tests"))
        skipped = os.path.join(self.root, name, "tests", "test_x.py")
        with open(skipped, "w", encoding="utf-8") as fh:
            fh.write("X = 1\n")
        return srcs, skipped

    def test_every_source_compiled_once_then_skipped_until_the_package_changes(self):
        srcs, skipped = self._tree("mt_warm_a")
        got = bytecode.warm(self.prefix, ("mt_warm_a", "mt_warm_absent"), workers=3)
        self.assertEqual(got["packages"], ["mt_warm_a"])
        self.assertEqual((got["files"], got["compiled"], got["valid"], got["failed"]), (len(srcs), len(srcs), 0, 0))
        self.assertEqual(got["workers"], 2)  # no more children than 40 files each need
        self.assertFalse(got["capped"])
        self.assertTrue(all(_prefix_valid(self.prefix, s) for s in srcs))
        self.assertFalse(os.path.exists(_prefix_pyc(self.prefix, skipped)))  # a test suite is not compiled
        self.assertFalse(os.path.isdir(os.path.join(self.root, "mt_warm_a", "__pycache__")))  # nothing beside
        again = bytecode.warm(self.prefix, ("mt_warm_a",), workers=3)
        self.assertTrue(again["skipped"])
        self.assertNotIn("compiled", again)
        # an upgrade rewrites the package: only what changed is compiled again
        init = srcs[0]
        with open(init, "a", encoding="utf-8") as fh:
            fh.write("MORE = 1\n")
        third = bytecode.warm(self.prefix, ("mt_warm_a",), workers=3)
        self.assertFalse(third["skipped"])
        self.assertEqual((third["compiled"], third["valid"]), (1, len(srcs) - 1))
        self.assertTrue(_prefix_valid(self.prefix, init))

    def test_a_process_with_the_prefix_imports_the_warmed_bytecode(self):
        """The source rewritten after the warm with its size and mtime kept: a process that imports it
        gets the warmed bytecode's value, so it read the bytecode and compiled nothing."""
        src = _package(self.root, "mt_warm_b", body="VALUE = 'one'\n")
        bytecode.warm(self.prefix, ("mt_warm_b",), workers=1)
        st = os.stat(src)
        with open(src, "w", encoding="utf-8") as fh:
            fh.write("VALUE = 'two'\n")
        os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
        code = ("import sys; sys.path.insert(0, %r); sys.path.insert(0, %r); from moetune_agent.engine import bytecode; "
                "bytecode.enable(%r); import mt_warm_b; print(mt_warm_b.VALUE)"
                % (agenttest.AGENT_ROOT, self.root, self.prefix))
        child_env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        child_env.pop("PYTHONPYCACHEPREFIX", None)
        out = subprocess.run([sys.executable, "-c", code], env=child_env, stdout=subprocess.PIPE, check=True,
                             universal_newlines=True).stdout.strip()
        self.assertEqual(out, "one")

    def test_a_broken_source_is_counted_and_the_rest_compiled(self):
        srcs, _ = self._tree("mt_warm_c", n=6)
        broken = os.path.join(self.root, "mt_warm_c", "broken.py")
        with open(broken, "w", encoding="utf-8") as fh:
            fh.write("def (:\n")
        got = bytecode.warm(self.prefix, ("mt_warm_c",), workers=1)
        self.assertEqual((got["compiled"], got["failed"]), (len(srcs), 1))
        self.assertTrue(all(_prefix_valid(self.prefix, s) for s in srcs))

    def test_a_package_with_its_own_bytecode_is_left_alone(self):
        src = _package(self.root, "mt_warm_d")
        py_compile.compile(src, doraise=True)
        got = bytecode.warm(self.prefix, ("mt_warm_d",), workers=2)
        self.assertEqual((got["packages"], got["files"], got["workers"]), ([], 0, 0))
        self.assertIsNone(bytecode.warm(None, ("mt_warm_d",)))

    def test_past_its_cap_the_children_are_killed_and_no_marker_is_left(self):
        _package(self.root, "mt_warm_e")
        big = os.path.join(self.root, "mt_warm_e", "big.py")
        with open(big, "w", encoding="utf-8") as fh:  # ~2 s to compile on one core
            fh.write("".join("v%d = [%d, 'x' * %d, {%d: %d}]\n" % (i, i, i, i, i) for i in range(150000)))
        t0 = time.time()
        got = bytecode.warm(self.prefix, ("mt_warm_e",), workers=1, cap_s=0.2)
        self.assertTrue(got["capped"])
        self.assertLess(time.time() - t0, 1.5)
        again = bytecode.warm(self.prefix, ("mt_warm_e",), workers=1, cap_s=0.2)
        self.assertFalse(again["skipped"])  # not marked as done

    def test_a_schedulers_start_warms_and_reports_it(self):
        _package(self.root, "mt_warm_f")
        home = tempfile.mkdtemp(prefix="moetune-bytecode-home-")
        old = bytecode.WARM_PACKAGES
        bytecode.WARM_PACKAGES = ("mt_warm_f",)
        self.addCleanup(setattr, bytecode, "WARM_PACKAGES", old)
        with env(MOETUNE_PYCACHE="1", PYTHONPYCACHEPREFIX=""):
            s = Scheduler(DESC, [0], None, 0, home=home)
            try:
                s.start()
                s.info(["both"], [1])
                self.assertEqual((s.pycache_warm["packages"], s.pycache_warm["compiled"]), (["mt_warm_f"], 1))
                st = bytecode.stats(s.pycache, s.pycache_files_before, s.pycache_warm)
                self.assertEqual(st["warm"], s.pycache_warm)
            finally:
                s.close()


if __name__ == "__main__":
    unittest.main()


_PLANT_CHILD = r"""
import importlib, sys
sys.path.insert(0, sys.argv[1])  # the agent
sys.path.insert(0, sys.argv[2])  # the package folder
from moetune_agent.engine import bytecode
bytecode.enable(bytecode.host_prefix(sys.argv[3], ("mt_victim",)))
import mt_victim
print(mt_victim.WHO)
"""


class ForeignHome(unittest.TestCase):
    """Issue 42: a home, bytecode folder or compile cache another user can write into is never loaded
    from: a .pyc planted there does not run, and the refusal says why."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="moetune-foreign-")
        self.pkgs = os.path.join(self.tmp, "pkgs")
        os.makedirs(self.pkgs)
        with open(os.path.join(self.pkgs, "mt_victim.py"), "w", encoding="utf-8") as f:
            f.write("WHO = 'source'\n")

    def plant(self, home):
        """A .pyc of different code, trusted unchecked (PEP 552), where the prefix home/pycache puts
        mt_victim's bytecode."""
        prefix = os.path.join(home, bytecode.PYCACHE)
        os.makedirs(prefix, exist_ok=True)
        evil = os.path.join(self.tmp, "evil.py")
        with open(evil, "w", encoding="utf-8") as f:
            f.write("WHO = 'planted'\n")
        saved = sys.pycache_prefix
        sys.pycache_prefix = prefix
        try:
            pyc = importlib.util.cache_from_source(os.path.join(self.pkgs, "mt_victim.py"))
        finally:
            sys.pycache_prefix = saved
        os.makedirs(os.path.dirname(pyc), exist_ok=True)
        py_compile.compile(evil, cfile=pyc, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)

    def who(self, home):
        p = subprocess.run([sys.executable, "-c", _PLANT_CHILD, agenttest.AGENT_ROOT, self.pkgs, home],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, MOETUNE_PYCACHE="1", PYTHONPYCACHEPREFIX="",
                                    PYTHONDONTWRITEBYTECODE="1"))
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip(), p.stderr

    def test_the_plant_runs_from_a_private_home(self):
        # the TEST's own check that the plant works: from a home of ours, 0700, Python takes it
        home = os.path.join(self.tmp, "home")
        os.mkdir(home, 0o700)
        self.plant(home)
        os.chmod(os.path.join(home, bytecode.PYCACHE), 0o700)
        self.assertEqual(self.who(home)[0], "planted")

    def test_a_group_writable_home_is_refused(self):
        home = os.path.join(self.tmp, "home")
        os.mkdir(home)
        os.chmod(home, 0o775)  # umask 002, or a shared pre-created folder
        self.plant(home)
        who, err = self.who(home)
        self.assertEqual(who, "source")
        self.assertIn("no bytecode cache: the agent's home %s is writable by its group (mode 0775)" % home, err)

    def test_a_world_writable_bytecode_folder_is_refused(self):
        home = os.path.join(self.tmp, "home")
        os.mkdir(home, 0o700)
        self.plant(home)
        os.chmod(os.path.join(home, bytecode.PYCACHE), 0o777)
        who, err = self.who(home)
        self.assertEqual(who, "source")
        self.assertIn("the bytecode cache %s is writable by other users" % os.path.join(home, bytecode.PYCACHE), err)

    @unittest.skipUnless(os.geteuid() == 0, "chown to another user needs root")
    def test_a_home_of_another_user_is_refused(self):
        home = os.path.join(self.tmp, "home")
        os.mkdir(home, 0o700)
        self.plant(home)
        for dp, _dn, fns in os.walk(home):
            os.chown(dp, 4242, 4242)
            for f in fns:
                os.chown(os.path.join(dp, f), 4242, 4242)
        who, err = self.who(home)
        self.assertEqual(who, "source")
        self.assertIn("is owned by uid 4242, not by the user the agent runs as", err)

    def test_a_linked_home_is_refused(self):
        real = os.path.join(self.tmp, "real")
        os.mkdir(real, 0o700)
        self.plant(real)
        os.chmod(os.path.join(real, bytecode.PYCACHE), 0o700)
        home = os.path.join(self.tmp, "home")
        os.symlink(real, home)
        who, err = self.who(home)
        self.assertEqual(who, "source")
        self.assertIn("is a symbolic link", err)

    def test_a_new_home_and_its_folders_are_0700(self):
        old = os.umask(0o002)
        try:
            home = os.path.join(self.tmp, "a", "home")
            with env(MOETUNE_PYCACHE="1", PYTHONPYCACHEPREFIX=""):
                prefix = bytecode.host_prefix(home)
        finally:
            os.umask(old)
        self.assertEqual(prefix, os.path.join(home, bytecode.PYCACHE))
        for d in (os.path.join(self.tmp, "a"), home, prefix):
            self.assertEqual(os.stat(d).st_mode & 0o777, 0o700, d)

    def test_a_parent_others_can_write_is_refused(self):
        shared = os.path.join(self.tmp, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o777)  # not sticky: anyone could rename the home away and put theirs
        with env(MOETUNE_PYCACHE="1", PYTHONPYCACHEPREFIX=""):
            self.assertIsNone(bytecode.host_prefix(os.path.join(shared, "home")))
        self.assertFalse(os.path.exists(os.path.join(shared, "home")))
        os.chmod(shared, 0o1777)  # sticky, as /tmp: others cannot rename what is ours
        with env(MOETUNE_PYCACHE="1", PYTHONPYCACHEPREFIX=""):
            self.assertIsNotNone(bytecode.host_prefix(os.path.join(shared, "home")))
