// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"

namespace moetune {

// "Diagnose host": adds what the probe knows to a log's diagnosis. Confirms (or contradicts) a missing
// triton_X_Y_Z folder from the folder listing, names the folder the server would fall back to, matches
// the served model's MoE shape to a target, and adds host facts (GPUs, versions, config root) as
// findings with rule ids "host-*". The diagnosis' summary is rewritten to include the host.
// `hostName` is the name the user knows the host by (HostConfig::label(): "Local machine", the alias);
// empty: the probe's hostname.
Diagnosis mergeHostProbe(Diagnosis diagnosis, const HostProbe &probe, const QString &hostName = {});

} // namespace moetune
