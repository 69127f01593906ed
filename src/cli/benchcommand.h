// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"

namespace moetune::cli {

// `moetune-cli bench HOST [--bench PRESET] [...]`: the server's own serving benchmark against a host's
// running server as it is (no push, no restart), the figures per concurrency.
class BenchCommand : public Command {
public:
    QString name() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    QString summary() const override;
    int run(const QStringList &args) override;
};

} // namespace moetune::cli
