// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"
#include "core/job/tunespec.h"

#include <QCommandLineParser>
#include <optional>

namespace moetune::cli {

// `moetune-cli tune HOST (--from-log FILE | --spec FILE | --framework F --E E --N N --K K --topk T ...)
// [--follow] [--stop-server]`: preflight (GPUs, memory, holders), then a detached run on the host.
class TuneCommand : public Command {
public:
    QString name() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    QString summary() const override;
    int run(const QStringList &args) override;
};

} // namespace moetune::cli
