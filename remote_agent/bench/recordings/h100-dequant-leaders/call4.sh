#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# stop 38, call 4: the paired repeat both ways on call 1's tunes; own `up` cold, before and after, twice more
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
T0=$(date +%s); R=remote_agent/bench/tuner_quality.py; A=.before/rp/a.json; B=.before/rp/b.json
timeout 60 python3 $R repeat --results $A $B --out "$OUT/repeat_paired_ab.json" > "$OUT/repeat_paired_ab.log" 2>&1; echo ab $(( $(date +%s)-T0 ))
timeout 60 python3 $R repeat --results $B $A --out "$OUT/repeat_paired_ba.json" > "$OUT/repeat_paired_ba.log" 2>&1; echo ba $(( $(date +%s)-T0 ))
for i in 1 2; do
  STEPS=coldbefore,coldafter OUT=/tmp/pw$i timeout 130 bash remote_agent/tools/prewarm_device.sh > "$OUT/cold_pair$i.log" 2>&1
  for f in /tmp/pw$i/*.json; do cp "$f" "$OUT/pair${i}_$(basename "$f")"; done
done
echo all $(( $(date +%s)-T0 ))
grep -h "m=    1\|REPEAT" "$OUT"/repeat_paired_ab.log "$OUT"/repeat_paired_ba.log
grep -h "^after_cold \|^before_cold " "$OUT"/cold_pair*.log
