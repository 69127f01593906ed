// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/run/workspacerun.h"

#include <QList>
#include <QString>

#include <optional>

namespace moetune {

// A folder of runs (one sub-folder per run, see WorkspaceRun) with a workspace.json marker:
//   {"format":"moetune-workspace","version":1,"name":...}
// Opening a single run folder gives a workspace of that one run.
class Workspace {
public:
    static std::optional<Workspace> open(const QString &path, QString *error = nullptr);
    // Creates the folder and its marker when missing.
    static std::optional<Workspace> create(const QString &path, const QString &name,
                                           QString *error = nullptr);
    static QString defaultLocation(); // <app data>/workspace

    QString path() const { return m_path; }
    QString name() const { return m_name; }
    const QList<WorkspaceRun> &runs() const { return m_runs; }
    QStringList warnings() const { return m_warnings; } // run folders that could not be read, and why
    const WorkspaceRun *run(const QString &runId) const;
    // Saves the run into <workspace>/<run id>/ and adds it (replacing one of the same id).
    bool addRun(WorkspaceRun run, QString *error = nullptr);

private:
    QString m_path;
    QString m_name;
    QList<WorkspaceRun> m_runs; // newest first
    QStringList m_warnings;
};

} // namespace moetune
