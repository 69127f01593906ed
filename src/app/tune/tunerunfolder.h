// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/workspacerun.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QString>

namespace moetune {

// Where the Tune page keeps the run it follows: a folder per run in a local workspace (reopened by the
// Results page), its events appended as they stream (in batches: flush()), and the parts that come
// later (the diagnosis after a restart, the serving comparison). A file that cannot be written is a
// sentence (problem), never a stop of the run.
class TuneRunFolder : public QObject {
    Q_OBJECT
public:
    explicit TuneRunFolder(QObject *parent = nullptr);

    void setWorkspacePath(const QString &path) { m_workspacePath = path; }
    QString workspacePath() const { return m_workspacePath; }
    QString folder() const { return m_folder; } // "" = the run shown is not kept
    QString runId() const;                      // the folder's name

    // Starts the folder of run.runId over (the workspace is made when missing); false: not kept.
    bool begin(WorkspaceRun run);
    void addEvent(const QJsonObject &event);
    void flush(); // appends the events not yet in events.jsonl
    void save(const QString &file, const QJsonObject &json);

signals:
    void problem(const QString &sentence);

private:
    QString m_workspacePath;
    QString m_folder;
    QByteArray m_pendingEvents; // event lines not yet appended to the run folder's events.jsonl
};

} // namespace moetune
