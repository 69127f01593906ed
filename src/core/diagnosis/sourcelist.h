// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringList>

namespace moetune {

// The ranks/processes of a finding in one short line, the same in the app and the CLI:
// {"TP0".."TP7"} -> "TP0-7"; {"TP0","TP2","TP3"} -> "TP0,2-3"; {"DP0 TP0","DP0 TP1","DP1 TP0"} ->
// "DP0 TP0-1, DP1 TP0"; vLLM workers "VllmWorker TP0 pid=11".."TP3 pid=14" -> "VllmWorker TP0-3" (a
// lone process keeps its pid). maxGroups > 0 keeps that many groups and says "+N more" for the rest.
QString compactSources(const QStringList &sources, int maxGroups = 0);

} // namespace moetune
