// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>

#include <optional>

namespace moetune {

// One launch configuration of the fused-MoE Triton kernel (the value of one batch-size key).
struct KernelConfig {
    int blockSizeM = 0;
    int blockSizeN = 0;
    int blockSizeK = 0;
    int groupSizeM = 0;
    int numWarps = 0;
    int numStages = 0;
    std::optional<bool> useTma; // SGLang down files
    QJsonObject extra;          // ROCm keys (waves_per_eu, matrix_instr_nonkdim, kpack) and any other

    bool operator==(const KernelConfig &) const = default;
};

} // namespace moetune
