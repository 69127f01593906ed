#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Diagnosis cost against the number of distinct MoE shapes in one log (issue 10 should-fix: "diagnosis time
# and memory grow with the square of the number of distinct shapes (32k shapes: 18 s, 560 MB)").
# For each count N it writes a log with N different "Config file not found ... E=..,N=.." warnings (each
# printed by 2 ranks), runs `moetune-cli diagnose LOG --format FORMAT` under GNU time and prints wall time,
# peak RSS, the number of targets found (N, at most 256 since issue 23), and the growth exponent between consecutive counts
# (time ~ N^k: k = 1 is linear, 2 quadratic).
# usage: tests/bench/shapes_bench.sh [BUILD_DIR] [--counts "2000 4000 8000 16000 32000"] [--format json|text|markdown]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=""
counts="2000 4000 8000 16000 32000"
format=json
while [ $# -gt 0 ]; do
  case "$1" in
    --counts) counts=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) build=$1; shift ;;
  esac
done
if [ -z "$build" ]; then
  for b in "$root/build/ci" "$root/build/dev" "$root/build/cli"; do
    if [ -x "$b/src/cli/moetune-cli" ]; then build=$b; break; fi
  done
fi
cli=${MOETUNE_CLI:-$build/src/cli/moetune-cli}
[ -x "$cli" ] || { echo "shapes_bench: no moetune-cli at '$cli'; build it first (or set MOETUNE_CLI)" >&2; exit 2; }
timebin=${MOETUNE_TIME:-/usr/bin/time}
[ -x "$timebin" ] || { echo "shapes_bench: $timebin (GNU time) is missing: apt-get install time" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "moetune-cli: $cli --format $format; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%8s %10s %10s %9s %8s %s\n' shapes "wall s" "peak MB" targets "k" "(time ~ shapes^k)"
prev_n=""; prev_t=""
for n in $counts; do
  log=$tmp/shapes-$n.log
  python3 - "$n" "$log" <<'PY'
import sys
n, out = int(sys.argv[1]), sys.argv[2]
root = "/sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_6_0"
with open(out, "w") as f:
    for i in range(n):
        shape = "E=%d,N=%d,device_name=NVIDIA_H200" % (8 + i // 64, 64 * (1 + i % 64))
        for rank in (0, 1):
            f.write("[2026-12-01 10:%02d:%02d TP%d] Using default MoE kernel config. Performance might be "
                    "sub-optimal! Config file not found at %s/%s.json, you can create them with "
                    "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n"
                    % (i // 60 % 60, i % 60, rank, root, shape))
PY
  set +e
  "$timebin" -o "$tmp/t" -f '%e %M' "$cli" diagnose "$log" --format "$format" >"$tmp/out"
  rc=$?
  set -e
  if [ "$rc" -ne 1 ]; then echo "shapes_bench: moetune-cli exited $rc for $n shapes (expected 1)" >&2; exit 1; fi
  read -r t rss < <(tail -n 1 "$tmp/t")
  # Targets found: from the JSON, or (text/markdown) by a JSON run of the same log.
  if [ "$format" != json ]; then "$cli" diagnose "$log" --format json >"$tmp/out" || true; fi
  targets=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("targets", [])))' "$tmp/out")
  k=$(python3 -c "import math,sys
a=sys.argv[1:]
print('-' if not a[0] else '%.2f' % (math.log(max(float(a[3]),0.01)/max(float(a[1]),0.01))/math.log(float(a[2])/float(a[0]))))" \
      "$prev_n" "${prev_t:-0}" "$n" "$t")
  printf '%8d %10.2f %10.1f %9d %8s\n' "$n" "$t" "$(python3 -c "print($rss/1024)")" "$targets" "$k"
  # A diagnosis lists at most 256 shapes per start (the rest in one "and N more" finding, issue 23).
  want=$(( n < 256 ? n : 256 ))
  [ "$targets" -eq "$want" ] || { echo "shapes_bench: $targets targets for $n shapes (want $want)" >&2; exit 1; }
  prev_n=$n; prev_t=$t
  rm -f "$log"
done
