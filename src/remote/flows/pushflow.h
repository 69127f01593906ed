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
        // Pushes of this run on the host that Undo would put back (read with the preview).
        int undoablePushes = 0;
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

    // What an undo did, from the read-back of every path it touched.
    struct Undo {
        bool ok = false;
        QString message;               // the sentence (built from the read-back): shown when ok
        QString error;                 // refused (nothing touched) or a mismatch naming the file
        QStringList lines;             // per path: on disk now vs before the first push
        PushRecord record;             // the files of the pushes it undid (newest first)
        bool changedSomething = false; // a file was restored or removed (a restart would load it)
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
    // Undoes every push of runId not undone yet, newest first (backups restored, files that did not exist
    // removed), after checking that each file is still what was pushed (else nothing is touched), then
    // reads every path back: the sentence says what is on disk now against what was there before the
    // first push.
    void undoRun(const QString &runId, const std::function<void(const Undo &)> &done);
    // The same, for callers that take a record and an error ("" when undone).
    void undo(const QString &runId,
              const std::function<void(const PushRecord &, const QString &error)> &done);
    // The run's folder on the host (from `runs`).
    void runDir(const QString &runId,
                const std::function<void(const QString &dir, const QString &error)> &done);
    // Every push of the run on the host (empty when it was never pushed).
    void readHistory(
        const QString &runId,
        const std::function<void(const PushHistory &, const QString &runDir, const QString &error)> &done);

signals:
    void status(const QString &line);

private:
    void readHistoryIn(const QString &dir,
                       const std::function<void(const PushHistory &, const QString &error)> &done);
    void writeHistory(const QString &runDir, const PushHistory &history,
                      const std::function<void(const QString &)> &done);
    // Appends record to the run's history on the host (read again right before: never written over).
    void appendRecord(const QString &runDir, const PushRecord &record,
                      const std::function<void(const QString &)> &done);

    QPointer<HostCalls> m_calls;
    QPointer<ServerControl> m_server;
    QString m_hostLabel;
};

} // namespace moetune
