// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunejobcheck.h"

using namespace Qt::StringLiterals;

namespace moetune {

QString TuneJobCheck::widgetName(JobCheck::Field field) {
    switch (field) {
    case JobCheck::Field::Framework:
        return u"frameworkCombo"_s;
    case JobCheck::Field::Experts:
        return u"expertsSpin"_s;
    case JobCheck::Field::N:
        return u"nSpin"_s;
    case JobCheck::Field::K:
        return u"kSpin"_s;
    case JobCheck::Field::Topk:
        return u"topkSpin"_s;
    case JobCheck::Field::BlockShape:
        return u"blockShapeEdit"_s;
    case JobCheck::Field::PerChannel:
        return u"perChannelCheck"_s;
    case JobCheck::Field::UpAndDown:
        return u"upDownCheck"_s;
    case JobCheck::Field::BatchSizes:
        return u"batchSizesEdit"_s;
    case JobCheck::Field::Gpus:
        return u"gpusEdit"_s;
    case JobCheck::Field::Strategy:
        return u"strategyCombo"_s;
    case JobCheck::Field::TimeBudget:
        return u"budgetSpin"_s;
    case JobCheck::Field::DeviceName:
        break; // taken from the finding, not typed
    }
    return {};
}

TuneJobCheck TuneJobCheck::check(const TuneSpec &spec, const std::optional<TuningTarget> &target) {
    const JobCheck core = JobCheck::check(spec, target);
    TuneJobCheck c;
    for (const JobCheck::Problem &p : core.problems)
        c.problems.append({widgetName(p.field), p.sentence});
    c.fileNames = core.fileNames;
    c.fileNamesMatch = core.fileNamesMatch;
    c.namesMatch = core.namesMatch;
    return c;
}

} // namespace moetune
