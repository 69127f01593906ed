// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/transport/remotejob.h"

#include <QObject>
#include <QStringList>

namespace moetune {

// A host the app drives: over SSH (SshTransport) or this machine (LocalTransport). All calls return
// at once; results come back as signals on the caller's thread. Jobs run in the order submitted per
// kind of resource; several execs may stream at once. Remote paths may start with "~/" (the user's home).
class Transport : public QObject {
    Q_OBJECT
public:
    enum class State {
        Disconnected,
        Connecting,
        AwaitingUser, // host key decision or a secret is being asked
        Connected,
        Reconnecting, // connection lost; queued jobs wait, retried with backoff
        Failed,       // stopped trying: stateMessage() says why and what to do
    };
    Q_ENUM(State)

    using QObject::QObject;
    ~Transport() override = default;

    virtual QString hostLabel() const = 0;
    virtual State state() const = 0;
    virtual QString stateMessage() const = 0;

    virtual void connectToHost() = 0;
    virtual void disconnectFromHost() = 0;

    // Jobs may be submitted before connecting: they wait in the queue and run once connected.
    virtual JobId exec(const ExecRequest &request) = 0;
    virtual JobId upload(const QString &localPath, const QString &remotePath) = 0;
    virtual JobId download(const QString &remotePath, const QString &localPath) = 0;
    // Atomic: writes remotePath + ".part", checks its SHA-256, then `mv -f` over remotePath.
    virtual JobId replaceFile(const QString &localPath, const QString &remotePath) = 0;
    virtual void cancel(JobId id) = 0;

    static QString stateName(State s);

signals:
    void stateChanged(moetune::Transport::State state, const QString &message);
    void stdoutLines(moetune::JobId id, const QStringList &lines);
    void stderrLines(moetune::JobId id, const QStringList &lines);
    void stdoutData(moetune::JobId id, const QByteArray &data);  // ExecRequest::rawStdout
    void progress(moetune::JobId id, qint64 done, qint64 total); // transfers and stdoutFile execs
    void finished(moetune::JobId id, const moetune::JobResult &result);
};

} // namespace moetune
