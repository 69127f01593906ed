#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Where the seconds of a user's tune and headroom check go on one H200, in one device call: the headroom
# check and a full tune of Qwen3-30B-A3B bf16 (bench/headroom_bench.py, qwen3_triton), the own-kernel `up`
# tune cold and again warm (tools/user_path_bench.py), every agent process under cProfile
# (MOETUNE_PROFILE_DIR, moetune_agent/profiling.py), then one measurement's steps timed one at a time
# (tools/measure_anatomy.py). Summaries are printed; profiles and JSON land under $OUT.
#
#   PROFILE_STAGES=gputest,headroom,sglang_up,vllm_up   only these stages (default: all but gputest;
#                                                       gputest = the GPU tests of paired timing)
#   HEADROOM_PAIRS=qwen3_triton,fp8block_triton         the headroom benchmark's pairs (default qwen3_triton)
#   PROFILE_HEADROOM=0                                  the headroom benchmark unprofiled (its wall times
#                                                       are the check's figures then)
#   PROFILE_ROWS=0                                      the own-kernel rows unprofiled (cold_off, cold, warm)
#   HEADROOM_UPSTREAM=.upstream/sglang_head             with the server pairs (qwen3_server)
#   HEADROOM_LAST=1                                     the headroom stage after the own-kernel rows
#   HEADROOM_RECHECK=qwen3_triton                       these pairs' check again right after their tune
#   HEADROOM_VARIANTS='a:ENV=1;b:ENV=0'                 qwen3_triton's check again per variant before its tune
#   HEADROOM_CHECK_ONLY=qwen3_server                    these pairs without their tune (the check's wall only)
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
STAGES=${PROFILE_STAGES:-headroom,cold,warm,sglang_up,vllm_up,anatomy}  # also: gputest cold_off quality int4 probe
# classes imports server_anatomy (server_anatomy.py per upstream tree)
want() { case ",$STAGES," in *",$1,"*) return 0 ;; esac; return 1; }
# The upstream trees byte-compiled before any stage, as pip leaves an installed server: a tree copied
# without __pycache__ compiled its sources in every process (7-9 s of each vLLM process's 25-30 s import
# on the H200), and until stop 30 this ran after the headroom stage, whose server check paid for it.
if [ -d .upstream ]; then
  python3 -m compileall -q -j 0 .upstream > /dev/null 2>&1
  stamp "upstream byte-compiled"
fi

if want gputest && [ "${PROFILE_SYNTHETIC:-0}" != 1 ]; then
  python3 -m unittest discover -s remote_agent/gpu_tests -p 'test_fused_moe.py' -k paired -v \
    > "$OUT/gpu_paired.log" 2>&1
  stamp "GPU tests of paired timing rc=$?"; tail -n 4 "$OUT/gpu_paired.log"
fi

headroom_stage() {
if want headroom; then
  PROF=(env MOETUNE_PROFILE_DIR="$WORK/prof_headroom")
  [ "${PROFILE_HEADROOM:-1}" = 0 ] && PROF=(env)
  "${PROF[@]}" python3 remote_agent/bench/headroom_bench.py "${SYN[@]}" \
    --pairs "${HEADROOM_PAIRS:-qwen3_triton}" ${HEADROOM_UPSTREAM:+--upstream "$HEADROOM_UPSTREAM"} \
    --limit-s "${HEADROOM_LIMIT_S:-360}" ${HEADROOM_RECHECK:+--recheck "$HEADROOM_RECHECK"} \
    ${HEADROOM_VARIANTS:+--variants "$HEADROOM_VARIANTS"} ${HEADROOM_CHECK_ONLY:+--check-only "$HEADROOM_CHECK_ONLY"} \
    --out "$WORK/hr" > "$OUT/headroom.log" 2>&1
  stamp "headroom check + tune"; grep -E "^\[|within|MISS|SUMMARY|^  " "$OUT/headroom.log" | grep -v "check's best" | head -150
  cp "$WORK/hr/headroom_bench.json" "$OUT/" 2>/dev/null
  tar -C "$WORK" -czf "$OUT/headroom_files.tar.gz" hr 2>/dev/null  # specs, events, the tunes' results, journals
fi
}
[ "${HEADROOM_LAST:-0}" = 1 ] || headroom_stage
# probe: a few configs timed by every protocol in a fresh process, with its own compiles and with the
# headroom stage's cache (tools/config_probe.py; PROBE_ARGS overrides the fp8 block M = 32 default)
if want probe && [ "${PROFILE_SYNTHETIC:-0}" != 1 ]; then
  PA=${PROBE_ARGS:---shape fp8block --m 32 --configs m64n128k128g32w4s3,m16n128k128g16w4s2,m16n128k128g16w4s4}
  python3 remote_agent/tools/config_probe.py $PA --json "$OUT/probe.json" > "$WORK/probe.log" 2>&1
  C=$(ls -d /tmp/moetune-headroom-work-*/home/triton_cache/triton-* 2>/dev/null | tail -n 1)
  [ -n "$C" ] && [ "${PROBE_CACHE:-0}" = 1 ] && python3 remote_agent/tools/config_probe.py $PA --cache "$C" >> "$WORK/probe.log" 2>&1
  stamp "config probe"; grep -v "^Warning" "$WORK/probe.log" | tail -n 30
fi
# the server backend's anatomy (tools/server_anatomy.py), per tree: which batch sizes share a compiled
# kernel (against the pool's specialisation classes), the server's import on top of torch, one
# measurement's steps through the server's call path
for fw in sglang vllm; do
  [ -d ".upstream/${fw}_head" ] && [ "${PROFILE_SYNTHETIC:-0}" != 1 ] || continue
  for stage in classes imports server_anatomy; do
    want "$stage" || continue
    [ "$stage/$fw" = server_anatomy/vllm ] && [ "${VLLM_ANATOMY:-0}" != 1 ] && continue
    what=${stage#server_}
    AC=$WORK/anatomy_cache_$fw
    PYTHONPATH=".upstream/${fw}_head" python3 remote_agent/tools/server_anatomy.py $what --framework $fw \
      --cache "$AC" --json "$OUT/${what}_$fw.json" > "$WORK/${what}_$fw.log" 2>&1
    stamp "server $what $fw rc=$?"; grep -v "^Warning" "$WORK/${what}_$fw.log" | tail -n 80
  done
done
# cold_off: a cold host with the precompile lookahead off (its "before");
# cold: a cold host as shipped; warm: the same host again (its compile cache filled by cold)
# warm_off: the cold_off host again. OFF_ENV: what "off" means (the _off rows run only where it is set)
for t in cold_off cold warm warm_off; do
  want $t || continue
  home="$WORK/home"; envs=()
  case $t in *_off) [ -n "${OFF_ENV:-}" ] || continue; home="$WORK/home_off"; envs=(${OFF_ENV}) ;; esac
  [ "${PROFILE_ROWS:-1}" = 1 ] && envs+=(MOETUNE_PROFILE_DIR="$WORK/prof_$t")
  env "${envs[@]}" python3 remote_agent/tools/user_path_bench.py "${SYN[@]}" --label "$t" \
    --home "$home" --rows own_up --json "$OUT/own_up_$t.json" > "$WORK/own_up_$t.log" 2>&1
  stamp "own up $t"; grep -E "^own_up|precompile" "$WORK/own_up_$t.log"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; p=json.load(open(r['result_path']))['timings']['precompile']; print('            precompile', {k: p.get(k) for k in ('submitted', 'lookahead', 'lookahead_used', 'wait_s', 'waits')})" "$OUT/own_up_$t.json" 2>/dev/null
done
# the tuner's quality from the cold and warm runs (two independent runs): regret at 6 sizes, repeatability
if want quality; then
  jr() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'][0].get(sys.argv[2]) or '')" "$@"; }
  R1=$(jr "$OUT/own_up_cold.json" result_path); R2=$(jr "$OUT/own_up_warm.json" result_path)
  W1=$(jr "$OUT/own_up_cold.json" wall_s)
  QB=(--backend triton); [ "${PROFILE_SYNTHETIC:-0}" = 1 ] && QB=(--backend synthetic)
  if [ -n "$R1" ] && [ -n "$R2" ]; then
    MOETUNE_HOME="$WORK/home" python3 remote_agent/bench/tuner_quality.py repeat "${QB[@]}" --results "$R1" "$R2" \
      --out "$WORK/repeat.json" > "$WORK/repeat.log" 2>&1
    MOETUNE_HOME="$WORK/home" python3 remote_agent/bench/tuner_quality.py regret "${QB[@]}" --fast-result "$R1" \
      --fast-wall "$W1" --sizes 1,16,64,256,2048,4096 --out "$WORK/regret.json" > "$WORK/regret.log" 2>&1
  fi
  stamp "quality"; grep -h -E "^(REGRET|REPEAT)|OUTSIDE" "$WORK/repeat.log" "$WORK/regret.log" 2>/dev/null
fi
[ "${HEADROOM_LAST:-0}" = 1 ] && headroom_stage
# the server backend over SGLang main and vLLM main (.upstream carried), capped
for r in sglang_up vllm_up; do
  want $r || continue
  [ -d .upstream ] || [ "${PROFILE_SYNTHETIC:-0}" = 1 ] || break
  MOETUNE_PROFILE_DIR="$WORK/prof_$r" python3 remote_agent/tools/user_path_bench.py "${SYN[@]}" --label "$r" \
    --home "$WORK/home" --rows $r --upstream .upstream --row-cap sglang_up="${SGL_CAP:-90}" \
    --row-cap vllm_up="${VLLM_CAP:-60}" --json "$OUT/$r.json" > "$WORK/$r.log" 2>&1
  stamp "$r"; grep -E "^(sglang|vllm)_up|precompile|Traceback|Error" "$WORK/$r.log" | head -8
done
# int4_w4a16 against bf16 at 3 sizes (issue 22: within 1.5x of bf16), on the host of the rows above
if want int4; then
  python3 remote_agent/tools/user_path_bench.py "${SYN[@]}" --label int4 --home "$WORK/home" --rows bf16_3,int4_3 \
    --row-cap int4_3="${INT4_CAP:-60}" --json "$OUT/int4_rows.json" > "$WORK/int4_rows.log" 2>&1
  stamp "int4 rows"; grep -E "^(bf16_3|int4_3) |int4_w4a16 /" "$WORK/int4_rows.log"
fi
if want anatomy && [ "${PROFILE_SYNTHETIC:-0}" != 1 ]; then
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
mkdir -p "$WORK/json" && mv "$OUT"/own_up_*.json "$OUT"/*_up.json "$OUT"/anatomy.json "$OUT"/int4_rows.json \
  "$OUT"/classes_*.json "$OUT"/imports_*.json "$OUT"/anatomy_*.json "$WORK/json/" 2>/dev/null
# logs and JSON only: the raw profiles of a run are tens of MB (profiles.txt has their summaries)
tar -C "$WORK" -czf "$OUT/runs.tar.gz" $(cd "$WORK" && ls -d *.log json) 2>/dev/null
stamp "done"
