"""Builds the single-file agent: moetune-agent.pyz (a zipapp) with kernels/ as package data.

Reproducible: files in sorted order with a fixed timestamp, so the same sources give the same bytes
and the app can skip the upload when the checksum on the host matches.
"""

import argparse
import os
import stat
import sys
import zipfile

FIXED_TIME = (2020, 1, 1, 0, 0, 0)
MAIN = ("# moetune-agent entry point (zipapp)\nimport sys\n\nfrom moetune_agent.cli import main\n\n"
        "sys.exit(main())\n")


def _add(zf, arcname, data):
    info = zipfile.ZipInfo(arcname, FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    zf.writestr(info, data)


def build(src, kernels, out):
    entries = {"__main__.py": MAIN.encode()}
    pkg = os.path.join(src, "moetune_agent")
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and d != "kernels")
        for fn in filenames:
            if fn.endswith(".py"):
                full = os.path.join(dirpath, fn)
                rel = os.path.relpath(full, src).replace(os.sep, "/")
                with open(full, "rb") as f:
                    entries[rel] = f.read()
    if kernels and os.path.isdir(kernels):
        found = False
        for fn in sorted(os.listdir(kernels)):
            if fn.endswith((".py", ".cu")) and os.path.isfile(os.path.join(kernels, fn)):
                with open(os.path.join(kernels, fn), "rb") as f:
                    entries["moetune_agent/kernels/" + fn] = f.read()
                found = True
        if found and "moetune_agent/kernels/__init__.py" not in entries:
            entries["moetune_agent/kernels/__init__.py"] = b'"""moetune\'s kernels/ (package data)."""\n'
    tmp = out + ".part"
    with open(tmp, "wb") as f:
        f.write(b"#!/usr/bin/env python3\n")
        with zipfile.ZipFile(f, "w") as zf:
            for name in sorted(entries):
                _add(zf, name, entries[name])
    os.chmod(tmp, 0o755)
    os.replace(tmp, out)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--src", required=True, help="remote_agent/ folder")
    p.add_argument("--kernels", help="kernels/ folder (optional)")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    build(a.src, a.kernels, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
