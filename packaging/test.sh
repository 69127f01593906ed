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

# Time on a 2-core CI machine is the budget: the ASan and fuzz builds run at the lowest priority while
# stage 1's tests and clang-tidy run, so they take only the CPU those leave idle (tests waiting on sshd,
# agent processes and timeouts); the fuzz targets then run side by side, one per core.
t0=$(date +%s)
stamp() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== [1/3] CI build + tests ==="
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$jobs"
stamp "CI build done"
fuzz_targets=(fuzz_logreader fuzz_configname fuzz_configfile fuzz_knownhosts fuzz_hosttext)
mkdir -p build
bg_log=build/background-builds.log
( set -e
  nice -n 19 cmake --preset asan >/dev/null
  nice -n 19 cmake --build --preset asan -j "$jobs"
  nice -n 19 cmake --preset fuzz >/dev/null
  nice -n 19 cmake --build --preset fuzz -j "$jobs" --target "${fuzz_targets[@]}" ) >"$bg_log" 2>&1 &
bg=$!
ctest --preset ci -j "$jobs" --timeout 600
stamp "CI tests done"
echo "=== [1/3] clang-tidy ==="
bash packaging/clang-tidy.sh build/ci
stamp "clang-tidy done"

echo "=== [2/3] ASan + UBSan build + tests ==="
if ! wait "$bg"; then
  tail -n 80 "$bg_log"
  echo "the ASan or fuzz build failed (whole log: $bg_log)" >&2
  exit 1
fi
tail -n 2 "$bg_log"
stamp "ASan and fuzz builds done"
# fleet_e2e (the fleet's whole loop over ten sshd, in the app and the CLI) runs in stage 1 only: CI time.
ctest --preset asan -j "$jobs" --timeout 900 -LE 'python|bench|fleet_e2e'
stamp "ASan tests done"

echo "=== [3/3] fuzzing (bounded) ==="
fuzz_seconds=${MOETUNE_FUZZ_SECONDS:-60}
mkdir -p build/fuzz/artifacts
fuzz_one() {
  local t=$1 f=build/fuzz/tests/fuzz/$1 work
  work=$(mktemp -d)
  local corpus=tests/fuzz/corpus/${t#fuzz_}
  [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
  if ! "$f" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix=build/fuzz/artifacts/ "$work" >"build/fuzz/$t.log" 2>&1; then
    rm -rf "$work"
    return 1
  fi
  rm -rf "$work"
}
pids=(); names=(); failed=()
for t in "${fuzz_targets[@]}"; do
  echo "fuzzing $t for ${fuzz_seconds}s"
  fuzz_one "$t" & pids+=($!); names+=("$t")
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || failed+=("${names[0]}")
    pids=("${pids[@]:1}"); names=("${names[@]:1}")
  fi
done
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
for t in "${fuzz_targets[@]}"; do tail -n 3 "build/fuzz/$t.log"; done
if [ ${#failed[@]} -gt 0 ]; then
  for t in "${failed[@]}"; do tail -n 60 "build/fuzz/$t.log"; done
  echo "FUZZ FAILURE in ${failed[*]}; the input is under build/fuzz/artifacts/" >&2
  exit 1
fi
stamp "fuzzing done"
echo "all test stages passed"
