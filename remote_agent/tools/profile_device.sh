#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Where the seconds of a user's tune and headroom check go on one H200, in one device call: the headroom
# check and a full tune of Qwen3-30B-A3B bf16 (bench/headroom_bench.py, qwen3_triton), the own-kernel `up`
# tune cold and again warm (tools/user_path_bench.py), every agent process under cProfile
# (MOETUNE_PROFILE_DIR, moetune_agent/profiling.py), then one measurement's steps timed one at a time
# (tools/measure_anatomy.py). Summaries are printed; profiles and JSON land under $OUT.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/profile-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d /tmp/moetune-prof-XXXX)
T0=$(date +%s)
SYN=()
[ "${PROFILE_SYNTHETIC:-0}" = 1 ] && SYN=(--synthetic)
stamp() { echo "--- $1 at $(( $(date +%s) - T0 )) s"; }

MOETUNE_PROFILE_DIR="$WORK/prof_headroom" python3 remote_agent/bench/headroom_bench.py "${SYN[@]}" \
  --pairs qwen3_triton --out "$WORK/hr" > "$OUT/headroom.log" 2>&1
stamp "headroom check + tune"; grep -E "^\[|within|MISS|SUMMARY" "$OUT/headroom.log" | head -40
cp "$WORK/hr/headroom_bench.json" "$OUT/" 2>/dev/null
for t in cold warm; do
  MOETUNE_PROFILE_DIR="$WORK/prof_$t" python3 remote_agent/tools/user_path_bench.py "${SYN[@]}" --label "$t" \
    --home "$WORK/home" --rows own_up --json "$OUT/own_up_$t.json" > "$WORK/own_up_$t.log" 2>&1
  stamp "own up $t"; grep -E "^own_up|precompile" "$WORK/own_up_$t.log"
done
# the server backend over SGLang main and vLLM main (.upstream carried), capped
for r in sglang_up vllm_up; do
  [ -d .upstream ] || [ "${PROFILE_SYNTHETIC:-0}" = 1 ] || break
  MOETUNE_PROFILE_DIR="$WORK/prof_$r" python3 remote_agent/tools/user_path_bench.py "${SYN[@]}" --label "$r" \
    --home "$WORK/home" --rows $r --upstream .upstream --row-cap sglang_up="${SGL_CAP:-90}" \
    --row-cap vllm_up="${VLLM_CAP:-60}" --json "$OUT/$r.json" > "$WORK/$r.log" 2>&1
  stamp "$r"; grep -E "^(sglang|vllm)_up|precompile|Traceback|Error" "$WORK/$r.log" | head -8
done
if [ "${PROFILE_SYNTHETIC:-0}" != 1 ]; then
  python3 remote_agent/tools/measure_anatomy.py --prepare --cache "$WORK/anatomy_cache" > "$WORK/anatomy.log" 2>&1
  python3 remote_agent/tools/measure_anatomy.py --cache "$WORK/anatomy_cache" --json "$OUT/anatomy.json" \
    >> "$WORK/anatomy.log" 2>&1
  stamp "anatomy"; cat "$WORK/anatomy.log"
fi
{
  for d in headroom cold warm sglang_up vllm_up; do
    [ -d "$WORK/prof_$d" ] || continue
    echo "######## $d"
    python3 remote_agent/tools/prof_summary.py "$WORK/prof_$d" --top 35
  done
} > "$OUT/profiles.txt" 2>&1
mkdir -p "$WORK/json" && mv "$OUT"/*.json "$WORK/json/" 2>/dev/null
tar -C "$WORK" -czf "$OUT/profiles.tar.gz" $(cd "$WORK" && ls -d prof_* *.log json) 2>/dev/null
stamp "done"
