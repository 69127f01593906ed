// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"
#include "core/host/hostprobe.h"

namespace moetune::cli {

// `moetune-cli probe HOST [--python PATH] [--format text|json] [--accept-new-host-key]`: what the agent
// finds on a host (GPUs, versions, config folders, served model, suggested tuning job).
class ProbeCommand : public Command {
public:
    QString name() const override;
    QString summary() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    int run(const QStringList &args) override;

    static QString renderText(const HostProbe &probe);
    // True when the probe shows something to fix: SGLang's folder for the installed Triton is missing.
    static bool needsAttention(const HostProbe &probe);
};

} // namespace moetune::cli
