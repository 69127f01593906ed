# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 23, the agent's half, for tune / resume / attach / runs / result: /dev/zero and oversized
files as the spec or routing file, 10^6 batch sizes, device names too long for the file names,
a finished run resumed, damaged lines of events.jsonl and journal.jsonl, deep JSON."""

import os
import time
import unittest

import agenttest
from moetune_agent import safefile, spec as spec_mod
from moetune_agent.serverconfig import naming
from moetune_agent.runs import store
from untrusted import Case


class Limits(Case):
    """Item 5: every input is bounded, and the refusal is fast and small (the old code read /dev/zero until
    MemoryError and took 29 s to fail on 10^6 batch sizes)."""

    def check_fast(self, secs):
        self.assertLess(secs, 10)

    def test_spec_is_dev_zero_or_huge(self):
        r, secs = self.call("tune", "/dev/zero")
        self.assertEqual(r.one("error")["code"], "spec_invalid")
        self.assertIn("/dev/zero is a character device, not a file", r.one("error")["message"])
        self.check_fast(secs)
        big = os.path.join(self.tmp, "big.json")
        with open(big, "wb") as f:
            f.truncate(spec_mod.MAX_SPEC_BYTES + 1)  # sparse: costs no disk
        r, secs = self.call("tune", big)
        self.assertIn("more than the limit of 1 MiB", r.one("error")["message"])
        self.check_fast(secs)

    def test_routing_file_is_dev_zero_or_huge(self):
        big = os.path.join(self.tmp, "routing.json")
        with open(big, "wb") as f:
            f.truncate(spec_mod.MAX_ROUTING_BYTES + 1)
        for path, words in (("/dev/zero", "is a character device"), (big, "more than the limit of 16 MiB")):
            with self.subTest(path=path):
                r, secs = self.call("tune", self.write_spec(agenttest.small_spec(routing_file=path)), "--foreground")
                err = r.one("error")
                self.assertEqual((err["code"], err["detail"]), ("spec_invalid", "routing_file"))
                self.assertIn(words, err["message"])
                self.check_fast(secs)
        self.assertFalse(os.path.isdir(os.path.join(self.home, "runs")))

    def test_batch_sizes_count_and_value(self):
        rows = [(list(range(1, 10 ** 6 + 1)), "more than the limit of 1 MiB"),   # 6.9 MB of spec
                (list(range(1, spec_mod.MAX_BATCH_SIZES + 2)), "at most 256 are allowed"),
                ([1, spec_mod.MAX_BATCH_SIZE + 1], "larger than the limit of 65536")]
        for sizes, words in rows:
            with self.subTest(n=len(sizes)):
                r, secs = self.call("tune", self.write_spec(agenttest.small_spec(batch_sizes=sizes)))
                err = r.one("error")
                self.assertEqual(err["code"], "spec_invalid")
                self.assertIn(words, err["message"])
                self.check_fast(secs)
        with self.assertRaises(spec_mod.SpecError):
            spec_mod.normalise(agenttest.small_spec(space={"BLOCK_SIZE_N": list(range(1, 66))}))
        spec_mod.normalise(agenttest.small_spec(batch_sizes=list(range(1, 257))))  # the limit itself is fine


class NameLength(Case):
    """Item 9: a device name too long for the file names is refused when the spec is read, not after the
    whole run was measured (the old code failed writing the result: "File name too long", internal)."""

    def test_long_device_name_refused_before_the_run(self):
        r, secs = self.call("tune", self.write_spec(agenttest.small_spec(device_name="D" * 200)), "--foreground")
        err = r.one("error")
        self.assertEqual((err["code"], err["detail"]), ("spec_invalid", "device_name"), r.lines)
        self.assertIn("255-byte limit", err["message"])
        self.assertEqual(r.of("run_started"), [])
        self.assertFalse(os.path.isdir(os.path.join(self.home, "runs")) and os.listdir(os.path.join(self.home, "runs")))
        self.assertLess(secs, 10)

    def test_boundary(self):
        # "E=64,N=512,device_name=" + name + ".json" plus the 42-byte temporary suffix must fit 255 bytes.
        longest = naming.NAME_MAX - naming.DERIVED_SUFFIX_MAX - len("E=64,N=512,device_name=.json")
        spec_mod.normalise(agenttest.small_spec(device_name="D" * longest))
        for dev, ops in (("D" * (longest + 1), "up"), ("D" * longest, "up+down"), ("\u00e9" * (longest // 2 + 1), "up")):
            with self.subTest(n=len(dev), ops=ops):
                with self.assertRaises(spec_mod.SpecError) as cm:
                    spec_mod.normalise(agenttest.small_spec(device_name=dev, ops=ops))
                self.assertEqual(cm.exception.key, "device_name")

    def test_run_folder_path_counts(self):
        deep = os.path.join(self.tmp, *(["d" * 200] * 19))  # ~3.85 KB: the run folder fits, its files do not
        os.makedirs(deep)
        # A 180-byte device name fits NAME_MAX, but not the run folder's path (the old code wrote the files).
        r, _ = self.call("--home", deep, "tune", self.write_spec(agenttest.small_spec(device_name="D" * 180)),
                         "--foreground")
        errs = r.of("error")
        self.assertEqual([e["code"] for e in errs], ["spec_invalid"], r.lines[-3:])
        err = errs[0]
        self.assertIn("too long", err["message"])


class RunState(Case):
    """Item 10: a finished run is not resumed; damaged lines of events.jsonl and journal.jsonl are skipped and
    reported, never forwarded or counted."""

    def finished_run(self):
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1])), "--foreground")
        self.assertEqual(r.of("done")[-1]["status"], "ok", r.lines[-3:])
        return r.one("run_started")["run_id"]

    def test_resume_of_a_finished_run(self):
        rid = self.finished_run()
        events = os.path.join(self.run_dir(rid), "events.jsonl")
        with open(events, "rb") as f:
            before = f.read()
        for extra in ((), ("--foreground",)):
            with self.subTest(extra=extra):
                r, _ = self.call("resume", rid, *extra)
                self.assert_refused(r, "run_finished", "has finished", "result %s" % rid)
        time.sleep(0.3)
        with open(events, "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(store.get_state(self.run_dir(rid)), "finished")

    def test_attach_skips_damaged_lines(self):
        rid = self.finished_run()
        events = os.path.join(self.run_dir(rid), "events.jsonl")
        with open(events) as f:
            lines = f.read().splitlines(True)
        garbage = ["garbage, not JSON\n", "[1, 2]\n", '{"no_type": 1}\n', '{"type": 7}\n',
                   "x" * (safefile.MAX_LINE_BYTES + 10) + "\n"]
        with open(events, "w") as f:
            f.writelines(lines[:2] + garbage + lines[2:])
        r, _ = self.call("attach", rid, "--no-follow")   # parse() fails on any stdout line that is no event
        forwarded = [e for e in r.events[1:] if e["type"] != "log" or "damaged" not in e["message"]]
        self.assertEqual(len(forwarded), len(lines), r.lines[:5])
        self.assertEqual([e["type"] for e in forwarded[-1:]], ["done"])
        warned = [e["message"] for e in r.of("log") if "damaged" in e["message"]]
        self.assertEqual(len(warned), len(garbage), warned)
        self.assertIn("line 3 (seq 2) is damaged (not a JSON event): skipped", warned[0])
        self.assertIn("longer than", warned[-1])
        self.assertEqual(r.rc, 0)

    def test_runs_counts_only_measurements(self):
        rid = self.finished_run()
        journal = os.path.join(self.run_dir(rid), "journal.jsonl")
        good = len(agenttest.read_jsonl(journal))
        with open(journal, "a") as f:
            f.write("garbage\n{\"type\": \"measurement\"}\n[]\n" + "y" * (safefile.MAX_LINE_BYTES + 1) + "\n")
        r, _ = self.call("runs")
        ev = r.one("run")
        self.assertEqual(ev["measured"], good)
        self.assertEqual(ev["journal_damaged"], 4)


class MalformedSpecAndRun(Case):
    """Item 12: a deeply nested routing_file and a damaged result.json of a run end in spec_invalid /
    invalid_config with a sentence, not an internal traceback."""

    def test_deeply_nested_routing_file(self):
        path = os.path.join(self.tmp, "routing.json")
        with open(path, "w") as f:
            f.write("[" * 200000 + "]" * 200000)
        r, _ = self.call("tune", self.write_spec(agenttest.small_spec(routing_file=path)), "--foreground")
        err = r.one("error")
        self.assertEqual((err["code"], err["detail"]), ("spec_invalid", "routing_file"), r.lines)
        self.assertIn("nests too deeply", err["message"])

    def test_damaged_result_of_a_run(self):
        r = self.run_agent("tune", self.write_spec(agenttest.small_spec(batch_sizes=[1])), "--foreground")
        rid = r.one("run_started")["run_id"]
        with open(os.path.join(self.run_dir(rid), "result.json"), "w") as f:
            f.write("[" * 100000)
        r, _ = self.call("result", rid)
        self.assert_refused(r, "invalid_config", "is damaged")


if __name__ == "__main__":
    unittest.main()


class ForeignHome(agenttest.AgentCase):
    """Issue 42: a run store another user can write into is refused before a run folder exists; a new one
    is private (0700) whatever the umask."""

    def spec(self):
        return self.write_spec(agenttest.small_spec())

    def test_a_group_writable_home_is_refused_with_a_sentence(self):
        os.makedirs(self.home)
        os.chmod(self.home, 0o775)
        r = self.run_agent("tune", self.spec(), "--foreground")
        err = r.one("error")
        self.assertEqual(err["code"], "unsafe_folder")
        self.assertIn("the agent's home %s is writable by its group (mode 0775)" % self.home, err["message"])
        self.assertFalse(os.path.exists(os.path.join(self.home, "runs")))

    def test_a_linked_run_store_is_refused(self):
        os.makedirs(self.home, 0o700)
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.mkdir(elsewhere, 0o700)
        os.symlink(elsewhere, os.path.join(self.home, "runs"))
        r = self.run_agent("tune", self.spec(), "--foreground")
        self.assertEqual(r.one("error")["code"], "unsafe_folder")
        self.assertIn("the run store %s is a symbolic link" % os.path.join(self.home, "runs"),
                      r.one("error")["message"])
        self.assertEqual(os.listdir(elsewhere), [])

    def test_a_new_home_run_store_and_run_are_0700(self):
        old = os.umask(0o002)  # the child inherits it: folders would be 0775 by default
        try:
            r = self.run_agent("tune", self.spec(), "--foreground")
        finally:
            os.umask(old)
        self.assertEqual(r.rc, 0, r.stderr)
        run_dir = r.one("run_started")["run_dir"]
        for d in (self.home, os.path.join(self.home, "runs"), run_dir):
            self.assertEqual(os.stat(d).st_mode & 0o777, 0o700, d)
