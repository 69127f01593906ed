#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# stop 38, call 3: on an H200 the after rows (an H200 figure for each); on an H100 the checks of calls 1-2
cd "$(dirname "$0")/.."
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
T0=$(date +%s); R=remote_agent/bench/tuner_quality.py; A=.before/rp/a.json; B=.before/rp/b.json
if echo "$GPU" | grep -q H200; then
  STEPS=coldafter,int4after,vllmcold,sglcold,updownafter SGL_CAP=100 VLLM_CAP=100 INT4_CAP=60 OUT=/tmp/pw \
    timeout 400 bash remote_agent/tools/prewarm_device.sh > "$OUT/h200.log" 2>&1
  (cd /tmp/pw && tar czf "$OUT/h200_rows.tar.gz" *.json)
  find /tmp/moetune-pw-* -name result.json | tar czf "$OUT/h200_results.tar.gz" -T - 2>/dev/null
  tail -12 "$OUT/h200.log" | cut -c1-200
  exit 0
fi
timeout 60 python3 $R repeat --results $A $B --out "$OUT/repeat_ab.json" > "$OUT/repeat_ab.log" 2>&1; echo ab $(( $(date +%s)-T0 ))
timeout 60 python3 $R repeat --results $B $A --out "$OUT/repeat_ba.json" > "$OUT/repeat_ba.log" 2>&1; echo ba $(( $(date +%s)-T0 ))
MOETUNE_HOME=/tmp/rg timeout 200 python3 $R regret --fast-result $A --fast-wall 34.1 --sizes 1,16,64,256,2048,4096 \
  --out "$OUT/regret.json" > "$OUT/regret.log" 2>&1; echo regret $(( $(date +%s)-T0 ))
STEPS=coldafter OUT=/tmp/pw timeout 110 bash remote_agent/tools/prewarm_device.sh > "$OUT/cold2.log" 2>&1
cp /tmp/pw/after_cold.json "$OUT/after_cold2.json"
find /tmp/moetune-pw-* -name result.json | tar czf "$OUT/results3.tar.gz" -T - 2>/dev/null
echo all $(( $(date +%s)-T0 ))
grep -h "m=    1\|REPEAT" "$OUT"/repeat_ab.log "$OUT"/repeat_ba.log
grep -E "^REGRET|OUTSIDE|regret\(" "$OUT/regret.log" | tail -12 | cut -c1-300
tail -4 "$OUT/cold2.log" | cut -c1-300
