// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/moebackend.h"

#include <QString>

namespace moetune {

// The MoE kernel one server start runs for one group of its layers, as its log says
// (ServerStart::moeKernels; JSON starts[].moe_kernels).
struct MoeKernelUse {
    QString backend; // as printed: "MARLIN", "auto", "triton_kernels"
    QString scheme;  // as printed ("Fp8", "Unquantized"); empty: all layers, or the line names none
    QString kernel;  // how sentences name it ("the Triton fused-MoE kernel", "MARLIN")
    MoeBackend::Configs configs = MoeBackend::Configs::Unknown;
    qint64 line = 0; // the first line that names it

    bool operator==(const MoeKernelUse &) const = default;
};

} // namespace moetune
