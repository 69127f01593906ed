#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# README command 1: install what is missing, build what the app needs, and start moetune.
# Only the app and the agent it deploys to hosts are built here (not the tests and benchmarks: those
# are packaging/test.sh's job), so the first window comes up in minutes on a fresh checkout.
# With no host configured the app opens on its demo workspace (a sample server log, diagnosed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
cmake --preset dev >/dev/null
targets=(moetune)
# The Hosts page deploys this zipapp to a host; it needs python3 (the agent is skipped without it).
if command -v python3 >/dev/null 2>&1; then
  targets+=(moetune_agent_pyz)
fi
cmake --build --preset dev --target "${targets[@]}"
app=build/dev/src/app/moetune
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "run.sh: no DISPLAY; starting moetune inside a virtual X server (xvfb-run)." >&2
  exec xvfb-run -a -s "-screen 0 1600x1000x24" "$app" "$@"
fi
exec "$app" "$@"
