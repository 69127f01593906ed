// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/workspacerun.h"
#include "core/util/errorout.h"

#include "core/run/sweepresultbuilder.h"
#include "core/run/sweepresultcache.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSaveFile>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// A workspace shipped with moetune (resources/demo-workspace: "bundled": true in its workspace.json) is
// read, never written: no result cache lands in a source tree or a package's folder.
bool inBundledWorkspace(const QString &runDir) {
    QFile f(QDir(runDir).filePath(u"../workspace.json"_s));
    if (f.size() > 65536 || !f.open(QIODevice::ReadOnly))
        return false;
    return QJsonDocument::fromJson(f.readAll()).object().value("bundled"_L1).toBool();
}

// Missing -> nullopt and no error; unreadable or not a JSON object -> nullopt and a sentence.
std::optional<QJsonObject> readObject(const QString &path, QString *error) {
    QFile f(path);
    if (!f.exists())
        return std::nullopt;
    if (!f.open(QIODevice::ReadOnly)) {
        *error = u"%1: %2"_s.arg(QDir::toNativeSeparators(path), f.errorString());
        return std::nullopt;
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
        *error = pe.error != QJsonParseError::NoError
                     ? u"%1 is not valid JSON (%2 at byte %3)"_s
                           .arg(QDir::toNativeSeparators(path), pe.errorString())
                           .arg(pe.offset)
                     : u"%1 does not hold a JSON object"_s.arg(QDir::toNativeSeparators(path));
        return std::nullopt;
    }
    return doc.object();
}

bool writeFile(const QString &path, const QByteArray &bytes, QString *error) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        return failWith(error,
                        u"Could not write %1: %2"_s.arg(QDir::toNativeSeparators(path), f.errorString()));
    return true;
}

QByteArray jsonBytes(const QJsonObject &o) {
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

} // namespace

bool WorkspaceRun::looksLikeRun(const QString &dir) {
    const QDir d(dir);
    return d.exists(u"result.json"_s) || d.exists(u"events.jsonl"_s) || d.exists(u"spec.json"_s) ||
           d.exists(u"run.json"_s);
}

std::optional<WorkspaceRun> WorkspaceRun::open(const QString &dir, QString *error) {
    const QDir d(dir);
    if (!d.exists()) {
        failWith(error, u"%1 does not exist"_s.arg(QDir::toNativeSeparators(dir)));
        return std::nullopt;
    }
    if (!looksLikeRun(dir)) {
        failWith(error, u"%1 is not a tuning run: it has no result.json, events.jsonl or spec.json"_s.arg(
                            QDir::toNativeSeparators(dir)));
        return std::nullopt;
    }
    WorkspaceRun run;
    run.dir = d.absolutePath();
    QString why;
    auto optional = [&](const QString &name) {
        why.clear();
        auto o = readObject(d.filePath(name), &why);
        if (!why.isEmpty())
            run.warnings.append(why);
        return o;
    };
    if (const auto info = optional(u"run.json"_s)) {
        run.runId = info->value("run_id"_L1).toString();
        run.host = info->value("host"_L1).toString();
        run.title = info->value("title"_L1).toString();
        run.note = info->value("note"_L1).toString();
        run.source = info->value("source"_L1).toString();
    }
    if (const auto spec = optional(u"spec.json"_s))
        run.spec = *spec;
    run.hostFacts = optional(u"host.json"_s);
    run.diagnosisBefore = optional(u"diagnosis-before.json"_s);
    run.diagnosisAfter = optional(u"diagnosis-after.json"_s);
    run.push = optional(u"push.json"_s);
    run.headroom = optional(u"headroom.json"_s);
    run.serving = optional(u"serving.json"_s);

    QFile events(d.filePath(u"events.jsonl"_s));
    if (events.exists()) {
        if (events.open(QIODevice::ReadOnly))
            run.events = events.readAll();
        else
            run.warnings.append(
                u"%1: %2"_s.arg(QDir::toNativeSeparators(events.fileName()), events.errorString()));
    }
    why.clear();
    if (auto cached = SweepResultCache::read(run.dir)) {
        run.result = std::move(*cached);
        run.hasResultFile = true;
    } else if (const auto resultJson = readObject(d.filePath(u"result.json"_s), &why)) {
        auto result = SweepResult::fromJson(*resultJson, &why);
        if (result) {
            run.result = std::move(*result);
            run.hasResultFile = true;
            if (!inBundledWorkspace(run.dir))
                SweepResultCache::write(run.dir, run.result); // best effort; a miss only costs the parse
        }
    }
    if (!why.isEmpty()) {
        // A damaged result.json must not hide what the events hold: say so and rebuild from them.
        run.warnings.append(why);
    }
    if (!run.hasResultFile) {
        SweepResultBuilder builder;
        run.warnings.append(builder.addEventsFile(run.events));
        run.result = builder.result();
        if (run.events.isEmpty() && run.spec.isEmpty()) {
            failWith(error, why.isEmpty() ? u"%1 holds no readable result, events or spec"_s.arg(
                                                QDir::toNativeSeparators(dir))
                                          : why);
            return std::nullopt;
        }
    }
    // A simulated spec or event marks the whole run, whatever the result file claims.
    if (run.spec.value("backend"_L1).toString() == "synthetic"_L1)
        run.result.simulated = true;
    if (run.runId.isEmpty())
        run.runId = run.result.runId.isEmpty() ? QFileInfo(run.dir).fileName() : run.result.runId;
    return run;
}

bool WorkspaceRun::save(QString *error) const {
    if (dir.isEmpty())
        return failWith(error, u"The run has no folder to save into."_s);
    if (!QDir().mkpath(dir))
        return failWith(error, u"Could not create %1"_s.arg(QDir::toNativeSeparators(dir)));
    const QDir d(dir);
    QJsonObject info{{"format"_L1, u"moetune-run"_s},
                     {"version"_L1, 1},
                     {"run_id"_L1, runId},
                     {"host"_L1, host},
                     {"title"_L1, title},
                     {"note"_L1, note},
                     {"source"_L1, source},
                     {"simulated"_L1, result.simulated},
                     {"saved_at"_L1, QDateTime::currentDateTimeUtc().toString(Qt::ISODate)}};
    if (!writeFile(d.filePath(u"run.json"_s), jsonBytes(info), error))
        return false;
    if (!spec.isEmpty() && !writeFile(d.filePath(u"spec.json"_s), jsonBytes(spec), error))
        return false;
    if (!events.isEmpty() && !writeFile(d.filePath(u"events.jsonl"_s), events, error))
        return false;
    if ((hasResultFile || !result.measurements.isEmpty()) && result.status != "running"_L1 &&
        !writeFile(d.filePath(u"result.json"_s),
                   QJsonDocument(result.toJson()).toJson(QJsonDocument::Compact), error))
        return false;
    if (QFile::exists(d.filePath(u"result.json"_s)))
        SweepResultCache::write(dir, result); // reopening the saved run skips the JSON parse
    const std::pair<const char16_t *, const std::optional<QJsonObject> *> parts[] = {
        {u"host.json", &hostFacts},
        {u"diagnosis-before.json", &diagnosisBefore},
        {u"diagnosis-after.json", &diagnosisAfter},
        {u"push.json", &push},
        {u"headroom.json", &headroom},
        {u"serving.json", &serving}};
    for (const auto &[name, part] : parts)
        if (*part && !writeFile(d.filePath(QString::fromUtf16(name)), jsonBytes(**part), error))
            return false;
    return true;
}

bool WorkspaceRun::appendEvents(const QString &dir, const QByteArray &lines, QString *error) {
    if (!QDir().mkpath(dir))
        return failWith(error, u"Could not create %1"_s.arg(QDir::toNativeSeparators(dir)));
    QFile f(QDir(dir).filePath(u"events.jsonl"_s));
    if (!f.open(QIODevice::WriteOnly | QIODevice::Append) || f.write(lines) != lines.size())
        return failWith(error, u"Could not append to %1: %2"_s.arg(QDir::toNativeSeparators(f.fileName()),
                                                                   f.errorString()));
    return true;
}

QString WorkspaceRun::displayTitle() const {
    if (!title.isEmpty())
        return title;
    QString t = result.shapeText();
    if (!result.deviceName.isEmpty())
        t += u" on "_s + result.deviceName;
    return t;
}

QString WorkspaceRun::fileStem() const {
    QString stem = u"moetune-report-%1"_s.arg(runId.isEmpty() ? u"run"_s : runId);
    for (QChar &c : stem)
        if (!c.isLetterOrNumber() && c != u'-' && c != u'_' && c != u'.')
            c = u'_';
    return result.simulated ? u"SIMULATED-"_s + stem : stem;
}

} // namespace moetune
