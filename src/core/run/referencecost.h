// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QString>

namespace moetune {

// What the reference tuners (SGLang's tuning_fused_moe_triton.py, vLLM's benchmark_moe.py --tune) would
// spend on the same job: every config of the 1920-config space compiled and timed separately for each
// batch size on one GPU. Constants are the single-H200 figures of docs/servers.md section 7.
class ReferenceCost {
public:
    static constexpr int kConfigs = 1920;
    static constexpr double kCompileSeconds = 0.84; // per config, per batch size task (sizes specialised)
    static constexpr double kTimeAtM1 = 0.02;       // one config timed the reference way at M=1
    static constexpr double kTimeAtM4096 = 0.34;    // ... at M=4096

    static double timingSeconds(int m); // linear in M between the two measured ends, clamped
    static double estimateSeconds(const QList<int> &batchSizes, int configs = kConfigs);
    static QString basis(); // one sentence naming where the figure comes from
};

} // namespace moetune
