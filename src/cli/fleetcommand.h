// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "cli/command.h"
#include "core/fleet/inventory.h"

#include <QStringList>

namespace moetune::cli {

// The concrete Host aliases of an ssh config (no patterns, no negations: HostStore::sshConfigAliases),
// each resolved as ssh resolves it, as a fleet inventory (an ssh config has no groups). Used by `fleet
// hosts` and `fleet diagnose`.
FleetInventory fleetFromSshConfig(const QString &path, QStringList *errors);

// `moetune-cli fleet hosts|diagnose|tune|push|undo`: `hosts` lists the set of hosts a fleet command works
// on, read from an Ansible inventory or the concrete Host aliases of an ssh config, and connects to
// nothing; the other subcommands (fleetdiagnose.cpp, fleettune.cpp, fleetpush.cpp) run the fleet flows
// of src/remote/fleet over that set.
class FleetCommand : public Command {
public:
    QString name() const override;
    QString summary() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    int run(const QStringList &args) override;
};

} // namespace moetune::cli
