// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnoser.h"
#include "core/fleet/fleetrecord.h"
#include "remote/fleet/fleetsessions.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>

class QTimer;

namespace moetune {

struct Diagnosis;
struct HostProbe;
class HostSession;

// Fleet diagnosis (issue 46): every host of record->hosts diagnosed, at most maxSessions() at once. Per
// host: its session from the provider (connected first when it is not; an unknown host key answered "no",
// a password or passphrase prompt cancelled), then HostSession::diagnoseHost (the same fetch of the log's
// last logBytes() + fresh probe + diagnosis as "Diagnose host" on the Hosts page and `moetune-cli diagnose
// --host`). A host without a log source gets a probe first and the log file its server writes (when the
// probe sees exactly one server for it). What the table and the grouping need is kept in its
// FleetHostRecord (GPU, framework and version, Triton, served model, the MoE kernel in use, findings, and
// FleetHostFacts with the kernel source hash of the chosen server); the Diagnosis itself and the fetched
// log are dropped once the host is done, so memory per finished host stays a few kilobytes.
//
// Every host ends Diagnosed, Unreachable (with the reason: refused, timed out, host key not known or
// changed, needs a password) or Failed (a step failed on a reachable host, with the sentence); none is
// dropped. Each change emits hostChanged(index); the record is saved (<workspace>/fleet/<id>.json) after
// host outcomes (at most once a second while hosts finish, and always at the end). At the end the groups
// are formed (FleetRecord::regroup), the record saved, then finished().
//
// Nothing blocks the caller's thread: the sessions' transports run in their own threads, and the
// diagnosis of a fetched log runs off it (HostSession).
class FleetDiagnoseFlow : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultMaxSessions = 8;
    static constexpr int kMaxSessionsCap = 256;           // setMaxSessions() clamps to 1..this
    static constexpr qint64 kDefaultLogBytes = 8LL << 20; // the tail of each server log fetched
    static constexpr int kMaxFindingsPerHost = 12;        // lines kept per host (then "... and N more")
    static constexpr int kDefaultHostTimeoutS = 300;      // one host's connect + diagnosis, at most
    // File descriptors one session in flight may hold (its socket, its worker thread's wake-up fds, the
    // log's temporary file, a ProxyJump process's pipes), and those kept for the rest of the process:
    // start() lowers the bound to fit RLIMIT_NOFILE's soft limit and says so in sessionsNote().
    static constexpr int kFdsPerSession = 12;
    static constexpr int kFdsReserved = 64;

    FleetDiagnoseFlow(FleetRecord *record, FleetSessionProvider sessions, QString workspacePath,
                      QObject *parent = nullptr);
    ~FleetDiagnoseFlow() override;

    void setMaxSessions(int n); // default 8 at once
    int maxSessions() const { return m_maxSessions; }
    void setLogBytes(qint64 bytes);
    qint64 logBytes() const { return m_logBytes; }
    void setHostTimeoutS(int seconds);
    void setDiagnoser(const Diagnoser &diagnoser);
    // Called when the flow is done with a host's session (its outcome recorded); the CLI's provider frees
    // the session there. A session this flow connected is disconnected first; one that was connected
    // when the flow took it (the app's) is left as it was.
    void setSessionDone(std::function<void(const FleetHost &host, HostSession *session)> done);

    void start();  // -> hostChanged(i)..., finished(); record->regroup() at the end; record saved
    void cancel(); // hosts not finished end Failed "cancelled"; then finished()
    bool isRunning() const { return m_running; }

    // Figures of the last start() (tests, the benchmark): the most hosts in flight at once, and how long
    // each host took, in the order of record->hosts (ms; -1 = not run).
    int peakSessions() const { return m_peak; }
    QList<qint64> hostMs() const { return m_hostMs; }
    QString saveError() const { return m_saveError; } // "" = every save worked
    // Why start() ran fewer sessions at once than asked ("" = as asked).
    QString sessionsNote() const { return m_sessionsNote; }

signals:
    void hostChanged(int index);
    void finished();

private:
    struct Active;
    void launchNext();
    void startHost(int index);
    void beginDiagnosis(Active *a);
    void runDiagnosis(Active *a);
    void onConnectionFailed(Active *a, const QString &message);
    void onDiagnosed(Active *a, const Diagnosis &diagnosis);
    void finishHost(Active *a, FleetHostStage stage, const QString &reason);
    void setStage(int index, FleetHostStage stage, const QString &reason);
    void scheduleSave();
    void save();
    void finishAll();
    Active *activeFor(int index) const;

    FleetRecord *m_record;
    FleetSessionProvider m_sessions;
    QString m_workspace;
    Diagnoser m_diagnoser;
    std::function<void(const FleetHost &, HostSession *)> m_sessionDone;
    int m_maxSessions = kDefaultMaxSessions; // in force for this start()
    qint64 m_logBytes = kDefaultLogBytes;
    int m_hostTimeoutS = kDefaultHostTimeoutS;

    bool m_running = false;
    int m_next = 0;
    int m_done = 0;
    int m_peak = 0;
    std::vector<std::unique_ptr<Active>> m_active;
    QList<qint64> m_hostMs;
    QTimer *m_saveTimer = nullptr;
    QElapsedTimer m_sinceSave;
    QString m_saveError;
    QString m_sessionsNote;
    int m_sessionsAsked = kDefaultMaxSessions;
};

} // namespace moetune
