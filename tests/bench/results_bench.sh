#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
# Prints the Results page's figures: workspace reopen (50,000 measurements), landscape hover (30,000
# points), PDF export (18 sizes). Builds the CI preset first. Needs no display (offscreen platform).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset ci >/dev/null
cmake --build --preset ci --target results_bench >/dev/null
QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} build/ci/tests/bench/results_bench "$@"
