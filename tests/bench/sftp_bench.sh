#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# SFTP throughput: moetune_remote's upload/download vs scp over a test sshd on loopback (1 GB by default).
# Usage: tests/bench/sftp_bench.sh [MB] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
mb=${1:-1024}
build=${2:-build/dev}
[ -f "$build/build.ninja" ] || cmake --preset dev >/dev/null
cmake --build "$build" --target sftp_bench >/dev/null
exec "$build/tests/integration/sftp_bench" "$mb"
