// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/transport/transport.h"

#include <QHash>
#include <QPointer>

class QProcess;

namespace moetune {

// This machine as a host: commands run with /bin/sh -c through QProcess, transfers are file copies.
// "~/" in paths means homeDir (default: the real home), so tests can give the "host" its own home.
class LocalTransport : public Transport {
    Q_OBJECT
public:
    explicit LocalTransport(QString homeDir = {}, QObject *parent = nullptr);
    ~LocalTransport() override;

    QString hostLabel() const override { return m_label; } // HostConfig::label()
    void setHostLabel(const QString &label) { m_label = label; }
    State state() const override { return m_state; }
    QString stateMessage() const override { return {}; }
    QString homeDir() const { return m_home; }

    void connectToHost() override;
    void disconnectFromHost() override;
    JobId exec(const ExecRequest &request) override;
    JobId upload(const QString &localPath, const QString &remotePath) override;
    JobId download(const QString &remotePath, const QString &localPath) override;
    JobId replaceFile(const QString &localPath, const QString &remotePath) override;
    void cancel(JobId id) override;

private:
    QString resolve(const QString &path) const;
    JobId copyJob(const QString &from, const QString &to, bool atomic);
    void finish(JobId id, const JobResult &r);

    QString m_home;
    QString m_label = QStringLiteral("Local machine");
    State m_state = State::Disconnected;
    JobId m_nextId = 1;
    QHash<JobId, QPointer<QProcess>> m_processes;
};

} // namespace moetune
