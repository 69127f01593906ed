// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"

namespace moetune::cli {

// `moetune-cli headroom HOST (--from-log FILE | --spec FILE | shape options) [--format json]`: the
// agent's headroom check on the host's GPU (issue 19): the gain a full tune is likely to find per
// range of batch sizes, the verdict, and the per-size table (server's config, best screened, floor).
class HeadroomCommand : public Command {
public:
    QString name() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    QString summary() const override;
    int run(const QStringList &args) override;
};

} // namespace moetune::cli
