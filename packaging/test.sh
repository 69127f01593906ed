#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# README command 2: install what is missing, build, and run every test:
#  1. CI build (warnings are errors): unit, GUI (offscreen), CLI, integration (real sshd on 127.0.0.1),
#     Python agent tests - all through ctest.
#     Then clang-tidy (.clang-tidy's checks, warnings are errors) over every src/*.cpp of that build.
#  2. The same tests under AddressSanitizer + UBSan.
#  3. libFuzzer targets (clang), each for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
export QT_QPA_PLATFORM=offscreen
jobs=$(nproc)

echo "=== [1/3] CI build + tests ==="
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$jobs"
ctest --preset ci -j "$jobs" --timeout 600
echo "=== [1/3] clang-tidy ==="
bash packaging/clang-tidy.sh build/ci

echo "=== [2/3] ASan + UBSan build + tests ==="
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs" --timeout 900 -LE 'python|bench'

echo "=== [3/3] fuzzing (bounded) ==="
cmake --preset fuzz >/dev/null
fuzz_targets=(fuzz_logreader fuzz_configname fuzz_configfile fuzz_knownhosts fuzz_hosttext)
cmake --build --preset fuzz -j "$jobs" --target "${fuzz_targets[@]}"
fuzz_seconds=${MOETUNE_FUZZ_SECONDS:-60}
for t in "${fuzz_targets[@]}"; do
  f=build/fuzz/tests/fuzz/$t
  name=$(basename "$f")
  corpus=tests/fuzz/corpus/${name#fuzz_}
  work=$(mktemp -d)
  [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
  mkdir -p build/fuzz/artifacts
  echo "fuzzing $name for ${fuzz_seconds}s"
  if ! "$f" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix=build/fuzz/artifacts/ "$work" >"build/fuzz/$name.log" 2>&1; then
    tail -n 60 "build/fuzz/$name.log"
    echo "FUZZ FAILURE in $name; the input is under build/fuzz/artifacts/" >&2
    exit 1
  fi
  tail -n 3 "build/fuzz/$name.log"
  rm -rf "$work"
done
echo "all test stages passed"
