# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""HBM bandwidth probe: the CUDA C++ probe (bandwidth.cu) built with nvcc where it exists, else a torch
device-to-device copy. Prints one JSON object: {"method", "copy_gbps", "read_gbps", "bytes"}.

copy_gbps counts bytes read plus bytes written; read_gbps is a pure streaming read (what the MoE weight
stream does). Run: python3 kernels/bandwidth.py [--torch] [--mib 2048]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def _cu_source():
    """bandwidth.cu's text, from this folder or, inside the agent's zipapp, through the zip loader."""
    path = os.path.join(HERE, "bandwidth.cu")
    if os.path.exists(path):
        with open(path, "rb") as f:
            return f.read()
    loader = globals().get("__loader__")
    try:
        return loader.get_data(path) if loader is not None and hasattr(loader, "get_data") else None
    except OSError:
        return None


def _nvcc():
    return shutil.which("nvcc") or (os.path.exists("/usr/local/cuda/bin/nvcc") and "/usr/local/cuda/bin/nvcc")


def _exe_path(folder: str, code: bytes) -> str:
    return os.path.join(folder, "bandwidth-%s" % hashlib.sha256(code + str(_nvcc()).encode()).hexdigest()[:16])


def build(folder: str):
    """bandwidth.cu built once per host into folder (named by the source's and nvcc's hash, written
    atomically) -> the executable's path, or None without nvcc. Only the CPU works: safe beside timing."""
    nvcc, code = _nvcc(), _cu_source()
    if not nvcc or code is None:
        return None
    exe = _exe_path(folder, code)
    if os.path.exists(exe):
        return exe
    os.makedirs(folder, exist_ok=True)
    work = tempfile.mkdtemp(prefix="moetune-bw-", dir=folder)
    try:
        src = os.path.join(work, "bandwidth.cu")
        with open(src, "wb") as f:
            f.write(code)
        subprocess.run([nvcc, "-O3", "-arch=sm_90", "-o", os.path.join(work, "bandwidth"), src], check=True,
                       capture_output=True, timeout=180)
        os.replace(os.path.join(work, "bandwidth"), exe)
        return exe
    except (subprocess.SubprocessError, OSError) as e:
        sys.stderr.write("bandwidth: nvcc build failed (%s)\n" % e)
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


_BUILDS = {}


def prebuild(folder: str) -> None:
    """Start build(folder) in a background thread (a GPU worker's start-up: nvcc's seconds overlap the
    torch import); measure(exe_folder=folder) waits for it."""
    import threading

    if folder in _BUILDS:
        return
    t = threading.Thread(target=build, args=(folder,), name="moetune-bandwidth-build", daemon=True)
    _BUILDS[folder] = t
    t.start()


def _nvcc_probe(mib: int, device: int, exe_folder=None):
    if exe_folder:
        t = _BUILDS.get(exe_folder)
        if t is not None:
            t.join()
        exe = build(exe_folder)
        tmp = None
    else:
        tmp = tempfile.mkdtemp(prefix="moetune-bw-")
        exe = build(tmp)
    if exe is None:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        return None
    try:
        env = dict(os.environ)
        if "CUDA_VISIBLE_DEVICES" not in env:
            env["CUDA_VISIBLE_DEVICES"] = str(device)
        r = subprocess.run([exe, str(mib)], check=True, capture_output=True, text=True, timeout=120, env=env)
        res = json.loads(r.stdout.strip().splitlines()[-1])
        res["method"] = "nvcc"
        return res
    except (subprocess.SubprocessError, OSError, ValueError, IndexError) as e:
        sys.stderr.write("bandwidth: nvcc probe failed (%s); falling back to torch copy\n" % e)
        return None
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _torch_probe(mib: int, device: int):
    import torch

    dev = torch.device("cuda", device)
    n = mib * (1 << 20) // 4
    src = torch.randn(n, device=dev)
    dst = torch.empty_like(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(fn, reps=10):
        for _ in range(3):
            fn()
        ts = []
        for _ in range(reps):
            start.record()
            fn()
            end.record()
            end.synchronize()
            ts.append(start.elapsed_time(end) / 1e3)
        ts.sort()
        return ts[len(ts) // 2]

    t_copy = timed(lambda: dst.copy_(src))
    t_read = timed(lambda: torch.sum(src))
    nbytes = n * 4
    return {"method": "torch", "copy_gbps": 2 * nbytes / t_copy / 1e9, "read_gbps": nbytes / t_read / 1e9,
            "bytes": nbytes}


def measure(mib: int = 2048, device: int = 0, use_nvcc: bool = True, exe_folder=None) -> dict:
    """exe_folder: where the probe's executable is kept between runs (build())."""
    res = _nvcc_probe(mib, device, exe_folder) if use_nvcc else None
    return res or _torch_probe(mib, device)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch", action="store_true", help="skip the nvcc probe")
    ap.add_argument("--mib", type=int, default=2048)
    ap.add_argument("--device", type=int, default=0)
    a = ap.parse_args(argv)
    print(json.dumps(measure(a.mib, a.device, not a.torch)))


if __name__ == "__main__":
    main()
