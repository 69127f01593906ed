// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// `moetune-cli fleet diagnose` (issue 46 point 2), dispatched from fleetcommand.cpp: every host of the set
// (an Ansible inventory, an ssh config's Host aliases or the hosts added in the app; all, a group, a tag or
// the HOSTs named) diagnosed through FleetDiagnoseFlow, at most --max-sessions at once. Prints the host
// table (host, GPU, framework and version, Triton, served model, MoE kernel, findings; unreachable hosts
// with the reason) and the tuning groups with what sets them apart, saves the fleet record in the
// workspace and prints its id (`fleet tune | push | undo --record ID` take it; the newest is the default).
// Exit status: 0 every host diagnosed, 1 a host unreachable or failed (listed with the reason), 2 bad
// arguments, a malformed inventory or an unknown group, tag or host.

#include <QStringList>

namespace moetune::cli {

int fleetDiagnose(const QStringList &args); // args[0] = "diagnose"

} // namespace moetune::cli
