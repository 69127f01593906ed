// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"

namespace moetune::cli {

// `moetune-cli undo-push HOST RUN [--restart]: put back what the last push of RUN replaced.`
class UndoPushCommand : public Command {
public:
    QString name() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    QString summary() const override;
    int run(const QStringList &args) override;
};

} // namespace moetune::cli
