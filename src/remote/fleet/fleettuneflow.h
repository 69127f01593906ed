// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/fleet/fleetrecord.h"
#include "remote/fleet/fleetsessions.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QString>

#include <memory>

namespace moetune {

// Tune once per group (issue 46 point 3): each group's job runs on one host of the group, groups in
// parallel on different hosts, over the hosts' own sessions and flows (HostSession::flows(): TuneFlow,
// ServerControl), below both shells.
//
// For a group: the tune host is the user's choice, else the first host of the group whose GPUs are free
// (TuneFlow::preflight: no process holds them), else the first reachable one. On it, the host's log is
// diagnosed again and the job is built the way "Tune This..." builds it (buildTuneJob: the log's target of
// the group's missing file, K and top-k from the probe), checked against the group's facts (E, N, dtype,
// block shape, device name), preflighted (a server holding the GPUs is stopped through the host's profile
// only with Options::takeOutOfService, and started again after the run), started, followed to its end,
// and the run's result.json downloaded to <workspace>/fleet/<record id>/group-<n>/result.json. The record
// is updated in place (group state, tune host, run id, result file; the tune host's stage) and saved
// after every outcome.
class FleetTuneFlow : public QObject {
    Q_OBJECT
public:
    struct Options {
        // The chosen host's inference server holds its GPUs: stop it through its server profile before
        // the run and start it again after (the host is out of service meanwhile). Off: refused instead.
        bool takeOutOfService = false;
        QString backend;       // "" = the job's own ("auto"); "synthetic" gives SIMULATED numbers (tests)
        QList<int> batchSizes; // empty = the job's (the reference tuners' 18)
        QString strategy;      // "" = the job's ("fast")
    };

    FleetTuneFlow(FleetRecord *record, FleetSessionProvider sessions, QString workspacePath,
                  QObject *parent = nullptr);
    ~FleetTuneFlow() override;

    void setOptions(const Options &options) { m_options = options; }
    const Options &options() const { return m_options; }

    // host "" = pick: a host of the group whose GPUs are free (preflight), else the first reachable.
    // Ends with finished(group, ok, message) (also at once for a bad group or host, or a group running).
    void tuneGroup(int group, const QString &host);
    // Cancels the group's run on its host (the agent's cancel), or stops before the run starts.
    void cancel(int group);
    bool isRunning(int group) const { return m_runs.contains(group); }
    bool isRunning() const { return !m_runs.isEmpty(); }

signals:
    void hostChanged(int index);
    void groupChanged(int group);
    void progress(int group, qint64 done, qint64 total);
    void finished(int group, bool ok, const QString &message);
    // One line of what happens (for the CLI's progress lines and the Fleet view's status).
    void status(int group, const QString &line);

private:
    struct Run;
    void pick(const std::shared_ptr<Run> &run, int candidate);
    void prepare(const std::shared_ptr<Run> &run);
    void buildJob(const std::shared_ptr<Run> &run, const Diagnosis &diagnosis);
    void preflightAndStart(const std::shared_ptr<Run> &run, bool afterStop);
    void startRun(const std::shared_ptr<Run> &run);
    void followRun(const std::shared_ptr<Run> &run);
    void runEnded(const std::shared_ptr<Run> &run, bool followed, const QString &error);
    void fetchResult(const std::shared_ptr<Run> &run);
    void restoreServer(const std::shared_ptr<Run> &run, const std::function<void(const QString &)> &done);
    void fail(const std::shared_ptr<Run> &run, const QString &message);
    void succeed(const std::shared_ptr<Run> &run, const QString &message);
    void setHost(const QString &host, FleetHostStage stage, const QString &reason);
    void save();
    int hostIndex(const QString &name) const;

    FleetRecord *m_record;
    FleetSessionProvider m_sessions;
    QString m_workspace;
    Options m_options;
    QHash<int, std::shared_ptr<Run>> m_runs;
};

} // namespace moetune
