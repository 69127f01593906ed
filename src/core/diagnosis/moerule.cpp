// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/diagnosis/moerule.h"

using namespace Qt::StringLiterals;

namespace moetune {

const QList<MoeRuleRow> &MoeRules::table() {
    using F = MoeRuleFamily;
    static const QList<MoeRuleRow> rows{
        // rule, id, family, severity, lookup, jobOrder
        {MoeRule::ConfigUsed, "moe-config-used"_L1, F::MoeKernel, Severity::Info, false, 0},
        {MoeRule::Untuned, "moe-untuned"_L1, F::MoeKernel, Severity::Warning, true, 0},
        {MoeRule::UntunedNoPath, "moe-untuned-no-path"_L1, F::MoeKernel, Severity::Warning, true, 0},
        {MoeRule::Fallback, "moe-fallback"_L1, F::MoeKernel, Severity::Warning, true, 0},
        {MoeRule::DownMissing, "moe-down-missing"_L1, F::MoeKernel, Severity::Warning, true, 1},
        {MoeRule::FolderNoConfig, "triton-folder-no-config"_L1, F::TritonFolder, Severity::Warning, true, 2},
        {MoeRule::ShapesNotListed, "moe-shapes-not-listed"_L1, F::MoeKernel, Severity::Warning, false, 0},
        {MoeRule::Kernel, "moe-kernel"_L1, F::MoeKernel, Severity::Info, false, 0},
        {MoeRule::DeterministicDefault, "deterministic-default-config"_L1, F::Deterministic, Severity::Info,
         false, 0},
        {MoeRule::BlockFp8Untuned, "w8a8-block-fp8-untuned"_L1, F::DenseGemm, Severity::Warning, false, 0},
    };
    return rows;
}

const MoeRuleRow &MoeRules::row(MoeRule rule) {
    const QList<MoeRuleRow> &rows = table();
    return rows[qsizetype(rule)]; // the rows are in the enum's order (tst_diagnoser checks it)
}

QString MoeRules::id(MoeRule rule) {
    return row(rule).id;
}

const MoeRuleRow *MoeRules::find(QStringView ruleId) {
    for (const MoeRuleRow &r : table()) {
        if (ruleId == r.id)
            return &r;
    }
    return nullptr;
}

bool MoeRules::is(QStringView ruleId, MoeRule rule) {
    return ruleId == row(rule).id;
}

} // namespace moetune
