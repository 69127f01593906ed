// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"

namespace moetune::cli {

// `moetune-cli diagnose [FILE|-] [--format text|json|markdown] [--rules DIR] [--no-color]`
class DiagnoseCommand : public Command {
public:
    QString name() const override;
    QString summary() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    int run(const QStringList &args) override;
};

} // namespace moetune::cli
