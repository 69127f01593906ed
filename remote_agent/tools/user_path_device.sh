#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# A user's path and the tuner's quality on one H200, in one call: the pyz's `tune` to done per row
# (tools/user_path_bench.py), the fast strategy's regret and repeatability (bench/tuner_quality.py), the int4
# GPU tests and vLLM's precompile check; every figure lands under $OUT (JSON + logs), a summary is printed.
# (Written for issue 22; recordings: bench/recordings/h200-headroom-int4-and-user-path/, h200-tuner-quality/.)
#
#   bash remote_agent/tools/user_path_device.sh          # after rows, int4 GPU tests, repeatability, regret,
#                                                        # then "before" rows with the time left
#   bash remote_agent/tools/user_path_device.sh before   # only the "before" rows (the pre-change pyz)
#   bash remote_agent/tools/user_path_device.sh quality  # own `up` row, then regret, repeatability and the
#                                                        # vLLM precompile check only (no other rows)
#   USER_PATH_SYNTHETIC=1 bash ...                       # everything on the synthetic backend (CPU check)
#
# Needs .upstream (sglang_head, vllm_head) carried for the server rows, and for "before" rows the pyz of
# BEFORE_REF (default ee68312, main before issue 22's merges): built here with git archive when the
# checkout has git history, else prebuilt where it has (`python3 remote_agent/tools/user_path_bench.py
# --build-before-only --before ee68312`) and .before carried. Stops starting stages once
# USER_PATH_BUDGET_S (default 560 s; the device call takes 600 s) is near; what it skipped is printed.
set -u
for old in ISSUE22_SYNTHETIC ISSUE22_BUDGET_S; do  # the names before the rename: refuse, never ignore
  if [ -n "${!old+x}" ]; then echo "$old is now ${old/ISSUE22/USER_PATH}" >&2; exit 2; fi
done
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/user-path-out}
mkdir -p "$OUT"
MODE=${1:-all}
BUDGET=${USER_PATH_BUDGET_S:-560}
BEFORE_REF=${BEFORE_REF:-ee68312}
T0=$(date +%s)
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d /tmp/user-path-XXXX)       # agent homes (run folders, compile cache): not under $OUT
SYN=()
QB=(--backend triton)
if [ "${USER_PATH_SYNTHETIC:-0}" = 1 ]; then SYN=(--synthetic); QB=(--backend synthetic); fi
UPB=remote_agent/tools/user_path_bench.py
QUALITY=remote_agent/bench/tuner_quality.py
SKIPPED=()

left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
fits() {  # fits SECONDS NAME: is there time for a stage of about SECONDS?
  if [ "$(left)" -lt "$1" ]; then SKIPPED+=("$2 (needs ~$1 s, $(left) s left)"); return 1; fi
  return 0
}
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/env.txt" 2>&1 || true
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" >> "$OUT/env.txt" 2>&1 || true
cat "$OUT/env.txt"

before_rows() {
  # the agent before: own kernel up (18 sizes), vLLM up at 3 sizes capped, int4 3 sizes capped (issue 22's
  # table has the other before figures: up+down 74.8 s, SGLang 169 s)
  local cap_own=${1:-110}
  python3 $UPB "${SYN[@]}" --before "$BEFORE_REF" --label before --home "$WORK/home-before" \
    --rows own_up,vllm_up,int4_3 --row-sizes vllm_up=1,64,1024 \
    --row-cap own_up="$cap_own" --row-cap vllm_up=45 --row-cap int4_3=45 \
    --json "$OUT/before.json" 2>&1 | tee "$OUT/before.log"
}

if [ "$MODE" = before ]; then
  before_rows 150
  echo "== wall $(( $(date +%s) - T0 )) s"
  exit 0
fi

# 1. the user's paths after the changes: one host (one agent home) for all rows, the first row cold
ROWS=own_up,own_updown,sglang_up,vllm_up,int4_3,bf16_3
[ "$MODE" = quality ] && ROWS=own_up
python3 $UPB "${SYN[@]}" --label after --home "$WORK/home" \
  --rows "$ROWS" \
  --row-cap sglang_up=100 --row-cap vllm_up=100 --row-cap int4_3=50 --row-cap own_updown=80 \
  --json "$OUT/after.json" 2>&1 | tee "$OUT/after.log"
R1=$(jget "$OUT/after.json" "[r for r in d['rows'] if r['row']=='own_up'][0].get('result_path') or ''" 2>/dev/null)
W1=$(jget "$OUT/after.json" "[r for r in d['rows'] if r['row']=='own_up'][0].get('wall_s')" 2>/dev/null)

# 2. int4_w4a16 zero points (and the quantised kernel's existing checks: its signature changed)
if [ "${USER_PATH_SYNTHETIC:-0}" != 1 ] && [ "$MODE" != quality ] && fits 60 "int4 GPU tests"; then
  timeout "$(( $(left) > 120 ? 120 : $(left) ))" python3 -m unittest discover -s remote_agent/gpu_tests \
    -p 'test_fused_moe_quant.py' -k Int4ZeroPoints -k QuantKernel -v > "$OUT/gpu_int4.log" 2>&1
  echo "int4 GPU tests rc=$?: $(tail -n 3 "$OUT/gpu_int4.log" | tr '\n' ' ')"
fi

# 3. regret against exhaustive landscapes at 6 sizes (restricted space: see tuner_quality.py)
if [ -n "$R1" ] && fits 150 "regret"; then
  MOETUNE_HOME="$WORK/home" timeout "$(( $(left) ))" python3 $QUALITY regret "${QB[@]}" --fast-result "$R1" --fast-wall "$W1" \
    --sizes 1,16,64,256,2048,4096 --out "$OUT/regret.json" 2>&1 | tee "$OUT/regret.log"
fi

# 4. repeatability: a second, independent fast run (same host: its compile cache is warm, the user's second
#    tune), then both runs' files re-timed against each other, interleaved
if [ -n "$R1" ] && fits 70 "repeatability"; then
  python3 $UPB "${SYN[@]}" --label "after (2nd run, warm cache)" --home "$WORK/home" --rows own_up \
    --json "$OUT/after_own_up_run2.json" 2>&1 | tee "$OUT/after_run2.log"
  R2=$(jget "$OUT/after_own_up_run2.json" "d['rows'][0].get('result_path') or ''" 2>/dev/null)
  if [ -n "$R2" ]; then
    MOETUNE_HOME="$WORK/home" timeout "$(( $(left) > 60 ? $(left) : 60 ))" python3 $QUALITY repeat "${QB[@]}" --results "$R1" "$R2" \
      --out "$OUT/repeat.json" 2>&1 | tee "$OUT/repeat.log"
  fi
fi

# 4b. vLLM's CPU precompile: the kernels the GPU worker runs are the ones precompiled (cache hits)
if [ "${USER_PATH_SYNTHETIC:-0}" != 1 ] && [ -d .upstream/vllm_head ] && fits 80 "vLLM precompile check"; then
  PYTHONPATH=.upstream/vllm_head timeout 150 python3 remote_agent/tools/vllm_precompile_check.py \
    > "$OUT/vllm_precompile.log" 2>&1
  echo "vLLM precompile check rc=$?: $(grep VLLM_PRECOMPILE "$OUT/vllm_precompile.log")"
fi

# 5. before rows with what is left
if [ "$MODE" != quality ] && fits 150 "before rows"; then
  before_rows $(( $(left) - 110 > 110 ? 110 : $(left) - 110 ))
fi

echo
echo "== SUMMARY (user path and tuner quality)$([ ${#SYN[@]} -gt 0 ] && echo ' SIMULATED')"
grep -h -E "^(own_up|own_updown|sglang_up|vllm_up|int4_3|bf16_3) |int4_w4a16 /|^user_path_bench" \
  "$OUT/after.log" "$OUT/after_run2.log" "$OUT/before.log" 2>/dev/null
grep -h -E "^(REGRET|REPEAT)" "$OUT/regret.log" "$OUT/repeat.log" 2>/dev/null
[ -f "$OUT/gpu_int4.log" ] && echo "int4 GPU tests: $(tail -n 1 "$OUT/gpu_int4.log")"
[ -f "$OUT/vllm_precompile.log" ] && grep -h -E "^(precompile|GPU measure|VLLM_PRECOMPILE)" "$OUT/vllm_precompile.log"
for s in "${SKIPPED[@]}"; do echo "skipped: $s"; done
echo "== wall $(( $(date +%s) - T0 )) s; files in $OUT"
