// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "processscan.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace moetune::test {

QList<qint64> processesWith(const QByteArray &token, ProcessField field) {
    QList<qint64> pids;
    const QDir proc(u"/proc"_s);
    for (const QString &name : proc.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        bool ok = false;
        const qint64 pid = name.toLongLong(&ok);
        if (!ok || pid == QCoreApplication::applicationPid())
            continue;
        QFile f(
            u"/proc/%1/%2"_s.arg(pid).arg(field == ProcessField::Environment ? u"environ"_s : u"cmdline"_s));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        QFile stat(u"/proc/%1/stat"_s.arg(pid));
        if (stat.open(QIODevice::ReadOnly)) {
            const QByteArray s = stat.readAll();
            const qsizetype close = s.lastIndexOf(')');
            if (close > 0 && close + 2 < s.size() && s[close + 2] == 'Z')
                continue; // a zombie holds nothing
        }
        const QByteArray text = f.readAll();
        if (field == ProcessField::Environment ? text.split('\0').contains(token) : text.contains(token))
            pids.append(pid);
    }
    return pids;
}

QString describeProcesses(const QList<qint64> &pids) {
    QStringList out;
    for (qint64 pid : pids) {
        QFile f(u"/proc/%1/cmdline"_s.arg(pid));
        const QByteArray cmd =
            f.open(QIODevice::ReadOnly) ? f.readAll().replace('\0', ' ').trimmed() : QByteArray();
        out.append(u"%1 (%2)"_s.arg(pid).arg(QString::fromUtf8(cmd)));
    }
    return out.join(u", "_s);
}

} // namespace moetune::test
