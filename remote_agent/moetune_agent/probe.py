# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""`probe`: what a tuning job needs to know about this host. Every part is optional and degrades to
null plus an error string (no GPU, no nvidia-smi, no torch, unreadable /proc entries)."""

from __future__ import annotations

import json
import os
import platform
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import options
from .backends import SERVER, TRITON, is_simulated
from .serverconfig import naming

SGLANG_CONFIG_DIRS = (
    # newer (2026) first: srt/layers/moe/moe_runner/triton_utils/configs, then the older location
    ("srt", "layers", "moe", "moe_runner", "triton_utils"),
    ("srt", "layers", "moe", "fused_moe_triton"),
)
VLLM_CONFIG_DIR = ("model_executor", "layers", "fused_moe", "configs")


def _run(cmd: List[str], timeout: float = 15) -> Tuple[int, str, str]:
    try:
        p = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, universal_newlines=True
        )
        return p.returncode, p.stdout, p.stderr
    except FileNotFoundError:
        return 127, "", "%s not found" % cmd[0]
    except subprocess.TimeoutExpired:
        return 124, "", "%s timed out after %gs" % (cmd[0], timeout)
    except OSError as e:
        return 126, "", "%s: %s" % (cmd[0], e)


def _nvidia_smi():
    return options.host().nvidia_smi or shutil.which("nvidia-smi") or "nvidia-smi"


def _num(s):
    s = s.strip()
    try:
        return int(float(s))
    except ValueError:
        return None


def nvidia_smi_gpus() -> Tuple[List[Dict[str, Any]], Optional[str]]:
    smi = _nvidia_smi()
    fields = "index,name,uuid,memory.total,memory.used,compute_cap"
    rc, out, err = _run([smi, "--query-gpu=" + fields, "--format=csv,noheader,nounits"])
    with_cc = True
    if rc != 0 and rc != 127:
        # Older drivers do not know compute_cap.
        rc, out, err = _run(
            [smi, "--query-gpu=index,name,uuid,memory.total,memory.used", "--format=csv,noheader,nounits"]
        )
        with_cc = False
    if rc != 0:
        return [], (err.strip() or out.strip() or "nvidia-smi failed (exit %d)" % rc).splitlines()[0]
    gpus = []
    by_uuid = {}
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 5 or not parts[0].isdigit():
            continue
        cc = parts[5] if with_cc and len(parts) > 5 and re.match(r"^\d+\.\d+$", parts[5]) else None
        g = {
            "index": int(parts[0]),
            "name": naming.device_file_name(parts[1]),
            "raw_name": parts[1],
            "uuid": parts[2],
            "memory_total_mib": _num(parts[3]),
            "memory_used_mib": _num(parts[4]),
            "compute_capability": cc,
            "processes": [],
        }
        gpus.append(g)
        by_uuid[parts[2]] = g
    rc, out, _ = _run(
        [smi, "--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader,nounits"]
    )
    if rc == 0:
        for line in out.splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) >= 4 and parts[0] in by_uuid and parts[1].isdigit():
                by_uuid[parts[0]]["processes"].append(
                    {"pid": int(parts[1]), "name": parts[2], "used_memory_mib": _num(parts[3])}
                )
    return gpus, None


def gpu_indices() -> List[int]:
    """Visible CUDA devices (nvidia-smi), honouring CUDA_VISIBLE_DEVICES when it lists indices."""
    vis = options.host_env("CUDA_VISIBLE_DEVICES")
    if vis is not None and vis.strip() != "":
        out = []
        for part in vis.split(","):
            part = part.strip()
            if part.isdigit():
                out.append(int(part))
        if out:
            return out
    gpus, _ = nvidia_smi_gpus()
    return [g["index"] for g in gpus] or [0]


# The child script runs under the user's interpreter (maybe a venv's); it imports nothing heavy:
# versions come from package metadata, module folders from find_spec.
_CHILD = r"""
import json, os, sys
out = {"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3]}
try:
    from importlib import metadata as md
except ImportError:
    md = None
import importlib.util
def ver(name):
    if md is not None:
        try:
            return md.version(name)
        except Exception:
            pass
    return None
def loc(name):
    try:
        s = importlib.util.find_spec(name)
    except Exception:
        return None
    if s is None:
        return None
    if s.submodule_search_locations:
        return list(s.submodule_search_locations)[0]
    return os.path.dirname(s.origin) if s.origin else None
for name in ("torch", "triton", "sglang", "vllm"):
    out[name] = {"path": loc(name), "version": ver(name)}
    if out[name]["path"] and not out[name]["version"]:
        try:
            mod = __import__(name)
            out[name]["version"] = getattr(mod, "__version__", None)
        except Exception as e:
            out[name]["import_error"] = "%s: %s" % (type(e).__name__, e)
tc = None
if out["torch"]["path"]:
    try:
        with open(os.path.join(out["torch"]["path"], "version.py")) as f:
            for line in f:
                if line.startswith("cuda"):
                    tc = line.split("=", 1)[1].strip().strip("'\"")
                    tc = None if tc in ("None", "") else tc
    except Exception:
        pass
out["torch_cuda"] = tc
print(json.dumps(out))
"""


def python_facts(python: Optional[str] = None) -> Dict[str, Any]:
    exe = python or sys.executable
    rc, out, err = _run([exe, "-c", _CHILD], timeout=60)
    if rc != 0:
        return {
            "executable": exe,
            "error": "cannot run %s: %s" % (exe, (err.strip().splitlines() or ["exit %d" % rc])[-1]),
        }
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"executable": exe, "error": "unexpected output from %s" % exe}


def _list_json(folder):
    try:
        return sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []


def sglang_root(module_path: Optional[str]) -> Tuple[Optional[str], Optional[str]]:
    """-> (config root, source). SGLANG_MOE_CONFIG_DIR replaces the folder that holds configs/."""
    env = options.host_env("SGLANG_MOE_CONFIG_DIR")
    if env:
        return os.path.join(env, "configs"), "SGLANG_MOE_CONFIG_DIR"
    if not module_path:
        return None, None
    cands = [os.path.join(module_path, *parts, "configs") for parts in SGLANG_CONFIG_DIRS]
    for c in cands:
        if os.path.isdir(c):
            return c, "module"
    # Neither exists yet: the newer layout's folder if its loader module exists, else the older.
    if os.path.isdir(os.path.dirname(cands[0])):
        return cands[0], "module"
    return cands[1], "module"


def framework_facts(name: str, facts: Dict[str, Any]) -> Dict[str, Any]:
    f = facts.get(name) or {}
    tv = (facts.get("triton") or {}).get("version")
    d = {
        "name": name,
        "importable": bool(f.get("path")),
        "version": f.get("version"),
        "module_path": f.get("path"),
        "config_root": None,
        "config_root_source": None,
        "config_root_exists": False,
        "user_folder": None,
        "triton_folder": None,
        "triton_folder_exists": False,
        "triton_folders": [],
        "files": [],
        "user_files": [],
        "error": None if f.get("path") else "No module named %r in %s" % (name, facts.get("executable")),
        "triton_version": tv,
    }
    if name == "sglang":
        root, src = sglang_root(f.get("path"))
        d["config_root"], d["config_root_source"] = root, src
        if root:
            d["config_root_exists"] = os.path.isdir(root)
            folders = []
            try:
                names = os.listdir(root)
            except OSError:
                names = []
            for n in names:
                v = naming.parse_triton_version(n) if n.startswith("triton_") else None
                if v is not None and os.path.isdir(os.path.join(root, n)):
                    folders.append(
                        (v, {"name": n, "version": "%d.%d.%d" % v, "files": _list_json(os.path.join(root, n))})
                    )
            d["triton_folders"] = [x for _, x in sorted(folders, key=lambda t: t[0], reverse=True)]
            d["files"] = _list_json(root)
            if tv and naming.parse_triton_version(tv):
                d["triton_folder"] = naming.triton_folder(tv)
                d["triton_folder_exists"] = os.path.isdir(os.path.join(root, d["triton_folder"]))
    else:
        if f.get("path"):
            d["config_root"] = os.path.join(f["path"], *VLLM_CONFIG_DIR)
            d["config_root_source"] = "module"
            d["config_root_exists"] = os.path.isdir(d["config_root"])
            d["files"] = _list_json(d["config_root"])
        uf = options.host_env("VLLM_TUNED_CONFIG_FOLDER")
        if uf:
            d["user_folder"] = uf
            d["user_files"] = _list_json(uf)
    return d


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
_SERVER_ENV = (
    "CUDA_VISIBLE_DEVICES",
    "SGLANG_MOE_CONFIG_DIR",
    "VLLM_TUNED_CONFIG_FOLDER",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "PATH",
    "TMUX",
    "STY",
)
_CONTAINER_RE = re.compile(r"(?:docker[-/]|cri-containerd-|libpod-|crio-)([0-9a-f]{64})")


def _readlink(path):
    try:
        return os.readlink(path)
    except OSError:
        return None


def _read_text(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def _ppid(pid):
    st = _read_text("/proc/%d/stat" % pid)
    if not st or ")" not in st:
        return None
    fields = st.rsplit(")", 1)[1].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def _comm(pid):
    c = _read_text("/proc/%d/comm" % pid)
    return c.strip() if c else None


def cgroup_facts(text: Optional[str]) -> Dict[str, Any]:
    """systemd unit (system or user) and container id from the text of /proc/PID/cgroup."""
    out: Dict[str, Any] = {"cgroup": None, "systemd_unit": None, "systemd_user": False, "container_id": None}
    if not text:
        return out
    paths = [line.split(":", 2)[2] for line in text.splitlines() if line.count(":") >= 2]
    path = next((p for p in paths if p and p != "/"), None)
    out["cgroup"] = path
    for p in paths:
        m = _CONTAINER_RE.search(p)
        if m:
            out["container_id"] = m.group(1)
            return out
    if path:
        parts = [x for x in path.split("/") if x]
        units = [x for x in parts if x.endswith(".service") and not x.startswith("user@")]
        if units:
            out["systemd_unit"] = units[-1]
            out["systemd_user"] = any(x.startswith("user@") for x in parts)
    return out


def _log_file(pid):
    # A regular file on stdout or stderr is the server's log (nohup ... > server.log 2>&1).
    for fd in (1, 2):
        target = _readlink("/proc/%d/fd/%d" % (pid, fd))
        if (
            target
            and target.startswith("/")
            and not target.startswith(("/dev/", "/proc/"))
            and os.path.isfile(target.replace(" (deleted)", ""))
        ):
            return target
    return None


def _supervisor(pid, env):
    # The tmux/screen session or nohup that keeps the process alive, walking up to 12 parents.
    if env.get("TMUX"):
        return "tmux"
    if env.get("STY"):
        return "screen"
    cur = pid
    for _ in range(12):
        cur = _ppid(cur)
        if not cur or cur <= 1:
            break
        comm = (_comm(cur) or "").lower()
        if comm.startswith("tmux"):
            return "tmux"
        if comm.startswith("screen"):
            return "screen"
    status = _read_text("/proc/%d/status" % pid) or ""
    m = re.search(r"^SigIgn:\s*([0-9a-fA-F]+)", status, re.M)
    if m and int(m.group(1), 16) & 1:  # SIGHUP (bit 0) ignored: nohup
        return "nohup"
    return None


def launch_facts(pid: int) -> Dict[str, Any]:
    env = {}
    raw = _read_text("/proc/%d/environ" % pid)
    if raw:
        for item in raw.split("\0"):
            k, sep, v = item.partition("=")
            if sep and k in _SERVER_ENV:
                env[k] = v
    d = {
        "ppid": _ppid(pid),
        "exe": _readlink("/proc/%d/exe" % pid),
        "cwd": _readlink("/proc/%d/cwd" % pid),
        "log_file": _log_file(pid),
        "supervisor": _supervisor(pid, env),
        "env": env if raw is not None else None,
    }
    d.update(cgroup_facts(_read_text("/proc/%d/cgroup" % pid)))
    return d


def _user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return "uid %d" % uid


def process_owner(pid: int) -> Optional[int]:
    """The real user of a process (its /proc folder's owner), None when it is gone."""
    try:
        return os.stat("/proc/%d" % pid).st_uid
    except OSError:
        return None


def trusted_path_problem(path: Optional[str], uid: Optional[int] = None) -> Optional[str]:
    """None when `path` is an executable file that no one but `uid` (default: the user the agent runs as)
    and root can replace: the file and every folder on the way to it, every link followed and the folder
    each link lies in, are owned by that user or root and not writable by group or others. A folder others
    may write is accepted only with the sticky bit (/tmp), where an entry can be replaced only by its owner,
    which is checked next. Else a sentence saying which part fails: an interpreter is never run from there,
    because whoever can write it would run their code with this user's rights."""
    me = os.geteuid() if uid is None else uid
    if not path or not os.path.isabs(path):
        return "%r is not an absolute path" % path
    trusted = {me, 0}

    def bad(p, st, what):
        if st.st_uid not in trusted:
            return "%s %s belongs to %s, not to %s or root" % (what, p, _user_name(st.st_uid), _user_name(me))
        writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if writable and not (stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX):
            return "%s %s can be written by %s (mode %04o)" % (
                what,
                p,
                "others" if st.st_mode & stat.S_IWOTH else "its group",
                stat.S_IMODE(st.st_mode),
            )
        return None

    pending = [c for c in path.split("/") if c]
    cur = "/"
    hops = 0
    try:
        why = bad("/", os.lstat("/"), "the folder")
        if why:
            return why
        while pending:
            name = pending.pop(0)
            if name == ".":
                continue
            if name == "..":
                cur = os.path.dirname(cur)
                continue
            nxt = os.path.join(cur, name)
            st = os.lstat(nxt)
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > 40:
                    return "%s has too many levels of links" % path
                if st.st_uid not in trusted:  # a link's own mode means nothing; its owner may replace it
                    return "the link %s belongs to %s, not to %s or root" % (nxt, _user_name(st.st_uid), _user_name(me))
                target = os.readlink(nxt)
                if target.startswith("/"):
                    cur = "/"
                pending = [c for c in target.split("/") if c] + pending
                continue
            why = bad(nxt, st, "the folder" if pending else "the file")
            if why:
                return why
            if pending and not stat.S_ISDIR(st.st_mode):
                return "%s is not a folder" % nxt
            cur = nxt
        st = os.stat(cur)
        if not stat.S_ISREG(st.st_mode) or not os.access(cur, os.X_OK):
            return "%s is not an executable file" % cur
    except OSError as e:
        return "cannot check %s: %s" % (path, e.strerror or e)
    return None


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
            [exe, "-c", _CHILD],
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
        parent, hops = _ppid(pid), 0
        while parent and parent > 1 and hops < 64 and not (parent in found and found[parent][0] == fw):
            parent, hops = _ppid(parent), hops + 1
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
            "user": _user_name(owner),
        }
        if owner != me:
            cg = cgroup_facts(_read_text("/proc/%d/cgroup" % pid))
            entry.update(
                {
                    "systemd_unit": cg["systemd_unit"],
                    "container_id": cg["container_id"],
                    "not_used": "pid %d belongs to %s, not to %s (the user the agent runs as): listed, "
                    "never inspected, run or acted on" % (pid, entry["user"], _user_name(me)),
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


def _mem_total():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _os_name():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def nvcc_facts():
    path = shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None
    )
    if not path:
        return None
    _rc, out, _ = _run([path, "--version"])
    m = re.search(r"release ([0-9.]+)", out)
    return {"path": path, "version": m.group(1) if m else None}


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
            "os": _os_name(),
            "kernel": platform.release(),
            "cpu_count": os.cpu_count(),
            "mem_total_bytes": _mem_total(),
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
