#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# README command 1: install what is missing, build what the app needs, and start moetune.
# Only the app, the agent it deploys to hosts and then moetune-cli (the README's commands use it) are built
# here (not the tests and benchmarks: those are packaging/test.sh's job), so the first window comes up in
# minutes on a fresh checkout. With no host configured the app opens on its demo workspace.
# Without a display (an SSH session to a server) the app runs on a virtual X server that x11vnc shares on
# 127.0.0.1 only, with a one-time password; run.sh prints how to reach it (or: --screenshot FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
headless=0
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then headless=1; fi
shot=0
for a in "$@"; do case "$a" in --screenshot|--screenshot=*|--startup-time|-h|--help|-v|--version) shot=1 ;; esac; done
if [ $headless = 1 ] && [ $shot = 0 ] && ! command -v x11vnc >/dev/null 2>&1; then
  bash packaging/install-deps.sh x11vnc || echo "run.sh: could not install x11vnc (the window will not be viewable)" >&2
fi
cmake --preset dev >/dev/null
targets=(moetune)
# The Hosts page deploys this zipapp to a host; it needs python3 (the agent is skipped without it).
if command -v python3 >/dev/null 2>&1; then
  targets+=(moetune_agent_pyz)
fi
cmake --build --preset dev --target "${targets[@]}"
app=build/dev/src/app/moetune
# moetune-cli (the README's commands) is built after the window is up, at low priority, so the first
# window does not wait for it.
case " $* " in
  *" --startup-time "*) ;;
  *) echo "run.sh: building moetune-cli in the background (build/dev/src/cli/moetune-cli; log build/dev/moetune-cli.log)" >&2
     (nice -n 19 cmake --build --preset dev --target moetune-cli >build/dev/moetune-cli.log 2>&1 &) ;;
esac
if [ $headless = 0 ]; then
  exec "$app" "$@"
fi
if [ $shot = 1 ]; then
  # One picture (or one measurement) and the app quits: no viewer needed.
  exec xvfb-run -a -s "-screen 0 1600x1000x24" "$app" "$@"
fi

# A virtual X server of our own, on the first free display number.
n=99
while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
Xvfb ":$n" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
vnc=""
state=$(mktemp -d)
trap 'kill $vnc $xvfb 2>/dev/null || true; rm -rf "$state"' EXIT
for _ in $(seq 100); do [ -e "/tmp/.X11-unix/X$n" ] && break; sleep 0.1; done
export DISPLAY=":$n"
echo "run.sh: no display here, so moetune runs on a virtual X server ($DISPLAY)." >&2
if command -v x11vnc >/dev/null 2>&1; then
  pw=$(head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 8)
  x11vnc -storepasswd "$pw" "$state/passwd" >/dev/null 2>&1
  x11vnc -display "$DISPLAY" -localhost -autoport 5900 -rfbauth "$state/passwd" -forever -shared \
    -noxdamage -quiet >"$state/vnc.log" 2>&1 &
  vnc=$!
  port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/^PORT=\([0-9]*\)$/\1/p' "$state/vnc.log" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  if [ -n "$port" ]; then
    cat >&2 <<MSG
run.sh: to see the window, x11vnc shares that screen on 127.0.0.1:$port (this machine only),
        password $pw (valid while this run lasts). From your own computer:
          ssh -L $port:127.0.0.1:$port $(id -un)@$(hostname -f 2>/dev/null || hostname)
        then open a VNC viewer (e.g. vncviewer, Remmina, macOS Screen Sharing) on localhost:$port.
        Ctrl+C here (or closing the window) ends moetune and the VNC server.
MSG
  else
    echo "run.sh: x11vnc did not start (see below); the window cannot be viewed:" >&2
    cat "$state/vnc.log" >&2
  fi
else
  cat >&2 <<MSG
run.sh: x11vnc is not installed, so the window cannot be viewed from here.
        Install it (sudo apt-get install x11vnc) and run this again, or save a picture of the window:
          bash packaging/run.sh --screenshot /tmp/moetune.png --window-size 1440x900
MSG
fi
status=0
"$app" "$@" || status=$?
exit $status
