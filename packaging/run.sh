#!/usr/bin/env bash
# README command 1: install what is missing, build, and start moetune.
# With no host configured the app opens on its demo workspace (a sample server log, diagnosed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev
app=build/dev/src/app/moetune
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "run.sh: no DISPLAY; starting moetune inside a virtual X server (xvfb-run)." >&2
  exec xvfb-run -a -s "-screen 0 1600x1000x24" "$app" "$@"
fi
exec "$app" "$@"
