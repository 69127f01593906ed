// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/moe/configname.h"
#include "core/push/pushproof.h"
#include "core/push/pushrecord.h"
#include "core/push/pushrowmerge.h"
#include "core/push/pushtarget.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/servercontrol.h"

#include <QObject>
#include <QPointer>

#include <functional>

namespace moetune {

// Push and proof on one host, below both shells: preview (the exact target from the server's own view,
// a diff against any file already there, whether it survives), push through the agent's install-config
// (backup, atomic replace, read-back) with a record kept beside the run, restart through the server
// profile, the log since the restart diagnosed against the one before, and undo from the record.
class PushFlow : public QObject {
    Q_OBJECT
public:
    struct Preview {
        QString runId;
        QString runDir;
        Framework framework = Framework::Unknown;
        bool simulated = false;
        ConfigName shape;
        PushTarget target;
        QList<QJsonObject> diffs; // the agent's `diff` events: target, exists, changed, would_backup, diff
        // Per diff: every row kept / replaced / added, other K's, sibling files.
        QList<PushRowMerge> merges;
        QString error;
        // Why the push itself would be refused (simulated numbers for a real server, a planted link): the
        // preview still has the folder and the diff, Push stays off. "" = it may be pushed.
        QString refused;
        bool ok() const { return error.isEmpty(); }
        bool canPush() const { return ok() && refused.isEmpty(); }
        QJsonObject toJson() const;
    };
    struct Proof {
        bool ok = false; // restarted, ready, log read and diagnosed (the proof itself may still fail)
        QString message; // what happened / what to do next
        ServerControl::StopResult stop;
        ServerControl::StartResult start;
        Diagnosis after;
        PushProof proof;
        QString afterLogFile;
    };

    PushFlow(HostCalls *calls, ServerControl *server, QString hostLabel, QObject *parent = nullptr);
    // The sentence for an install-config refusal code of a file (simulated, symlink_target, ...).
    static QString refusalSentence(const QString &code, const QString &target);

    void preview(const QString &runId, Framework framework, const Diagnosis *before, const HostProbe *probe,
                 bool persistent, const std::function<void(const Preview &)> &done);
    void push(const Preview &preview,
              const std::function<void(const PushRecord &, const QString &error)> &done);
    // afterLogFile: a local file for the log written since the restart. serverStopped: the server was
    // stopped through the profile before tuning and not started since, so it is only started.
    void restartAndProve(const Diagnosis &before, const QStringList &pushedTargets,
                         const QString &afterLogFile, const std::function<void(const Proof &)> &done,
                         bool serverStopped = false);
    // Restores the backups of the last push of runId (or removes files that did not exist before).
    void undo(const QString &runId,
              const std::function<void(const PushRecord &, const QString &error)> &done);
    // The run's folder on the host (from `runs`).
    void runDir(const QString &runId,
                const std::function<void(const QString &dir, const QString &error)> &done);
    void readRecord(
        const QString &runId,
        const std::function<void(const PushRecord &, const QString &runDir, const QString &error)> &done);

signals:
    void status(const QString &line);

private:
    void writeRecord(const QString &runDir, const PushRecord &record,
                     const std::function<void(const QString &)> &done);

    QPointer<HostCalls> m_calls;
    QPointer<ServerControl> m_server;
    QString m_hostLabel;
};

} // namespace moetune
