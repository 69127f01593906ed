// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/push/pushrecord.h"

#include "core/util/shellquote.h"

#include <QDateTime>
#include <QHash>
#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace moetune {

void PushRecord::addInstalled(const QJsonObject &e) {
    File f;
    f.fileName = e.value("file_name"_L1).toString();
    f.target = e.value("target"_L1).toString();
    f.backup = e.value("backup"_L1).toString();
    f.createdFolder = e.value("created_folder"_L1).toString();
    f.sha256 = e.value("sha256"_L1).toString();
    f.unchanged = e.value("unchanged"_L1).toBool();
    if (e.contains("previous_sha256"_L1)) {
        f.existedBefore = !e.value("previous_sha256"_L1).isNull();
        f.previousSha256 = e.value("previous_sha256"_L1).toString();
    } else { // an older agent or record: a backup means there was a file, the same bytes mean it was these
        f.existedBefore = f.unchanged || !f.backup.isEmpty();
        f.previousSha256 = f.unchanged ? f.sha256 : QString();
    }
    files.append(f);
}

bool PushRecord::changedSomething() const {
    for (const File &f : files) {
        if (!f.unchanged)
            return true;
    }
    return false;
}

QJsonObject PushRecord::toJson() const {
    QJsonArray fs;
    for (const File &f : files) {
        fs.append(QJsonObject{
            {"file_name"_L1, f.fileName},
            {"target"_L1, f.target},
            {"backup"_L1, f.backup.isEmpty() ? QJsonValue() : QJsonValue(f.backup)},
            {"created_folder"_L1, f.createdFolder.isEmpty() ? QJsonValue() : QJsonValue(f.createdFolder)},
            {"sha256"_L1, f.sha256},
            {"previous_sha256"_L1, f.existedBefore ? QJsonValue(f.previousSha256) : QJsonValue()},
            {"unchanged"_L1, f.unchanged}});
    }
    return QJsonObject{{"format"_L1, u"moetune-push"_s},
                       {"version"_L1, 1},
                       {"run_id"_L1, runId},
                       {"host"_L1, host},
                       {"framework"_L1, frameworkId(framework)},
                       {"simulated"_L1, simulated},
                       {"pushed_at"_L1, pushedAt},
                       {"undone_at"_L1, undoneAt > 0 ? QJsonValue(undoneAt) : QJsonValue()},
                       {"files"_L1, fs}};
}

std::optional<PushRecord> PushRecord::fromJson(const QJsonObject &o, QString *error) {
    if (o.value("format"_L1).toString() != "moetune-push"_L1 || o.value("version"_L1).toInt() != 1) {
        if (error)
            *error = u"Not a moetune push record (format \"moetune-push\", version 1)."_s;
        return std::nullopt;
    }
    PushRecord r;
    r.runId = o.value("run_id"_L1).toString();
    r.host = o.value("host"_L1).toString();
    r.framework = frameworkFromString(o.value("framework"_L1).toString());
    r.simulated = o.value("simulated"_L1).toBool();
    r.pushedAt = o.value("pushed_at"_L1).toDouble();
    r.undoneAt = o.value("undone_at"_L1).toDouble();
    for (const QJsonValue v : o.value("files"_L1).toArray())
        r.addInstalled(v.toObject());
    for (const File &f : std::as_const(r.files)) {
        if (f.target.isEmpty() || f.sha256.isEmpty()) {
            if (error)
                *error = u"The push record names a file without a target or checksum."_s;
            return std::nullopt;
        }
    }
    return r;
}

QJsonObject PushHistory::toJson() const {
    QJsonArray ps;
    for (const PushRecord &r : pushes)
        ps.append(r.toJson());
    return QJsonObject{
        {"format"_L1, u"moetune-push"_s}, {"version"_L1, 2}, {"run_id"_L1, runId}, {"pushes"_L1, ps}};
}

std::optional<PushHistory> PushHistory::fromJson(const QJsonObject &o, QString *error) {
    PushHistory h;
    if (o.value("format"_L1).toString() == "moetune-push"_L1 && o.value("version"_L1).toInt() == 2) {
        h.runId = o.value("run_id"_L1).toString();
        for (const QJsonValue v : o.value("pushes"_L1).toArray()) {
            auto r = PushRecord::fromJson(v.toObject(), error);
            if (!r)
                return std::nullopt;
            h.pushes.append(*r);
        }
        return h;
    }
    auto r = PushRecord::fromJson(o, error); // version 1: one push
    if (!r)
        return std::nullopt;
    h.runId = r->runId;
    h.pushes.append(*r);
    return h;
}

QList<int> PushHistory::notUndone() const {
    QList<int> out;
    for (int i = 0; i < pushes.size(); ++i) {
        if (pushes[i].undoneAt <= 0)
            out.append(i);
    }
    return out;
}

namespace {

QString when(double secs) {
    return QDateTime::fromMSecsSinceEpoch(qint64(secs * 1000.0)).toString(u"yyyy-MM-dd HH:mm:ss"_s);
}

QString shortSha(const QString &sha) {
    return sha == "absent"_L1 ? u"absent"_s : u"sha256 %1..."_s.arg(sha.left(12));
}

} // namespace

PushUndo PushUndo::plan(const PushHistory &h) {
    PushUndo u;
    const QList<int> open = h.notUndone();
    if (open.isEmpty()) {
        u.error =
            h.pushes.isEmpty()
                ? u"There is nothing to undo: run %1 has no push on this host."_s.arg(h.runId)
                : u"Nothing to undo: every push of run %1 on this host was already undone."_s.arg(h.runId);
        return u;
    }
    QHash<QString, int> byTarget;
    for (const int i : open) {
        const PushRecord &r = h.pushes[i];
        bool any = false;
        for (const PushRecord::File &f : r.files) {
            if (f.unchanged)
                continue;
            any = true;
            if (f.existedBefore && f.backup.isEmpty()) {
                u.error =
                    u"The push of %1 replaced %2 but its record names no backup: nothing can put back what "
                    u"was there, so nothing was touched."_s.arg(when(r.pushedAt), f.target);
                return u;
            }
            const auto it = byTarget.constFind(f.target);
            if (it == byTarget.constEnd()) {
                Path p;
                p.target = f.target;
                p.nowSha = f.sha256;
                p.beforeExists = f.existedBefore;
                p.beforeSha = f.existedBefore ? f.previousSha256 : QString();
                p.beforeBackup = f.existedBefore && f.previousSha256.isEmpty() ? f.backup : QString();
                p.firstPushTime = when(r.pushedAt);
                byTarget.insert(f.target, int(u.paths.size()));
                u.paths.append(p);
            } else {
                Path &p = u.paths[*it];
                const QString found = f.existedBefore ? f.previousSha256 : u"absent"_s;
                if (!found.isEmpty() && found != p.nowSha) {
                    u.error =
                        u"%1 was changed by hand or by another tool between two pushes of run %2 (the push "
                        u"of %3 found %4 there, not the %5 the push before it installed): undoing both "
                        u"would lose that change. Nothing was touched; restore it by hand from its backups "
                        u"if you want to."_s.arg(f.target, h.runId, when(r.pushedAt), shortSha(found),
                                                 shortSha(p.nowSha));
                    return u;
                }
                p.nowSha = f.sha256;
            }
            if (!f.createdFolder.isEmpty() && !u.folders.contains(f.createdFolder))
                u.folders.append(f.createdFolder);
        }
        if (any)
            u.undone.prepend(i);
        else
            u.noOps.append(i);
    }
    for (const int i : std::as_const(u.undone)) { // newest first, each push's files in reverse order
        const QList<PushRecord::File> &fs = h.pushes[i].files;
        for (auto f = fs.crbegin(); f != fs.crend(); ++f) {
            if (f->unchanged)
                continue;
            u.steps.append(Step{byTarget.value(f->target), f->backup, f->createdFolder});
        }
    }
    return u;
}

QString PushUndo::script() const {
    QString s = u"fail=0\n"
                u"now() { if [ -e \"$1\" ] || [ -L \"$1\" ]; then sha256sum < \"$1\" | cut -d' ' -f1; "
                u"else echo absent; fi; }\n"_s;
    // Check: every file is still what the newest push installed, every backup is there. Nothing is
    // touched unless all of them are.
    for (int i = 0; i < paths.size(); ++i) {
        s += u"n=$(now %1); [ \"$n\" = %2 ] || { echo \"changed %3 $n\"; fail=1; }\n"_s.arg(
            shellQuote(paths[i].target), shellQuote(paths[i].nowSha), QString::number(i));
    }
    for (int i = 0; i < steps.size(); ++i) {
        if (!steps[i].backup.isEmpty())
            s += u"[ -f %1 ] || { echo \"missing %2\"; fail=1; }\n"_s.arg(shellQuote(steps[i].backup),
                                                                          QString::number(i));
    }
    s += u"[ $fail = 0 ] || exit 3\n"_s;
    // Restore, newest push first.
    for (int i = 0; i < steps.size(); ++i) {
        const Step &st = steps[i];
        const QString t = shellQuote(paths[st.path].target);
        if (st.backup.isEmpty())
            s += u"rm -f -- %1 || { echo \"failed %2\"; exit 1; }\n"_s.arg(t, QString::number(i));
        else
            s += u"cp -p -- %1 %2 && mv -f -- %2 %3 || { echo \"failed %4\"; exit 1; }\n"_s.arg(
                shellQuote(st.backup), shellQuote(QString(paths[st.path].target + u".moetune-undo"_s)), t,
                QString::number(i));
    }
    for (const QString &f : folders)
        s += u"rmdir -- %1 2>/dev/null\n"_s.arg(shellQuote(f));
    // Read back every path the pushes touched (and the backups that stand for "before").
    for (int i = 0; i < paths.size(); ++i) {
        s += u"echo \"now %1 $(now %2)\"\n"_s.arg(QString::number(i), shellQuote(paths[i].target));
        if (!paths[i].beforeBackup.isEmpty())
            s += u"echo \"before %1 $(now %2)\"\n"_s.arg(QString::number(i),
                                                         shellQuote(paths[i].beforeBackup));
    }
    for (int j = 0; j < folders.size(); ++j)
        s += u"if [ -d %1 ]; then echo \"folder %2 yes\"; else echo \"folder %2 no\"; fi\n"_s.arg(
            shellQuote(folders[j]), QString::number(j));
    return s + u"exit 0\n"_s;
}

QString PushUndo::refusal(const QStringList &output, const QString &runId) const {
    QStringList why;
    for (const QString &line : output) {
        const QStringList w = line.split(u' ');
        const int i = w.value(1).toInt();
        if (w.value(0) == "changed"_L1 && i >= 0 && i < paths.size())
            why.append(
                u"%1 is not what the push of run %2 installed (now %3, pushed %4): it was changed by hand "
                u"or by another tool since, or a later push of another run replaced it (undo that one "
                u"first)"_s.arg(paths[i].target, runId, shortSha(w.value(2)), shortSha(paths[i].nowSha)));
        else if (w.value(0) == "missing"_L1 && i >= 0 && i < steps.size())
            why.append(u"the backup %1 is gone"_s.arg(steps[i].backup));
    }
    if (why.isEmpty())
        why.append(output.join(u"; "_s));
    return u"Undo refused, nothing was touched: %1."_s.arg(why.join(u"; "_s));
}

PushUndo::Outcome PushUndo::readBack(const QStringList &output, const QString &runId) const {
    Outcome o;
    QHash<int, QString> now;
    QHash<int, QString> before;
    QHash<int, bool> folderLeft;
    for (const QString &line : output) {
        const QStringList w = line.split(u' ');
        if (w.size() != 3)
            continue;
        if (w[0] == "now"_L1)
            now.insert(w[1].toInt(), w[2]);
        else if (w[0] == "before"_L1)
            before.insert(w[1].toInt(), w[2]);
        else if (w[0] == "folder"_L1)
            folderLeft.insert(w[1].toInt(), w[2] == "yes"_L1);
    }
    QStringList bad;
    int restored = 0;
    int absent = 0;
    for (int i = 0; i < paths.size(); ++i) {
        const Path &p = paths[i];
        const QString want = !p.beforeExists          ? u"absent"_s
                             : !p.beforeSha.isEmpty() ? p.beforeSha
                                                      : before.value(i);
        const QString got = now.value(i);
        if (got.isEmpty() || want.isEmpty()) {
            bad.append(u"%1 could not be read back"_s.arg(p.target));
            continue;
        }
        if (got != want) {
            bad.append(u"%1 is not what it was before the first push (%2): now %3, before %4"_s.arg(
                p.target, p.firstPushTime, shortSha(got), shortSha(want)));
            continue;
        }
        if (p.beforeExists) {
            ++restored;
            o.lines.append(
                u"restored %1: byte for byte what it was before the first push of run %2 (%3; %4)"_s.arg(
                    p.target, runId, p.firstPushTime, shortSha(got)));
        } else {
            ++absent;
            o.lines.append(u"removed %1: absent, as it was before the first push of run %2 (%3)"_s.arg(
                p.target, runId, p.firstPushTime));
        }
    }
    for (int j = 0; j < folders.size(); ++j) {
        if (!folderLeft.contains(j))
            continue;
        o.lines.append(
            folderLeft.value(j)
                ? u"the folder %1, which the push created, is kept: something else is in it now"_s.arg(
                      folders[j])
                : u"the folder %1, which the push created, is gone again"_s.arg(folders[j]));
    }
    if (!bad.isEmpty()) {
        o.error = u"Undo did not put everything back (read back from the host): %1."_s.arg(bad.join(u"; "_s));
        return o;
    }
    o.ok = true;
    QStringList parts;
    if (restored)
        parts.append(u"%1 file(s) restored byte for byte"_s.arg(restored));
    if (absent)
        parts.append(u"%1 file(s) absent again"_s.arg(absent));
    o.summary = u"Undone, read back from the host: every file the push(es) of run %1 changed is what it was "
                u"before the first push (%2)."_s.arg(runId, parts.join(u", "_s));
    return o;
}

} // namespace moetune
