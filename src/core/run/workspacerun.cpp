// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/workspacerun.h"
#include "core/util/errorout.h"

#include "core/host/hosttext.h"
#include "core/run/agentprotocolparser.h"
#include "core/run/sweepresultbuilder.h"
#include "core/run/sweepresultcache.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSaveFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

// A workspace shipped with moetune (resources/demo-workspace: "bundled": true in its workspace.json) is
// read, never written: no result cache lands in a source tree or a package's folder.
bool inBundledWorkspace(const QString &runDir) {
    QByteArray bytes;
    if (!WorkspaceRun::readRegularFile(QDir(runDir).filePath(u"../workspace.json"_s), &bytes, nullptr, 65536))
        return false;
    return QJsonDocument::fromJson(bytes).object().value("bundled"_L1).toBool();
}

// The size of the regular file at path, opened O_NONBLOCK so a FIFO or device there is refused by its
// fstat, never read; -1 and a sentence otherwise.
qint64 regularFileSize(const QString &path, QString *why) {
    if (path.startsWith(u':')) { // a Qt resource (the bundled demo workspace): compiled in, never a FIFO
        const QFileInfo fi(path);
        if (fi.isFile())
            return fi.size();
        *why = u"%1 does not exist"_s.arg(path);
        return -1;
    }
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = u"%1: %2"_s.arg(QDir::toNativeSeparators(path), QString::fromLocal8Bit(strerror(errno)));
        return -1;
    }
    struct stat st {};
    const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    ::close(fd);
    if (!ok) {
        *why = u"%1 is not a regular file (a FIFO, device or folder is never read)"_s.arg(
            QDir::toNativeSeparators(path));
        return -1;
    }
    return st.st_size;
}

// Reads a regular file whole (non-blocking open, fstat checked); false + a sentence otherwise.
bool readRegular(const QString &path, QByteArray *out, QString *why) {
    if (path.startsWith(u':')) { // a Qt resource: not a file of the file system (open(2) cannot read it)
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) {
            *why = u"%1: %2"_s.arg(path, f.errorString());
            return false;
        }
        *out = f.readAll();
        return true;
    }
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = u"%1: %2"_s.arg(QDir::toNativeSeparators(path), QString::fromLocal8Bit(strerror(errno)));
        return false;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        *why = u"%1 is not a regular file (a FIFO, device or folder is never read)"_s.arg(
            QDir::toNativeSeparators(path));
        return false;
    }
    QFile f;
    if (!f.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        *why = u"%1: %2"_s.arg(QDir::toNativeSeparators(path), f.errorString());
        return false;
    }
    *out = f.readAll();
    return true;
}

// The first few line errors of an events file and how many more: a file of bad lines costs a few
// sentences, not one per line.
constexpr qsizetype kMaxEventWarnings = 20;
QStringList capWarnings(QStringList errors) {
    if (errors.size() > kMaxEventWarnings) {
        const qsizetype more = errors.size() - kMaxEventWarnings;
        errors.resize(kMaxEventWarnings);
        errors.append(u"... and %1 more damaged lines of events.jsonl (not listed)"_s.arg(more));
    }
    return errors;
}

// An events.jsonl too large to keep, read in 1 MiB pieces into the builder: memory follows the result,
// not the file.
QStringList streamEvents(const QString &path, SweepResultBuilder &builder) {
    QStringList errors;
    qsizetype bad = 0;
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st {};
    QFile f;
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        !f.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        if (fd >= 0)
            ::close(fd);
        return {u"%1 could not be read as a regular file"_s.arg(QDir::toNativeSeparators(path))};
    }
    AgentProtocolParser parser;
    auto consume = [&](const QList<AgentEvent> &events) {
        for (const auto &e : events) {
            if (!e.isError())
                builder.add(e);
            else if (++bad <= kMaxEventWarnings)
                errors.append(u"events.jsonl line %1: %2"_s.arg(e.lineNumber).arg(e.error));
        }
    };
    while (!f.atEnd()) {
        const QByteArray chunk = f.read(1 << 20);
        if (chunk.isEmpty())
            break;
        consume(parser.feed(chunk));
    }
    consume(parser.finish());
    if (bad > kMaxEventWarnings)
        errors.append(
            u"... and %1 more damaged lines of events.jsonl (not listed)"_s.arg(bad - kMaxEventWarnings));
    errors.append(u"%1 is %2 MiB: its events were read into the result, not kept in memory"_s.arg(
        QDir::toNativeSeparators(path), QString::number(double(st.st_size) / (1 << 20), 'f', 0)));
    return errors;
}

// Missing -> nullopt and no error; unreadable or not a JSON object -> nullopt and a sentence.
std::optional<QJsonObject> readObject(const QString &path, QString *error) {
    if (!QFileInfo::exists(path))
        return std::nullopt;
    // Non-blocking, a regular file of at most kMaxPartBytes: a FIFO or a huge file in a run folder is a
    // sentence, not a hang or the memory.
    constexpr qint64 kMaxPartBytes = 64LL << 20;
    const qint64 size = regularFileSize(path, error);
    if (size < 0)
        return std::nullopt;
    if (size > kMaxPartBytes) {
        *error = u"%1 is %2 MiB, more than the %3 MiB a run's file may be; not read"_s.arg(
            QDir::toNativeSeparators(path), QString::number(size >> 20),
            QString::number(kMaxPartBytes >> 20));
        return std::nullopt;
    }
    QByteArray bytes;
    if (!readRegular(path, &bytes, error))
        return std::nullopt;
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &pe);
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

bool WorkspaceRun::readRegularFile(const QString &path, QByteArray *out, QString *why, qint64 maxBytes) {
    QString reason;
    const qint64 size = regularFileSize(path, &reason);
    if (size >= 0 && size > maxBytes)
        reason = u"%1 is %2 bytes, more than the %3 it may be; not read"_s.arg(QDir::toNativeSeparators(path))
                     .arg(size)
                     .arg(maxBytes);
    if (reason.isEmpty() && readRegular(path, out, &reason))
        return true;
    return failWith(why, reason);
}

bool WorkspaceRun::isSafeRunId(const QString &id, QString *why) {
    bool ok = !id.isEmpty() && id.size() <= 128 && !id.startsWith(u'.') && !id.contains(u".."_s);
    for (const QChar c : id)
        ok = ok && c.unicode() < 128 && (c.isLetterOrNumber() || c == u'-' || c == u'_' || c == u'.');
    if (!ok)
        failWith(why, u"The run id '%1' cannot name a run folder (1 to 128 letters, digits, '.', '-' or '_', "
                      u"not starting with '.', no '..'); nothing was written for it."_s.arg(
                          hostText(id.left(200), 200)));
    return ok;
}

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

    // events.jsonl is opened non-blocking and must be a regular file (a FIFO there would hang the read);
    // up to kMaxKeptEventsBytes it is kept, beyond that it is only streamed into the result below.
    const QString eventsPath = d.filePath(u"events.jsonl"_s);
    if (QFileInfo::exists(eventsPath) || QFileInfo(eventsPath).isSymLink()) {
        QString eventsWhy;
        const qint64 eventsSize = regularFileSize(eventsPath, &eventsWhy);
        if (eventsSize > kMaxKeptEventsBytes)
            run.eventsFile = eventsPath;
        else if (eventsSize < 0 || !readRegular(eventsPath, &run.events, &eventsWhy))
            run.warnings.append(eventsWhy);
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
        if (run.eventsFile.isEmpty())
            run.warnings.append(capWarnings(builder.addEventsFile(run.events)));
        else
            run.warnings.append(streamEvents(run.eventsFile, builder));
        run.result = builder.result();
        if (run.events.isEmpty() && run.eventsFile.isEmpty() && run.spec.isEmpty()) {
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
    if (events.isEmpty() && !eventsFile.isEmpty() &&
        QFileInfo(eventsFile).absoluteFilePath() !=
            QFileInfo(d.filePath(u"events.jsonl"_s)).absoluteFilePath()) {
        QFile::remove(d.filePath(u"events.jsonl"_s));
        if (!QFile::copy(eventsFile, d.filePath(u"events.jsonl"_s)))
            return failWith(error, u"Could not copy %1 into %2"_s.arg(QDir::toNativeSeparators(eventsFile),
                                                                      QDir::toNativeSeparators(dir)));
    }
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
