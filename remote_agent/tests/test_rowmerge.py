# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Never worse than the file the server has, row by row (issue 20, items 3 and 4): the row merge of
install-config against a file at the target, the per-row decisions in its events, other K's from
moetune's push records, and files of sibling device names. The synthetic backend is the labelled test
double for a GPU; its runs are installed only into a tree marked as a test fixture's."""

import hashlib
import json
import os
import unittest

import agenttest
from moetune_agent.install import installer as install, rowmerge, siblings
from moetune_agent.kernel_types import KernelConfig
from moetune_agent.serverconfig import configjson

NAME = "E=64,N=512,device_name=NVIDIA_H200.json"
SHIPPED = {1: KernelConfig(16, 64, 64, 1, 4, 3), 64: KernelConfig(16, 64, 128, 1, 4, 3),
           4096: KernelConfig(128, 128, 64, 8, 8, 3)}
TUNED = {1: KernelConfig(16, 64, 64, 1, 4, 3), 64: KernelConfig(32, 128, 128, 1, 4, 4),
         512: KernelConfig(64, 128, 64, 16, 4, 3)}


def h2h(m, default, chosen, decision, speedup):
    return {"m": m, "ops": ["both"], "rounds": 5, "decision": decision, "chosen_default": chosen == default,
            "median_us": 10.0, "default_median_us": 10.0 * speedup, "speedup": speedup,
            "chosen": {"configs": {"both": chosen.as_dict()}}, "default": {"configs": {"both": default.as_dict()}}}


def shipped_text():
    return configjson.format_config_text(SHIPPED)


def result_over(old_bytes, with_hash=True):
    """A run that measured old_bytes (the shipped file) as its default: 1 default kept, 64 and 512 tuned
    faster (512 is no key of the file: the server used its 64 row there), 4096 not measured."""
    ds = {"kind": "file", "framework": "sglang", "file_name": NAME, "path": "/srv/shipped/" + NAME}
    if with_hash:
        ds["sha256"] = hashlib.sha256(old_bytes).hexdigest()
    return {"format": "moetune-result", "run_id": "r1", "ops": ["both"], "shape": {"E": 64, "N": 512, "K": 1024},
            "default_source": ds,
            "head_to_head": [h2h(1, SHIPPED[1], TUNED[1], "tie_default_kept", 1.0),
                             h2h(64, SHIPPED[64], TUNED[64], "tuned_faster", 1.25),
                             h2h(512, SHIPPED[64], TUNED[512], "tuned_faster", 1.4)]}


def decisions(mg):
    return {r["m"]: r["decision"] for r in mg.rows}


class Merge(unittest.TestCase):
    def setUp(self):
        self.old = shipped_text().encode()
        self.new = configjson.format_config_text(TUNED)

    def test_rows_kept_replaced_added_and_unmeasured(self):
        mg = rowmerge.plan(self.old, "/nowhere/" + NAME, NAME, self.new, "sglang", result_over(self.old))
        self.assertEqual(mg.mode, "merged")
        self.assertTrue(mg.measured_default)
        self.assertEqual(decisions(mg), {1: "kept", 64: "replaced", 512: "added", 4096: "kept_unmeasured"})
        rows = {r["m"]: r for r in mg.rows}
        self.assertAlmostEqual(rows[64]["gain"], 1.25)
        self.assertEqual(rows[64]["old"], SHIPPED[64].as_dict())
        self.assertEqual(rows[512]["serves"], [289, 2304])  # between the keys 64 and 4096
        merged, _ = configjson.parse_config_text(mg.text)
        self.assertEqual(merged, {1: SHIPPED[1].as_dict(), 64: TUNED[64].as_dict(), 512: TUNED[512].as_dict(),
                                  4096: SHIPPED[4096].as_dict()})

    def test_target_differing_from_measured_default_keeps_every_row(self):
        changed = configjson.format_config_text({**SHIPPED, 4096: KernelConfig(64, 64, 64, 8, 4, 3)}).encode()
        mg = rowmerge.plan(changed, "/nowhere/" + NAME, NAME, self.new, "sglang", result_over(self.old))
        self.assertFalse(mg.measured_default)
        self.assertIn("not the one the run measured", mg.note)
        self.assertEqual(decisions(mg), {1: "kept_unmeasured", 64: "kept_unmeasured", 512: "not_added",
                                         4096: "kept_unmeasured"})
        self.assertEqual(mg.text.encode(), changed)  # byte for byte

    def test_without_a_recorded_hash_the_rows_must_match(self):
        res = result_over(self.old, with_hash=False)
        mg = rowmerge.plan(self.old, "/x/" + NAME, NAME, self.new, "sglang", res)
        self.assertTrue(mg.measured_default)
        self.assertEqual(decisions(mg)[64], "replaced")
        other = configjson.format_config_text({**SHIPPED, 64: KernelConfig(16, 32, 64, 1, 4, 3)}).encode()
        mg = rowmerge.plan(other, "/x/" + NAME, NAME, self.new, "sglang", res)
        self.assertFalse(mg.measured_default)
        self.assertEqual(decisions(mg)[64], "kept_unmeasured")

    def test_a_file_read_as_the_servers_read_it(self):
        """Issue 42 item 5: a key "01" is batch size 1 for the servers (int("01")), a key written twice keeps
        its last value (json.load), and an entry with a key moetune does not write (vLLM's XPU grf_mode) is
        read by the server too: such a file is merged row by row, never replaced whole, and each row the run
        did not measure stays exactly as the server reads it."""
        c = lambda k: json.dumps(SHIPPED[k].as_dict())
        odd4096 = dict(SHIPPED[4096].as_dict(), grf_mode="large")
        text = ('{"01": %s, "64": {"BLOCK_SIZE_M": 256}, "64": %s, "4096": %s}\n'
                % (c(1), c(64), json.dumps(odd4096)))
        old = text.encode()
        server = {int(k): v for k, v in json.loads(text).items()}  # what the servers' loaders do
        self.assertEqual(configjson.read_as_server(text)[0], server)
        mg = rowmerge.plan(old, "/nowhere/" + NAME, NAME, self.new, "sglang", result_over(old))
        self.assertEqual(mg.mode, "merged")
        self.assertNotIn("cannot read", mg.note)
        self.assertEqual(decisions(mg), {1: "kept", 64: "replaced", 512: "added", 4096: "kept_unmeasured"})
        merged = {int(k): v for k, v in json.loads(mg.text).items()}
        self.assertEqual(merged, {1: SHIPPED[1].as_dict(), 64: TUNED[64].as_dict(), 512: TUNED[512].as_dict(),
                                  4096: odd4096})
        # Only a file the server's own loader fails on is replaced whole.
        bad = b'{"one": {}}'
        mg = rowmerge.plan(bad, "/nowhere/" + NAME, NAME, self.new, "sglang", result_over(bad))
        self.assertEqual(mg.mode, "whole")
        self.assertIn("the server cannot read", mg.note)

    def test_heuristic_default_measures_no_file(self):
        res = result_over(self.old)
        res["default_source"] = {"kind": "heuristic", "framework": "sglang"}
        mg = rowmerge.plan(self.old, "/x/" + NAME, NAME, self.new, "sglang", res)
        self.assertFalse(mg.measured_default)
        self.assertNotIn("replaced", decisions(mg).values())

    def test_no_file_there_is_a_new_file(self):
        mg = rowmerge.plan(None, "/x/" + NAME, NAME, self.new, "sglang", result_over(self.old))
        self.assertEqual(mg.mode, "new")
        self.assertEqual(decisions(mg), {1: "added", 64: "added", 512: "added"})
        self.assertIsNone(mg.text)  # the run's own file, as it is

    def test_served_range(self):
        self.assertEqual(siblings.served_range([1, 64, 4096], 512), (289, 2304))
        self.assertEqual(siblings.served_range([2, 4], 3), (3, 3))  # ties go to the smaller key
        self.assertEqual(siblings.served_range([1, 2], 8), (6, None))
        self.assertEqual(siblings.served_range([16], 1), (1, 8))


class Siblings(unittest.TestCase):
    def test_sibling_names(self):
        with open(os.path.join(agenttest.data_dir(), "sibling_devices.json")) as f:
            vectors = json.load(f)
        for a, b, want in vectors["pairs"]:
            self.assertEqual(siblings.is_sibling_device(a, b), want, (a, b))
            self.assertEqual(siblings.is_sibling_device(b, a), want, (b, a))


class InstallMerge(agenttest.AgentCase):
    """tune (synthetic, with the fixture's file as the "server's" default) -> install-config into a
    marked test-double tree holding that file: the events carry every row's decision."""

    def setUp(self):
        super().setUp()
        self.tree = os.path.join(self.tmp, "fake server")
        self.folder = os.path.join(self.tree, "configs", "triton_3_6_0")
        os.makedirs(self.folder)
        with open(os.path.join(self.tree, install.TEST_DOUBLE_MARKER), "wb") as f:
            f.write(install.TEST_DOUBLE_TEXT)
        self.spec = agenttest.small_spec(device_name="NVIDIA_H200", batch_sizes=[1, 64, 512])
        self.target = os.path.join(self.folder, NAME)
        # The shipped file: 512 tokens with BLOCK_SIZE_M 16 is far off, so the run wins there.
        with open(self.target, "w") as f:
            f.write(configjson.format_config_text({1: KernelConfig(16, 64, 64, 1, 4, 2),
                                                   512: KernelConfig(16, 64, 64, 1, 4, 2),
                                                   4096: KernelConfig(16, 64, 64, 1, 4, 2)}))
        r = self.run_agent("tune", self.write_spec(self.spec), "--foreground",
                           env={"MOETUNE_SYNTHETIC_DEFAULT_FILE": self.target})
        self.assertEqual(r.rc, 0, r.stderr)
        self.run_id = r.one("run_started")["run_id"]
        with open(self.target, "rb") as f:
            self.assertEqual(r.one("run_started")["default_source"]["sha256"], hashlib.sha256(f.read()).hexdigest())

    def dry(self):
        r = self.run_agent("install-config", self.run_id, "--framework", "sglang", "--root", self.folder,
                           "--dry-run", "--replace")
        self.assertEqual(r.rc, 0, r.lines)
        return r.one("diff")

    def test_dry_run_lists_every_row_and_install_writes_the_merge(self):
        d = self.dry()
        mg = d["merge"]
        self.assertEqual(mg["mode"], "merged")
        self.assertTrue(mg["measured_default"], mg)
        rows = {r["m"]: r for r in mg["rows"]}
        self.assertEqual(sorted(rows), [1, 64, 512, 4096])
        self.assertEqual(rows[4096]["decision"], "kept_unmeasured")
        self.assertEqual(rows[512]["decision"], "replaced")
        self.assertGreater(rows[512]["gain"], 1.0)
        self.assertIn(rows[64]["decision"], ("added", "not_added"))
        r = self.run_agent("install-config", self.run_id, "--framework", "sglang", "--root", self.folder,
                           "--replace")
        self.assertEqual(r.rc, 0, r.lines)
        self.assertEqual(r.one("installed")["merge"]["rows"], mg["rows"])
        with open(self.target) as f:
            now, _ = configjson.parse_config_text(f.read())
        self.assertEqual(now[4096], KernelConfig(16, 64, 64, 1, 4, 2).as_dict())  # never measured: kept
        self.assertEqual(now[512], rows[512]["new"])

    def test_a_file_changed_since_the_run_is_not_merged_over(self):
        with open(self.target, "a") as f:
            f.write("\n")  # other bytes than the run measured (same rows)
        with open(self.target, "rb") as f:
            before = f.read()
        d = self.dry()
        self.assertFalse(d["merge"]["measured_default"])
        self.assertFalse(d["changed"], d)
        self.assertEqual({r["decision"] for r in d["merge"]["rows"]}, {"kept_unmeasured", "not_added"})
        with open(self.target, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_other_k_from_a_push_record_and_sibling_files(self):
        # An earlier run of another model (K 4096) pushed into this very file (moetune's push record).
        other = os.path.join(self.home, "runs", "20260101-000000-abcdef")
        os.makedirs(other)
        with open(os.path.join(other, "spec.json"), "w") as f:
            json.dump(dict(self.spec, K=4096), f)
        with open(os.path.join(other, "push.json"), "w") as f:
            json.dump({"format": "moetune-push", "version": 1, "run_id": "20260101-000000-abcdef",
                       "files": [{"file_name": NAME, "target": self.target, "sha256": "00", "unchanged": False}]}, f)
        nvl = "E=64,N=512,device_name=NVIDIA_H200_NVL.json"
        with open(os.path.join(self.folder, nvl), "w") as f:
            f.write(shipped_text())
        with open(os.path.join(self.folder, "E=64,N=512,device_name=NVIDIA_H20.json"), "w") as f:
            f.write(shipped_text())  # another GPU model, not a sibling
        mg = self.dry()["merge"]
        self.assertEqual([k["K"] for k in mg["other_k"]], [4096])
        for r in mg["rows"]:
            self.assertEqual(r["unmeasured_k"], [4096] if r["decision"] in ("replaced", "added") else [], r)
        self.assertEqual(mg["siblings"], [{"file_name": nvl, "device_name": "NVIDIA_H200_NVL"}])
        # The app's version 2 record keeps every push of a run: an undone one does not count, a later one does.
        push = {"format": "moetune-push", "version": 1, "run_id": "20260101-000000-abcdef", "undone_at": 5.0,
                "files": [{"file_name": NAME, "target": self.target, "sha256": "00", "unchanged": False}]}
        history = {"format": "moetune-push", "version": 2, "run_id": push["run_id"], "pushes": [push]}
        with open(os.path.join(other, "push.json"), "w") as f:
            json.dump(history, f)
        self.assertEqual(self.dry()["merge"]["other_k"], [])
        history["pushes"].append(dict(push, undone_at=None))
        with open(os.path.join(other, "push.json"), "w") as f:
            json.dump(history, f)
        self.assertEqual([k["K"] for k in self.dry()["merge"]["other_k"]], [4096])


if __name__ == "__main__":
    unittest.main()
