// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/hosts/serverprofilesuggestion.h"

#include "core/util/shellquote.h"

using namespace Qt::StringLiterals;

namespace moetune {

namespace {

QString readyLineFor(Framework fw) {
    return fw == Framework::VLLM ? u"Application startup complete."_s
                                 : u"The server is fired up and ready to roll!"_s;
}

int portOf(const ServerProcess &s) {
    if (s.port > 0)
        return s.port;
    const QStringList &a = s.arguments;
    for (qsizetype i = 0; i < a.size(); ++i) {
        if (a[i] == "--port"_L1 && i + 1 < a.size())
            return a[i + 1].toInt();
        if (a[i].startsWith("--port="_L1))
            return a[i].mid(7).toInt();
    }
    return s.framework == Framework::VLLM ? 8000 : 30000;
}

} // namespace

QString serverPidFile(const ServerProcess &server) {
    return u"~/.cache/moetune/server-%1.pid"_s.arg(frameworkId(server.framework));
}

ServerProfile suggestServerProfile(const ServerProcess &server) {
    ServerProfile p;
    const ServerLaunch &l = server.launch;
    p.readyLine = readyLineFor(server.framework);
    p.healthUrl = u"http://127.0.0.1:%1/health"_s.arg(portOf(server));
    const QString envDir =
        server.framework == Framework::VLLM ? u"VLLM_TUNED_CONFIG_FOLDER"_s : u"SGLANG_MOE_CONFIG_DIR"_s;
    p.persistentConfigDir = l.environment.value(envDir);
    // The profile is about this server: with several on the host, every flow acts on it (a port survives
    // the restarts a pid does not).
    p.server = server.port > 0 ? u"port %1"_s.arg(server.port) : u"pid %1"_s.arg(server.pid);
    if (!server.notUsed.isEmpty()) { // another user's process (issue 42.1): nothing is suggested from it
        p.kind = ServerProfile::Kind::Manual;
        p.server.clear();
        p.note = server.notUsed;
        return p;
    }
    if (!l.containerId.isEmpty()) {
        const QString id = l.containerId.left(12);
        p.kind = ServerProfile::Kind::Docker;
        p.unit = id;
        p.stopCommand = u"docker stop -t 120 "_s + shellQuote(id);
        p.startCommand = u"docker start "_s + shellQuote(id);
        p.logCommand = u"docker logs --tail 20000 "_s + shellQuote(id);
        p.note = u"pid %1 runs in docker container %2 (from its cgroup). A config written inside the "
                 u"container is lost when the container is recreated: mount a host folder and set %3."_s.arg(
                     QString::number(server.pid), id, envDir);
        return p;
    }
    if (!l.systemdUnit.isEmpty()) {
        const QString ctl = l.systemdUserUnit ? u"systemctl --user "_s : u"systemctl "_s;
        const QString jctl = l.systemdUserUnit ? u"journalctl --user "_s : u"journalctl "_s;
        p.kind = ServerProfile::Kind::Systemd;
        p.unit = l.systemdUnit;
        p.userUnit = l.systemdUserUnit;
        p.stopCommand = ctl + u"stop "_s + shellQuote(l.systemdUnit);
        p.startCommand = ctl + u"start "_s + shellQuote(l.systemdUnit);
        p.logCommand = jctl + u"-u "_s + shellQuote(l.systemdUnit) + u" -n 20000 --no-pager -o cat"_s;
        p.note = u"pid %1 belongs to the systemd unit %2 (from its cgroup)%3."_s.arg(
            QString::number(server.pid), l.systemdUnit,
            l.systemdUserUnit ? u", a user unit"_s
                              : u"; stopping it may need rights moetune never asks for"_s);
        return p;
    }
    if (server.arguments.isEmpty()) {
        p.kind = ServerProfile::Kind::Manual;
        p.note = u"The probe could not read how pid %1 was started: manage it yourself or fill the "
                 u"commands in."_s.arg(server.pid);
        return p;
    }
    // A start command runs the server's argv[0]: never one that another user can replace (issue 42.1).
    if (!l.interpreterProblem.isEmpty()) {
        p.kind = ServerProfile::Kind::Manual;
        p.note =
            u"pid %1 is not restarted the way it runs: its interpreter is not trusted (%2). Manage it "
            u"yourself or fill the commands in."_s.arg(QString::number(server.pid), l.interpreterProblem);
        return p;
    }
    // A plain process: restart it the way it ran, detached (setsid + nohup), log appended to its file,
    // its pid recorded so the next stop names exactly that process.
    p.kind = ServerProfile::Kind::Command;
    p.logFile = l.logFile;
    const QString pidFile = serverPidFile(server);
    QStringList env;
    for (const QString &k : {u"CUDA_VISIBLE_DEVICES"_s, u"SGLANG_MOE_CONFIG_DIR"_s,
                             u"VLLM_TUNED_CONFIG_FOLDER"_s, u"VIRTUAL_ENV"_s, u"PYTHONPATH"_s}) {
        if (l.environment.contains(k))
            env.append(k + u'=' + shellQuote(l.environment.value(k)));
    }
    QStringList argv = server.arguments;
    if (!l.executable.isEmpty() && !argv.first().startsWith(u'/') && argv.first().contains(u"python"_s))
        argv.first() = l.executable; // the same interpreter, whatever PATH says later
    const QString log = l.logFile.isEmpty() ? u"~/moetune-server.log"_s : l.logFile;
    if (l.logFile.isEmpty())
        p.logFile = log;
    QString start;
    if (!l.workingDir.isEmpty())
        start += u"cd "_s + shellQuotePath(l.workingDir) + u" && "_s;
    start += u"mkdir -p \"$HOME/.cache/moetune\" && { "_s +
             (env.isEmpty() ? QString() : env.join(u' ') + u' ') + u"setsid nohup "_s + shellJoin(argv) +
             u" >> "_s + shellQuotePath(log) + u" 2>&1 < /dev/null & echo $! > "_s + shellQuotePath(pidFile) +
             u"; }"_s;
    p.startCommand = start;
    p.stopCommand = u"kill -TERM \"$(cat "_s + shellQuotePath(pidFile) + u" 2>/dev/null || echo "_s +
                    QString::number(server.pid) + u")\""_s;
    const QString how = l.supervisor.isEmpty() ? u"a plain process"_s : l.supervisor;
    p.note =
        l.logFile.isEmpty()
            ? u"pid %1 runs as %2 without a log file on its output: the suggested start writes %3."_s.arg(
                  QString::number(server.pid), how, log)
            : u"pid %1 runs under %2 and writes %3."_s.arg(QString::number(server.pid), how, l.logFile);
    return p;
}

} // namespace moetune
