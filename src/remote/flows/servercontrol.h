// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/host/hostprobe.h"
#include "core/server/serverprofile.h"
#include "remote/flows/hostcalls.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>

#include <functional>

namespace moetune {

// Stops, starts and reads the server of one host through its ServerProfile (docs/servers.md section 8).
// Stop is graceful (the profile's command), then the GPUs are checked until the processes that held
// them are gone; a leftover is named by pid and name and never killed. Start records where the log
// stood, runs the start command, and waits for the readiness line or health URL. Each call runs only
// when the user asked for it.
class ServerControl : public QObject {
    Q_OBJECT
public:
    // Where the log stood before a start: the log written since is what the restart printed.
    struct LogMark {
        qint64 offset = -1; // log file size (file logs)
        qint64 epoch = 0;   // host time, seconds (journalctl/docker --since)
    };
    struct StopResult {
        bool ok = false;
        QString message;             // what happened / what to do next
        QList<GpuProcess> leftovers; // processes still holding GPU memory after the stop
        QList<int> leftoverGpus;     // their GPU index
        // The stop command failed while no process held a GPU: the server was not running (down).
        bool notRunning = false;
    };
    struct StartResult {
        bool ok = false;
        QString message;
        LogMark mark;
        double readyAfterS = 0;
    };

    ServerControl(HostCalls *calls, ServerProfile profile, QObject *parent = nullptr);
    const ServerProfile &profile() const { return m_profile; }
    void setProfile(const ServerProfile &p) { m_profile = p; }
    void setGpuWaitSeconds(int s) { m_gpuWaitS = s; }

    // holdersBefore: the GPU processes from the probe before stopping (empty: probe first).
    void stop(const std::function<void(const StopResult &)> &done);
    void start(const std::function<void(const StartResult &)> &done);
    // The log written since mark into localFile.
    void fetchLogSince(const LogMark &mark, const QString &localFile,
                       const std::function<void(bool ok, const QString &error)> &done);
    void markLog(const std::function<void(const LogMark &, const QString &error)> &done);
    // The end of the server's current log (the profile's log file or command) into localFile.
    void fetchCurrentLog(qint64 maxBytes, const QString &localFile,
                         const std::function<void(bool ok, const QString &error)> &done);
    // The shell command that prints the log since mark (shown in the UI, used by the calls above).
    QString logSinceCommand(const LogMark &mark) const;

signals:
    void status(const QString &line); // "Waiting for the readiness line (12 s of 900 s)"

private:
    void probeHolders(
        const std::function<void(const QList<QPair<int, GpuProcess>> &, const QString &error)> &done);
    void waitGpusFree(const QList<QPair<int, GpuProcess>> &before,
                      const std::function<void(const StopResult &)> &done,
                      const std::shared_ptr<QElapsedTimer> &timer);
    void pollReady(const LogMark &mark, const std::shared_ptr<QElapsedTimer> &timer,
                   const std::function<void(const StartResult &)> &done);

    QPointer<HostCalls> m_calls;
    ServerProfile m_profile;
    int m_gpuWaitS = 60;
};

} // namespace moetune
