// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunerunfolder.h"

#include "core/run/workspace.h"
#include "remote/flows/runkeeper.h"

#include <QDir>
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

void TuneRunFolder::setKeeper(RunKeeper *keeper) {
    if (m_keeper == keeper)
        return;
    if (m_keeper)
        disconnect(m_keeper, nullptr, this, nullptr);
    m_keeper = keeper;
    if (!m_keeper)
        return;
    connect(m_keeper, &RunKeeper::problem, this, &TuneRunFolder::problem);
    if (!m_folder.isEmpty())
        m_keeper->resume(m_folder);
}

bool TuneRunFolder::begin(const WorkspaceRun &run) {
    m_folder.clear();
    QString error = tr("the run has no connection to a host");
    if (!m_keeper || !m_keeper->begin(m_workspacePath, run, &error, tr("My runs"))) {
        emit problem(tr("This run is not kept locally: %1").arg(error));
        return false;
    }
    m_folder = m_keeper->runFolder();
    return true;
}

void TuneRunFolder::flush() {
    QString error;
    if (m_keeper && !m_keeper->flush(&error))
        emit problem(error);
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
