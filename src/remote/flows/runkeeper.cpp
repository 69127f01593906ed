// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/runkeeper.h"

#include "core/run/workspace.h"
#include "remote/flows/tuneflow.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune {

RunKeeper::RunKeeper(TuneFlow *tune, QObject *parent)
    : QObject(parent) {
    // Events may stream at 1000/s: appended in batches.
    m_flushTimer.setSingleShot(true);
    m_flushTimer.setInterval(100);
    connect(&m_flushTimer, &QTimer::timeout, this, [this] {
        QString error;
        if (!flush(&error))
            emit problem(error);
    });
    connect(tune, &TuneFlow::runEvent, this, [this](const QJsonObject &e) {
        if (m_dir.isEmpty())
            return;
        m_pending += QJsonDocument(e).toJson(QJsonDocument::Compact) + '\n';
        if (!m_flushTimer.isActive())
            m_flushTimer.start();
    });
}

RunKeeper::~RunKeeper() {
    QString error;
    flush(&error);
}

bool RunKeeper::begin(const QString &workspacePath, WorkspaceRun run, QString *error,
                      const QString &workspaceTitle) {
    m_pending.clear();
    m_dir.clear();
    // The id comes from the host's run_started: it names a folder only when it cannot leave the workspace.
    if (!WorkspaceRun::isSafeRunId(run.runId, error))
        return false;
    if (!QFileInfo::exists(QDir(workspacePath).filePath(u"workspace.json"_s)) &&
        !Workspace::create(workspacePath, workspaceTitle, error))
        return false;
    run.dir = QDir(workspacePath).filePath(run.runId);
    QFile::remove(QDir(run.dir).filePath(u"events.jsonl"_s));
    if (!run.save(error))
        return false;
    m_dir = run.dir;
    return true;
}

bool RunKeeper::flush(QString *error) {
    m_flushTimer.stop();
    if (m_pending.isEmpty() || m_dir.isEmpty())
        return true;
    const QByteArray lines = std::exchange(m_pending, QByteArray());
    if (!WorkspaceRun::appendEvents(m_dir, lines, error)) {
        *error = tr("Could not keep the run's events in %1: %2").arg(m_dir, *error);
        return false;
    }
    return true;
}

} // namespace moetune
