// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace moetune {

// One log line that names the MoE kernel a server start runs (a data rule with "moe_kernel"), as printed.
struct MoeKernelSighting {
    QString backend;     // "MARLIN", "FlashInfer TRTLLM", "auto", "triton_kernels"
    QString scheme;      // "Fp8", "Unquantized", ...; empty when the line names none (SGLang)
    QString layers;      // the layers it concerns when not the main ones ("shapes DeepGEMM hands to Triton")
    int n = 0;           // the N of the one shape the line speaks of (0: none)
    QString explanation; // the rule's explanation, expanded with this match
    qint64 line = 0;     // the first line that said it

    // One sighting per distinct fact of a start: every rank prints the same line.
    bool sameFact(const MoeKernelSighting &o) const {
        return backend == o.backend && scheme == o.scheme && layers == o.layers && n == o.n;
    }
    bool operator==(const MoeKernelSighting &) const = default;
};

} // namespace moetune
