// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/workspacerun.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

namespace moetune {

class TuneFlow;

// Keeps a followed run in a local workspace (a folder per run, as the Results page and `moetune-cli
// report WORKSPACE` read it): begin() writes the run's facts, then every event the TuneFlow applies is
// appended to its events.jsonl, at most 10 times a second and at every flush(). Below both shells, so
// the app's Tune page and `moetune-cli tune --follow` / `attach` keep the same folder.
class RunKeeper : public QObject {
    Q_OBJECT
public:
    explicit RunKeeper(TuneFlow *tune, QObject *parent = nullptr);
    ~RunKeeper() override; // flushes

    // Starts keeping run.runId in workspacePath/<run id> (the workspace is created, titled
    // workspaceTitle, when missing); the folder's events start over. false + *error: nothing is kept.
    bool begin(const QString &workspacePath, WorkspaceRun run, QString *error,
               const QString &workspaceTitle = QStringLiteral("My runs"));
    // Goes on appending to a folder begun before (flows made anew for the same followed run).
    void resume(const QString &runFolder) { m_dir = runFolder; }
    QString runFolder() const { return m_dir; } // "" = no run kept
    bool flush(QString *error);

signals:
    void problem(const QString &sentence); // a timed flush that failed

private:
    QString m_dir;
    QByteArray m_pending; // event lines not yet appended to events.jsonl
    QTimer m_flushTimer;
};

} // namespace moetune
