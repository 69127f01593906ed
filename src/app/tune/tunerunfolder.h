// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/workspacerun.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>

namespace moetune {

class RunKeeper;

// The Tune page's view of the run it keeps: which workspace (the Results page reopens it), which folder,
// and the parts the page adds later (the diagnosis after a restart, the serving comparison). The run
// itself - its facts and every event as it streams - is kept by the host session's RunKeeper
// (src/remote/flows), the same one `moetune-cli tune --follow` uses. A file that cannot be written is a
// sentence (problem), never a stop of the run.
class TuneRunFolder : public QObject {
    Q_OBJECT
public:
    explicit TuneRunFolder(QObject *parent = nullptr);

    void setWorkspacePath(const QString &path) { m_workspacePath = path; }
    QString workspacePath() const { return m_workspacePath; }
    QString folder() const { return m_folder; } // "" = the run shown is not kept
    QString runId() const;                      // the folder's name

    // The keeper of the flows now in use; a folder begun before goes on with it (flows made anew).
    void setKeeper(RunKeeper *keeper);
    // Starts keeping run.runId (the workspace is made when missing); false: not kept (problem says why).
    bool begin(const WorkspaceRun &run);
    void flush(); // the events not yet in events.jsonl
    void save(const QString &file, const QJsonObject &json);
    // As save(), into the kept folder of runId: the one shown, or another run kept in the workspace
    // (a push of an earlier run); nothing when that run is not kept here.
    void saveFor(const QString &runId, const QString &file, const QJsonObject &json);

    // A run kept in the workspace whose events end without the run's own done: moetune closed (or lost
    // the connection) while following it; it may still be running on its host.
    struct Unfinished {
        QString runId;
        QString host; // as run.json names it (the host's display name)
        QJsonObject spec;
    };
    static QList<Unfinished> unfinishedRuns(const QString &workspacePath);

signals:
    void problem(const QString &sentence);

private:
    QString m_workspacePath;
    QString m_folder;
    QPointer<RunKeeper> m_keeper;
};

} // namespace moetune
