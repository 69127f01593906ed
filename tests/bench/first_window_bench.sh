#!/usr/bin/env bash
# First window: how long from starting `moetune` to its first window painted, shown and the demo log
# diagnosed, cold-ish (page cache kept) and warm, on one X server (Xvfb).
#   bash tests/bench/first_window_bench.sh [app] [runs]     (default build/dev/src/app/moetune, 5 runs)
# Prints every run and the medians in ms. With MOETUNE_BENCH_BUILD=1 it first times what README command 1
# does before the window can come: `bash packaging/run.sh`'s configure + build of moetune and the agent
# in a fresh clone (ccache off), which is the first-window time a new user waits on a fresh checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
app=${1:-build/dev/src/app/moetune}
runs=${2:-5}

if [ "${MOETUNE_BENCH_BUILD:-0}" = 1 ]; then
  clone=$(mktemp -d)
  trap 'rm -rf "$clone"' EXIT
  git clone -q . "$clone/moetune"
  start=$(date +%s%N)
  (cd "$clone/moetune" && CCACHE_DISABLE=1 cmake --preset dev >/dev/null &&
     CCACHE_DISABLE=1 cmake --build --preset dev --target moetune moetune_agent_pyz >/dev/null)
  end=$(date +%s%N)
  echo "build before the first window (fresh clone, configure + build moetune and the agent, $(nproc) cores): $(( (end - start) / 1000000 )) ms"
  app="$clone/moetune/build/dev/src/app/moetune"
fi

[ -x "$app" ] || { echo "first_window_bench: $app is not built (cmake --build --preset dev --target moetune)" >&2; exit 2; }
export HOME=$(mktemp -d)          # a new user's HOME: no hosts, so the demo workspace opens
export XDG_CONFIG_HOME=$HOME/.config
unset QT_QPA_PLATFORM
Xvfb_display=:$(( 90 + RANDOM % 100 ))
Xvfb "$Xvfb_display" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; rm -rf "$HOME"; [ -n "${clone:-}" ] && rm -rf "$clone"' EXIT
export DISPLAY=$Xvfb_display
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done 2>/dev/null || sleep 2

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
