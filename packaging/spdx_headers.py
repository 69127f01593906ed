#!/usr/bin/env python3
"""Adds or checks the SPDX licence lines at the top of every source file of the project.

    python3 packaging/spdx_headers.py          # report files without the lines (exit 1 if any)
    python3 packaging/spdx_headers.py --fix    # insert them (after a shebang line)

Data files (logs, JSON, images, fuzz inputs, Qt Designer forms) carry no header: the LICENSE file at the
root covers the whole repository.
"""
import argparse
import subprocess
import sys
from pathlib import Path

LICENSE_ID = "GPL-3.0-or-later"
COPYRIGHT = "2026 The moetune authors"
COMMENT = {".cpp": "//", ".h": "//", ".py": "#", ".sh": "#", ".cmake": "#", ".toml": "#"}
NAMED = {"CMakeLists.txt": "#", "run": "#"}  # .ci/run


def comment_of(path: Path):
    if path.name in NAMED:
        return NAMED[path.name]
    return COMMENT.get(path.suffix)


def header(marker: str):
    return [f"{marker} SPDX-FileCopyrightText: {COPYRIGHT}\n",
            f"{marker} SPDX-License-Identifier: {LICENSE_ID}\n"]


def has_header(lines):
    return any("SPDX-License-Identifier:" in line for line in lines[:5])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fix", action="store_true", help="insert the lines where they are missing")
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True,
                           capture_output=True).stdout.decode().split("\0")
    missing = []
    for name in filter(None, files):
        path = root / name
        marker = comment_of(path)
        if marker is None or not path.is_file() or path.is_symlink():
            continue
        if "/fuzz/corpus/" in name or "/upstream/" in name:
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        if has_header(lines):
            continue
        missing.append(name)
        if args.fix:
            at = 1 if lines and lines[0].startswith("#!") else 0
            lines[at:at] = header(marker)
            path.write_text("".join(lines), encoding="utf-8")
    if missing and not args.fix:
        print(f"{len(missing)} source files lack the SPDX lines (run: python3 packaging/spdx_headers.py --fix):")
        for name in missing:
            print(f"  {name}")
        return 1
    if args.fix:
        print(f"inserted the SPDX lines into {len(missing)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
