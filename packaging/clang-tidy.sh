#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs clang-tidy (the checks of .clang-tidy) over the project's own C++ sources, warnings are errors.
# Needs a configured and built tree for compile_commands.json and the generated ui_*.h / moc files:
#   bash packaging/clang-tidy.sh [build-dir [file.cpp...]]      (default build/ci, every src/*.cpp)
# Only headers under src/ are checked (HeaderFilterRegex); Qt's and moc's generated code are not ours.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/ci}
shift || true
if [ ! -f "$build/compile_commands.json" ]; then
  echo "clang-tidy.sh: $build/compile_commands.json is missing: configure and build first (cmake --preset ci)" >&2
  exit 2
fi
root=$(pwd)
jobs=$(nproc)
# clang-tidy reads the build's compile commands without its precompiled header: GCC's .gch is not a
# clang PCH, and without it every file must include what it uses (which is also checked this way).
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - "$build/compile_commands.json" "$db/compile_commands.json" ${1:+per-file} <<'PY'
import json, shlex, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    args = e.pop("arguments", None) or shlex.split(e.pop("command"))
    kept, skip = [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
        elif a == "-include" and i + 1 < len(args) and "cmake_pch" in args[i + 1]:
            skip = True
        elif a != "-Winvalid-pch" and not (a.startswith("-include") and "cmake_pch" in a):
            kept.append(a)
    e["arguments"] = kept
# A unity build compiles batches (unity_N_cxx.cxx, which #include the sources). With file arguments each
# source gets its batch's command and is checked alone; without, the batches themselves are checked: the
# same checks over the same code (every source is in its batch, and the header filter takes the included
# .cpp files), parsing Qt's headers once per batch instead of once per file (about 5x less time).
import os
per_file = len(sys.argv) > 3
out = []
for e in entries:
    unity = e["file"]
    if "/Unity/unity_" not in unity:
        out.append(e)
        continue
    with open(unity, encoding="utf-8") as f:
        sources = [l.split('"')[1] for l in f if l.startswith("#include \"")]
    if not per_file:
        out.append(e)
        continue
    for src in sources:
        out.append(dict(e, file=src, arguments=[src if a == unity or unity.endswith("/" + a) else a for a in e["arguments"]]))
json.dump(out, open(sys.argv[2], "w"))
PY
log=$build/clang-tidy.log
# What to check: the given files, or every batch and every source outside one; a src/*.cpp that is in
# neither (a source no target builds) is an error, so nothing goes unchecked.
if [ $# -gt 0 ]; then
  printf '%s\0' "$@" >"$db/files"
else
  python3 - "$db/compile_commands.json" "$root" "$db/files" <<'PY'
import json, os, subprocess, sys
db, root, out = sys.argv[1], sys.argv[2], sys.argv[3]
entries = json.load(open(db))
files, covered = [], set()
for e in entries:
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    if "/Unity/unity_" in f:
        with open(f, encoding="utf-8") as u:
            srcs = [os.path.realpath(l.split('"')[1]) for l in u if l.startswith('#include "')]
        if any(s.startswith(root + "/src/") for s in srcs):
            files.append(f)
            covered.update(srcs)
    elif f.startswith(root + "/src/"):
        files.append(f)
        covered.add(f)
tracked = subprocess.run(["git", "ls-files", "src/*.cpp"], cwd=root, capture_output=True, text=True,
                         check=True).stdout.split()
missing = [t for t in tracked if os.path.realpath(os.path.join(root, t)) not in covered]
if missing:
    sys.exit("clang-tidy.sh: not in the build's compile commands: " + " ".join(missing))
with open(out, "w") as o:
    o.write("".join(f + "\0" for f in sorted(set(files))))
PY
fi
# One process per file or batch, in parallel; each prints its diagnostics (quiet otherwise). A batch's
# own lines (#include "x.cpp": bugprone-suspicious-include) are the build's, not the project's.
xargs -0 -n 1 -P "$jobs" clang-tidy -p "$db" --quiet --warnings-as-errors='*' \
    --header-filter="^$root/src/" <"$db/files" 2>&1 | grep -v -E '/Unity/unity_[0-9]+_cxx\.cxx:[0-9]+:[0-9]+: (warning|error): suspicious #include' >"$log" || true
warnings=$(grep -cE '(warning|error): .*\[[a-z].*\]$' "$log" || true)
files=$(if [ $# -gt 0 ]; then echo "$# files"; else echo "$(git ls-files 'src/*.cpp' | wc -l) files ($(tr -cd '\0' <"$db/files" | wc -c) compile units)"; fi)
if [ "$warnings" -ne 0 ]; then
  grep -E -A3 '(warning|error): ' "$log" | head -n 400
  echo "clang-tidy: $warnings diagnostics in $files (all of them: $log)" >&2
  exit 1
fi
echo "clang-tidy: $files, 0 diagnostics"
