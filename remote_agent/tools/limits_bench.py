# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 23, item 5 (the agent): feed the agent unbounded inputs and print, for each refusal, its time and
the agent process's peak RSS. Each must refuse fast (well under a second of work) and small (the
interpreter's own ~20-30 MB plus at most a few MiB).

    python3 remote_agent/tools/limits_bench.py [--agent-root DIR] [--mem-limit-mib N]

--agent-root runs another checkout's agent (e.g. an export of the old code, for the "before" figures);
--mem-limit-mib caps each agent's address space (default 4096) so an unbounded read of the old code ends
in MemoryError instead of taking the machine; --timeout-s kills a case that hangs (default 120). Writes limits_bench.json to $OUT when set. CPU only:
every case is refused before a backend starts (the synthetic backend is named in the specs)."""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def synthetic_spec(**over):
    spec = {"framework": "sglang", "E": 64, "N": 512, "K": 1024, "topk": 4, "batch_sizes": [1],
            "backend": "synthetic", "strategy": "exhaustive",
            "space": {"BLOCK_SIZE_N": [64], "GROUP_SIZE_M": [1], "num_stages": [2], "num_warps": [4]}}
    spec.update(over)
    return spec


class Bench(object):
    def __init__(self, agent_root, mem_limit, tmp, timeout):
        self.timeout = timeout
        self.agent_root = agent_root
        self.mem_limit = mem_limit
        self.tmp = tmp
        self.env = dict(os.environ, PYTHONPATH=agent_root, MOETUNE_HOME=os.path.join(tmp, "home"),
                        PYTHONDONTWRITEBYTECODE="1")
        self.rows = []

    def write(self, name, obj):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            json.dump(obj, f)
        return path

    def sparse(self, name, size):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.truncate(size)
        return path

    def run(self, case, *args):
        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (self.mem_limit, self.mem_limit))
        out_path = os.path.join(self.tmp, "stdout")
        with open(out_path, "wb") as out, open(os.devnull, "wb") as err:
            t0 = time.time()
            p = subprocess.Popen([sys.executable, "-m", "moetune_agent"] + list(args), stdout=out, stderr=err,
                                 env=self.env, cwd=self.tmp, preexec_fn=limit)
            killer = threading.Timer(self.timeout, p.kill)  # the old code blocks forever on a FIFO
            killer.start()
            _, status, usage = os.wait4(p.pid, 0)  # this child's own peak RSS
            killer.cancel()
            p.returncode = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
            secs = time.time() - t0
        code, message = None, ""
        with open(out_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if isinstance(ev, dict) and ev.get("type") == "error":
                    code, message = ev.get("code"), ev.get("message") or ""
                    break
                if isinstance(ev, dict) and ev.get("type") == "diff" and ev.get("refused"):
                    code, message = "diff:" + ev["refused"], ev.get("refused_message") or ""
        if secs >= self.timeout:
            code, message = "KILLED", "still running after %g s" % self.timeout
        row = {"case": case, "rc": p.returncode, "code": code, "seconds": round(secs, 3),
               "peak_rss_mib": round(usage.ru_maxrss / 1024.0, 1), "message": message[:160]}
        self.rows.append(row)
        print("%-44s rc=%-3s %-16s %7.2f s %8.1f MiB  %s" % (case, row["rc"], code, secs, row["peak_rss_mib"],
                                                           message[:90]), flush=True)
        return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent-root", default=os.path.dirname(HERE), help="folder holding moetune_agent/")
    ap.add_argument("--mem-limit-mib", type=int, default=4096)
    ap.add_argument("--timeout-s", type=float, default=120, help="kill a case after this long")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="moetune-limits-")
    try:
        b = Bench(os.path.abspath(args.agent_root), args.mem_limit_mib << 20, tmp, args.timeout_s)
        b.run("baseline: version", "version")
        b.run("spec = /dev/zero", "tune", "/dev/zero", "--foreground")
        b.run("spec = sparse 10 GiB file", "tune", b.sparse("big-spec.json", 10 << 30), "--foreground")
        b.run("routing_file = /dev/zero", "tune", b.write("s1.json", synthetic_spec(routing_file="/dev/zero")),
              "--foreground")
        b.run("routing_file = sparse 10 GiB file", "tune",
              b.write("s2.json", synthetic_spec(routing_file=b.sparse("routing.json", 10 << 30))), "--foreground")
        deep = os.path.join(tmp, "deep-routing.json")
        with open(deep, "w") as f:
            f.write("[" * 1000000 + "]" * 1000000)
        b.run("routing_file nested 10^6 deep", "tune", b.write("s3.json", synthetic_spec(routing_file=deep)),
              "--foreground")
        b.run("10^6 batch_sizes (6.9 MB spec)", "tune",
              b.write("s4.json", synthetic_spec(batch_sizes=list(range(1, 10 ** 6 + 1)))), "--foreground")
        b.run("100,000 batch_sizes (0.6 MB spec)", "tune",
              b.write("s5.json", synthetic_spec(batch_sizes=list(range(1, 10 ** 5 + 1)))), "--foreground")
        b.run("200-character device_name", "tune", b.write("s6.json", synthetic_spec(device_name="D" * 200)),
              "--foreground")
        root = os.path.join(tmp, "configs", "triton_3_6_0")
        os.makedirs(root)
        b.run("install source = /dev/zero", "install-config", "/dev/zero", "--framework", "sglang", "--root", root)
        b.run("install source = sparse 10 GiB result.json", "install-config",
              b.sparse("result.json", 10 << 30), "--framework", "sglang", "--root", root)
        name = "E=128,N=768,device_name=NVIDIA_H200.json"
        res = {"format": "moetune-result", "version": 1, "simulated": False, "triton_version": "3.6.0",
               "files": [{"framework": "sglang", "file_name": name, "entries": {"1": {
                   "BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, "num_warps": 4,
                   "num_stages": 3}}}]}
        src = b.write("res.json", res)
        with open(os.path.join(root, name), "wb") as f:
            f.truncate(10 << 30)
        b.run("existing target = sparse 10 GiB file", "install-config", src, "--framework", "sglang", "--root",
              root, "--replace")
        os.unlink(os.path.join(root, name))
        os.mkfifo(os.path.join(root, name))
        b.run("FIFO at the target name (--dry-run)", "install-config", src, "--framework", "sglang", "--root", root,
              "--dry-run")
        # A finished run whose events.jsonl and journal.jsonl end in a 200 MB line without a newline.
        b.run("a small synthetic run (setup)", "tune", b.write("s7.json", synthetic_spec()), "--foreground")
        runs_dir = os.path.join(tmp, "home", "runs")
        rid = sorted(os.listdir(runs_dir))[-1] if os.path.isdir(runs_dir) else None
        if rid:
            for fname in ("events.jsonl", "journal.jsonl"):
                with open(os.path.join(runs_dir, rid, fname), "ab") as f:
                    block = b"x" * (1 << 20)
                    for _ in range(200):
                        f.write(block)
                    f.write(b"\n")
            b.run("attach: 200 MB damaged events line", "attach", rid, "--no-follow")
            b.run("runs: 200 MB damaged journal line", "runs")
        out = os.environ.get("OUT")
        if out:
            with open(os.path.join(out, "limits_bench.json"), "w") as f:
                json.dump({"agent_root": b.agent_root, "mem_limit_mib": args.mem_limit_mib, "rows": b.rows}, f,
                          indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
