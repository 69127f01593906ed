# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tuner timed on the paths users take (issue 22) - the pyz from the build, `tune` a spec, `attach`
until done - one row per path, with where the wall time went, read from the run's own event stream.

    python3 remote_agent/tools/user_path_bench.py [--rows own_up,own_updown,...] [--json OUT.json]
        [--agent PYZ | --before [REF]] [--upstream .upstream] [--cap-s 150] [--synthetic]

Rows (Qwen3-30B-A3B TP1: E=128 N=768 K=2048 topk=8, the agent's 18 batch sizes, strategy fast):
  own_up      own Triton kernel, ops up, bf16
  own_updown  own Triton kernel, ops up+down, bf16
  sglang_up   server backend over SGLang main (<upstream>/sglang_head on PYTHONPATH), ops up
  vllm_up     server backend over vLLM main (<upstream>/vllm_head on PYTHONPATH), ops up
  int4_3      own kernel, int4_w4a16 (group 128), 3 sizes (1, 64, 1024)
  bf16_3      own kernel, bf16, the same 3 sizes (the reference of int4's "within 1.5x")

The breakdown uses only what every agent since issue 9 writes (so the same script times the agent of
main before a change): the run folder's spec.json (written by the `tune` CLI) and pid (the detached
run process), and the events' "ts" of run_started, phase, result_written and done. Phases are charged
by name: "default" (the server default's timing phase), the strategy's phases (and the winners'
correctness checks that follow them), "head-to-head"; an agent that overlaps phases shows it here as
a shorter phase. Where the agent reports them (result.json timings), precompile and compile-cache
counts are printed too.

--before [REF] builds the pyz of REF (default: the merge base of HEAD and main) from `git archive`
into .before/ (git-ignored) and times that, so "before" and "after" come from one script. A row is
cancelled after --cap-s (it is then reported as capped, with the units it had measured).
--synthetic runs every row on the synthetic backend (SIMULATED timings; for testing this script).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
REPO = os.path.dirname(AGENT_ROOT)
sys.path.insert(0, os.path.join(AGENT_ROOT, "bench"))
from headroom_bench import Agent  # noqa: E402  (the benchmarks' one way to run an agent command)

QWEN3 = {"E": 128, "N": 768, "K": 2048, "topk": 8}
ROWS = {
    "own_up": dict(backend="triton", framework="sglang", ops="up"),
    "own_updown": dict(backend="triton", framework="sglang", ops="up+down"),
    "sglang_up": dict(backend="server", framework="sglang", ops="up", tree="sglang_head"),
    "vllm_up": dict(backend="server", framework="vllm", ops="up", tree="vllm_head"),
    "int4_3": dict(backend="triton", framework="sglang", ops="up", dtype="int4_w4a16", block_shape=[0, 128],
                   sizes=[1, 64, 1024]),
    "bf16_3": dict(backend="triton", framework="sglang", ops="up", sizes=[1, 64, 1024]),
}
ORDER = ["own_up", "own_updown", "sglang_up", "vllm_up", "int4_3", "bf16_3"]
GOALS = {"own_up": 30.0, "own_updown": 45.0, "sglang_up": 60.0, "vllm_up": 60.0}


def build_pyz(src_root, out):
    """The pyz as the app's build makes it (build_pyz.py of that tree, with its kernels/)."""
    subprocess.run([sys.executable, os.path.join(src_root, "remote_agent", "build_pyz.py"), "--src",
                    os.path.join(src_root, "remote_agent"), "--kernels", os.path.join(src_root, "kernels"),
                    "--out", out], check=True, stdout=subprocess.DEVNULL)
    return out


def prebuilt_before(ref=None):
    """A .before/<sha>/moetune-agent.pyz built earlier (a device checkout has no git history: build it
    where there is one with --build-before-only and carry .before): the one whose sha starts with ref,
    or the only one there."""
    top = os.path.join(REPO, ".before")
    try:
        found = sorted(d for d in os.listdir(top) if os.path.isfile(os.path.join(top, d, "moetune-agent.pyz")))
    except OSError:
        found = []
    if ref:
        found = [d for d in found if d.startswith(ref[:12]) or ref.startswith(d)]
    if len(found) == 1:
        return os.path.join(top, found[0], "moetune-agent.pyz"), found[0]
    return None, None


def build_before(ref=None):
    """.before/<ref>/moetune-agent.pyz from `git archive ref` (kept: a second call reuses it)."""
    if ref:
        pyz, sha = prebuilt_before(ref)
        if pyz is not None:
            return pyz, sha
    try:
        return _build_before_git(ref)
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("--before: cannot build the pyz of %s here (%s) and there is no prebuilt "
                         ".before/<sha>/moetune-agent.pyz: build one with --build-before-only where the git history "
                         "is, and carry .before" % (ref or "the merge base", e))


def _build_before_git(ref=None):
    if ref is None:
        ref = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=REPO, stdout=subprocess.PIPE,
                             check=True).stdout.decode().strip()
    sha = subprocess.run(["git", "rev-parse", ref], cwd=REPO, stdout=subprocess.PIPE,
                         check=True).stdout.decode().strip()
    top = os.path.join(REPO, ".before", sha[:12])
    pyz = os.path.join(top, "moetune-agent.pyz")
    if os.path.isfile(pyz):
        return pyz, sha
    tree = os.path.join(top, "tree")
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(tree)
    arch = subprocess.run(["git", "archive", sha, "remote_agent", "kernels", "CMakeLists.txt"], cwd=REPO,
                          stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["tar", "-x", "-C", tree], input=arch, check=True)
    build_pyz(tree, pyz)
    shutil.rmtree(tree, ignore_errors=True)  # the pyz is all a run needs (and what the device call carries)
    return pyz, sha


def read_events(run_dir):
    out = []
    try:
        with open(os.path.join(run_dir, "events.jsonl"), encoding="utf-8") as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def mtime(path):
    try:
        return os.path.getmtime(path)
    except OSError:
        return None


def breakdown(t_spawn, t_end, run_dir, events):
    """Seconds per stage from the run folder and its events (see the module comment)."""
    marks = []  # (ts, label) in order
    first = {}
    for e in events:
        t = e.get("type")
        ts = e.get("ts")
        if ts is None:
            continue
        if t == "phase":
            name = e.get("name") or "?"
            label = "default" if name == "default" else ("head-to-head" if name == "head-to-head" else "strategy")
            marks.append((ts, label))
        elif t in ("run_started", "result_written", "done"):
            first.setdefault(t, ts)
    spec_t = mtime(os.path.join(run_dir, "spec.json"))
    pid_t = mtime(os.path.join(run_dir, "pid"))
    st = {}

    def add(k, v):
        if v is not None:
            st[k] = round(st.get(k, 0.0) + max(0.0, v), 3)

    rs = first.get("run_started")
    if spec_t is not None:
        add("cli_start", spec_t - t_spawn)
        if pid_t is not None:
            add("detach", pid_t - spec_t)
    if rs is not None:
        base = pid_t if pid_t is not None else (spec_t if spec_t is not None else t_spawn)
        # worker spawn, torch/triton import, the info call with its smoke check (compiles one kernel per op)
        add("backend_start", rs - base)
    rw = first.get("result_written")
    done = first.get("done")
    end_marks = rw if rw is not None else done
    if marks and rs is not None:
        add("space_and_first_phase_setup", marks[0][0] - rs)
    for i, (ts, label) in enumerate(marks):
        nxt = marks[i + 1][0] if i + 1 < len(marks) else (end_marks if end_marks is not None else t_end)
        add(label, nxt - ts)
    if rw is not None and done is not None:
        add("result_write", done - rw)
    if done is not None:
        add("exit_and_attach", t_end - done)
    return st


def spec_of(row, synthetic, sizes_override=None):
    r = ROWS[row]
    spec = dict(QWEN3, framework=r["framework"], backend="synthetic" if synthetic else r["backend"], ops=r["ops"],
                strategy="fast")
    if r.get("dtype"):
        spec["dtype"] = r["dtype"]
    if r.get("block_shape"):
        spec["block_shape"] = r["block_shape"]
    sizes = sizes_override or r.get("sizes")
    if sizes:
        spec["batch_sizes"] = list(sizes)
    return spec


def cache_entries(home):
    """Files in the agent's persistent compile cache under home (0 for an agent without one)."""
    n = 0
    top = os.path.join(home, "triton_cache")
    for _dp, _dn, fns in os.walk(top):
        n += len(fns)
    return n


def run_row(row, pyz, home, upstream, cap_s, synthetic, work, sizes_override=None):
    r = ROWS[row]
    env = dict(os.environ, MOETUNE_HOME=home, PYTHONUNBUFFERED="1")
    if r.get("tree") and not synthetic:
        tree = os.path.join(upstream, r["tree"])
        if not os.path.isdir(tree):
            return {"row": row, "error": "no upstream tree %s" % tree}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(tree), os.environ.get("PYTHONPATH")) if p)
    agent = Agent([sys.executable, pyz], env, cwd=AGENT_ROOT)
    spec = spec_of(row, synthetic, sizes_override)
    sp = os.path.join(work, "spec-%s.json" % row)
    with open(sp, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    cache_before = cache_entries(home)
    t_spawn = time.time()
    rc, evs, err = agent.run(["tune", sp, "--new"], timeout=300)
    started = [e for e in evs if e.get("type") == "run_started"]
    if rc != 0 or not started:
        return {"row": row, "error": "tune rc=%s: %s %s" % (rc, json.dumps(evs)[-800:], err[-800:])}
    run_id = started[0]["run_id"]
    run_dir = started[0]["run_dir"]
    capped = False
    # attach follows the run to its done event; a watchdog cancels a run past the cap
    p = subprocess.Popen(agent.cmd + ["attach", run_id], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env, cwd=AGENT_ROOT)
    while p.poll() is None:
        if cap_s and time.time() - t_spawn > cap_s and not capped:
            capped = True
            agent.run(["cancel", run_id], timeout=60)
        time.sleep(0.1)
    t_end = time.time()
    evs = read_events(run_dir)
    done = [e for e in evs if e.get("type") == "done"]
    res = None
    rp = os.path.join(run_dir, "result.json")
    if os.path.isfile(rp):
        with open(rp, encoding="utf-8") as f:
            res = json.load(f)
    units = sum(1 for e in evs if e.get("type") in ("measurement", "candidate_error"))
    out = {"row": row, "spec": spec, "run_id": run_id, "wall_s": round(t_end - t_spawn, 2), "capped": capped,
           "cap_s": cap_s if capped else None, "status": done[-1].get("status") if done else None,
           "close_s": done[-1].get("close_s") if done else None,
           "units": units, "stages_s": breakdown(t_spawn, t_end, run_dir, evs),
           "result_path": rp if os.path.isfile(rp) else None,
           "compile_cache_files_before": cache_before, "simulated": synthetic,
           "errors": [e.get("message", "")[:300] for e in evs if e.get("type") == "error"],
           "logs": [e.get("message", "")[:200] for e in evs if e.get("type") == "log"][:8]}
    if res is not None:
        t = res.get("timings") or {}
        out["timings"] = {k: t.get(k) for k in ("wall_s", "units_measured", "units_failed", "precompile",
                                                "compile_cache", "overlap", "info_steps", "bytecode_cache",
                                                "kept_graphs", "prewarm")
                          if k in t}
        per = res.get("per_batch") or []
        out["speedups"] = {str(x.get("m")): x.get("speedup") for x in per}
        out["files"] = [f_.get("path") for f_ in res.get("files") or []]
    elif done and done[-1].get("precompile"):  # a capped run: what its done event says
        out["timings"] = {"precompile": done[-1]["precompile"]}
    return out


def print_row(r):
    if "error" in r:
        print("%-11s ERROR %s" % (r["row"], r["error"][:900]), flush=True)
        return
    goal = GOALS.get(r["row"])
    st = r["stages_s"]
    order = ["cli_start", "detach", "backend_start", "space_and_first_phase_setup", "default", "strategy",
             "head-to-head", "result_write", "exit_and_attach"]
    parts = " ".join("%s %.1f" % (k, st[k]) for k in order if k in st)
    print("%-11s wall %6.1f s%s%s | status %s units %d | %s" % (
        r["row"], r["wall_s"], " (goal <= %.0f s)" % goal if goal else "",
        " CAPPED at %.0f s" % r["cap_s"] if r["capped"] else "", r["status"], r["units"], parts), flush=True)
    t = r.get("timings") or {}
    extra = []
    if t.get("precompile"):
        pc = t["precompile"]
        extra.append("precompile submitted %s ok %s failed %s, %s at the GPU's facts (%s s), waited %s s%s"
                     % (pc.get("submitted"), pc.get("ok"), pc.get("failed"), pc.get("at_facts"), pc.get("facts_s"),
                        pc.get("wait_s"), ", first error %s" % pc["first_error"][:200] if pc.get("first_error") else ""))
    if t.get("info_steps"):
        extra.append("GPU worker start-up %s" % json.dumps(t["info_steps"], sort_keys=True))
    if t.get("compile_cache"):
        extra.append("compile cache %s" % json.dumps(t["compile_cache"]))
    if t.get("bytecode_cache"):
        extra.append("bytecode cache %s" % json.dumps(t["bytecode_cache"]))
    if t.get("kept_graphs"):
        extra.append("kept graphs %s" % json.dumps(t["kept_graphs"], sort_keys=True))
    extra.append("cache files before %d" % r["compile_cache_files_before"])
    if r.get("close_s"):
        extra.append("shutdown %s" % json.dumps(r["close_s"], sort_keys=True))
    print("            %s" % "; ".join(extra), flush=True)
    for m in r.get("logs") or []:
        if "precompile" in m or "compile" in m:
            print("            log: %s" % m, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default=",".join(ORDER))
    ap.add_argument("--json", default=None)
    ap.add_argument("--agent", default=None, help="moetune-agent.pyz to time (default: build this checkout's)")
    ap.add_argument("--before", nargs="?", const="", default=None, metavar="REF",
                    help="time the pyz of REF (default: merge-base of HEAD and main), built into .before/")
    ap.add_argument("--build-before-only", action="store_true", help="build .before/'s pyz and exit")
    ap.add_argument("--upstream", default=os.path.join(REPO, ".upstream"))
    ap.add_argument("--cap-s", type=float, default=0.0, help="cancel a row after this many seconds (0: none)")
    ap.add_argument("--row-cap", action="append", default=[], help="ROW=SECONDS, a cap for one row")
    ap.add_argument("--row-sizes", action="append", default=[], help="ROW=1,64,1024: other batch sizes for a row")
    ap.add_argument("--home", default=None, help="MOETUNE_HOME shared by the rows (default: a fresh one)")
    ap.add_argument("--label", default="after")
    ap.add_argument("--synthetic", action="store_true", help="every row on the synthetic backend (SIMULATED)")
    a = ap.parse_args(argv)
    sha = None
    if a.before is not None or a.build_before_only:
        pyz, sha = build_before(a.before or None)
        if a.build_before_only:
            print(pyz)
            return 0
    work = tempfile.mkdtemp(prefix="moetune-upb-")
    if a.before is None:
        pyz = a.agent or build_pyz(REPO, os.path.join(work, "moetune-agent.pyz"))
    home = a.home or os.path.join(work, "home")
    caps = dict(x.split("=", 1) for x in a.row_cap)
    sizes = {k: [int(v) for v in s.split(",")] for k, s in (x.split("=", 1) for x in a.row_sizes)}
    rows = [r for r in a.rows.split(",") if r]
    for r in rows:
        if r not in ROWS:
            raise SystemExit("unknown row %r; rows: %s" % (r, ", ".join(ORDER)))
    print("user_path_bench [%s]%s: agent %s%s; one MOETUNE_HOME for all rows (a user's host: later rows may "
          "reuse an agent's compile cache)" % (a.label, " SIMULATED (synthetic backend)" if a.synthetic else "", pyz,
                                               " (git %s)" % sha[:12] if sha else ""), flush=True)
    out = {"label": a.label, "agent": pyz, "git": sha, "simulated": a.synthetic, "rows": []}
    t0 = time.time()
    for r in rows:
        cap = float(caps.get(r, a.cap_s) or 0)
        res = run_row(r, pyz, home, a.upstream, cap, a.synthetic, work, sizes.get(r))
        out["rows"].append(res)
        print_row(res)
    out["wall_s"] = round(time.time() - t0, 1)
    by = {r["row"]: r for r in out["rows"] if "error" not in r}
    if "int4_3" in by and "bf16_3" in by and by["bf16_3"]["wall_s"]:
        ratio = by["int4_3"]["wall_s"] / by["bf16_3"]["wall_s"]
        out["int4_over_bf16"] = round(ratio, 3)
        print("int4_w4a16 / bf16 wall at 3 sizes: %.2fx (goal <= 1.5x)%s" % (
            ratio, " (int4 CAPPED)" if by["int4_3"]["capped"] else ""), flush=True)
    if a.json:
        d = os.path.dirname(os.path.abspath(a.json))
        os.makedirs(d, exist_ok=True)
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
        print("wrote %s" % a.json, flush=True)
    return 0 if out["rows"] and all("error" not in r for r in out["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
