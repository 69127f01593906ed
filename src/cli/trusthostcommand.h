// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"

namespace moetune::cli {

// `moetune-cli trust-host HOST [--fingerprint SHA256:...]`: records an unknown host key in known_hosts,
// only the one with the given fingerprint when one is given. A changed key is never overwritten.
class TrustHostCommand : public Command {
public:
    QString name() const override;
    QString summary() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    int run(const QStringList &args) override;
};

} // namespace moetune::cli
