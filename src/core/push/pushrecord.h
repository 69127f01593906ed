// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/framework.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace moetune {

// What one push changed on a host: every file install-config wrote, with its backup, so "Undo push"
// can put back exactly what was there. Kept on the host beside the run (<run_dir>/push.json), so the
// app and the CLI undo the same push. Format "moetune-push" version 1.
struct PushRecord {
    struct File {
        QString fileName;
        QString target;
        QString backup;         // "" = the file did not exist before (undo removes it)
        QString createdFolder;  // "" = the folder existed
        QString sha256;         // of what was installed (undo refuses if the file changed since)
        bool unchanged = false; // the same bytes were already there: nothing to undo
        bool operator==(const File &) const = default;
    };
    QString runId;
    QString host;
    Framework framework = Framework::Unknown;
    bool simulated = false;
    double pushedAt = 0;
    double undoneAt = 0; // 0 = not undone
    QList<File> files;

    static QString fileNameOnHost() { return QStringLiteral("push.json"); }
    // From the agent's `installed` events.
    void addInstalled(const QJsonObject &installedEvent);
    bool changedSomething() const;
    QJsonObject toJson() const;
    static std::optional<PushRecord> fromJson(const QJsonObject &o, QString *error = nullptr);
    bool operator==(const PushRecord &) const = default;
};

} // namespace moetune
