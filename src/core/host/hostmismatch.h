// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>

namespace moetune {

struct Diagnosis;
struct HostProbe;

// Where a host's probe and the log fetched from it disagree (the log's GPUs, device or Triton are not
// the host's): one sentence each, empty when they agree. A log from another machine (or an old one)
// must not be merged silently with this host's facts. The host's strings in them are cleaned (hostText).
QStringList hostMismatches(const Diagnosis &logDiagnosis, const HostProbe &probe, const QString &hostLabel);

} // namespace moetune
