// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/framework.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

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
        // What was there before this push: existedBefore false = no file (undo removes it); previousSha256
        // its sha256 ("" when an older agent did not say: the backup's bytes are then the reference).
        bool existedBefore = false;
        QString previousSha256;
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

// Every push of one run on one host, oldest first: <run_dir>/push.json, format "moetune-push" version 2
// ({"pushes": [record, ...]}); a version 1 file (one record) reads as a history of one. A later push of the
// same run is appended, never written over an earlier one, so Undo can put back what was there before the
// first push.
struct PushHistory {
    QString runId;
    QList<PushRecord> pushes;

    QJsonObject toJson() const;
    static std::optional<PushHistory> fromJson(const QJsonObject &o, QString *error = nullptr);
    QList<int> notUndone() const; // indexes, oldest first
};

// Undo of every push of a run not undone yet, newest first, checked before anything is touched and read
// back after: the shell script for the host, and the sentence built from what the read-back printed.
struct PushUndo {
    struct Path {
        QString target;
        QString nowSha; // what the newest push installed: the file must still hold it
        bool beforeExists = false;
        QString beforeSha; // before the first push ("" + beforeBackup: the backup's bytes)
        QString beforeBackup;
        QString firstPushTime; // for the sentence
    };
    struct Step {
        int path = -1;
        QString backup; // "" = remove the file (it did not exist before that push)
        QString createdFolder;
    };
    QList<int> undone; // push indexes this undo reverts (newest first), each with something to put back
    QList<int> noOps;  // push indexes that changed nothing (undone to nothing)
    QList<Path> paths;
    QList<Step> steps;   // in the order they run
    QStringList folders; // folders pushes created (removed when empty)
    QString error;       // refused before touching anything (the sentence names the file)

    static PushUndo plan(const PushHistory &history);
    bool nothingToPutBack() const { return error.isEmpty() && steps.isEmpty(); }
    // sh: exit 3 and "changed I SHA" / "missing I" lines when a file is not what was pushed (nothing
    // touched); else restores, then prints "now I SHA|absent", "before I SHA" (backup references) and
    // "folder F yes|no" lines.
    QString script() const;
    struct Outcome {
        bool ok = false;
        QStringList lines; // one per path: what is on disk now vs before the first push
        QString summary;   // the sentence
        QString error;     // a mismatch, naming the file
    };
    Outcome readBack(const QStringList &output, const QString &runId) const;
    // The refusal from a check that failed (exit 3).
    QString refusal(const QStringList &output, const QString &runId) const;
};

} // namespace moetune
