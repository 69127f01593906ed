// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"
#include "core/host/preflight.h"
#include "core/job/tunespec.h"
#include "core/run/runprogress.h"
#include "remote/flows/hostcalls.h"

#include <QObject>
#include <QPointer>

#include <functional>

namespace moetune {

// The tuning flows of one host, below both shells: preflight (GPUs, free memory, holders by name and
// pid), start a detached run, follow it (reattaching from the last event seen when the connection
// drops, so nothing is lost or counted twice), cancel, list runs.
class TuneFlow : public QObject {
    Q_OBJECT
public:
    explicit TuneFlow(HostCalls *calls, QObject *parent = nullptr);

    // Per-GPU memory a real backend needs to start (the synthetic backend needs none).
    static qint64 neededMiB(const TuneSpec &spec);

    // The server the probes of preflight() are focused on (HostProbe::focused): the host's choice.
    void setServerChoice(const ServerChoice &choice) { m_choice = choice; }

    void
    preflight(const TuneSpec &spec,
              const std::function<void(const Preflight &, const HostProbe &, const QString &error)> &done);
    // Starts a detached run: done(run id, run_started event, error).
    void start(const TuneSpec &spec,
               const std::function<void(const QString &, const QJsonObject &, const QString &)> &done);
    // Follows runId from progress->lastSeq + 1 until the run's own done, applying every event to *progress
    // (owned by the caller; it must outlive the follow). A dropped connection waits for the transport's
    // reconnect (up to reconnectWaitMs) and reattaches from the last applied event.
    // done(ok, error): ok when the run ended (any status) and every event was read.
    void follow(const QString &runId, RunProgress *progress,
                const std::function<void(bool, const QString &)> &done, bool untilDone = true);
    void stopFollowing();
    // A follow() has not called its done yet (reattaching after a drop included).
    bool isFollowing() const { return m_following; }
    void cancel(const QString &runId, const std::function<void(bool, const QString &)> &done);
    void listRuns(const std::function<void(const QList<QJsonObject> &, const QString &)> &done);
    void setReconnectWaitMs(int ms) { m_reconnectWaitMs = ms; }
    int reattachCount() const { return m_reattaches; }

signals:
    void runEvent(const QJsonObject &event); // every applied (new) run event, in seq order
    void reattaching(const QString &reason);

private:
    void attachOnce(const QString &runId, RunProgress *progress,
                    const std::function<void(bool, const QString &)> &done, bool untilDone);

    QPointer<HostCalls> m_calls;
    ServerChoice m_choice;
    JobId m_followJob = 0;
    int m_reconnectWaitMs = 120000;
    int m_reattaches = 0;
    bool m_stopped = false;
    bool m_following = false;
};

} // namespace moetune
