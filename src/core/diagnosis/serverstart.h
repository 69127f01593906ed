// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/moekerneluse.h"
#include "core/moe/framework.h"

#include <QList>
#include <QString>

#include <optional>

namespace moetune {

// One server start in a log (a followed log can hold several across restarts): where it begins and
// when it became ready, as far as the log shows.
struct ServerStart {
    qint64 line = 0; // its start line (SGLang's server_args, vLLM's "API server version"); 0: not in the log
    QString time;    // as printed on that line; empty when none
    Framework framework = Framework::Unknown;
    qint64 readyLine = 0; // its readiness line; 0: not ready in this log
    QString readyTime;    // as printed (or, readyTimeFromEarlierLine, the time of the nearest line before)
    bool readyTimeFromEarlierLine = false;
    std::optional<qint64> secondsToReady; // from the start line's time to the ready line's
    QList<MoeKernelUse> moeKernels;       // the MoE kernels its log names (empty: it names none)
    QString model; // the served model as the start line names it (SGLang's model_path), "" = not named

    bool operator==(const ServerStart &) const = default;
};

} // namespace moetune
