// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/transport/transport.h"

namespace moetune {

// For the CLI and tests: runs a nested event loop until a job finishes (never use on the GUI thread).
// Collects the job's stdout/stderr lines. A timeout gives a JobResult with an error and cancels the job.
struct WaitedJob {
    JobResult result;
    QStringList stdoutLines;
    QStringList stderrLines;
    QByteArray stdoutData;
};
WaitedJob waitForJob(Transport *transport, JobId id, int timeoutMs = 60000);
// Waits until the transport is Connected (true) or Failed/Disconnected or the timeout (false).
bool waitForConnected(Transport *transport, int timeoutMs = 30000, QString *error = nullptr);

} // namespace moetune
