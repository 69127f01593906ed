// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/workspace.h"
#include "core/util/errorout.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace moetune {

std::optional<Workspace> Workspace::open(const QString &path, QString *error) {
    const QDir d(path);
    if (!d.exists()) {
        failWith(error, u"%1 does not exist"_s.arg(QDir::toNativeSeparators(path)));
        return std::nullopt;
    }
    Workspace ws;
    ws.m_path = d.absolutePath();
    ws.m_name = d.dirName();
    if (WorkspaceRun::looksLikeRun(path)) {
        QString why;
        auto run = WorkspaceRun::open(path, &why);
        if (!run) {
            failWith(error, why);
            return std::nullopt;
        }
        ws.m_runs.append(std::move(*run));
        return ws;
    }
    QFile marker(d.filePath(u"workspace.json"_s));
    QByteArray markerBytes;
    QString markerWhy;
    if (marker.exists() &&
        !WorkspaceRun::readRegularFile(marker.fileName(), &markerBytes, &markerWhy, 1 << 20))
        ws.m_warnings.append(markerWhy);
    else if (marker.exists()) {
        const QJsonObject o = QJsonDocument::fromJson(markerBytes).object();
        if (o.value("format"_L1).toString() != "moetune-workspace"_L1)
            ws.m_warnings.append(
                u"%1 is not a moetune workspace marker; reading its run folders anyway"_s.arg(
                    QDir::toNativeSeparators(marker.fileName())));
        ws.m_name = o.value("name"_L1).toString(ws.m_name);
    }
    const auto entries = d.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    for (const QString &entry : entries) {
        const QString sub = d.filePath(entry);
        if (!WorkspaceRun::looksLikeRun(sub))
            continue;
        QString why;
        auto run = WorkspaceRun::open(sub, &why);
        if (run)
            ws.m_runs.append(std::move(*run));
        else
            ws.m_warnings.append(why);
    }
    if (ws.m_runs.isEmpty() && !marker.exists()) {
        failWith(error,
                 u"%1 holds no tuning runs (no folder with a result.json, events.jsonl or spec.json)"_s.arg(
                     QDir::toNativeSeparators(path)));
        return std::nullopt;
    }
    std::stable_sort(ws.m_runs.begin(), ws.m_runs.end(), [](const WorkspaceRun &a, const WorkspaceRun &b) {
        return a.result.createdAt > b.result.createdAt;
    });
    return ws;
}

std::optional<Workspace> Workspace::create(const QString &path, const QString &name, QString *error) {
    if (!QDir().mkpath(path)) {
        failWith(error, u"Could not create %1"_s.arg(QDir::toNativeSeparators(path)));
        return std::nullopt;
    }
    const QString markerPath = QDir(path).filePath(u"workspace.json"_s);
    if (!QFile::exists(markerPath)) {
        QSaveFile f(markerPath);
        const QByteArray bytes =
            QJsonDocument(
                QJsonObject{{"format"_L1, u"moetune-workspace"_s}, {"version"_L1, 1}, {"name"_L1, name}})
                .toJson();
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit()) {
            failWith(error,
                     u"Could not write %1: %2"_s.arg(QDir::toNativeSeparators(markerPath), f.errorString()));
            return std::nullopt;
        }
    }
    return open(path, error);
}

QString Workspace::defaultLocation() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + u"/workspace"_s;
}

const WorkspaceRun *Workspace::run(const QString &runId) const {
    for (const auto &r : m_runs)
        if (r.runId == runId)
            return &r;
    return nullptr;
}

bool Workspace::addRun(WorkspaceRun run, QString *error) {
    if (run.runId.isEmpty())
        return failWith(error, u"A run needs an id to be saved into a workspace."_s);
    if (!WorkspaceRun::isSafeRunId(run.runId, error))
        return false;
    run.dir = QDir(m_path).filePath(run.runId);
    if (!run.save(error))
        return false;
    for (auto &existing : m_runs) {
        if (existing.runId == run.runId) {
            existing = std::move(run);
            return true;
        }
    }
    m_runs.prepend(std::move(run));
    return true;
}

} // namespace moetune
