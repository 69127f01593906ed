#!/bin/sh
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# TEST DOUBLE: an unrelated SGLang "server" for checking that tests are hermetic (issue 41). It only sleeps,
# under the command line a real one has (`python3 -m sglang.launch_server --model-path ... --port ...`),
# as a practice server started by hand or another test's fake would. Run it in the background, run the
# host/probe tests, then stop it by its pid:
#   tests/support/unrelated-sglang-server.sh [PORT] & pid=$!; ctest ...; kill $pid
# Its MoE model has the shape of the tests' own fake (Qwen3-30B-A3B: E=128, N=768) so that only the
# pid, port or log tells them apart.
port="${1:-30000}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/unrelated-sglang.XXXXXX")"
mkdir -p "$dir/models/Qwen3-30B-A3B"
printf '%s\n' '{"num_experts": 128, "num_experts_per_tok": 8, "hidden_size": 2048, "moe_intermediate_size": 768}' \
    > "$dir/models/Qwen3-30B-A3B/config.json"
trap 'rm -rf "$dir"' EXIT
trap 'exit 0' TERM INT
python3 -c 'import time
while True:
    time.sleep(3600)' -m sglang.launch_server --model-path "$dir/models/Qwen3-30B-A3B" --port "$port" \
    >> "$dir/server.log" 2>&1 &
child=$!
trap 'kill $child; exit 0' TERM INT
wait $child
