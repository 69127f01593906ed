# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""probe and other users' processes (issue 42.1): a server process is listed by the probe, but only one owned
by the user the agent runs as is inspected, and its interpreter (argv[0], chosen by the process) is run with
`-c` only from a path that no one but that user and root can write. The "servers" here are labelled stand-ins:
python processes that sleep under a command line that looks like `-m sglang.launch_server`; the "planted
interpreter" is a shell script that would leave a marker file if anything ran it."""

import os
import stat
import subprocess
import sys
import tempfile
import time
import unittest

import agenttest
from moetune_agent import probe as probe_mod

NOBODY = 65534


def plant(folder, marker, mode=0o755):
    """A fake interpreter in `folder` that creates `marker` when run (TEST DOUBLE of a hostile argv[0])."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "python3")
    with open(path, "w") as f:
        f.write("#!/bin/sh\ntouch '%s'\necho '{}'\n" % marker)
    os.chmod(path, mode)
    return path


class PlantedInterpreter(agenttest.AgentCase):
    def setUp(self):
        super().setUp()
        # Not under the agent test's folder: the probe skips command lines naming "moetune" in their head.
        self.tmp = tempfile.mkdtemp(prefix="planted ")
        self.addCleanup(lambda: subprocess.call(["rm", "-rf", self.tmp]))

    def start_server(self, argv0, port, user=None):
        """A sleeping python whose argv[0] is `argv0` (what /proc/PID/cmdline shows) and whose command line is
        an SGLang launch on `port`; run as `user` (uid) when given."""
        args = [argv0, "-c", "import time; time.sleep(120)", "-m", "sglang.launch_server", "--model-path",
                "/models/planted", "--port", str(port)]
        def as_user():
            os.setgid(user)
            os.setuid(user)
        # Another user may not reach this user's interpreter (e.g. under /root): the system's, then.
        exe = sys.executable if user is None else "/usr/bin/python3"
        p = subprocess.Popen(args, executable=exe, cwd="/", preexec_fn=as_user if user is not None else None,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        for _ in range(50):  # until the command line is the new one (after exec)
            try:
                with open("/proc/%d/cmdline" % p.pid, "rb") as f:
                    if b"sglang.launch_server" in f.read():
                        break
            except OSError:
                pass
            time.sleep(0.05)
        return p

    def probe(self):
        return self.run_agent("probe").one("probe")

    def test_world_writable_folder_is_never_run(self):
        marker = os.path.join(self.tmp, "ran")
        shared = os.path.join(self.tmp, "shared")
        planted = plant(shared, marker)
        os.chmod(shared, 0o777)
        p = self.start_server(planted, 31801)
        out = self.probe()
        s = [x for x in out["servers"] if x["pid"] == p.pid][0]
        self.assertFalse(os.path.exists(marker), "the planted interpreter was run")
        self.assertIsNone(s["server_view"]["python"])
        self.assertIn(shared, s["server_view"]["interpreter_problem"])
        self.assertIn("can be written by others (mode 0777)", s["server_view"]["interpreter_problem"])
        self.assertIn("does not run the server's interpreter", s["server_view"]["error"])
        self.assertEqual((s["port"], s["port_from_cmdline"]), (31801, True))

    def test_trusted_folder_is_run(self):
        # The control: the same script in a folder only this user can write is run (the marker appears), so
        # the test above fails when the check is missing.
        marker = os.path.join(self.tmp, "ran")
        planted = plant(os.path.join(self.tmp, "private"), marker)
        os.chmod(os.path.join(self.tmp, "private"), 0o700)
        p = self.start_server(planted, 31802)
        s = [x for x in self.probe()["servers"] if x["pid"] == p.pid][0]
        self.assertTrue(os.path.exists(marker))
        self.assertIsNone(s["server_view"]["interpreter_problem"])

    def test_group_writable_file_is_never_run(self):
        marker = os.path.join(self.tmp, "ran")
        planted = plant(os.path.join(self.tmp, "private"), marker, mode=0o775)
        p = self.start_server(planted, 31803)
        s = [x for x in self.probe()["servers"] if x["pid"] == p.pid][0]
        self.assertFalse(os.path.exists(marker))
        self.assertIn("can be written by its group (mode 0775)", s["server_view"]["interpreter_problem"])

    def test_link_through_a_world_writable_folder_is_never_run(self):
        marker = os.path.join(self.tmp, "ran")
        private = os.path.join(self.tmp, "private")
        shared = os.path.join(self.tmp, "shared")
        planted = plant(shared, marker)
        os.chmod(shared, 0o777)
        os.makedirs(private)
        link = os.path.join(private, "python3")
        os.symlink(planted, link)  # a venv-style link; its target's folder is writable by anyone
        p = self.start_server(link, 31804)
        s = [x for x in self.probe()["servers"] if x["pid"] == p.pid][0]
        self.assertFalse(os.path.exists(marker))
        self.assertIn(shared, s["server_view"]["interpreter_problem"])

    @unittest.skipUnless(os.geteuid() == 0 and os.access("/usr/bin/python3", os.X_OK),
                         "starting another user's process needs root (and a system python3)")
    def test_other_users_process_is_listed_never_run(self):
        marker = os.path.join(self.tmp, "ran")
        # A folder the other user owns and only it can write: its own interpreter, by its own rules.
        theirs = tempfile.mkdtemp(prefix="other user ")
        self.addCleanup(lambda: subprocess.call(["rm", "-rf", theirs]))
        planted = plant(os.path.join(theirs, "bin"), marker)
        for d in (theirs, os.path.join(theirs, "bin"), planted):
            os.chown(d, NOBODY, NOBODY)
        os.chmod(theirs, 0o755)
        os.chmod(self.tmp, 0o755)  # the other user must reach nothing here but the stand-in needs no file
        p = self.start_server(planted, 31805, user=NOBODY)
        out = self.probe()
        self.assertFalse(os.path.exists(marker), "another user's argv[0] was run")
        self.assertNotIn(p.pid, [x["pid"] for x in out["servers"]])
        o = [x for x in out["other_users_servers"] if x["pid"] == p.pid][0]
        self.assertEqual((o["uid"], o["framework"], o["port"]), (NOBODY, "sglang", 31805))
        self.assertIn("never inspected, run or acted on", o["not_used"])
        self.assertNotIn("launch", o)
        self.assertNotIn("server_view", o)

    def test_process_of_another_uid_in_process(self):
        # The same rule without root: the probe told it runs as another uid sees this test's server as
        # someone else's and runs nothing of it.
        marker = os.path.join(self.tmp, "ran")
        planted = plant(os.path.join(self.tmp, "private"), marker)
        p = self.start_server(planted, 31806)
        servers, others = probe_mod.server_processes(uid=os.geteuid() + 4242)
        self.assertNotIn(p.pid, [x["pid"] for x in servers])
        self.assertIn(p.pid, [x["pid"] for x in others])
        self.assertFalse(os.path.exists(marker))


class TwoServers(agenttest.AgentCase):
    def test_two_servers_two_ports_workers_folded(self):
        code = ("import os, time, sys\n"
                "if os.fork() == 0:\n"  # a worker: the same command line, a child of its server
                "    time.sleep(120)\n"
                "time.sleep(120)\n")
        procs = []
        for port, model in ((31811, "/models/a"), (31812, "/models/b")):
            p = subprocess.Popen([sys.executable, "-c", code, "-m", "sglang.launch_server", "--model-path", model,
                                  "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
            self.addCleanup(p.wait)
            self.addCleanup(lambda p=p: os.killpg(p.pid, 9))
            procs.append(p)
        time.sleep(0.3)
        servers = self.run_agent("probe").one("probe")["servers"]
        mine = {s["pid"]: s for s in servers if s["model"] in ("/models/a", "/models/b")}
        self.assertEqual(sorted(mine), sorted(p.pid for p in procs))
        self.assertEqual(sorted((s["model"], s["port"]) for s in mine.values()),
                         [("/models/a", 31811), ("/models/b", 31812)])

    def test_default_port(self):
        self.assertEqual(probe_mod.port_of(["python", "-m", "sglang.launch_server"], "sglang"), (30000, False))
        self.assertEqual(probe_mod.port_of(["vllm", "serve", "m", "--port=8123"], "vllm"), (8123, True))
        self.assertEqual(probe_mod.port_of(["vllm", "serve", "m", "--port", "x"], "vllm"), (None, True))


class TrustedPath(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="trusted path ")
        self.addCleanup(lambda: subprocess.call(["rm", "-rf", self.tmp]))

    def test_rows(self):
        exe = os.path.join(self.tmp, "ok", "python3")
        plant(os.path.dirname(exe), "/nonexistent")
        self.assertIsNone(probe_mod.trusted_path_problem(exe))
        self.assertIsNone(probe_mod.trusted_path_problem(os.path.realpath(sys.executable)))
        self.assertIn("not an absolute path", probe_mod.trusted_path_problem("python3"))
        self.assertIn("not an executable file", probe_mod.trusted_path_problem(self.tmp))
        self.assertIn("cannot check", probe_mod.trusted_path_problem(os.path.join(self.tmp, "missing")))
        # /tmp is world-writable but sticky: an entry in it is replaced only by its owner (checked).
        self.assertEqual(stat.S_IMODE(os.stat("/tmp").st_mode) & 0o1002, 0o1002)
        # the owner rule, seen from another uid: root's files stay trusted, this user's are not
        if os.geteuid() != 0:
            self.assertIn("belongs to", probe_mod.trusted_path_problem(exe, uid=os.geteuid() + 4242))


if __name__ == "__main__":
    unittest.main()
