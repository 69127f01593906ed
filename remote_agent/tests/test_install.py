# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""install-config: target folders, backup, refusal, dry-run, simulated refusal, atomicity under SIGKILL,
hostile paths. A fake SGLang/Triton install tree (plain folders on PYTHONPATH) stands in for the real
packages; the agent inspects it through the same child-interpreter probe it uses on a GPU host."""

import hashlib
import json
import os
import re
import resource
import signal
import stat
import subprocess
import time
import unittest

import agenttest
from moetune_agent.install import backups
from moetune_agent.install import installer as install
from moetune_agent.kernel_types import KernelConfig
from moetune_agent.serverconfig import configjson

NAME = "E=128,N=768,device_name=NVIDIA_H200.json"


def entries(bn):
    return {"1": KernelConfig(16, bn, 64, 1, 4, 3).as_dict(), "64": KernelConfig(16, bn, 128, 1, 4, 3).as_dict()}


def measured_over(path, bn):
    """What a run that timed the file at path (its default) against entries(bn) records, rows faster at
    every size: install-config replaces only measured rows (issue 20), so these tests of the install's
    mechanics hand it results that measured the file they replace."""
    if path is None:
        return {}
    with open(path, "rb") as f:
        data = f.read()
    old, _ = configjson.parse_config_text(data.decode())
    rows = [{"m": int(m), "ops": ["both"], "decision": "tuned_faster", "chosen_default": False, "speedup": 1.2,
             "median_us": 10.0, "default_median_us": 12.0, "rounds": 5,
             "chosen": {"configs": {"both": cfg}}, "default": {"configs": {"both": old[configjson.nearest_key(
                 old, int(m))]}}} for m, cfg in entries(bn).items()]
    return {"ops": ["both"], "head_to_head": rows, "shape": {"E": 128, "N": 768, "K": 2048},
            "default_source": {"kind": "file", "path": path, "sha256": hashlib.sha256(data).hexdigest()}}


class InstallCase(agenttest.AgentCase):
    def setUp(self):
        super().setUp()
        self.site = os.path.join(self.tmp, "site")
        os.makedirs(os.path.join(self.site, "triton"))
        with open(os.path.join(self.site, "triton", "__init__.py"), "w") as f:
            f.write('__version__ = "3.6.0"\n')
        self.sg_root = os.path.join(self.site, "sglang", "srt", "layers", "moe", "fused_moe_triton", "configs")
        os.makedirs(os.path.join(self.sg_root, "triton_3_4_0"))
        with open(os.path.join(self.site, "sglang", "__init__.py"), "w") as f:
            f.write('__version__ = "0.5.0"\n')
        self.env["PYTHONPATH"] = agenttest.AGENT_ROOT + os.pathsep + self.site
        self.env.pop("SGLANG_MOE_CONFIG_DIR", None)
        self.env.pop("VLLM_TUNED_CONFIG_FOLDER", None)

    def result_file(self, bn=64, simulated=False, name=NAME):
        res = {"format": "moetune-result", "version": 1, "simulated": simulated, "triton_version": "3.6.0",
               "files": [{"framework": "sglang", "kind": "sglang", "file_name": name, "entries": entries(bn)},
                         {"framework": "vllm", "kind": "vllm", "file_name": name, "entries": entries(bn)}]}
        res.update(measured_over(self.file_there(name), bn))
        path = os.path.join(self.tmp, "result-%d.json" % bn)
        with open(path, "w") as f:
            json.dump(res, f)
        return path

    def file_there(self, name):
        """The file a result made now would be installed over (these tests' targets), or None."""
        for p in (getattr(self, "target", None), os.path.join(self.sg_root, "triton_3_6_0", name)):
            if p and os.path.isfile(p):
                return p
        return None

    def expected_text(self, bn, dialect="sglang"):
        return configjson.format_config_text({int(k): v for k, v in entries(bn).items()}, dialect,
                                             "3.6.0" if dialect == "vllm" else None)


class Sglang(InstallCase):
    def test_creates_folder_for_installed_triton(self):
        r = self.run_agent("install-config", self.result_file(), "--framework", "sglang")
        self.assertEqual(r.rc, 0, r.lines)
        ev = r.one("installed")
        folder = os.path.join(self.sg_root, "triton_3_6_0")
        self.assertEqual(ev["target"], os.path.join(folder, NAME))
        self.assertEqual(ev["created_folder"], folder)
        self.assertIsNone(ev["backup"])
        with open(ev["target"]) as f:
            self.assertEqual(f.read(), self.expected_text(64))
        self.assertEqual(sorted(os.listdir(folder)), [NAME])     # no temp file left behind

    def test_refuses_then_replaces_with_backup(self):
        self.run_agent("install-config", self.result_file(64), "--framework", "sglang")
        target = os.path.join(self.sg_root, "triton_3_6_0", NAME)
        r = self.run_agent("install-config", self.result_file(128), "--framework", "sglang")
        self.assertEqual(r.rc, 1)
        self.assertEqual(r.one("error")["code"], "exists")
        self.assertIn("--replace", r.one("error")["message"])
        with open(target) as f:
            self.assertEqual(f.read(), self.expected_text(64))
        r = self.run_agent("install-config", self.result_file(128), "--framework", "sglang", "--replace")
        self.assertEqual(r.rc, 0)
        ev = r.one("installed")
        with open(ev["backup"]) as f:
            self.assertEqual(f.read(), self.expected_text(64))
        self.assertTrue(os.path.basename(ev["backup"]).startswith(NAME + ".bak-"))
        with open(target) as f:
            self.assertEqual(f.read(), self.expected_text(128))
        # Same bytes again: nothing to replace, no new backup.
        r = self.run_agent("install-config", self.result_file(128), "--framework", "sglang")
        self.assertTrue(r.one("installed")["unchanged"])
        self.assertEqual(len([n for n in os.listdir(os.path.dirname(target)) if ".bak-" in n]), 1)

    def test_dry_run_changes_nothing(self):
        self.run_agent("install-config", self.result_file(64), "--framework", "sglang")
        target = os.path.join(self.sg_root, "triton_3_6_0", NAME)
        before = os.stat(target).st_mtime_ns
        r = self.run_agent("install-config", self.result_file(128), "--framework", "sglang", "--dry-run")
        self.assertEqual(r.rc, 0)
        d = r.one("diff")
        self.assertTrue(d["exists"] and d["changed"])
        self.assertEqual(d["refused"], "exists")
        self.assertIn('-        "BLOCK_SIZE_N": 64,', d["diff"])
        self.assertIn('+        "BLOCK_SIZE_N": 128,', d["diff"])
        self.assertEqual(os.stat(target).st_mtime_ns, before)
        self.assertEqual(r.of("installed"), [])

    def test_refuses_simulated(self):
        r = self.run_agent("install-config", self.result_file(simulated=True), "--framework", "sglang")
        self.assertEqual(r.one("error")["code"], "simulated")
        self.assertFalse(os.path.exists(os.path.join(self.sg_root, "triton_3_6_0")))
        sim = os.path.join(self.tmp, "E=128,N=768,device_name=SIMULATED_GPU.json")
        with open(sim, "w") as f:
            f.write(self.expected_text(64))
        r = self.run_agent("install-config", sim, "--framework", "sglang")
        self.assertEqual(r.one("error")["code"], "simulated")

    def test_simulated_only_into_a_marked_test_double_tree(self):
        """A simulated run installs only into a tree whose top holds the fixture's marker file; the old
        environment switch does nothing, and a marker that is a link or says anything else does not count."""
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1])), "--foreground")
        run_id = r.one("run_started")["run_id"]
        fake = os.path.join(self.tmp, "fake server")
        target = os.path.join(fake, "configs", "triton_3_6_0")
        os.makedirs(fake)
        marker = os.path.join(fake, install.TEST_DOUBLE_MARKER)
        other = os.path.join(self.tmp, "elsewhere")
        with open(other, "wb") as f:
            f.write(install.TEST_DOUBLE_TEXT)

        def plant(kind):
            if os.path.lexists(marker):
                os.unlink(marker)
            if kind == "link":
                os.symlink(other, marker)
            elif kind is not None:
                with open(marker, "wb") as f:
                    f.write(install.TEST_DOUBLE_TEXT if kind == "exact" else kind)

        refused = [("no marker", None, {}),
                   ("the old environment switch", None, {"MOETUNE_TEST_ALLOW_SIMULATED_INSTALL": "1"}),
                   ("empty marker", b"", {}),
                   ("other text", b"test double\n", {}),
                   ("marker is a symlink", "link", {})]
        for what, kind, env in refused:
            with self.subTest(what):
                plant(kind)
                self.env.update(env)
                try:
                    r = self.run_agent("install-config", run_id, "--framework", "sglang", "--root", target)
                finally:
                    for k in env:
                        self.env.pop(k, None)
                self.assertEqual(r.rc, 1, r.lines)
                err = r.one("error")
                self.assertEqual(err["code"], "simulated")
                self.assertIn("only a test fixture's fake server tree, marked by a .moetune-test-double file",
                              err["message"])
                self.assertFalse(os.path.exists(target))
        plant("exact")
        r = self.run_agent("install-config", run_id, "--framework", "sglang", "--root", target)
        self.assertEqual(r.rc, 0, r.lines)
        ev = r.of("installed")
        self.assertTrue(ev and all(e["test_double"] == marker for e in ev), ev)
        self.assertEqual(sorted(os.listdir(target)), sorted(e["file_name"] for e in ev))
        # The marker of one tree does not open another one.
        r = self.run_agent("install-config", run_id, "--framework", "sglang", "--root", os.path.join(self.tmp, "y"))
        self.assertEqual(r.one("error")["code"], "simulated")

    def test_dry_run_of_a_simulated_run_previews_the_refusal(self):
        """The preview of a refused push still shows the folder and the diff: every file says refused
        'simulated' with the sentence, nothing is written, and the real install still refuses."""
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1])), "--foreground")
        run_id = r.one("run_started")["run_id"]
        target = os.path.join(self.tmp, "real", "triton_3_6_0")
        r = self.run_agent("install-config", run_id, "--framework", "sglang", "--root", target, "--dry-run")
        self.assertEqual(r.rc, 0, r.lines)
        diffs = r.of("diff")
        self.assertTrue(diffs, r.lines)
        for d in diffs:
            self.assertEqual(d["refused"], "simulated", d)
            self.assertIn("simulated run", d["refused_message"])
            self.assertTrue(d["target"].startswith(target + os.sep), d)
            self.assertIn("+{", d["diff"].replace(" ", "").replace("\n", ""))
        self.assertFalse(os.path.exists(target))
        r = self.run_agent("install-config", run_id, "--framework", "sglang", "--root", target)
        self.assertEqual(r.one("error")["code"], "simulated")
        self.assertFalse(os.path.exists(target))

    def test_practice_server_marker(self):
        """The app's practice server marks its tree with the practice text (the bytes of
        src/remote/hosts/practiceserver.cpp): a simulated run installs there, as into a test
        fixture's tree."""
        src = os.path.join(agenttest.AGENT_ROOT, "..", "src", "remote", "hosts", "practiceserver.cpp")
        with open(src, encoding="utf-8") as f:
            cpp = f.read()
        pieces = re.findall(r'"([^"]*)"', cpp.split("kPracticeMarkerText", 1)[1].split('";', 1)[0] + '"')
        self.assertEqual("".join(pieces).replace("\\n", "\n").encode(), install.PRACTICE_DOUBLE_TEXT)
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1])), "--foreground")
        run_id = r.one("run_started")["run_id"]
        practice = os.path.join(self.tmp, "practice-server")
        target = os.path.join(practice, "configs", "triton_3_6_0")
        os.makedirs(practice)
        with open(os.path.join(practice, install.TEST_DOUBLE_MARKER), "wb") as f:
            f.write(install.PRACTICE_DOUBLE_TEXT)
        r = self.run_agent("install-config", run_id, "--framework", "sglang", "--root", target)
        self.assertEqual(r.rc, 0, r.lines)
        self.assertTrue(r.of("installed"))

    def test_refuses_a_simulated_run_folder(self):
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1])), "--foreground")
        run_id = r.one("run_started")["run_id"]
        r = self.run_agent("install-config", run_id, "--framework", "sglang", "--root", os.path.join(self.tmp, "x"))
        self.assertEqual(r.one("error")["code"], "simulated")

    def test_invalid_config_file(self):
        bad = os.path.join(self.tmp, NAME)
        with open(bad, "w") as f:
            f.write('{"1": {"BLOCK_SIZE_M": 16}}')
        r = self.run_agent("install-config", bad, "--framework", "sglang")
        self.assertEqual(r.one("error")["code"], "invalid_config")
        self.assertIn("BLOCK_SIZE_N", r.one("error")["message"])

    def test_duplicate_batch_size_refused(self):
        bad = os.path.join(self.tmp, NAME)
        one = json.dumps(KernelConfig(16, 64, 64, 1, 4, 3).as_dict())
        with open(bad, "w") as f:
            f.write('{"1": %s, "64": %s, "1": %s}' % (one, one, one))
        r = self.run_agent("install-config", bad, "--framework", "sglang", "--root", os.path.join(self.tmp, "r"))
        self.assertEqual(r.one("error")["code"], "invalid_config")
        self.assertIn("'1' appears twice", r.one("error")["message"])

    def test_sglang_moe_config_dir(self):
        d = os.path.join(self.tmp, "my configs")
        r = self.run_agent("install-config", self.result_file(), "--framework", "sglang",
                           env={"SGLANG_MOE_CONFIG_DIR": d})
        self.assertEqual(r.one("installed")["target"], os.path.join(d, "configs", "triton_3_6_0", NAME))

    def test_hostile_root_paths(self):
        for i, name in enumerate(["with space", "quote'\"s", "$(touch PWNED)", "semi;colon && rm -rf x",
                                  "new\nline", "`id`"]):
            with self.subTest(name=name):
                root = os.path.join(self.tmp, "r%d" % i, name, "triton_3_6_0")
                r = self.run_agent("install-config", self.result_file(), "--framework", "sglang", "--root", root)
                self.assertEqual(r.rc, 0, r.lines)
                self.assertEqual(r.one("installed")["target"], os.path.join(root, NAME))
                with open(os.path.join(root, NAME)) as f:
                    self.assertEqual(f.read(), self.expected_text(64))
        for dirpath, _, files in os.walk(self.tmp):
            self.assertNotIn("PWNED", files, dirpath)
        self.assertFalse(os.path.exists(os.path.join(agenttest.AGENT_ROOT, "PWNED")))

    def test_sigkill_mid_write_leaves_old_file(self):
        self.run_agent("install-config", self.result_file(64), "--framework", "sglang")
        folder = os.path.join(self.sg_root, "triton_3_6_0")
        target = os.path.join(folder, NAME)
        env = dict(self.env, MOETUNE_TEST_INSTALL_PAUSE_S="30")
        p = subprocess.Popen(self.cmd() + ["install-config", self.result_file(128), "--framework", "sglang",
                                           "--replace"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # the new file's half-written temporary (the backup's whole one comes and goes before it)
            self.wait_for(lambda: any(n.startswith("." + NAME + ".moetune-tmp-") for n in os.listdir(folder)),
                          what="half-written temp")
            p.send_signal(signal.SIGKILL)
            p.wait(10)
        finally:
            if p.poll() is None:
                p.kill()
            p.stdout.close()
            p.stderr.close()
        with open(target) as f:
            self.assertEqual(f.read(), self.expected_text(64))   # the server still reads a whole old file
        r = self.run_agent("install-config", self.result_file(128), "--framework", "sglang", "--replace")
        self.assertEqual(r.rc, 0)
        with open(target) as f:
            self.assertEqual(f.read(), self.expected_text(128))
        self.assertEqual([n for n in os.listdir(folder) if ".moetune-tmp-" in n], [])   # stale temp cleaned

    def test_permission_denied(self):
        ro = os.path.join(self.tmp, "ro")
        os.makedirs(ro)
        os.chmod(ro, 0o555)
        self.addCleanup(os.chmod, ro, 0o755)
        src = self.result_file()
        prefix = []
        if os.geteuid() == 0:
            # Root ignores permissions: run the agent as the unprivileged user "nobody", as on a real host.
            import shutil
            if not shutil.which("setpriv"):
                self.skipTest("running as root without setpriv: cannot drop privileges")
            for dirpath, _, files in os.walk(self.tmp):
                os.chmod(dirpath, 0o755 if dirpath != ro else 0o555)
                for f in files:
                    os.chmod(os.path.join(dirpath, f), 0o644)
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        p = subprocess.run(prefix + self.cmd() + ["install-config", src, "--framework", "sglang", "--root",
                                                  os.path.join(ro, "triton_3_6_0")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, cwd="/")
        r = self.parse(p.returncode, p.stdout.decode(), p.stderr.decode())
        self.assertEqual(r.rc, 1)
        self.assertEqual(r.one("error")["code"], "permission_denied")
        self.assertIn("never uses root", r.one("error")["message"])


class Hardening(InstallCase):
    """Issue 10: a shared config folder with planted links, racing installs, failing disks, a synthetic run
    that names a real GPU. Each of these broke before the fix."""

    def setUp(self):
        super().setUp()
        self.shared = os.path.join(self.tmp, "shared", "triton_3_6_0")  # a folder others can write to
        os.makedirs(self.shared)
        self.target = os.path.join(self.shared, NAME)
        self.victim = os.path.join(self.tmp, "victim.txt")
        with open(self.victim, "w") as f:
            f.write("precious\n")

    def install(self, *extra, **kw):
        return self.run_agent("install-config", self.result_file(kw.pop("bn", 64)), "--framework", "sglang",
                              "--root", self.shared, *extra, **kw)

    def victim_text(self):
        with open(self.victim) as f:
            return f.read()

    def test_planted_temp_and_backup_links_redirect_nothing(self):
        # An attacker who can write the folder plants links at every name a predictable writer would use:
        # the temporary names of the next few thousand pids and the backup names of the next seconds.
        with open("/proc/sys/kernel/ns_last_pid") as f:
            last = int(f.read())
        for pid in range(last + 1, last + 3000):
            os.symlink(self.victim, os.path.join(self.shared, ".%s.moetune-tmp-%d" % (NAME, pid)))
        r = self.install()
        self.assertEqual(r.rc, 0, r.lines)
        self.assertEqual(self.victim_text(), "precious\n")          # the other file is not overwritten
        st = os.lstat(self.target)
        self.assertTrue(stat.S_ISREG(st.st_mode), "the installed name must be a regular file")
        with open(self.target) as f:
            self.assertEqual(f.read(), self.expected_text(64))
        now = time.time()
        for dt in range(0, 8):
            stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now + dt))
            os.symlink(self.victim, "%s.bak-%s" % (self.target, stamp))
        r = self.install("--replace", bn=128)
        self.assertEqual(r.rc, 0, r.lines)
        self.assertEqual(self.victim_text(), "precious\n")
        backup = r.one("installed")["backup"]
        self.assertTrue(stat.S_ISREG(os.lstat(backup).st_mode))
        with open(backup) as f:
            self.assertEqual(f.read(), self.expected_text(64))
        self.assertTrue(stat.S_ISREG(os.lstat(self.target).st_mode))

    def test_symlink_target_refused_unless_named(self):
        real = os.path.join(self.tmp, "elsewhere", NAME)
        os.makedirs(os.path.dirname(real))
        with open(real, "w") as f:
            f.write(self.expected_text(64))
        os.symlink(real, self.target)
        for extra in ((), ("--replace",)):
            with self.subTest(extra=extra):
                r = self.install(*extra, bn=128)
                self.assertEqual(r.rc, 1, r.lines)
                e = r.one("error")
                self.assertEqual(e["code"], "symlink_target")
                self.assertIn("--through-symlink", e["message"])
                self.assertTrue(os.path.islink(self.target))
                with open(real) as f:
                    self.assertEqual(f.read(), self.expected_text(64))
        d = self.install("--dry-run", bn=128).one("diff")
        self.assertEqual((d["refused"], d["symlink"]), ("symlink_target", True))
        r = self.install("--replace", "--through-symlink", bn=128)
        self.assertEqual(r.rc, 0, r.lines)
        self.assertEqual(r.one("installed")["target"], real)
        self.assertTrue(os.path.islink(self.target))                 # the user's link stays
        with open(real) as f:
            self.assertEqual(f.read(), self.expected_text(128))
        self.assertTrue(stat.S_ISREG(os.lstat(real).st_mode))

    def test_two_concurrent_installs_without_replace(self):
        # Both pass the "does it exist?" look before either has written (the pause holds each one
        # half-way through its temporary file): only one may put its file in place.
        env = dict(self.env, MOETUNE_TEST_INSTALL_PAUSE_S="1.5")
        procs = [subprocess.Popen(self.cmd() + ["install-config", self.result_file(bn), "--framework", "sglang",
                                                "--root", self.shared], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE) for bn in (64, 128)]
        res = []
        for p in procs:
            out, err = p.communicate(timeout=60)
            res.append(self.parse(p.returncode, out.decode(), err.decode()))
        rcs = sorted(r.rc for r in res)
        self.assertEqual(rcs, [0, 1], [r.lines for r in res])
        loser = [r for r in res if r.rc == 1][0]
        winner = res.index([r for r in res if r.rc == 0][0])
        # The folder lock (issue 23) makes the loser fail at once while the winner holds it; "exists" when it came
        # after the winner had finished.
        self.assertIn(loser.one("error")["code"], ("locked", "exists"))
        with open(self.target) as f:
            self.assertEqual(f.read(), self.expected_text((64, 128)[winner]))
        self.assertEqual(sorted(os.listdir(self.shared)), [NAME])   # no temporaries, no backups

    def run_limited(self, fsize, *args):
        """The agent with RLIMIT_FSIZE: every write past fsize bytes fails (EFBIG), like a full disk."""
        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        p = subprocess.run(self.cmd() + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
                           preexec_fn=limit, timeout=60)
        return self.parse(p.returncode, p.stdout.decode(), p.stderr.decode())

    def test_kill_while_backing_up_leaves_nothing_behind(self):
        # A writer killed between its backup's temporary file and the link leaves that temporary: the next
        # install removes it (its writer's pid is gone) and the server's file was never touched.
        self.assertEqual(self.install().rc, 0)
        stale = os.path.join(self.shared, ".%s.bak.moetune-tmp-%d-%s" % (NAME, 2 ** 22 + 7, "ab" * 8))
        with open(stale, "w") as f:
            f.write("half a backup")
        r = self.install("--replace", bn=128)
        self.assertEqual(r.rc, 0, r.lines)
        self.assertFalse(os.path.exists(stale))
        self.assertEqual(len([n for n in os.listdir(self.shared) if "moetune-tmp" in n]), 0)

    def test_failed_backup_leaves_no_empty_file(self):
        self.assertEqual(self.install().rc, 0)
        r = self.run_limited(100, "install-config", self.result_file(128), "--framework", "sglang", "--root",
                             self.shared, "--replace")
        self.assertEqual(r.rc, 1, r.lines)
        self.assertEqual(r.one("error")["code"], "io")
        self.assertEqual(sorted(os.listdir(self.shared)), [NAME])   # no 0-byte backup, no temporary
        with open(self.target) as f:
            self.assertEqual(f.read(), self.expected_text(64))

    def test_failed_install_into_a_new_folder_leaves_no_folder(self):
        top = os.path.join(self.tmp, "brand new")
        r = self.run_limited(100, "install-config", self.result_file(64), "--framework", "sglang", "--root",
                             os.path.join(top, "configs", "triton_3_6_0"))
        self.assertEqual(r.rc, 1, r.lines)
        self.assertEqual(r.one("error")["code"], "io")
        self.assertFalse(os.path.exists(top), "the folders created for the failed install are still there")

    def test_backups_are_pruned(self):
        self.assertEqual(self.install().rc, 0)
        for i, bn in enumerate((128, 256, 32, 64, 128, 256)):
            r = self.install("--replace", "--keep-backups", "3", bn=bn)
            self.assertEqual(r.rc, 0, r.lines)
            ev = r.one("installed")
            self.assertEqual(ev["keep_backups"], 3)
            self.assertEqual(ev["backups_kept"], min(i + 1, 3))
            self.assertEqual(len(ev["backups_pruned"]), 1 if i >= 3 else 0)
        # By name, not by mtime: six installs fit in one tick of a file system's coarse clock, so their
        # mtimes can be equal (this test failed 1 run in 6 that way); the names order them exactly.
        baks = [n for n in os.listdir(self.shared) if ".bak-" in n]
        self.assertEqual(len(baks), 3)
        self.assertEqual(sorted(os.path.join(self.shared, n) for n in baks), sorted(install.backups_of(self.target)))
        texts = []
        for n in baks:
            with open(os.path.join(self.shared, n)) as f:
                texts.append(f.read())
        # The newest three replaced versions remain: 32, 64, 128 (installed before the last three replaces).
        self.assertEqual(sorted(texts), sorted(self.expected_text(bn) for bn in (32, 64, 128)))

    def test_backups_in_one_second_keep_their_order_across_prunes(self):
        # Many installs within one second (a script, two clients): a number freed by a prune must not be
        # given to the next backup, or that newest backup sorts as the oldest and the next prune removes it.
        target = os.path.join(self.tmp, "one-second.json")
        real = backups._backup_stamp
        backups._backup_stamp = lambda: "20261201-150000"
        try:
            made = []
            for i in range(6):
                made.append(backups.make_backup(target, b"version %d" % i, 0o644))
                install.prune_backups(target, 3)
        finally:
            backups._backup_stamp = real
        kept = install.backups_of(target)
        self.assertEqual(kept, made[-3:])
        contents = []
        for p in kept:
            with open(p, "rb") as f:
                contents.append(f.read())
        self.assertEqual(contents, [b"version 3", b"version 4", b"version 5"])

    def test_synthetic_run_naming_a_real_gpu_is_refused(self):
        spec = agenttest.small_spec(batch_sizes=[1, 64], device_name="NVIDIA_H200")
        r = self.run_agent("tune", self.write_spec(spec), "--foreground")
        self.assertEqual(r.of("done")[-1]["status"], "ok", r.lines[-3:])
        run_dir = self.run_dir(r.one("run_started")["run_id"])
        per_file = os.path.join(run_dir, "sglang", NAME.replace("E=128,N=768", "E=64,N=512"))
        self.assertTrue(os.path.isfile(per_file), os.listdir(os.path.join(run_dir, "sglang")))
        # Every file the run wrote says so.
        with open(os.path.join(run_dir, "result.json")) as f:
            self.assertTrue(json.load(f)["simulated"])
        for rec in agenttest.read_jsonl(os.path.join(run_dir, "journal.jsonl")):
            self.assertTrue(rec.get("simulated"), rec)
        self.assertTrue(os.path.isfile(os.path.join(run_dir, "SIMULATED")))
        # Tampered: result.json claims measured; the journal and the marker still tell.
        with open(os.path.join(run_dir, "result.json")) as f:
            res = json.load(f)
        res["simulated"] = False
        with open(os.path.join(run_dir, "result.json"), "w") as f:
            json.dump(res, f)
        for src in (per_file, run_dir, os.path.join(run_dir, "result.json"), os.path.basename(run_dir)):
            with self.subTest(src=src):
                r = self.run_agent("install-config", src, "--framework", "sglang", "--root", self.shared)
                self.assertEqual(r.rc, 1, r.lines)
                self.assertEqual(r.one("error")["code"], "simulated")
        self.assertEqual(os.listdir(self.shared), [])


class PreviewedPlan(InstallCase):
    """Issue 40 item 6 and issue 42 item 4: a push installs exactly the plan its preview showed (the sha256
    of each file there, or its absence, and of the bytes to write) or nothing; compare before replace."""

    def setUp(self):
        super().setUp()
        self.folder = os.path.join(self.tmp, "cfg", "triton_3_6_0")
        os.makedirs(self.folder)
        self.target = os.path.join(self.folder, NAME)

    def preview(self, src):
        r = self.run_agent("install-config", src, "--framework", "sglang", "--root", self.folder, "--replace",
                           "--dry-run")
        self.assertEqual(r.rc, 0, r.lines)
        d = r.one("diff")
        return ["--expect-old", "%s=%s" % (d["file_name"], d["old_sha256"] or "absent"),
                "--expect-new", "%s=%s" % (d["file_name"], d["new_sha256"])], d

    def push(self, src, expect):
        return self.run_agent("install-config", src, "--framework", "sglang", "--root", self.folder, "--replace",
                              *expect)

    def test_the_previewed_plan_is_installed(self):
        src = self.result_file(64)
        expect, d = self.preview(src)
        self.assertIsNone(d["old_sha256"])
        r = self.push(src, expect)
        self.assertEqual(r.rc, 0, r.lines)
        ev = r.one("installed")
        self.assertEqual(ev["sha256"], d["new_sha256"])
        self.assertIsNone(ev["previous_sha256"])
        # A replace names the bytes it replaced.
        src2 = self.result_file(128)
        expect2, d2 = self.preview(src2)
        self.assertEqual(d2["old_sha256"], ev["sha256"])
        r = self.push(src2, expect2)
        self.assertEqual(r.rc, 0, r.lines)
        self.assertEqual(r.one("installed")["previous_sha256"], ev["sha256"])

    def test_file_changed_between_preview_and_push_installs_nothing(self):
        src = self.result_file(64)
        expect, _ = self.preview(src)
        with open(self.target, "w") as f:  # saved by hand after the preview
            f.write(self.expected_text(256))
        r = self.push(src, expect)
        self.assertEqual(r.rc, 1, r.lines)
        err = r.one("error")
        self.assertEqual(err["code"], "changed_since_preview")
        self.assertIn("changed between the preview and the push", err["message"])
        self.assertIn(self.target, err["message"])
        self.assertEqual(r.of("installed"), [])
        with open(self.target) as f:
            self.assertEqual(f.read(), self.expected_text(256))
        self.assertEqual(sorted(os.listdir(self.folder)), [NAME])  # no backup, no temporary file

    def test_second_of_two_pushes_of_one_preview_installs_nothing(self):
        src = self.result_file(64)
        expect, _ = self.preview(src)
        self.assertEqual(self.push(src, expect).rc, 0)
        r = self.push(src, expect)  # the other engineer's push of the same preview, just after
        self.assertEqual(r.rc, 1, r.lines)
        self.assertEqual(r.one("error")["code"], "changed_since_preview")
        self.assertEqual(r.of("installed"), [])

    def test_two_concurrent_pushes_one_installs(self):
        src = self.result_file(64)
        expect, _ = self.preview(src)
        env = dict(self.env, MOETUNE_TEST_INSTALL_PAUSE_S="1.0")
        procs = [subprocess.Popen(self.cmd() + ["install-config", src, "--framework", "sglang", "--root",
                                                self.folder, "--replace"] + expect, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        res = []
        for p in procs:
            out, err = p.communicate(timeout=60)
            res.append(self.parse(p.returncode, out.decode(), err.decode()))
        self.assertEqual(sorted(r.rc for r in res), [0, 1], [r.lines for r in res])
        loser = [r for r in res if r.rc == 1][0]
        self.assertIn(loser.one("error")["code"], ("locked", "changed_since_preview"))
        self.assertEqual(loser.of("installed"), [])

    def test_a_plan_that_differs_is_refused(self):
        src = self.result_file(64)
        expect, _ = self.preview(src)
        expect[3] = expect[3][:-64] + "0" * 64
        r = self.push(src, expect)
        self.assertEqual(r.one("error")["code"], "changed_since_preview")
        self.assertIn("not the previewed ones", r.one("error")["message"])
        self.assertFalse(os.path.exists(self.target))

    def test_compare_before_replace(self):
        """A file saved between the install's read and its rename is kept, not lost (issue 42 item 4)."""
        with open(self.target, "w") as f:
            f.write(self.expected_text(64))
        plan = install._Plan(self.folder, NAME, self.expected_text(128).encode(), False)
        real_write_temp = backups.write_temp  # the backup's temporary file is the first one written

        def save_meanwhile(*a, **kw):
            with open(self.target, "w") as f:  # an editor saves while the install writes its temporary file
                f.write(self.expected_text(256))
            return real_write_temp(*a, **kw)

        backups.write_temp = save_meanwhile
        try:
            with self.assertRaises(install.ChangedMeanwhile):
                install._write_one(plan, True, 0)
        finally:
            backups.write_temp = real_write_temp
        with open(self.target) as f:
            self.assertEqual(f.read(), self.expected_text(256))
        self.assertEqual(sorted(os.listdir(self.folder)), [NAME])  # its backup was taken back, no temporary

    def test_changed_before_the_backup(self):
        with open(self.target, "w") as f:
            f.write(self.expected_text(64))
        plan = install._Plan(self.folder, NAME, self.expected_text(128).encode(), False)
        with open(self.target, "w") as f:
            f.write(self.expected_text(256))
        with self.assertRaises(install.ChangedMeanwhile):
            install._write_one(plan, True, 0)
        with open(self.target) as f:
            self.assertEqual(f.read(), self.expected_text(256))
        self.assertEqual(sorted(os.listdir(self.folder)), [NAME])


class RecordedH200(InstallCase):
    """A real result.json recorded on an H200 (tools/h200_e2e) installs as the server expects."""

    def test_up_and_down_files(self):
        src = os.path.join(agenttest.AGENT_ROOT, "tools", "h200_e2e", "up_down_result.json")
        with open(src) as f:
            res = json.load(f)
        self.assertFalse(res["simulated"])
        root = os.path.join(self.tmp, "root", "triton_3_6_0")
        r = self.run_agent("install-config", src, "--framework", "sglang", "--root", root)
        self.assertEqual(r.rc, 0, r.lines)
        self.assertEqual(sorted(os.listdir(root)), ["E=128,N=768,device_name=NVIDIA_H200.json",
                                                    "E=128,N=768,device_name=NVIDIA_H200_down.json"])
        with open(os.path.join(root, "E=128,N=768,device_name=NVIDIA_H200.json")) as f:
            up, _ = configjson.parse_config_text(f.read())
        with open(os.path.join(root, "E=128,N=768,device_name=NVIDIA_H200_down.json")) as f:
            down, _ = configjson.parse_config_text(f.read())
        self.assertEqual(sorted(up), [16, 256])
        for m in up:
            self.assertEqual(up[m]["BLOCK_SIZE_M"], down[m]["BLOCK_SIZE_M"])
        want = {(w["op"], w["m"]): w["config"] for w in res["winners"]}
        self.assertEqual(up[256], want[("up", 256)])


class Vllm(InstallCase):
    def test_user_folder_and_dialect(self):
        d = os.path.join(self.tmp, "vllm tuned")
        os.makedirs(d)
        src = os.path.join(self.tmp, "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json")
        with open(src, "w") as f:
            f.write(self.expected_text(128))
        r = self.run_agent("install-config", src, "--framework", "vllm", env={"VLLM_TUNED_CONFIG_FOLDER": d})
        self.assertEqual(r.rc, 0, r.lines)
        # vLLM looks the name up without the space.
        self.assertEqual(os.listdir(d), ["E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"])

    def test_result_uses_vllm_format(self):
        d = os.path.join(self.tmp, "vl")
        os.makedirs(d)
        r = self.run_agent("install-config", self.result_file(), "--framework", "vllm", "--root", d)
        with open(r.one("installed")["target"]) as f:
            self.assertEqual(f.read(), self.expected_text(64, "vllm"))

    def test_int8_w8a8_file_gets_vllms_name(self):
        d = os.path.join(self.tmp, "vl8")
        os.makedirs(d)
        src = os.path.join(self.tmp, "E=8,N=7168,device_name=NVIDIA_A100-SXM4-80GB,dtype=int8_w8a8.json")
        with open(src, "w") as f:
            f.write(self.expected_text(64))
        r = self.run_agent("install-config", src, "--framework", "vllm", "--root", d)
        self.assertEqual(r.rc, 0, r.lines)
        self.assertEqual(os.listdir(d), ["E=8,N=7168,device_name=NVIDIA_A100-SXM4-80GB.json"])   # vLLM's lookup

    def test_down_file_refused(self):
        src = os.path.join(self.tmp, "E=128,N=768,device_name=NVIDIA_H200_down.json")
        with open(src, "w") as f:
            f.write(self.expected_text(64))
        r = self.run_agent("install-config", src, "--framework", "vllm", "--root", self.tmp)
        self.assertEqual(r.one("error")["code"], "invalid_config")


if __name__ == "__main__":
    unittest.main()
