#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Diagnosis engine benchmark (issue 2 "Performance"). Prints the measured figures; times nothing in ctest.
#  1. 1 GB generated log: `moetune-cli diagnose FILE --format json` wall time vs `grep -c -F sub-optimal FILE`
#     (goal: within 1.5x), and the CLI's peak RSS (goal: under 64 MB). Both warm: the file is read once
#     before measuring, nothing is dropped from the page cache. Repeated, interleaved; medians reported.
#  2. "Pasting a 10 MB log shows findings in < 200 ms": diagnose_paste_bench (Diagnoser::diagnoseText).
# usage: tests/bench/diagnose_bench.sh [BUILD_DIR] [--size 1G] [--repeat 3]
# BUILD_DIR defaults to build/cli, then build/dev; it must hold moetune-cli and diagnose_paste_bench.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=""
size=1G
repeat=3
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) build=$1; shift ;;
  esac
done
if [ -z "$build" ]; then
  for b in "$root/build/cli" "$root/build/dev" "$root/build/ci"; do
    if [ -x "$b/src/cli/moetune-cli" ]; then build=$b; break; fi
  done
fi
cli=$build/src/cli/moetune-cli
paste=$build/tests/bench/diagnose_paste_bench
if [ ! -x "$cli" ]; then
  echo "diagnose_bench: no moetune-cli under '${build:-build/cli}'; build it first:" >&2
  echo "  cmake --build build/cli --target moetune-cli diagnose_paste_bench" >&2
  exit 2
fi
timebin=${MOETUNE_TIME:-/usr/bin/time}
if [ ! -x "$timebin" ]; then
  echo "diagnose_bench: $timebin (GNU time) is missing: apt-get install time (packaging/install-deps.sh lists it)" >&2
  exit 2
fi

log=/tmp/moetune-bench-$size.log
want=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import gen_log; print(gen_log.parse_size(sys.argv[2]))' \
       "$root/tests/bench" "$size")
if [ ! -f "$log" ] || [ $(( $(stat -c %s "$log") + 65536 )) -lt "$want" ]; then
  echo "generating $log ($size) ..."
  python3 "$root/tests/bench/gen_log.py" --size "$size" --out "$log"
fi
bytes=$(stat -c %s "$log")
echo "log: $log, $bytes bytes, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# Warm both: the file in the page cache, the binaries loaded.
expected=$(grep -c -F 'sub-optimal' "$log")
"$cli" diagnose "$log" --format json >/dev/null || true

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep_times=()
cli_times=()
cli_rss=()
grep_cpu=()
cli_cpu=()
for i in $(seq "$repeat"); do
  "$timebin" -o "$tmp/g" -f '%e %U %S %M' grep -c -F 'sub-optimal' "$log" >"$tmp/gout" || true
  set +e
  "$timebin" -o "$tmp/c" -f '%e %U %S %M' "$cli" diagnose "$log" --format json >"$tmp/cout"
  rc=$?
  set -e
  if [ "$rc" -ne 1 ]; then
    echo "diagnose_bench: moetune-cli exited $rc (expected 1: the log holds warnings)" >&2
    exit 1
  fi
  # GNU time prefixes "Command exited with non-zero status N" when the command fails: take the last line.
  read -r gt gu gs _ < <(tail -n 1 "$tmp/g")
  read -r ct cu cs crss < <(tail -n 1 "$tmp/c")
  grep_times+=("$gt"); cli_times+=("$ct"); cli_rss+=("$crss")
  grep_cpu+=("$(python3 -c "print($gu + $gs)")"); cli_cpu+=("$(python3 -c "print($cu + $cs)")")
  echo "run $i: grep ${gt}s wall (${gu}s user ${gs}s sys, $(cat "$tmp/gout") lines)," \
       "moetune-cli ${ct}s wall (${cu}s user ${cs}s sys), peak RSS $((crss / 1024)) MB"
done
[ "$(cat "$tmp/gout")" = "$expected" ] || { echo "grep count changed" >&2; exit 1; }
python3 - "$tmp/cout" "$expected" "${grep_times[*]}" "${cli_times[*]}" "${cli_rss[*]}" "${grep_cpu[*]}" "${cli_cpu[*]}" <<'PY'
import json, statistics, sys
out, expected, g, c, r, gc, cc = sys.argv[1:]
g = [float(x) for x in g.split()]; c = [float(x) for x in c.split()]; r = [int(x) for x in r.split()]
gc = [float(x) for x in gc.split()]; cc = [float(x) for x in cc.split()]
d = json.load(open(out))
findings = d.get("findings", [])
seen = sum(f.get("occurrences", 0) for f in findings if f.get("severity") in ("warning", "error"))
print("diagnosis: %d findings (%d occurrences at warning or above; grep counts %s 'sub-optimal' lines), %d targets"
      % (len(findings), seen, expected, len(d.get("targets", []))))
gm, cm, peak = statistics.median(g), statistics.median(c), max(r) / 1024.0
ratio = cm / gm if gm > 0 else float("inf")
print("grep -c -F:        median %.2f s" % gm)
print("moetune-cli json:  median %.2f s  -> %.2fx grep  (goal <= 1.5x: %s)" % (cm, ratio, "met" if ratio <= 1.5 else "MISSED"))
print("CPU time (user+sys): grep median %.2f s, moetune-cli median %.2f s -> %.2fx (moetune-cli may use several threads)"
      % (statistics.median(gc), statistics.median(cc), statistics.median(cc) / max(statistics.median(gc), 1e-9)))
print("peak RSS:          %.1f MB  (goal < 64 MB: %s)" % (peak, "met" if peak < 64 else "MISSED"))
PY

if [ -x "$paste" ]; then
  echo "--- paste: 10 MB log through Diagnoser::diagnoseText ---"
  python3 "$root/tests/bench/gen_log.py" --size 10M --warnings 40 --restarts 2 --out "$tmp/paste-10M.log" 2>/dev/null
  "$paste" "$tmp/paste-10M.log"
else
  echo "diagnose_bench: $paste not built; skipping the paste figure" >&2
fi
