// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Small steps the fleet's tune and rollout flows share (private to src/remote/fleet/): a host session's
// flows, a diagnosis waited on by its job id, a file transfer waited on, the record's clock, and the
// workspace place of a group's result.

#include "core/diagnosis/diagnosis.h"
#include "core/fleet/fleetrecord.h"
#include "remote/transport/remotejob.h"

#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace moetune {

class HostFlows;
class HostSession;
class Transport;

namespace fleetsteps {

// The session's one bundle of flows (HostSession::flows()), its connection started when it is down (a
// fleet diagnosis disconnects the sessions it connected; the flows' calls would otherwise wait in the queue).
HostFlows *flowsOf(HostSession *session);

// Fetch + probe + diagnosis of the host's log (HostSession::diagnoseHost), the result for this job only:
// done(diagnosis, "") or done(nullopt, why). Never called after context is gone.
void diagnose(HostSession *session, const QString &localFile, QObject *context,
              const std::function<void(const std::optional<Diagnosis> &, const QString &error)> &done);

// A transfer job of transport (upload / download) waited on: done(result) once, on context's thread.
void transfer(Transport *transport, JobId id, QObject *context,
              const std::function<void(const JobResult &)> &done);

// Seconds since the epoch (the record's times).
double now();

// Saves the record into the workspace after an outcome; a failure is logged, the flow goes on (the record
// in memory is still whole, and the next outcome tries again).
void saveRecord(const FleetRecord &record, const QString &workspacePath);

// <workspace>/fleet/<record id>/group-<n>/ (n from 1, as the CLI and the report number groups).
QString groupFolder(const QString &workspacePath, const QString &recordId, int group);

} // namespace fleetsteps
} // namespace moetune
