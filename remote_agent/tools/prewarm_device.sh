#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 22, one device call: the pyz of the change before it (.before/<sha>/moetune-agent.pyz, built here
# with `user_path_bench.py --build-before-only --before REF` and carried) against this checkout's, rows
# interleaved before/after, each on a fresh MOETUNE_HOME (a fresh host: cold compile and bytecode caches):
#   cold      own-kernel `up` tune as the host's first run                   (before, after)
#   read      headroom check, 15 s of reading the verdict, then the tune     (after: the prewarm's effect)
#   wait      headroom check, the prewarm left to finish, then the tune      (after)
#   int4      bf16 and int4_w4a16 at 3 sizes (INT4_CAP s at most for int4)   (before, after)
#   sglang    SGLang main `up` cold (before; SGL_CAP); its check, the prewarm given SGL_WAIT s at most, then
#             the tune (after)
#   sglcold   SGLang main `up` cold (after; SGL_CAP)
#   vllm      vLLM main `up` cold (before, after; VLLM_CAP); its check, the prewarm given VLLM_WAIT s at most,
#             then the tune (after)
#   updown    own-kernel `up+down` tune as the host's first run                (before, after)
#   sglbefore, vllmbefore   SGLang / vLLM main `up` cold (before only); vllmcold: vLLM cold (after only)
#   coldafter, sglafter, vllmafter, updownafter, int4after   the after rows of cold, sglang, vllm, updown, int4
#   coldbefore, updownbefore, int4before   the before rows of cold, updown and int4 only
#   repeat    the repeatability benchmark (bench/tuner_quality.py repeat) on the own `up` tunes of coldafter
#             (or cold) and read
#   regret    the regret benchmark (bench/tuner_quality.py regret: exhaustive landscapes at 1, 16, 64, 256,
#             2048, 4096) against the own `up` tune of coldafter (or cold)
# STEPS picks the steps and their order (default cold,read,wait,int4); the rows end as one table (tools/rows_table.py). Needs .upstream/sglang_head for sglang, vllm_head for vllm.
#   PROFILE_SYNTHETIC=1   every step on the synthetic backend (a CPU check of this script: SIMULATED)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/prewarm-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d /tmp/moetune-pw-XXXX)
T0=$(date +%s)
stamp() { echo "--- $1 at $(( $(date +%s) - T0 )) s"; }
STEPS=${STEPS:-cold,read,wait,int4}
SYN=()
if [ "${PROFILE_SYNTHETIC:-0}" = 1 ]; then
  SYN=(--synthetic); export MOETUNE_COMPILE_CACHE=1 MOETUNE_SYNTHETIC_COMPILE_MS=${MOETUNE_SYNTHETIC_COMPILE_MS:-40}
fi
BEFORE=$(realpath "$(ls .before/*/moetune-agent.pyz 2>/dev/null | head -1)")
AFTER="$WORK/after.pyz"
python3 remote_agent/build_pyz.py --src remote_agent --kernels kernels --out "$AFTER" > /dev/null || exit 1
echo "before: $BEFORE"; echo "after: $AFTER"
[ -d .upstream ] && python3 -m compileall -q -j 0 .upstream > /dev/null 2>&1
[ "${PROFILE_SYNTHETIC:-0}" = 1 ] || \
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"
stamp "page cache warm"
fresh() { echo "$WORK/home_$1"; }  # a fresh host per label
row() {  # label pyz home rows [extra]
  local label=$1 pyz=$2 home=$3 rows=$4; shift 4
  python3 remote_agent/tools/user_path_bench.py "${SYN[@]}" --agent "$pyz" --label "$label" --home "$home" --rows "$rows" \
    --json "$OUT/$label.json" "$@" > "$WORK/$label.log" 2>&1
  stamp "$label"; grep -E "^(own_up|own_updown|sglang_up|vllm_up|int4_3|bf16_3) |^ +precompile|within 1.5x|Traceback|Error" "$WORK/$label.log" | cut -c1-400 | head -6
}
check() {  # label pyz home pair [framework tree]
  local tree=${6:-${UPSTREAM_SGL:-}}
  python3 remote_agent/bench/headroom_bench.py "${SYN[@]}" --agent "$2" --pairs "$4" --check-only "$4" --home "$3" \
    --framework "${5:-sglang}" ${tree:+--upstream "$tree"} --limit-s 300 --out "$WORK/$1" > "$WORK/$1.log" 2>&1
  stamp "$1"; grep -E "check wall|verdict|SUMMARY" "$WORK/$1.log" | cut -c1-300 | head -4
  cp "$WORK/$1/headroom_bench.json" "$OUT/$1_bench.json" 2>/dev/null
  python3 -c "import json,sys; print('prewarm status', open(sys.argv[1]).read().strip())" "$3/prewarm/status.json" 2>/dev/null
}
wait_prewarm() {  # home max_s
  local t=0
  while [ $t -lt $(( $2 * 10 )) ]; do
    grep -q '"state": "\(done\|capped\|stopped\|nothing\)"' "$1/prewarm/status.json" 2>/dev/null && break
    sleep 0.1; t=$((t + 1))
  done
  stamp "prewarm waited $((t / 10)) s"; cat "$1/prewarm/status.json" 2>/dev/null; echo
}
[ -d .upstream/sglang_head ] && UPSTREAM_SGL=.upstream/sglang_head
step_cold() { step_coldbefore; step_coldafter; }
step_coldbefore() { row before_cold "$BEFORE" "$(fresh before_cold)" own_up --cap-s 120; }
step_read() {
  H=$(fresh read); check after_read_check "$AFTER" "$H" qwen3_triton; sleep 15; stamp "15 s of reading"
  row after_read_tune "$AFTER" "$H" own_up --cap-s 120
}
step_wait() {
  H=$(fresh wait); check after_wait_check "$AFTER" "$H" qwen3_triton; wait_prewarm "$H" 120
  row after_wait_tune "$AFTER" "$H" own_up --cap-s 120
}
step_int4() { step_int4before; step_int4after; }
step_int4before() { row before_int4 "$BEFORE" "$(fresh before_int4)" bf16_3,int4_3 --row-cap int4_3="${INT4_CAP:-60}"; }
step_int4after() { row after_int4 "$AFTER" "$(fresh after_int4)" bf16_3,int4_3 --row-cap int4_3="${INT4_CAP:-60}"; }
step_sglang() { step_sglbefore; step_sglafter; }
step_sglcold() {
  [ -n "${UPSTREAM_SGL:-}" ] || { echo "sglcold: no .upstream/sglang_head"; return; }
  row after_sglang_cold "$AFTER" "$(fresh after_sglang_cold)" sglang_up --upstream .upstream --row-cap sglang_up="${SGL_CAP:-130}"
}
step_vllm() { step_vllmbefore; step_vllmafter; }
step_sglbefore() {
  [ -n "${UPSTREAM_SGL:-}" ] || { echo "sglbefore: no .upstream/sglang_head"; return; }
  row before_sglang "$BEFORE" "$(fresh before_sglang)" sglang_up --upstream .upstream --row-cap sglang_up="${SGL_CAP:-130}"
}
step_vllmbefore() {
  [ -d .upstream/vllm_head ] || { echo "vllmbefore: no .upstream/vllm_head"; return; }
  row before_vllm "$BEFORE" "$(fresh before_vllm)" vllm_up --upstream .upstream --row-cap vllm_up="${VLLM_CAP:-150}"
}
step_vllmcold() {
  [ -d .upstream/vllm_head ] || { echo "vllmcold: no .upstream/vllm_head"; return; }
  row after_vllm "$AFTER" "$(fresh after_vllm)" vllm_up --upstream .upstream --row-cap vllm_up="${VLLM_CAP:-150}"
}
step_coldafter() { row after_cold "$AFTER" "$(fresh after_cold)" own_up --cap-s 120; }
step_updown() { step_updownbefore; step_updownafter; }
step_updownbefore() { row before_updown "$BEFORE" "$(fresh before_updown)" own_updown --cap-s 120; }
step_updownafter() { row after_updown "$AFTER" "$(fresh after_updown)" own_updown --cap-s 120; }
step_sglafter() {  # the SGLang check, its prewarm, the tune (after only)
  [ -n "${UPSTREAM_SGL:-}" ] || { echo "sglafter: no .upstream/sglang_head"; return; }
  H=$(fresh sglang); check after_sglang_check "$AFTER" "$H" qwen3_server; wait_prewarm "$H" "${SGL_WAIT:-45}"
  row after_sglang_tune "$AFTER" "$H" sglang_up --upstream .upstream --row-cap sglang_up="${SGL_CAP:-130}"
}
step_vllmafter() {  # vLLM cold, then its check, prewarm and tune (after only)
  [ -d .upstream/vllm_head ] || { echo "vllmafter: no .upstream/vllm_head"; return; }
  step_vllmcold
  H=$(fresh vllm); check after_vllm_check "$AFTER" "$H" qwen3_server vllm .upstream/vllm_head
  wait_prewarm "$H" "${VLLM_WAIT:-90}"
  row after_vllm_tune "$AFTER" "$H" vllm_up --upstream .upstream --row-cap vllm_up="${VLLM_CAP:-150}"
}
step_repeat() {  # repeatability of two own `up` tunes of this run (after_cold, after_read_tune), re-timed interleaved
  local a b
  a=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'][0]['result_path'])" "$OUT/after_cold.json" 2>/dev/null)
  b=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'][0]['result_path'])" "$OUT/after_read_tune.json" 2>/dev/null)
  if [ ! -f "$a" ] || [ ! -f "$b" ]; then echo "repeat: needs the after_cold and after_read_tune results"; return; fi
  python3 remote_agent/bench/tuner_quality.py repeat --results "$a" "$b" --out "$OUT/repeat.json" \
    ${SYN:+--backend synthetic} > "$WORK/repeat.log" 2>&1
  stamp "repeat"; tail -4 "$WORK/repeat.log" | cut -c1-300
}
step_regret() {  # the after_cold tune's choices against exhaustive landscapes at 6 sizes
  local a w
  a=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'][0]['result_path'])" "$OUT/after_cold.json" 2>/dev/null)
  w=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'][0]['wall_s'])" "$OUT/after_cold.json" 2>/dev/null)
  if [ ! -f "$a" ]; then echo "regret: needs the after_cold result"; return; fi
  MOETUNE_HOME="$(fresh regret)" python3 remote_agent/bench/tuner_quality.py regret ${SYN:+--backend synthetic} \
    --fast-result "$a" --fast-wall "$w" --sizes 1,16,64,256,2048,4096 --out "$OUT/regret.json" > "$WORK/regret.log" 2>&1
  stamp "regret"; grep -E "^REGRET|OUTSIDE|regret\(" "$WORK/regret.log" | tail -12 | cut -c1-300
}
for step in ${STEPS//,/ }; do  # in the order given
  case "$step" in
    cold|read|wait|int4|sglang|sglcold|vllm|updown|coldafter|sglafter|vllmafter|updownafter|repeat|sglbefore|\
    vllmbefore|vllmcold|regret|int4before|int4after|coldbefore|updownbefore) "step_$step" ;;
    *) echo "unknown step $step" >&2 ;;
  esac
done
ls "$OUT"/*.json > /dev/null 2>&1 && python3 remote_agent/tools/rows_table.py $(ls "$OUT"/*.json | grep -v -e _bench.json -e repeat.json -e regret.json) 2>&1
tar -C "$WORK" -czf "$OUT/logs.tar.gz" $(cd "$WORK" && ls *.log) 2>/dev/null
stamp "done"
