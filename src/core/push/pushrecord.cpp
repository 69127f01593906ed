// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/push/pushrecord.h"

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

} // namespace moetune
