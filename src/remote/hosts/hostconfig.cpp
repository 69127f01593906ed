// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/hosts/hostconfig.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace moetune {

LogSource LogSource::fromString(const QString &s) {
    const QString t = s.trimmed();
    if (t.isEmpty())
        return {};
    if (t.startsWith(u'/') || t.startsWith(u"~/"))
        return {Kind::File, t};
    return {Kind::Command, t};
}

QString HostConfig::label() const {
    if (isPractice())
        return QCoreApplication::translate("HostConfig", "Practice server (sandbox)");
    return local ? QCoreApplication::translate("HostConfig", "Local machine") : alias;
}

QString HostConfig::sshName() const {
    // A plain name (gpu-7, 10.0.0.7) is what ssh gets on its command line; of a typed user@host:port
    // spec, the host part is (what ssh's Host lines match for `ssh -p port user@host`).
    const bool plain = !alias.isEmpty() && !alias.contains(u'@') && !alias.contains(u':') &&
                       !alias.contains(u'[') && !alias.contains(u' ');
    if (plain)
        return alias;
    static const QRegularExpression spec(
        u"^(?:[^@\\s/]+@)?([A-Za-z0-9._-]+|\\[([0-9A-Fa-f:.]+)\\])(?::\\d{1,5})?$"_s);
    const auto m = spec.match(alias);
    if (m.hasMatch())
        return m.captured(2).isEmpty() ? m.captured(1) : m.captured(2);
    return hostName.isEmpty() ? alias : hostName;
}

QString HostConfig::displayName() const {
    QString target = hostName.isEmpty() ? alias : hostName;
    if (!user.isEmpty())
        target = user + u'@' + target;
    if (port > 0 && port != 22)
        target += u':' + QString::number(port);
    return target == alias ? alias : u"%1 (%2)"_s.arg(alias, target);
}

QJsonObject HostConfig::toJson() const {
    QJsonObject o;
    o.insert("alias"_L1, alias);
    o.insert("hostName"_L1, hostName);
    o.insert("user"_L1, user);
    o.insert("port"_L1, port);
    o.insert("identityFiles"_L1, QJsonArray::fromStringList(identityFiles));
    o.insert("proxyJump"_L1, proxyJump);
    o.insert("fromSshConfig"_L1, fromSshConfig);
    if (local)
        o.insert("local"_L1, true);
    if (isPractice())
        o.insert("practiceRoot"_L1, practiceRoot);
    o.insert("python"_L1, python);
    o.insert("logSourceKind"_L1, logSource.kind == LogSource::Kind::File      ? u"file"_s
                                 : logSource.kind == LogSource::Kind::Command ? u"command"_s
                                                                              : u"none"_s);
    o.insert("logSource"_L1, logSource.value);
    o.insert("stopCommand"_L1, stopCommand);
    o.insert("startCommand"_L1, startCommand);
    o.insert("rememberPassword"_L1, rememberPassword);
    if (serverProfile.isSet() || !serverProfile.server.isEmpty())
        o.insert("serverProfile"_L1, serverProfile.toJson());
    return o;
}

HostConfig HostConfig::fromJson(const QJsonObject &o) {
    HostConfig h;
    h.alias = o.value("alias"_L1).toString();
    h.hostName = o.value("hostName"_L1).toString();
    h.user = o.value("user"_L1).toString();
    h.port = o.value("port"_L1).toInt();
    for (const QJsonValue v : o.value("identityFiles"_L1).toArray())
        h.identityFiles.append(v.toString());
    h.proxyJump = o.value("proxyJump"_L1).toString();
    h.fromSshConfig = o.value("fromSshConfig"_L1).toBool();
    h.local = o.value("local"_L1).toBool();
    h.practiceRoot = o.value("practiceRoot"_L1).toString();
    h.python = o.value("python"_L1).toString(u"python3"_s);
    if (h.python.isEmpty())
        h.python = u"python3"_s;
    const QString kind = o.value("logSourceKind"_L1).toString();
    h.logSource.value = o.value("logSource"_L1).toString();
    h.logSource.kind = kind == "file"_L1      ? LogSource::Kind::File
                       : kind == "command"_L1 ? LogSource::Kind::Command
                                              : LogSource::Kind::None;
    h.stopCommand = o.value("stopCommand"_L1).toString();
    h.startCommand = o.value("startCommand"_L1).toString();
    h.rememberPassword = o.value("rememberPassword"_L1).toBool();
    h.serverProfile = ServerProfile::fromJson(o.value("serverProfile"_L1).toObject());
    return h;
}

} // namespace moetune
