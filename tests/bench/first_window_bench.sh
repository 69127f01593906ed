#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# First window: how long from starting `moetune` to its first window painted, shown and the demo log
# diagnosed, cold-ish (page cache kept) and warm, on one X server (Xvfb).
#   bash tests/bench/first_window_bench.sh [app] [runs]     (default build/dev/src/app/moetune, 5 runs)
# Prints every run and the medians in ms. With MOETUNE_BENCH_BUILD=1 it first times README command 1 in a
# fresh clone (ccache off, packages already installed): from `bash packaging/run.sh` to its first window
# shown (run.sh's configure, its build of moetune, moetune-cli and the agent, and the app's start), which is
# what a new user waits for on a fresh checkout; it prints the machine's load with it (the machine may be
# shared) and then measures the app of that clone.
set -euo pipefail
cd "$(dirname "$0")/../.."
app=${1:-build/dev/src/app/moetune}
runs=${2:-5}

export HOME=$(mktemp -d)          # a new user's HOME: no hosts, so the demo workspace opens
export XDG_CONFIG_HOME=$HOME/.config
unset QT_QPA_PLATFORM
Xvfb_display=:$(( 90 + RANDOM % 100 ))
Xvfb "$Xvfb_display" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; rm -rf "$HOME"; [ -n "${clone:-}" ] && rm -rf "$clone"' EXIT
export DISPLAY=$Xvfb_display
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done 2>/dev/null || sleep 2

if [ "${MOETUNE_BENCH_BUILD:-0}" = 1 ]; then
  clone=$(mktemp -d)
  git clone -q . "$clone/moetune"
  echo "load before: $(uptime)"
  start=$(( $(date +%s%N) / 1000000 ))
  out=$(cd "$clone/moetune" && env -u CMAKE_CXX_COMPILER_LAUNCHER -u CMAKE_C_COMPILER_LAUNCHER CCACHE_DISABLE=1 \
          bash packaging/run.sh --startup-time 2>"$clone/run.log")
  shown=$(awk '/^first_shown_ms/ {print $2}' <<<"$out")
  [ -n "$shown" ] || { echo "first_window_bench: run.sh showed no window:" >&2; tail -n 30 "$clone/run.log" >&2; exit 1; }
  # ninja's progress lines go to run.sh's standard output (the app prints its times there too).
  steps=$(grep -c '^\[[0-9]*/[0-9]*\]' <<<"$out" || true)
  echo "fresh clone, bash packaging/run.sh to the first window shown: $(( shown - start )) ms ($(nproc) cores, ccache off, $steps build steps)"
  echo "load after: $(uptime)"
  app="$clone/moetune/build/dev/src/app/moetune"
fi

[ -x "$app" ] || { echo "first_window_bench: $app is not built (cmake --build --preset dev --target moetune)" >&2; exit 2; }
paint=(); shown=(); diag=()
for i in $(seq "$runs"); do
  launch=$(( $(date +%s%N) / 1000000 ))
  out=$("$app" --startup-time 2>/dev/null)
  p=$(awk '/^first_paint_ms/ {print $2}' <<<"$out")
  s=$(awk '/^first_shown_ms/ {print $2}' <<<"$out")
  d=$(awk '/^diagnosed_ms/ {print $2}' <<<"$out")
  if [ -z "$p" ] || [ -z "$d" ]; then echo "run $i: the app printed no startup times: $out" >&2; exit 1; fi
  paint+=($((p - launch))); shown+=($((s - launch))); diag+=($((d - launch)))
  echo "run $i: first paint ${paint[-1]} ms, shown ${shown[-1]} ms, demo diagnosed ${diag[-1]} ms after launch"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median over $runs runs: first paint $(median "${paint[@]}") ms, shown $(median "${shown[@]}") ms, demo diagnosed $(median "${diag[@]}") ms"
