# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host facts the probe reports: GPUs from nvidia-smi, the Python interpreter's torch/Triton/servers, where each
server reads its tuned configs, memory, OS name, nvcc. Each part degrades to null plus an error string."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import options
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
FACTS_CHILD = r"""
import json, os, sys

__all__ = ["FACTS_CHILD", "SGLANG_CONFIG_DIRS", "VLLM_CONFIG_DIR", "framework_facts", "gpu_indices", "mem_total", "nvcc_facts", "nvidia_smi_gpus", "os_name", "python_facts", "sglang_root"]
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
    rc, out, err = _run([exe, "-c", FACTS_CHILD], timeout=60)
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


def mem_total():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def os_name():
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
