# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""`probe`: what a tuning job needs to know about this host. Every part is optional and degrades to
null plus an error string (no GPU, no nvidia-smi, no torch, unreadable /proc entries)."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import subprocess
from typing import Any, Dict, List, Optional, Tuple

from . import options
from .backends import SERVER, TRITON, is_simulated
from .hostfacts import (
    SGLANG_CONFIG_DIRS,
    VLLM_CONFIG_DIR,
    FACTS_CHILD,
    mem_total,
    os_name,
    framework_facts,
    nvcc_facts,
    nvidia_smi_gpus,
    python_facts,
)
from .serverlaunch import (
    parent_pid,
    read_text,
    user_name,
    cgroup_facts,
    launch_facts,
    process_owner,
    trusted_path_problem,
)

__all__ = [
    "KERNEL_SOURCES",
    "cgroup_facts",
    "classify_cmdline",
    "find_model_config",
    "kernel_source",
    "model_of",
    "moe_shape",
    "port_of",
    "probe",
    "process_owner",
    "server_interpreter",
    "server_processes",
    "server_view",
    "suggest_spec",
    "trusted_path_problem",
]

# -- running servers ------------------------------------------------------------------------------


def _flag(args, names):
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def classify_cmdline(args: List[str]) -> Optional[str]:
    joined = " ".join(args)
    if (
        "sglang.launch_server" in joined
        or re.search(r"(^|\s|/)-m\s+sglang(\.|\s|$)", joined)
        or re.search(r"(^|\s|/)sglang\s+serve\b", joined)
    ):
        return "sglang"
    if "vllm.entrypoints" in joined or re.search(r"(^|\s|/)vllm\s+serve\b", joined):
        return "vllm"
    return None


def model_of(args, framework):
    m = _flag(args, ["--model-path", "--model"])
    if m is None and framework == "vllm":
        for i, a in enumerate(args):
            if a == "serve" and i + 1 < len(args) and not args[i + 1].startswith("-"):
                return args[i + 1]
    return m


def find_model_config(model: Optional[str]) -> Optional[str]:
    if not model:
        return None
    if os.path.isdir(model):
        p = os.path.join(model, "config.json")
        return p if os.path.isfile(p) else None
    if re.match(r"^[\w.-]+/[\w.-]+$", model):
        hub = os.path.join(
            options.host_env("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface"),
            "hub",
            "models--" + model.replace("/", "--"),
            "snapshots",
        )
        try:
            for snap in sorted(os.listdir(hub)):
                p = os.path.join(hub, snap, "config.json")
                if os.path.isfile(p):
                    return p
        except OSError:
            return None
    return None


def moe_shape(cfg: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    c = cfg
    if not any(k in c for k in ("num_experts", "n_routed_experts", "num_local_experts")) and isinstance(
        cfg.get("text_config"), dict
    ):
        c = cfg["text_config"]
    e = c.get("num_experts") or c.get("n_routed_experts") or c.get("num_local_experts")
    if not e:
        return None
    inter = c.get("moe_intermediate_size") or c.get("intermediate_size")
    q = cfg.get("quantization_config") or c.get("quantization_config") or {}
    qm = q.get("quant_method") if isinstance(q, dict) else None
    wbs = q.get("weight_block_size") if isinstance(q, dict) else None
    dtype = (
        "fp8_w8a8"
        if qm == "fp8"
        else ("bf16" if (c.get("torch_dtype") or cfg.get("torch_dtype")) in ("bfloat16", None) else None)
    )
    return {
        "num_experts": e,
        "top_k": c.get("num_experts_per_tok"),
        "hidden_size": c.get("hidden_size"),
        "moe_intermediate_size": inter,
        "weight_block_size": wbs,
        "quant_method": qm,
        "dtype": dtype,
        "n_shared_experts": c.get("n_shared_experts"),
    }


def suggest_spec(framework: str, moe: Dict[str, Any], tp: int) -> Optional[Dict[str, Any]]:
    if not moe or not all(moe.get(k) for k in ("num_experts", "top_k", "hidden_size", "moe_intermediate_size")):
        return None
    if moe["moe_intermediate_size"] % tp:
        return None
    spec = {
        "framework": framework,
        "E": moe["num_experts"],
        "N": moe["moe_intermediate_size"] // tp,
        "K": moe["hidden_size"],
        "topk": moe["top_k"],
        "dtype": moe["dtype"] if moe["dtype"] != "bf16" else None,
        "block_shape": moe["weight_block_size"] if moe.get("weight_block_size") else None,
    }
    return spec


# How a server process was launched, read from /proc (for the app's server profile suggestion):
# its interpreter, working folder, cgroup (systemd unit or container), stdout/stderr log file, the
# terminal multiplexer or nohup that keeps it alive, and the environment that decides where it reads
# tuned configs from. Every part is None where /proc does not tell (another user's process, no cgroup v2).


def server_interpreter(args: List[str], launch: Dict[str, Any]) -> Optional[str]:
    """The interpreter that runs a server: its argv[0] (a venv's python keeps its venv that way), else
    /proc/PID/exe when argv[0] is not a python. argv[0] is chosen by the process itself: it is checked
    (trusted_path_problem) before anything runs it."""
    exe = args[0] if args else None
    if (
        exe
        and "python" not in os.path.basename(exe)
        and launch.get("exe")
        and "python" in os.path.basename(launch["exe"])
    ):
        exe = launch["exe"]
    if exe and not os.path.isabs(exe):
        exe = launch.get("exe") or shutil.which(exe)
    return exe


def server_view(args: List[str], launch: Dict[str, Any]) -> Dict[str, Any]:
    """The server's own interpreter, its Triton and the config root it reads (its environment, not ours)."""
    exe = server_interpreter(args, launch)
    view: Dict[str, Any] = {
        "python": exe,
        "triton": None,
        "config_root": None,
        "config_root_source": None,
        "error": None,
        "interpreter_problem": None,
        "kernel_source": None,
    }
    if not exe or launch.get("container_id"):
        view["error"] = (
            "the server runs in a container: its interpreter is not visible from the host"
            if launch.get("container_id")
            else "the server's interpreter is unknown"
        )
        return view
    problem = trusted_path_problem(exe)
    if problem:
        # Never run, never named as the server's python (a serving benchmark would run it too).
        view["python"] = None
        view["interpreter_problem"] = problem
        view["error"] = "moetune does not run the server's interpreter %s: %s" % (exe, problem)
        return view
    senv = launch.get("env") or {}
    child_env = options.child_env()
    for k in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        child_env.pop(k, None)
        if senv.get(k):
            child_env[k] = senv[k]
    try:
        p = subprocess.run(
            [exe, "-c", FACTS_CHILD],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=60,
            universal_newlines=True,
            env=child_env,
            cwd=launch.get("cwd") or None,
        )
        facts = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
        facts, view["error"] = None, "cannot run %s: %s" % (exe, e)
    if facts is None:
        view["error"] = view["error"] or "cannot run %s" % exe
        return view
    view["triton"] = (facts.get("triton") or {}).get("version")
    sg = (facts.get("sglang") or {}).get("path")
    vl = (facts.get("vllm") or {}).get("path")
    fw = classify_cmdline(args) or ("sglang" if sg else "vllm")
    view["kernel_source"] = kernel_source(fw, sg if fw == "sglang" else vl)
    if senv.get("SGLANG_MOE_CONFIG_DIR"):
        view["config_root"] = os.path.join(senv["SGLANG_MOE_CONFIG_DIR"], "configs")
        view["config_root_source"] = "SGLANG_MOE_CONFIG_DIR"
    elif sg:
        cands = [os.path.join(sg, *parts, "configs") for parts in SGLANG_CONFIG_DIRS]
        view["config_root"] = next(
            (c for c in cands if os.path.isdir(c)), cands[0] if os.path.isdir(os.path.dirname(cands[0])) else cands[1]
        )
        view["config_root_source"] = "module"
    elif (facts.get("vllm") or {}).get("path"):
        view["config_root"] = os.path.join(facts["vllm"]["path"], *VLLM_CONFIG_DIR)
        view["config_root_source"] = "module"
    return view


# Where each framework's fused-MoE Triton kernel (`fused_moe_kernel`) is defined, relative to its package
# folder, newest layout first (docs/servers.md). Its bytes decide whether a config tuned on one host fits
# another: two hosts running different kernel code are never one fleet tuning group.
KERNEL_SOURCES = {
    "sglang": (
        ("kernels", "ops", "moe", "fused_moe_triton_kernels.py"),
        ("srt", "layers", "moe", "fused_moe_triton", "fused_moe_triton_kernels.py"),
        ("srt", "layers", "moe", "fused_moe_triton", "fused_moe.py"),
    ),
    "vllm": (("model_executor", "layers", "fused_moe", "fused_moe.py"),),
}


def kernel_source(framework: str, package: Optional[str]) -> Optional[Dict[str, Any]]:
    """{path, sha256} of the file defining the framework's fused-MoE kernel under its package folder, the
    first candidate that defines `fused_moe_kernel`; None when none is found or readable."""
    if not package:
        return None
    for parts in KERNEL_SOURCES.get(framework, ()):
        path = os.path.join(package, *parts)
        try:
            with open(path, "rb") as f:
                data = f.read(8 << 20)
        except OSError:
            continue
        if b"def fused_moe_kernel(" in data:
            import hashlib

            return {"path": path, "sha256": hashlib.sha256(data).hexdigest()}
    return None


_DEFAULT_PORT = {"sglang": 30000, "vllm": 8000}


def port_of(args: List[str], framework: str) -> Tuple[Optional[int], bool]:
    """(port, from its command line): --port, else the framework's default port (False)."""
    p = _flag(args, ["--port"])
    if p is not None:
        return (int(p), True) if p.isdigit() and 0 < int(p) < 65536 else (None, True)
    return _DEFAULT_PORT.get(framework), False


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            raw = f.read(1 << 20)
    except OSError:
        return None
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


def server_processes(uid: Optional[int] = None) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """(servers, other users' servers). Every process whose command line is an SGLang or vLLM server, one
    entry per server (a process started by another one of the same framework is its worker). Only the
    processes of `uid` (default: the user the agent runs as) are servers moetune may act on and inspect
    (launch facts, the interpreter run with -c, the model's config.json); a process of another user is
    listed with what its world-readable command line says, and nothing it names is read or run: its
    argv[0] and its files are chosen by that user."""
    me = os.geteuid() if uid is None else uid
    own = os.getpid()
    try:
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    except OSError:
        return [], []
    found = {}
    for pid in pids:
        if pid == own:
            continue
        args = _cmdline(pid)
        if not args or "moetune" in " ".join(args[:3]):
            continue
        fw = classify_cmdline(args)
        if fw is not None:
            found[pid] = (fw, args)
    servers, others = [], []
    for pid, (fw, args) in found.items():
        parent, hops = parent_pid(pid), 0
        while parent and parent > 1 and hops < 64 and not (parent in found and found[parent][0] == fw):
            parent, hops = parent_pid(parent), hops + 1
        if parent in found and found[parent][0] == fw:
            continue  # a worker: it repeats its server's command line
        owner = process_owner(pid)
        if owner is None:
            continue
        model = model_of(args, fw)
        tp_s = _flag(args, ["--tp", "--tp-size", "--tensor-parallel-size", "-tp"])
        tp = int(tp_s) if tp_s and tp_s.isdigit() and int(tp_s) > 0 else 1
        port, port_given = port_of(args, fw)
        entry = {
            "pid": pid,
            "framework": fw,
            "cmdline": args,
            "model": model,
            "tp": tp,
            "port": port,
            "port_from_cmdline": port_given,
            "uid": owner,
            "user": user_name(owner),
        }
        if owner != me:
            cg = cgroup_facts(read_text("/proc/%d/cgroup" % pid))
            entry.update(
                {
                    "systemd_unit": cg["systemd_unit"],
                    "container_id": cg["container_id"],
                    "not_used": "pid %d belongs to %s, not to %s (the user the agent runs as): listed, "
                    "never inspected, run or acted on" % (pid, entry["user"], user_name(me)),
                }
            )
            others.append(entry)
            continue
        entry.update({"model_config_path": None, "moe": None, "suggested_spec": None, "error": None})
        entry["launch"] = launch_facts(pid)
        entry["server_view"] = server_view(args, entry["launch"])
        cfg_path = find_model_config(model)
        entry["model_config_path"] = cfg_path
        if cfg_path:
            try:
                with open(cfg_path, encoding="utf-8") as f:
                    moe = moe_shape(json.load(f))
                entry["moe"] = moe
                entry["suggested_spec"] = suggest_spec(fw, moe, tp) if moe else None
                if moe is None:
                    entry["error"] = "the model's config.json describes no MoE layer"
            except (OSError, ValueError) as e:
                entry["error"] = "cannot read %s: %s" % (cfg_path, e)
        elif model:
            entry["error"] = "model config.json not found for %s" % model
        servers.append(entry)
    return servers, others


def probe(python: Optional[str] = None) -> Dict[str, Any]:
    gpus, gpu_error = nvidia_smi_gpus()
    facts = python_facts(python)
    py = {
        "executable": facts.get("executable"),
        "version": facts.get("version"),
        "torch": (facts.get("torch") or {}).get("version"),
        "torch_cuda": facts.get("torch_cuda"),
        "triton": (facts.get("triton") or {}).get("version"),
        "error": facts.get("error"),
    }
    fws = [framework_facts(n, facts) for n in ("sglang", "vllm")] if not facts.get("error") else []
    servers, others = server_processes()
    return {
        "host": {
            "hostname": socket.gethostname(),
            "os": os_name(),
            "kernel": platform.release(),
            "cpu_count": os.cpu_count(),
            "mem_total_bytes": mem_total(),
        },
        "gpus": gpus,
        "gpu_error": gpu_error,
        "python": py,
        "nvcc": nvcc_facts(),
        "frameworks": fws,
        "servers": servers,
        "other_users_servers": others,
        "tunable": _tunable(py, fws, gpus),
    }


def _tunable(py, frameworks=(), gpus=None):
    """Which quantisation variants each backend can tune (spec.TUNABLE), which of those backends can run
    with the inspected interpreter and this host's GPUs (usable_here), and for every other backend of a
    variant the reason it cannot, as a sentence (not_usable_here: {backend: why})."""
    from .spec import capability_table

    exe = py.get("executable") or "the inspected Python"
    missing = [n for n in ("torch", "triton") if not py.get(n)]
    servers = [f["name"] for f in frameworks or () if f.get("importable")]
    why = {}
    if missing:
        why[TRITON] = why[SERVER] = "%s has no %s" % (exe, " and no ".join(missing))
    elif gpus is not None and not gpus:
        why[TRITON] = why[SERVER] = "no NVIDIA GPU was found on this host"
    elif not servers:
        why[SERVER] = "neither SGLang nor vLLM is importable with %s" % exe
    rows = capability_table()
    for r in rows:
        r["usable_here"] = [b for b in r["backends"] if b not in why]
        r["not_usable_here"] = {b: why[b] for b in r["backends"] if b in why}
        if not [b for b in r["backends"] if not is_simulated(b)]:
            r["not_usable_here"]["any GPU backend"] = (
                "no kernel here tunes %s with the servers' config "
                "semantics; only the synthetic backend (simulated) "
                "accepts it" % r["variant"]
            )
    return rows
