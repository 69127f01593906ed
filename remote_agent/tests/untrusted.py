# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared by test_untrusted_runs and test_untrusted_install (issue 23, the agent's half: inputs it must
not trust). Every agent there is the real CLI in a subprocess, with an address-space limit so an unbounded
read fails fast instead of taking the machine's memory."""

import json
import os
import resource
import subprocess
import time

import agenttest
from moetune_agent.serverconfig import configjson
from test_install import measured_over
from moetune_agent.kernel_types import KernelConfig

NAME = "E=128,N=768,device_name=NVIDIA_H200.json"
MEM_LIMIT = 1 << 30  # bytes of address space per agent process: the old code read /dev/zero until MemoryError


def entries(bn):
    return {"1": KernelConfig(16, bn, 64, 1, 4, 3).as_dict(), "64": KernelConfig(16, bn, 128, 1, 4, 3).as_dict()}


def text_of(bn):
    return configjson.format_config_text({int(k): v for k, v in entries(bn).items()}, "sglang")


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


class Case(agenttest.AgentCase):
    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.tmp, "configs", "triton_3_6_0")
        self.victim = os.path.join(self.tmp, "victim.txt")
        with open(self.victim, "w") as f:
            f.write("precious\n")

    def call(self, *args, **kw):
        """The agent with at most MEM_LIMIT of memory and a wall-clock limit; -> (Result, seconds)."""
        t0 = time.time()
        p = subprocess.run(self.cmd() + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(self.env, **kw.get("env", {})), timeout=kw.get("timeout", 60), cwd=self.tmp,
                           preexec_fn=kw.get("preexec", limit_memory))
        return self.parse(p.returncode, p.stdout.decode(), p.stderr.decode("utf-8", "replace")), time.time() - t0

    def result_json(self, files=None, name=NAME, bn=64, **top):
        res = {"format": "moetune-result", "version": 1, "simulated": False, "triton_version": "3.6.0",
               "files": files if files is not None else
               [{"framework": "sglang", "kind": "sglang", "file_name": name, "entries": entries(bn)}]}
        if files is None and isinstance(name, str) and os.path.basename(name) == name:
            # install-config replaces only rows the run measured over the file there (issue 20)
            target = os.path.join(self.root, name)
            try:
                res.update(measured_over(target if os.path.isfile(target) and os.path.getsize(target) < (1 << 20) else None, bn))
            except (OSError, ValueError, KeyError):
                pass  # nothing there, or no config file: nothing was measured over it
        res.update(top)
        path = os.path.join(self.tmp, "result-%d-%d.json" % (bn, len(os.listdir(self.tmp))))
        with open(path, "w") as f:
            json.dump(res, f)
        return path

    def install(self, src, *extra, **kw):
        return self.call("install-config", src, "--framework", kw.pop("framework", "sglang"), "--root",
                          kw.pop("root", self.root), *extra, **kw)[0]

    def assert_refused(self, r, code, *words):
        self.assertEqual(r.rc, 1, r.lines)
        err = r.one("error")
        self.assertEqual(err["code"], code, err)
        for w in words:
            self.assertIn(w, err["message"])
        self.assertEqual(r.of("installed"), [])
        return err

    def victim_text(self):
        with open(self.victim) as f:
            return f.read()
