// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace moetune {

// How one host's inference server runs, so moetune can stop it, start it, read its log and know when
// it is ready (docs/servers.md section 8). Every command is a shell command line run on the host only when
// the user clicks or types the matching action; the user confirms or edits what the probe suggested.
struct ServerProfile {
    enum class Kind {
        None,    // not set up: stop/start/restart are refused with a sentence saying so
        Systemd, // a systemd unit (systemctl / journalctl)
        Docker,  // a docker container (docker stop/start/logs)
        Command, // a plain command in tmux/screen/nohup writing a log file
        Manual,  // "I manage it myself": moetune never stops or starts it, only reads the log
    };
    enum class Readiness { LogLine, HealthUrl };

    Kind kind = Kind::None;
    QString unit;          // systemd unit or container name/id (for people and the log command)
    bool userUnit = false; // systemctl --user
    QString stopCommand;   // graceful stop; moetune then checks that the GPUs are free
    QString startCommand;  // same environment and working folder as the server had
    QString logFile;       // the file the server writes (Command kind), "" when logCommand is used
    QString logCommand;    // prints the server's log (journalctl / docker logs), "" when logFile is used
    Readiness readiness = Readiness::LogLine;
    QString readyLine;       // a substring of the log line that says the server is ready
    QString healthUrl;       // GET answers 200 when ready
    int readyTimeoutS = 900; // startups of 10 minutes occur
    QString
        persistentConfigDir; // a host folder for SGLANG_MOE_CONFIG_DIR / VLLM_TUNED_CONFIG_FOLDER, "" = none
    QString note;            // why it was suggested this way (from the probe), shown beside it
    // Which of the host's servers this profile is about (core/host/serverchoice.h): "pid N", "port N"
    // or "" (the only one). With several servers on the host every flow acts on this one.
    QString server;

    static QString kindId(Kind kind);   // "none", "systemd", "docker", "command", "manual"
    static QString kindName(Kind kind); // "systemd unit", "docker container", ...
    static Kind kindFromId(const QString &id);

    bool isSet() const { return kind != Kind::None; }
    bool canStopStart() const {
        return kind == Kind::Systemd || kind == Kind::Docker || kind == Kind::Command;
    }
    // Empty when usable for restart, else one sentence naming the field to fix.
    QString validate() const;
    // One line for people: "systemd unit sglang.service; ready on \"...\" within 900 s".
    QString summary() const;

    QJsonObject toJson() const;
    static ServerProfile fromJson(const QJsonObject &o);
    bool operator==(const ServerProfile &) const = default;
};

} // namespace moetune
