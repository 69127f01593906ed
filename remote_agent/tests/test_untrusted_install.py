# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 23, the agent's half, for install-config: result.json names that are paths, FIFOs and
directories at the target name, oversized inputs, two installs racing with --replace, invalid
config keys, malformed result.json shapes, a disk that fills after the backup was made."""

import hashlib
import json
import os
import resource
import socket
import subprocess
import unittest

from untrusted import NAME, Case, limit_memory, entries, text_of  # first: puts the agent on sys.path
from moetune_agent import safefile
from moetune_agent.install import installer as install
from moetune_agent.kernel_types import KernelConfig
from moetune_agent.serverconfig import configjson


class ResultNames(Case):
    """Item 1: every file name of a result.json must be a config name of the server, and land inside the
    target folder; the old code wrote wherever the name said (and replaced any file with --replace)."""

    def test_names_that_leave_the_folder_or_are_no_config_name(self):
        os.makedirs(self.root)
        outside = os.path.join(self.tmp, "outside")
        os.makedirs(outside)
        os.symlink(outside, os.path.join(self.root, "link"))
        rel = os.path.relpath(self.victim, self.root)
        rows = [("absolute path", self.victim),
                ("dot-dot to a file", rel),
                ("dot-dot, then a config name", os.path.join("..", "..", NAME)),
                ("absolute config name", os.path.join(outside, NAME)),
                ("through a symlinked folder", os.path.join("link", NAME)),
                ("newline in the name", "E=128,N=768,device_name=NVIDIA\nH200.json"),
                ("trailing newline", NAME + "\n"),
                ("NUL in the name", "E=128,N=768,device_name=NVIDIA\x00H200.json"),
                ("backslash", "..\\" + NAME),
                ("not a config name", "victim.txt"),
                ("vLLM spelling for SGLang", "E=1,N=2,device_name=X,dtype=fp8_w8a8,block_shape=[128,128].json"),
                ("not a string", 42)]
        for what, name in rows:
            with self.subTest(what):
                r = self.install(self.result_json(name=name), "--replace")
                err = self.assert_refused(r, "invalid_config", "nothing was installed")
                self.assertIn("files[0]", err["message"])
                self.assertEqual(self.victim_text(), "precious\n")
                self.assertEqual(os.listdir(outside), [])
                self.assertEqual(sorted(os.listdir(self.root)), ["link"])
        # The same name, well formed, installs (the checks refuse paths, not config names).
        r = self.install(self.result_json(), "--replace")
        self.assertEqual(r.rc, 0, r.lines)
        self.assertEqual(r.one("installed")["target"], os.path.join(self.root, NAME))

    def test_vllm_names_in_vllms_spelling_only(self):
        vl = os.path.join(self.tmp, "vllm")
        os.makedirs(vl)
        down = NAME.replace(".json", "_down.json")
        r = self.install(self.result_json(files=[{"framework": "vllm", "file_name": down, "entries": entries(64)}]),
                         framework="vllm", root=vl)
        self.assert_refused(r, "invalid_config", "not a name vllm reads")
        self.assertEqual(os.listdir(vl), [])


class NotAFile(Case):
    """Item 4: a FIFO, socket or directory at the target name: the old code blocked forever opening the
    FIFO (push and --dry-run) and said only "cannot be replaced" for a directory."""

    def setUp(self):
        super().setUp()
        os.makedirs(self.root)
        self.target = os.path.join(self.root, NAME)

    def test_fifo_at_the_target_name(self):
        os.mkfifo(self.target)
        for extra in ((), ("--replace",), ("--dry-run",)):
            with self.subTest(extra=extra):
                r, secs = self.call("install-config", self.result_json(), "--framework", "sglang", "--root",
                                     self.root, *extra, timeout=20)
                self.assertLess(secs, 15)
                if extra == ("--dry-run",):
                    d = r.one("diff")
                    self.assertEqual(d["refused"], "not_a_file")
                    self.assertIn("FIFO", d["refused_message"])
                else:
                    self.assert_refused(r, "not_a_file", "is a FIFO (named pipe), not a config file",
                                        "nothing was changed", "remove it")
                self.assertTrue(os.path.exists(self.target) and not os.path.isfile(self.target))

    def test_socket_at_the_target_name(self):
        s = socket.socket(socket.AF_UNIX)
        self.addCleanup(s.close)
        try:
            s.bind(self.target)
        except OSError as e:  # a path longer than sun_path (108 bytes)
            self.skipTest("cannot bind a socket at %s: %s" % (self.target, e))
        r = self.install(self.result_json(), "--replace")
        self.assert_refused(r, "not_a_file", "is a socket")

    def test_directory_at_the_target_name(self):
        os.mkdir(self.target)
        r = self.install(self.result_json(), "--replace")
        self.assert_refused(r, "not_a_file", "is a directory, not a config file", "move that directory away")
        self.assertTrue(os.path.isdir(self.target))

    def test_lock_name_planted(self):
        os.symlink(self.victim, os.path.join(self.root, install.LOCK_NAME))
        r = self.install(self.result_json())
        self.assert_refused(r, "symlink_target", "install lock")
        self.assertEqual(self.victim_text(), "precious\n")


class ConcurrentReplace(Case):
    """Item 7: two real installs with --replace into one folder. The old code let both say "installed"
    while one silently won; now the one that finds the folder locked fails, naming the holder."""

    def popen(self, bn, pause):
        env = dict(self.env, MOETUNE_TEST_INSTALL_PAUSE_S=str(pause))
        return subprocess.Popen(self.cmd() + ["install-config", self.result_json(bn=bn), "--framework", "sglang",
                                              "--root", self.root, "--replace"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def finish(self, p):
        out, err = p.communicate(timeout=60)
        return self.parse(p.returncode, out.decode(), err.decode())

    def test_the_second_install_loses_and_says_so(self):
        self.assertEqual(self.install(self.result_json(bn=32)).rc, 0)
        lock = os.path.join(self.root, install.LOCK_NAME)
        first = self.popen(64, 6)  # holds the lock >= 6 s: the second starts well within that, even on a busy host
        try:
            # The first holds the lock (its pid is in the lock file) and pauses half-way through its write.
            self.wait_for(lambda: ("pid %d," % first.pid) in (safefile.read_text(lock, "") or ""), 30, "the lock")
            second = self.popen(128, 0)
            lost = self.finish(second)
        finally:
            won = self.finish(first)
        self.assertEqual(won.rc, 0, won.lines)
        self.assertIsNotNone(won.one("installed")["backup"])
        err = self.assert_refused(lost, "locked", "pid %d" % first.pid, "lost the race and changed nothing")
        self.assertEqual(err["code"], "locked")
        with open(os.path.join(self.root, NAME)) as f:
            self.assertEqual(f.read(), text_of(64))
        # The lock file went with its holder: the server's folder holds the config and its one backup.
        self.assertEqual(sorted(n for n in os.listdir(self.root) if ".bak-" not in n), [NAME])

    def test_racing_installs_lose_no_update(self):
        # Started together, without a pause: whatever the order, every "installed" is on disk (the file or
        # a backup of it), never silently overwritten.
        self.assertEqual(self.install(self.result_json(bn=32)).rc, 0)
        for _ in range(3):
            procs = [self.popen(bn, 0) for bn in (64, 128)]
            res = [self.finish(p) for p in procs]
            kept = set()
            for n in os.listdir(self.root):
                with open(os.path.join(self.root, n)) as f:
                    kept.add(f.read())
            for bn, r in zip((64, 128), res):
                if r.rc == 0 and r.one("installed")["unchanged"]:
                    # nothing was written (the row merge of issue 20 kept a file this run did not measure, or
                    # it already held these rows): what it reports is what is on disk
                    self.assertIn(r.one("installed")["sha256"],
                                  {hashlib.sha256(t.encode()).hexdigest() for t in kept}, r.lines)
                elif r.rc == 0:
                    self.assertIn(text_of(bn), kept)
                else:
                    self.assertEqual(r.one("error")["code"], "locked", r.lines)


class ConfigKeys(Case):
    """Item 11: a result.json's entries go through the config file validator (the old code installed the
    keys "-5" and "0" that its own parser rejects)."""

    def test_invalid_entries_are_refused(self):
        ok = KernelConfig(16, 64, 64, 1, 4, 3).as_dict()
        rows = [("negative key", {"-5": ok}, "'-5' is not a batch size"),
                ("zero key", {"0": ok}, "'0' is not a batch size"),
                ("leading zero", {"01": ok}, "'01' is not a batch size"),
                ("space", {" 1": ok}, "' 1' is not a batch size"),
                ("word", {"abc": ok}, "'abc' is not a batch size"),
                ("unknown kernel key", {"1": dict(ok, BLOCK_SIZE_X=1)}, "unknown key 'BLOCK_SIZE_X'"),
                ("not a power of two", {"1": dict(ok, BLOCK_SIZE_N=48)}, "power of two"),
                ("absurd warps", {"1": dict(ok, num_warps=1024)}, "num_warps must be a power of two of at most 64"),
                ("absurd stages", {"1": dict(ok, num_stages=1000)}, "num_stages must be at most 64"),
                ("zero value", {"1": dict(ok, GROUP_SIZE_M=0)}, "positive integer"),
                ("no entries", {}, "no batch-size entries")]
        for what, ents, words in rows:
            with self.subTest(what):
                r = self.install(self.result_json(files=[{"framework": "sglang", "file_name": NAME, "entries": ents}]))
                self.assert_refused(r, "invalid_config", words, "files[0]")
                self.assertFalse(os.path.exists(self.root))

    def test_same_validator_as_a_config_file(self):
        with self.assertRaises(configjson.ConfigFileError):
            configjson.parse_config_text(json.dumps({"-5": KernelConfig(16, 64, 64, 1, 4, 3).as_dict()}))
        with self.assertRaises(configjson.ConfigFileError):
            configjson.check_entries({"0": KernelConfig(16, 64, 64, 1, 4, 3).as_dict()})


class Malformed(Case):
    """Item 12: malformed shapes end in invalid_config / spec_invalid with a sentence, not an internal traceback."""

    def test_result_json_shapes(self):
        good = {"framework": "sglang", "file_name": NAME, "entries": entries(64)}
        rows = [("files is an object", {"files": {"a": 1}}, "\"files\" must be a list"),
                ("files is a string", {"files": "x"}, "\"files\" must be a list"),
                ("a file is a number", {"files": [1]}, "files[0] must be an object"),
                ("no framework", {"files": [{"file_name": NAME}]}, "\"framework\" must be"),
                ("no file name", {"files": [{"framework": "sglang", "entries": entries(64)}]}, "non-empty string"),
                ("entries is a list", {"files": [dict(good, entries=[1, 2])]}, "JSON object of batch size"),
                ("entry is a string", {"files": [dict(good, entries={"1": "fast"})]}, "must be an object"),
                ("triton_version is a list", {"files": [good], "triton_version": [3]}, "triton_version"),
                ("twice the same name", {"files": [good, good]}, "appears twice")]
        for what, top, words in rows:
            with self.subTest(what):
                files = top.pop("files")
                r = self.install(self.result_json(files=files, **top))
                self.assert_refused(r, "invalid_config", words)
        for what, text in (("not JSON", "{not json"), ("deeply nested", "[" * 200000 + "]" * 200000),
                           ("not UTF-8", b"\xff\xfe{}")):
            with self.subTest(what):
                path = os.path.join(self.tmp, "result.json")
                with open(path, "wb") as f:
                    f.write(text if isinstance(text, bytes) else text.encode())
                r = self.install(path)
                err = self.assert_refused(r, "invalid_config")
                self.assertNotIn("Traceback", err["message"])


class DiskFullAfterBackup(Case):
    """Item 13: the write fails after the backup was made (RLIMIT_FSIZE as the full disk: the backup of the
    old file fits, the longer new file does not). The old sentence said no backup was left while it was."""

    def test_sentence_names_the_backup(self):
        os.makedirs(self.root)
        self.assertEqual(self.install(self.result_json(bn=64)).rc, 0)
        old = text_of(64).encode()
        self.assertGreater(len(text_of(128)), len(old))

        def limit():
            limit_memory()
            resource.setrlimit(resource.RLIMIT_FSIZE, (len(old), len(old)))
        r = self.install(self.result_json(bn=128), "--replace", preexec=limit)
        err = self.assert_refused(r, "io", "its backup", "is kept")
        self.assertNotIn("no backup", err["message"])
        baks = install.backups_of(os.path.join(self.root, NAME))
        self.assertEqual(len(baks), 1)
        self.assertIn(baks[0], err["message"])
        with open(baks[0], "rb") as f:
            self.assertEqual(f.read(), old)
        with open(os.path.join(self.root, NAME), "rb") as f:
            self.assertEqual(f.read(), old)
        self.assertEqual([n for n in os.listdir(self.root) if "moetune-tmp" in n or n == install.LOCK_NAME], [])

    def test_sentence_true_without_a_backup(self):
        # The backup itself does not fit: then indeed none is left.
        os.makedirs(self.root)
        self.assertEqual(self.install(self.result_json(bn=64)).rc, 0)

        def limit():
            limit_memory()
            resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
        r = self.install(self.result_json(bn=128), "--replace", preexec=limit)
        self.assert_refused(r, "io", "no backup or temporary file was left")
        self.assertEqual(sorted(os.listdir(self.root)), [NAME])


class InstallLimits(Case):
    """Item 5 for install-config: a huge result.json, /dev/zero as the source, a huge file at the target name."""

    def test_huge_result_json_and_existing_file(self):
        big = os.path.join(self.tmp, "result.json")
        with open(big, "wb") as f:
            f.truncate(safefile.MAX_RESULT_BYTES + 1)
        r = self.install(big)
        self.assert_refused(r, "invalid_config", "more than the limit of 64 MiB")
        r = self.install("/dev/zero")
        self.assert_refused(r, "not_a_file", "is a character device")
        os.makedirs(self.root)
        target = os.path.join(self.root, NAME)
        with open(target, "wb") as f:
            f.truncate(safefile.MAX_CONFIG_BYTES + 1)
        r = self.install(self.result_json(), "--replace")
        self.assert_refused(r, "invalid_config", "larger than any config file")
        self.assertEqual(os.path.getsize(target), safefile.MAX_CONFIG_BYTES + 1)
        self.assertEqual(sorted(os.listdir(self.root)), [NAME])


if __name__ == "__main__":
    unittest.main()
