#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# The memory and time figures of issue 23 item 5 (inputs the CLI must not trust), each under GNU time:
#   names N    `diagnose --format json` of a log naming N distinct device names (goal: 10^6 in <= 20 s,
#              <= 256 MB peak), with the JSON's size against the log's
#   starts N   `diagnose --format json` of a log of N server starts (goal: 100,000 in <= 5 s)
#   attach N   `attach local RUN` of a run stream of N measurements (memory bounded by what is shown)
#   stderr N   an agent that writes N MB of stderr without a newline, then fails
#   hostout M  a host command printing M MB of lines, through LocalTransport and HostCalls::shell
#              (exec_output_bench; "hostout-u": the same without the bound, the figure before issue 42)
#   events M   `report RUN` of a kept run whose events.jsonl is M MB (no result.json: read into the result)
#   rules M    `diagnose --rules DIR` of a rule file with an M MB title; "rulefiles": 1000 rule files
# attach and stderr use a TEST DOUBLE of the agent (a Python script printing the stream), as the CLI tests do.
# usage: tests/bench/untrusted_bench.sh [BUILD_DIR] [--names "50000 1000000"] [--starts 100000]
#        [--attach 400000] [--stderr 300] [--hostout "30 300"] [--events "33 330"] [--rules 200]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=""
names="50000 1000000"
starts="100000"
attach="400000"
stderr_mb="300"
hostout_mb="30 300"
events_mb="33 330"
rules_mb="200"
while [ $# -gt 0 ]; do
  case "$1" in
    --hostout) hostout_mb=$2; shift 2 ;;
    --events) events_mb=$2; shift 2 ;;
    --rules) rules_mb=$2; shift 2 ;;
    --names) names=$2; shift 2 ;;
    --starts) starts=$2; shift 2 ;;
    --attach) attach=$2; shift 2 ;;
    --stderr) stderr_mb=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) build=$1; shift ;;
  esac
done
if [ -z "$build" ]; then
  for b in "$root/build/ci" "$root/build/dev" "$root/build/cli"; do
    if [ -x "$b/src/cli/moetune-cli" ]; then build=$b; break; fi
  done
fi
cli=${MOETUNE_CLI:-$build/src/cli/moetune-cli}
[ -x "$cli" ] || { echo "untrusted_bench: no moetune-cli at '$cli'; build it first (or set MOETUNE_CLI)" >&2; exit 2; }
timebin=${MOETUNE_TIME:-/usr/bin/time}
[ -x "$timebin" ] || { echo "untrusted_bench: $timebin (GNU time) is missing: apt-get install time" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home"
echo "moetune-cli: $cli; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %9s %9s %9s %10s %10s  %s\n' case count "wall s" "peak MB" "input MB" "output MB" "rc, notes"

# measure CASE COUNT INPUT_BYTES -- command...: prints one row (stdout of the command goes to $tmp/out)
measure() {
  local name=$1 count=$2 input=$3; shift 4
  set +e
  "$timebin" -o "$tmp/t" -f '%e %M' "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  set -e
  local t rss
  read -r t rss < <(tail -n 1 "$tmp/t")
  local note
  note=$(grep -v '^\$ \|^  |' "$tmp/err" | tail -n 1 | cut -c1-90 || true)
  printf '%-8s %9d %9.2f %9.1f %10.1f %10.1f  rc %d %s\n' "$name" "$count" "$t" \
    "$(python3 -c "print($rss/1024)")" "$(python3 -c "print($input/1048576)")" \
    "$(python3 -c "print($(stat -c %s "$tmp/out")/1048576)")" "$rc" "$note"
}

for n in $names; do
  log=$tmp/names-$n.log
  python3 - "$n" "$log" <<'PY'
import sys
n, out = int(sys.argv[1]), sys.argv[2]
root = "/sgl/python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_6_0"
with open(out, "w") as f:
    for i in range(n):
        f.write("[2026-12-01 10:00:00 TP0] Using default MoE kernel config. Performance might be sub-optimal! "
                "Config file not found at %s/E=128,N=768,device_name=GPU_%d.json\n" % (root, i))
PY
  measure names "$n" "$(stat -c %s "$log")" -- "$cli" diagnose "$log" --format json
  rm -f "$log"
done

for n in $starts; do
  log=$tmp/starts-$n.log
  python3 - "$n" "$log" <<'PY'
import sys
n, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    for i in range(n):
        f.write("[2026-12-01 10:00:00] server_args=ServerArgs(model_path='/models/qwen3', tp_size=8, port=30000)\n"
                "[2026-12-01 10:00:09 TP0] KV Cache is allocated. #tokens: 1234567, K size: 9.1 GB\n"
                "[2026-12-01 10:01:00] The server is fired up and ready to roll!\n")
PY
  measure starts "$n" "$(stat -c %s "$log")" -- "$cli" diagnose "$log" --format json
  rm -f "$log"
done

# TEST DOUBLE of the agent: prints $FAKE_LINES, or $FAKE_STDERR_MB MB of stderr without a newline.
cat >"$tmp/fake-agent.py" <<'PY'
import os, sys
mb = int(os.environ.get("FAKE_STDERR_MB", "0"))
chunk = b"x" * (1 << 20)
for _ in range(mb):
    sys.stderr.buffer.write(chunk)
sys.stderr.flush()
lines = os.environ.get("FAKE_LINES")
if lines:
    with open(lines, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            sys.stdout.buffer.write(b)
sys.exit(1 if mb else 0)
PY

for n in $attach; do
  lines=$tmp/attach-$n.jsonl
  python3 - "$n" "$lines" "$tmp/home/.cache/moetune/runs/r1" <<'PY'
import sys
n, out, run_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(out, "w") as f:
    f.write('{"type":"hello","protocol":1,"agent_version":"fake"}\n')
    f.write('{"type":"run_started","run_id":"r1","run_dir":"%s","pid":1,"backend":"triton","seq":0}\n' % run_dir)
    for i in range(n):
        f.write('{"type":"measurement","run_id":"r1","seq":%d,"op":"up","m":%d,"config":{"BLOCK_SIZE_M":16,'
                '"BLOCK_SIZE_N":64,"BLOCK_SIZE_K":128,"GROUP_SIZE_M":1,"num_warps":4,"num_stages":3},"round":0,'
                '"replays":10,"median_us":%.2f,"gpu":%d,"index":%d,"ts":1795994931.7}\n'
                % (i + 1, 1 << (i % 12), 10 + i % 97, i % 8, i))
    f.write('{"type":"done","status":"ok","run_id":"r1","seq":%d,"wall_s":1.0}\n{"type":"done","status":"ok"}\n' % (n + 1))
PY
  measure attach "$n" "$(stat -c %s "$lines")" -- env HOME="$tmp/home" MOETUNE_AGENT_PYZ="$tmp/fake-agent.py" \
    FAKE_LINES="$lines" "$cli" attach local r1
  rm -f "$lines"
done

for mb in $stderr_mb; do
  measure stderr "$mb" $((mb << 20)) -- env HOME="$tmp/home" MOETUNE_AGENT_PYZ="$tmp/fake-agent.py" \
    FAKE_STDERR_MB="$mb" "$cli" runs local
done

bench_exec=${MOETUNE_EXEC_BENCH:-$build/tests/bench/exec_output_bench}
for mb in $hostout_mb; do
  if [ ! -x "$bench_exec" ]; then echo "untrusted_bench: no $bench_exec (build exec_output_bench): hostout skipped" >&2; break; fi
  cmd="yes 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 | head -c $((mb << 20))"
  measure hostout "$mb" $((mb << 20)) -- "$bench_exec" "$cmd"
  echo "         $(cat "$tmp/out")"
  measure hostout-u "$mb" $((mb << 20)) -- "$bench_exec" --unbounded "$cmd"
  echo "         $(cat "$tmp/out")"
done

for mb in $events_mb; do
  run=$tmp/run-events-$mb
  mkdir -p "$run"
  echo '{"framework":"sglang","E":8,"N":64,"K":128,"topk":2,"backend":"triton"}' >"$run/spec.json"
  python3 - "$mb" "$run/events.jsonl" <<'PY'
import sys
mb, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    f.write('{"type":"run_started","run_id":"r1","run_dir":"/x","pid":1,"backend":"triton","seq":0}\n')
    i = 0
    while f.tell() < mb << 20:
        i += 1
        f.write('{"type":"measurement","run_id":"r1","seq":%d,"op":"up","m":%d,"config":{"BLOCK_SIZE_M":16,'
                '"BLOCK_SIZE_N":64,"BLOCK_SIZE_K":128,"GROUP_SIZE_M":1,"num_warps":4,"num_stages":3},"round":0,'
                '"replays":10,"median_us":%.2f,"gpu":%d,"index":%d,"ts":1795994931.7}\n'
                % (i, 1 << (i % 12), 10 + i % 97, i % 8, i))
PY
  measure events "$mb" "$(stat -c %s "$run/events.jsonl")" -- env HOME="$tmp/home" "$cli" report "$run"
  rm -rf "$run"
done

log=$tmp/small.log
printf '[2026-12-01 10:00:00] The server is fired up and ready to roll!\n' >"$log"
for mb in $rules_mb; do
  rules=$tmp/rules-$mb
  mkdir -p "$rules"
  python3 - "$mb" "$rules/big.json" <<'PY'
import sys
mb, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    f.write('[{"id": "big", "prefilter": "fired up", "pattern": "fired up", "title": "')
    chunk = "x" * (1 << 20)
    for _ in range(mb):
        f.write(chunk)
    f.write('"}]')
PY
  measure rules "$mb" "$(stat -c %s "$rules/big.json")" -- env HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/cfg" \
    "$cli" diagnose "$log" --rules "$rules" --format json
  rm -rf "$rules"
done
rules=$tmp/rulefiles
mkdir -p "$rules"
python3 - "$rules" <<'PY'
import sys
for i in range(1000):
    with open("%s/r%04d.json" % (sys.argv[1], i), "w") as f:
        f.write('[' + ','.join('{"id": "r%d-%d", "prefilter": "abcd%d", "pattern": "abcd%d", "title": "%s"}'
                               % (i, j, j, j, "t" * 2000) for j in range(10)) + ']')
PY
measure rulefiles 1000 "$(du -sb "$rules" | cut -f1)" -- env HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/cfg" \
  "$cli" diagnose "$log" --rules "$rules" --format json
rm -rf "$rules"
