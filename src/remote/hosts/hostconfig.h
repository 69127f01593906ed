// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/server/serverprofile.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace moetune {

// Where a host's inference-server log comes from.
struct LogSource {
    enum class Kind { None, File, Command };
    Kind kind = Kind::None;
    QString value; // a remote path, or a shell command such as `journalctl -u sglang -n 20000`
    bool operator==(const LogSource &) const = default;
    static LogSource fromString(const QString &s); // "" -> None; starts with '/' or '~' -> File; else Command
};

// One host as the app knows it: the connection (from ~/.ssh/config or typed in the app) and the
// moetune settings of that host.
struct HostConfig {
    QString alias;    // the name shown and the ssh Host alias ("gpu-7")
    QString hostName; // resolved address (HostName), "" = alias
    QString user;     // "" = current user / ssh config
    int port = 0;     // 0 = 22 / ssh config
    QStringList identityFiles;
    QString proxyJump; // as written in ssh config (libssh honours it through ProxyCommand/ProxyJump)
    bool fromSshConfig = false;
    bool local = false; // the built-in "Local machine" (HostStore::localHost()): no SSH at all
    // The practice server (remote/practiceserver.h): this machine without SSH, HOME in its own tree.
    QString practiceRoot;
    bool isPractice() const { return !practiceRoot.isEmpty(); }

    QString python = QStringLiteral("python3"); // the host's interpreter, e.g. a venv's bin/python
    LogSource logSource;
    QString stopCommand; // optional, run only on explicit user action
    QString startCommand;
    ServerProfile serverProfile;   // how its server runs (stop/start/log/readiness), see core/server
    bool rememberPassword = false; // keyring only, and only when built with qtkeychain

    // The one name of the host in every window, message and report: "Local machine", else the alias.
    QString label() const;
    QString displayName() const; // "alias (user@host:port)" (the connection line under the label)
    // The name ssh matches against ~/.ssh/config's Host lines (what `ssh NAME` gets): the alias, or the
    // host part of a typed user@host:port / [v6]:port alias.
    QString sshName() const;
    QJsonObject toJson() const;
    static HostConfig fromJson(const QJsonObject &o);
    bool operator==(const HostConfig &) const = default;
};

} // namespace moetune
