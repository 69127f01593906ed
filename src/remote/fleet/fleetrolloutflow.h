// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/fleet/fleetrecord.h"
#include "remote/fleet/fleetsessions.h"

#include <QHash>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>

namespace moetune {

// Roll a group's tuned result out with a canary (issue 46 point 4), over each host's own session and
// flows (HostSession::flows(): PushFlow, ServerControl, ServingFlow), below both shells.
//
// For every host of the group (hosts outside the record's set, or outside the group, are never touched):
// the group's result.json is uploaded into a private folder of the agent's home (~/.cache/moetune/incoming,
// 0700) and made a run of that host (`moetune-agent import-run`; the tune host pushes its own run), then
// the single-host path: the server's log before, PushFlow::preview (its own row merge: each host's existing
// file can differ), push, restartAndProve (ServingFlow::compare instead when Options::serving). The canary
// goes first; then the rest in batches of at most maxParallel hosts at once, each batch proved before the
// next starts. The first failure (unreachable, preview or push refused, restart or proof failed) stops the
// group's rollout: that host is undone (PushFlow::undoRun, read back) and the hosts not reached are Skipped.
// undoGroup() undoes every pushed host of the group, host by host, from the record (also a record loaded
// by another process). The record is updated in place and saved after every host's outcome.
class FleetRolloutFlow : public QObject {
    Q_OBJECT
public:
    struct Options {
        QString canary;       // "" = the group's tune host when it is in the set, else its first host
        int maxParallel = 1;  // hosts pushed and restarted at once after the canary
        bool serving = false; // the serving comparison (before / after, the server's own benchmark tool)
        QString servingPreset = QStringLiteral("decode"); // ServingWorkload preset
        // The log proof must show the warning gone (else the host is ProofFailed and the rollout stops).
        bool requireWarningGone = true;
    };

    FleetRolloutFlow(FleetRecord *record, FleetSessionProvider sessions, QString workspacePath,
                     QObject *parent = nullptr);
    ~FleetRolloutFlow() override;

    // Ends with finished(group, ok, message); ok only when every host of the group was proved.
    void rollOut(int group, const Options &options);
    // Undoes every host of the group whose push is recorded and not undone yet, one at a time.
    // Ends with finished(group, ok, message).
    void undoGroup(int group);
    bool isRunning(int group) const { return m_runs.contains(group); }
    bool isRunning() const { return !m_runs.isEmpty(); }

signals:
    void hostChanged(int index);
    void groupChanged(int group);
    void finished(int group, bool ok, const QString &message);
    void status(int group, const QString &line);

private:
    struct Rollout;
    struct HostRun;
    void nextBatch(const std::shared_ptr<Rollout> &r);
    void runHost(const std::shared_ptr<Rollout> &r, const QString &host,
                 const std::function<void(bool ok)> &done);
    void importRun(const std::shared_ptr<HostRun> &h);
    void readBefore(const std::shared_ptr<HostRun> &h);
    void previewAndPush(const std::shared_ptr<HostRun> &h);
    void restart(const std::shared_ptr<HostRun> &h);
    void serve(const std::shared_ptr<HostRun> &h);
    void hostFailed(const std::shared_ptr<HostRun> &h, FleetHostStage stage, const QString &why);
    void undoHost(const std::shared_ptr<HostRun> &h, const QString &why, const QString &after);
    void endRollout(const std::shared_ptr<Rollout> &r);
    void undoNext(int group, QStringList hosts, int failures);
    void setHost(const QString &host, FleetHostStage stage, const QString &reason);
    void save();
    int hostIndex(const QString &name) const;

    FleetRecord *m_record;
    FleetSessionProvider m_sessions;
    QString m_workspace;
    QHash<int, std::shared_ptr<Rollout>> m_runs;
};

} // namespace moetune
