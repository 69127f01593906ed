#!/usr/bin/env bash
# Runs clang-tidy (the checks of .clang-tidy) over the project's own C++ sources, warnings are errors.
# Needs a configured and built tree for compile_commands.json and the generated ui_*.h / moc files:
#   bash packaging/clang-tidy.sh [build-dir]      (default build/ci)
# Only headers under src/ are checked (HeaderFilterRegex); Qt's and moc's generated code are not ours.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/ci}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "clang-tidy.sh: $build/compile_commands.json is missing: configure and build first (cmake --preset ci)" >&2
  exit 2
fi
root=$(pwd)
jobs=$(nproc)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One process per file, in parallel; each prints its diagnostics (quiet otherwise).
git ls-files -z 'src/*.cpp' |
  xargs -0 -n 1 -P "$jobs" clang-tidy -p "$build" --quiet --warnings-as-errors='*' \
    --header-filter="^$root/src/" >"$log" 2>&1 || true
warnings=$(grep -cE '(warning|error): .*\[[a-z].*\]$' "$log" || true)
files=$(git ls-files 'src/*.cpp' | wc -l)
if [ "$warnings" -ne 0 ]; then
  grep -E -A3 '(warning|error): ' "$log" | head -n 400
  echo "clang-tidy: $warnings diagnostics in $files files" >&2
  exit 1
fi
echo "clang-tidy: $files files, 0 diagnostics"
