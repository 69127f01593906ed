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
python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'PY'
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
# A unity build compiles batches (unity_N_cxx.cxx, which #include the sources): each source gets its
# batch's command, so every file is checked on its own, as without unity.
out = []
for e in entries:
    unity = e["file"]
    if "/Unity/unity_" not in unity:
        out.append(e)
        continue
    with open(unity, encoding="utf-8") as f:
        sources = [l.split('"')[1] for l in f if l.startswith("#include \"")]
    for src in sources:
        out.append(dict(e, file=src, arguments=[src if a == unity or unity.endswith("/" + a) else a for a in e["arguments"]]))
json.dump(out, open(sys.argv[2], "w"))
PY
log=$build/clang-tidy.log
# One process per file, in parallel; each prints its diagnostics (quiet otherwise).
if [ $# -gt 0 ]; then printf '%s\0' "$@"; else git ls-files -z 'src/*.cpp'; fi |
  xargs -0 -n 1 -P "$jobs" clang-tidy -p "$db" --quiet --warnings-as-errors='*' \
    --header-filter="^$root/src/" >"$log" 2>&1 || true
warnings=$(grep -cE '(warning|error): .*\[[a-z].*\]$' "$log" || true)
files=$(if [ $# -gt 0 ]; then echo $#; else git ls-files 'src/*.cpp' | wc -l; fi)
if [ "$warnings" -ne 0 ]; then
  grep -E -A3 '(warning|error): ' "$log" | head -n 400
  echo "clang-tidy: $warnings diagnostics in $files files (all of them: $log)" >&2
  exit 1
fi
echo "clang-tidy: $files files, 0 diagnostics"
