// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"

namespace moetune::cli {

// `moetune-cli fleet hosts [--inventory FILE | --ssh-config FILE] [--group G | --tag T | HOST...]
// [--format json]`: the set of hosts a fleet command would work on, read from an Ansible inventory or
// the concrete Host aliases of an ssh config. Connects to nothing. (Issue 46: diagnose, tune, push and
// undo over the set are not built yet.)
class FleetCommand : public Command {
public:
    QString name() const override;
    QString summary() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    int run(const QStringList &args) override;
};

} // namespace moetune::cli
