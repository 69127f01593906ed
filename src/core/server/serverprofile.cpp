// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/server/serverprofile.h"

#include <QUrl>

using namespace Qt::StringLiterals;

namespace moetune {

QString ServerProfile::kindId(Kind kind) {
    switch (kind) {
    case Kind::Systemd:
        return u"systemd"_s;
    case Kind::Docker:
        return u"docker"_s;
    case Kind::Command:
        return u"command"_s;
    case Kind::Manual:
        return u"manual"_s;
    case Kind::None:
        break;
    }
    return u"none"_s;
}

QString ServerProfile::kindName(Kind kind) {
    switch (kind) {
    case Kind::Systemd:
        return u"systemd unit"_s;
    case Kind::Docker:
        return u"docker container"_s;
    case Kind::Command:
        return u"command with a log file (tmux/screen/nohup)"_s;
    case Kind::Manual:
        return u"I manage it myself"_s;
    case Kind::None:
        break;
    }
    return u"not set up"_s;
}

ServerProfile::Kind ServerProfile::kindFromId(const QString &id) {
    for (Kind k : {Kind::Systemd, Kind::Docker, Kind::Command, Kind::Manual}) {
        if (kindId(k) == id)
            return k;
    }
    return Kind::None;
}

QString ServerProfile::validate() const {
    if (kind == Kind::None)
        return u"This host has no server profile: set how its server runs (Hosts page, or the host's "
               u"settings) before moetune can stop or start it."_s;
    if (kind == Kind::Manual)
        return u"The server profile says you manage the server yourself: restart it by hand, then "
               u"re-diagnose its log."_s;
    if (stopCommand.trimmed().isEmpty())
        return u"The server profile has no stop command."_s;
    if (startCommand.trimmed().isEmpty())
        return u"The server profile has no start command."_s;
    if (logFile.trimmed().isEmpty() && logCommand.trimmed().isEmpty())
        return u"The server profile has neither a log file nor a log command: moetune could not read "
               u"what the server prints after the restart."_s;
    if (readiness == Readiness::LogLine && readyLine.trimmed().isEmpty())
        return u"The server profile waits for a readiness line but none is set (SGLang prints \"The "
               u"server is fired up and ready to roll!\")."_s;
    if (readiness == Readiness::HealthUrl) {
        const QUrl url(healthUrl.trimmed(), QUrl::StrictMode);
        if (!url.isValid() || (url.scheme() != "http"_L1 && url.scheme() != "https"_L1) ||
            url.host().isEmpty())
            return u"The health URL \"%1\" is not an http(s) URL such as http://127.0.0.1:30000/health."_s
                .arg(healthUrl);
    }
    if (readyTimeoutS < 10 || readyTimeoutS > 24 * 3600)
        return u"The readiness timeout must be between 10 s and 24 h (got %1 s)."_s.arg(readyTimeoutS);
    return {};
}

QString ServerProfile::summary() const {
    QString s = kindName(kind);
    if (!unit.isEmpty())
        s += u' ' + unit;
    if (kind == Kind::None || kind == Kind::Manual)
        return s;
    if (!logFile.isEmpty())
        s += u"; log "_s + logFile;
    s += readiness == Readiness::LogLine ? u"; ready on \"%1\""_s.arg(readyLine)
                                         : u"; ready when %1 answers"_s.arg(healthUrl);
    s += u" within %1 s"_s.arg(readyTimeoutS);
    return s;
}

QJsonObject ServerProfile::toJson() const {
    QJsonObject o;
    o.insert("kind"_L1, kindId(kind));
    o.insert("unit"_L1, unit);
    o.insert("userUnit"_L1, userUnit);
    o.insert("stopCommand"_L1, stopCommand);
    o.insert("startCommand"_L1, startCommand);
    o.insert("logFile"_L1, logFile);
    o.insert("logCommand"_L1, logCommand);
    o.insert("readiness"_L1, readiness == Readiness::HealthUrl ? u"health"_s : u"line"_s);
    o.insert("readyLine"_L1, readyLine);
    o.insert("healthUrl"_L1, healthUrl);
    o.insert("readyTimeoutS"_L1, readyTimeoutS);
    o.insert("persistentConfigDir"_L1, persistentConfigDir);
    o.insert("note"_L1, note);
    if (!server.isEmpty())
        o.insert("server"_L1, server);
    return o;
}

ServerProfile ServerProfile::fromJson(const QJsonObject &o) {
    ServerProfile p;
    p.kind = kindFromId(o.value("kind"_L1).toString());
    p.unit = o.value("unit"_L1).toString();
    p.userUnit = o.value("userUnit"_L1).toBool();
    p.stopCommand = o.value("stopCommand"_L1).toString();
    p.startCommand = o.value("startCommand"_L1).toString();
    p.logFile = o.value("logFile"_L1).toString();
    p.logCommand = o.value("logCommand"_L1).toString();
    p.readiness =
        o.value("readiness"_L1).toString() == "health"_L1 ? Readiness::HealthUrl : Readiness::LogLine;
    p.readyLine = o.value("readyLine"_L1).toString();
    p.healthUrl = o.value("healthUrl"_L1).toString();
    p.readyTimeoutS = o.value("readyTimeoutS"_L1).toInt(900);
    p.persistentConfigDir = o.value("persistentConfigDir"_L1).toString();
    p.note = o.value("note"_L1).toString();
    p.server = o.value("server"_L1).toString();
    return p;
}

} // namespace moetune
