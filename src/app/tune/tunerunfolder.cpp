// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunerunfolder.h"

#include "core/run/workspace.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>

using namespace Qt::StringLiterals;

namespace moetune {

TuneRunFolder::TuneRunFolder(QObject *parent)
    : QObject(parent)
    , m_workspacePath(Workspace::defaultLocation()) {}

QString TuneRunFolder::runId() const {
    return m_folder.isEmpty() ? QString() : QDir(m_folder).dirName();
}

bool TuneRunFolder::begin(WorkspaceRun run) {
    m_pendingEvents.clear();
    m_folder.clear();
    QString error;
    if (!QFileInfo::exists(QDir(m_workspacePath).filePath(u"workspace.json"_s)) &&
        !Workspace::create(m_workspacePath, tr("My runs"), &error)) {
        emit problem(tr("This run is not kept locally: %1").arg(error));
        return false;
    }
    run.dir = QDir(m_workspacePath).filePath(run.runId);
    QFile::remove(QDir(run.dir).filePath(u"events.jsonl"_s));
    if (!run.save(&error)) {
        emit problem(tr("This run is not kept locally: %1").arg(error));
        return false;
    }
    m_folder = run.dir;
    return true;
}

void TuneRunFolder::addEvent(const QJsonObject &event) {
    if (!m_folder.isEmpty())
        m_pendingEvents += QJsonDocument(event).toJson(QJsonDocument::Compact) + '\n';
}

void TuneRunFolder::flush() {
    if (m_pendingEvents.isEmpty() || m_folder.isEmpty())
        return;
    QString error;
    if (!WorkspaceRun::appendEvents(m_folder, m_pendingEvents, &error))
        emit problem(tr("Could not keep the run's events in %1: %2").arg(m_folder, error));
    m_pendingEvents.clear();
}

void TuneRunFolder::save(const QString &file, const QJsonObject &json) {
    if (m_folder.isEmpty())
        return;
    QSaveFile f(QDir(m_folder).filePath(file));
    const QByteArray bytes = QJsonDocument(json).toJson();
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        emit problem(tr("Could not write %1: %2").arg(f.fileName(), f.errorString()));
}

} // namespace moetune
