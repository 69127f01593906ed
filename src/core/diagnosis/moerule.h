// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/severity.h"

#include <QLatin1StringView>
#include <QList>
#include <QString>
#include <QStringView>

namespace moetune {

// The built-in MoE rules: what the builder reads from the server's fused-MoE (and block-FP8 GEMM) config
// lookups and kernel lines, as opposed to the data rules of resources/rules. One row each; every place
// that makes, judges, sorts or counts these findings reads this table, never the id spelled out.
enum class MoeRule {
    ConfigUsed,           // a tuned config file was loaded
    Untuned,              // the server used its default config: no file for this shape
    UntunedNoPath,        // the same, with no file name in the log (older servers)
    Fallback,             // the file was found in another triton_X_Y_Z folder
    DownMissing,          // the _down file of a shape is missing (the up one may be there)
    FolderNoConfig,       // a triton_X_Y_Z folder without any file the server wanted
    ShapesNotListed,      // more shapes than listed: the rest are counted
    Kernel,               // which MoE kernel the server runs (from the data rules' kernel lines)
    DeterministicDefault, // deterministic inference: the server's default config on purpose
    BlockFp8Untuned,      // the block-FP8 dense GEMM has no config for a shape
};

// What the id's prefix used to say: which group of findings a rule belongs to.
enum class MoeRuleFamily {
    MoeKernel,     // the fused-MoE kernel and its config files ("moe-..."): the report counts these
    TritonFolder,  // the triton_X_Y_Z folder of the config files
    Deterministic, // the server's deterministic mode
    DenseGemm,     // the block-FP8 dense GEMM (not a MoE finding: listed after the MoE ones)
};

struct MoeRuleRow {
    MoeRule rule;
    QLatin1StringView id; // the finding's `rule` (and its id's stem), in JSON, the report and the CLI
    MoeRuleFamily family;
    Severity severity; // before the kernel verdict adjusts it
    bool lookup;       // a config-file lookup that failed or fell back (judged by MoeKernelVerdict)
    int jobOrder;      // the place among one job's findings: the up file, then _down, then the folder
};

class MoeRules {
public:
    static const QList<MoeRuleRow> &table();
    static const MoeRuleRow &row(MoeRule rule);
    static QString id(MoeRule rule);
    // The row of a finding's rule id; nullptr for a data rule's or a host fact's id.
    static const MoeRuleRow *find(QStringView ruleId);
    static bool is(QStringView ruleId, MoeRule rule);
};

} // namespace moetune
