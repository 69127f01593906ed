// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/host/serverchoice.h"

#include "core/server/serverprofile.h"

using namespace Qt::StringLiterals;

namespace moetune {

QString ServerChoice::text() const {
    if (pid > 0)
        return u"pid %1"_s.arg(pid);
    if (port > 0)
        return u"port %1"_s.arg(port);
    if (pidOrPort > 0)
        return QString::number(pidOrPort);
    return {};
}

std::optional<ServerChoice> ServerChoice::parse(const QString &text, QString *error) {
    const QString t = text.trimmed();
    ServerChoice c;
    if (t.isEmpty())
        return c;
    const QStringList parts = t.split(u' ', Qt::SkipEmptyParts);
    bool ok = false;
    const qint64 n = parts.last().toLongLong(&ok);
    const bool shaped =
        parts.size() == 1 || (parts.size() == 2 && (parts[0] == "pid"_L1 || parts[0] == "port"_L1));
    if (!shaped || !ok || n <= 0 || (parts.size() == 2 && parts[0] == "port"_L1 && n > 65535)) {
        if (error)
            *error =
                u"\"%1\" names no server: give a pid or a port (e.g. 4242, pid 4242 or port 30000)."_s.arg(t);
        return std::nullopt;
    }
    if (parts.size() == 1)
        c.pidOrPort = n;
    else if (parts[0] == "pid"_L1)
        c.pid = n;
    else
        c.port = int(n);
    return c;
}

ServerChoice ServerChoice::of(const ServerProfile &profile, const QString &logFile) {
    ServerChoice c = parse(profile.server).value_or(ServerChoice{});
    if (profile.kind == ServerProfile::Kind::Systemd)
        c.unit = profile.unit;
    c.logFile = !logFile.isEmpty() ? logFile : profile.logFile;
    return c;
}

} // namespace moetune
