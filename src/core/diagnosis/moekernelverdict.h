// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/finding.h"
#include "core/diagnosis/moebackend.h"
#include "core/diagnosis/moekernelsighting.h"
#include "core/diagnosis/moekerneluse.h"

#include <QList>
#include <QString>

namespace moetune {

// Which MoE kernel a server start runs (docs/servers.md section 9) and what that means for its Triton config
// lookups: the kernel finding's words, the lookups' layers and urgency, the summary's clause.
class MoeKernelVerdict {
public:
    // One start: words its kernel finding (rule "moe-kernel", when its log names a kernel) and adjusts its
    // Triton config lookups (untuned, fallen back, down, folder): the layers they concern, and severity
    // info where the kernel of their layers reads no Triton config. Returns the start's kernels.
    static QList<MoeKernelUse> judge(const QList<MoeKernelSighting> &sightings,
                                     const QList<MoeBackend> &table, const QList<Finding *> &findings);
    // The clause FindingWording::summary adds for the latest start ("" when there is nothing to say).
    static QString summaryNote(const Diagnosis &d, bool hasJobs);
    // Whether a finding of this rule reports a Triton fused-MoE config the server looked for in vain.
    static bool isLookup(const QString &rule);
};

} // namespace moetune
