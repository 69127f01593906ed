// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/finding.h"
#include "core/diagnosis/moemessage.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace moetune {

// Every sentence of the built-in MoE findings and of the summary line. The builder decides what a log
// says; this says it, so that wording changes never touch the reading and merging.
class FindingWording {
public:
    // Title, explanation and advice of a MoE finding from its first message; f.target is the merged
    // target of its shape (or none when the file name is not a config name).
    static void describeMoe(Finding &f, const MoeMessage &msg);

    // The folder finding for the lookups that failed under one triton_X_Y_Z folder.
    struct FolderLookups {
        TuningTarget target;   // one target of that folder
        QStringList files;     // the files not found there
        QStringList fallbacks; // folders the server fell back to instead
    };
    static void describeFolder(Finding &f, const FolderLookups &lookups);

    // The start / readiness finding of start `number` of `total` (rule server-ready, or server-start
    // while the log shows no readiness line for it).
    static void describeStart(Finding &f, const ServerStart &start, int number, int total);

    // The one line a person reads first, from the sorted findings and the merged targets.
    static QString summary(const Diagnosis &d);
};

} // namespace moetune
