# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the single-file agent: moetune-agent.pyz (a zipapp) with kernels/ as package data.

Reproducible: files in sorted order with a fixed timestamp, so the same sources give the same bytes
and the app can skip the upload when the checksum on the host matches.
"""

import argparse
import os
import re
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


def cmake_project_version(src):
    """The project(... VERSION x.y.z) of the CMakeLists.txt above remote_agent/ (the one source)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(src)), "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*moetune\s+VERSION\s+([0-9][0-9.]*)", f.read())
    if not m:
        raise SystemExit("build_pyz: no project(moetune VERSION ...) in the root CMakeLists.txt; pass --version")
    return m.group(1)


def build(src, kernels, out, version=None):
    version = version or cmake_project_version(src)
    if not re.match(r"^[0-9]+(\.[0-9]+)*$", version):
        raise SystemExit("build_pyz: --version %r is not a dotted version" % version)
    entries = {"__main__.py": MAIN.encode(),
               "moetune_agent/_version.py": ('"""Written by build_pyz.py from CMake\'s project version."""\n\n'
                                             'VERSION = "%s"\n' % version).encode()}
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
    p.add_argument("--version", help="agent version (CMake passes PROJECT_VERSION; default: read from it)")
    a = p.parse_args(argv)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    build(a.src, a.kernels, a.out, a.version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
