// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunerunfolder.h"

#include "core/run/workspace.h"
#include "remote/flows/runkeeper.h"

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
    saveFor(runId(), file, json);
}

void TuneRunFolder::saveFor(const QString &run, const QString &file, const QJsonObject &json) {
    QString folder = run.isEmpty() || run != runId() ? QString() : m_folder;
    // Another kept run: its folder in the workspace, by the run id (a name the agent made: no separator).
    if (folder.isEmpty() && !run.isEmpty() && !run.contains(u'/') && !run.contains(u'\\') &&
        !run.startsWith(u'.') && QFileInfo::exists(QDir(m_workspacePath).filePath(run + u"/run.json"_s)))
        folder = QDir(m_workspacePath).filePath(run);
    if (folder.isEmpty())
        return;
    QSaveFile f(QDir(folder).filePath(file));
    const QByteArray bytes = QJsonDocument(json).toJson();
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        emit problem(tr("Could not write %1: %2").arg(f.fileName(), f.errorString()));
}

QList<TuneRunFolder::Unfinished> TuneRunFolder::unfinishedRuns(const QString &workspacePath) {
    QList<Unfinished> out;
    const QDir ws(workspacePath);
    for (const QString &name : ws.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time)) {
        const QDir d(ws.filePath(name));
        QFile events(d.filePath(u"events.jsonl"_s));
        QFile info(d.filePath(u"run.json"_s));
        if (!events.open(QIODevice::ReadOnly) || info.size() > 65536 || !info.open(QIODevice::ReadOnly))
            continue;
        // The run's own done is its last event: the tail of the file says whether it came.
        events.seek(qMax<qint64>(0, events.size() - 65536));
        const QByteArray tail = events.readAll();
        bool ended = false;
        for (const QByteArray &line : tail.split('\n')) {
            if (!line.contains("\"done\""))
                continue;
            const QJsonObject e = QJsonDocument::fromJson(line).object();
            const QString status = e.value("status"_L1).toString();
            if (e.value("type"_L1).toString() == "done"_L1)
                ended = status != "detached"_L1 && status != "interrupted"_L1;
        }
        if (ended)
            continue;
        const QJsonObject run = QJsonDocument::fromJson(info.readAll()).object();
        Unfinished u{run.value("run_id"_L1).toString(name), run.value("host"_L1).toString(), {}};
        QFile spec(d.filePath(u"spec.json"_s));
        if (spec.size() < 1 << 20 && spec.open(QIODevice::ReadOnly))
            u.spec = QJsonDocument::fromJson(spec.readAll()).object();
        if (!u.host.isEmpty())
            out.append(u);
    }
    return out;
}

} // namespace moetune
