#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# A user's session on one fresh H200 host, in one device call, every step as users run it (the pyz from
# this checkout) and all on one MOETUNE_HOME (the host's compile and bytecode caches, issue 22):
#   1. what the host's Python has (bytecode of the installed packages, bytecode.missing())
#   2. own-kernel `up` tune on a cold host (tools/user_path_bench.py own_up)
#   3. headroom checks alone: bf16 and fp8 block own kernel, SGLang main's kernel (bench/headroom_bench.py)
#   4. the SGLang check again (the host's second server check)
#   5. own-kernel `up` tune again (warm host)
#   6. SGLang main `up` and vLLM main `up` through the server backend (SGL_CAP, VLLM_CAP seconds at most)
#   7. SGLang main `up` again (sglang2: the host's compile cache holds its kernels now; SGL2_CAP)
#   updown: own-kernel `up+down` (warm host); int4: bf16 and int4_w4a16 at 3 sizes (INT4_CAP)
#   gputest: the GPU tests of paired timing and kept re-timing graphs (gpu_tests/test_fused_moe.py -k paired)
# Needs .upstream/{sglang_head,vllm_head} (carried). STEPS=env,cold,checks,check2,warm,updown,int4,sglang,vllm picks steps;
# CHECKS: the pairs of step 3 (default: qwen3_triton,fp8block_triton,qwen3_server).
#   PROFILE_SYNTHETIC=1   the agent steps on the synthetic backend (a CPU check of this script)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/host-reuse-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d /tmp/moetune-reuse-XXXX)
HOME_DIR="$WORK/home"
T0=$(date +%s)
SYN=()
[ "${PROFILE_SYNTHETIC:-0}" = 1 ] && SYN=(--synthetic)
stamp() { echo "--- $1 at $(( $(date +%s) - T0 )) s"; }
STEPS=${STEPS:-gputest,env,cold,checks,check2,warm,sglang,sglang2,vllm}
want() { case ",$STEPS," in *",$1,"*) return 0 ;; esac; return 1; }
[ -d .upstream ] && python3 -m compileall -q -j 0 .upstream > /dev/null 2>&1 && stamp "upstream byte-compiled"
if want gputest && [ "${PROFILE_SYNTHETIC:-0}" != 1 ]; then
  python3 -m unittest discover -s remote_agent/gpu_tests -p 'test_fused_moe.py' -k paired -v > "$WORK/gputest.log" 2>&1
  stamp "GPU tests of paired timing rc=$?"; grep -E "ok$|FAIL|ERROR|Error|Ran|^OK" "$WORK/gputest.log" | head -20
fi

if want env; then
  python3 - <<'EOF'
import os, sys
sys.path.insert(0, "remote_agent")
from moetune_agent import bytecode
print("python", sys.version.split()[0], "dont_write_bytecode", sys.flags.dont_write_bytecode,
      "PYTHONDONTWRITEBYTECODE", os.environ.get("PYTHONDONTWRITEBYTECODE"),
      "PYTHONPYCACHEPREFIX", os.environ.get("PYTHONPYCACHEPREFIX"))
print("installed bytecode missing or stale:", bytecode.missing())
try:
    import importlib.util
    t = os.path.dirname(importlib.util.find_spec("torch").origin)
    print("torch folder", t, "writable", os.access(t, os.W_OK), "__pycache__ entries",
          len(os.listdir(os.path.join(t, "__pycache__"))) if os.path.isdir(os.path.join(t, "__pycache__")) else None)
except Exception as e:  # noqa: BLE001
    print("torch:", e)
EOF
  stamp "env"
fi
row() {  # label rows [extra args]
  local label=$1 rows=$2; shift 2
  python3 remote_agent/tools/user_path_bench.py "${SYN[@]}" --label "$label" --home "$HOME_DIR" --rows "$rows" \
    --json "$OUT/$label.json" "$@" > "$WORK/$label.log" 2>&1
  stamp "$label"; grep -E "^(own_up|own_updown|sglang_up|vllm_up|int4_3|bf16_3) |within 1.5x|int4|precompile|Traceback|Error" "$WORK/$label.log" | head -8
}
check() {  # label pairs
  python3 remote_agent/bench/headroom_bench.py "${SYN[@]}" --pairs "$2" --check-only "$2" --home "$HOME_DIR" \
    ${UPSTREAM_SGL:+--upstream "$UPSTREAM_SGL"} --limit-s 300 --out "$WORK/$1" > "$WORK/$1.log" 2>&1
  stamp "$1"; grep -E "^\[|SUMMARY|^  " "$WORK/$1.log" | grep -v "check's best" | head -40
  cp "$WORK/$1/headroom_bench.json" "$OUT/$1_bench.json" 2>/dev/null
}
[ -d .upstream/sglang_head ] && UPSTREAM_SGL=.upstream/sglang_head
want cold && row own_up_cold own_up
SERVER_PAIR=""; [ -n "${UPSTREAM_SGL:-}" ] && SERVER_PAIR=",qwen3_server"
want checks && check checks "${CHECKS:-qwen3_triton,fp8block_triton$SERVER_PAIR}"
want check2 && [ -n "$SERVER_PAIR" ] && check check2 qwen3_server
want warm && row own_up_warm own_up
want updown && row own_updown own_updown
want int4 && row int4 bf16_3,int4_3 --row-cap int4_3="${INT4_CAP:-60}"
if [ -d .upstream ] || [ "${PROFILE_SYNTHETIC:-0}" = 1 ]; then
  want sglang && row sglang_up sglang_up --upstream .upstream --row-cap sglang_up="${SGL_CAP:-130}"
  want sglang2 && row sglang_up2 sglang_up --upstream .upstream --row-cap sglang_up="${SGL2_CAP:-100}"
  want vllm && row vllm_up vllm_up --upstream .upstream --row-cap vllm_up="${VLLM_CAP:-90}"
fi
python3 - "$HOME_DIR" <<'EOF'
import os, sys
n = sum(len([f for f in fs if f.endswith(".pyc")]) for _d, _s, fs in os.walk(os.path.join(sys.argv[1], "pycache")))
print("bytecode files under the agent's home:", n)
EOF
tar -C "$WORK" -czf "$OUT/logs.tar.gz" $(cd "$WORK" && ls *.log) 2>/dev/null
stamp "done"
