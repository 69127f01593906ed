// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/servercontrol.h"

#include "core/util/shellquote.h"
#include "remote/agent/agentclient.h"

#include <QTimer>

using namespace Qt::StringLiterals;

namespace moetune {

ServerControl::ServerControl(HostCalls *calls, ServerProfile profile, QObject *parent)
    : QObject(parent)
    , m_calls(calls)
    , m_profile(std::move(profile)) {}

void ServerControl::probeHolders(
    const std::function<void(const QList<QPair<int, GpuProcess>> &, const QString &error)> &done) {
    const JobId id = m_calls->agent()->probe();
    m_calls->agentJob(id, [done](const HostCalls::Agent &a) {
        QList<QPair<int, GpuProcess>> holders;
        const auto probes = a.of(u"probe"_s);
        if (!a.ok || probes.isEmpty())
            return done(holders, a.error.isEmpty() ? u"The probe returned nothing."_s : a.error);
        const auto p = HostProbe::fromJson(probes.first());
        for (const GpuInfo &g : p->gpus) {
            for (const GpuProcess &h : g.processes)
                holders.append({g.index, h});
        }
        done(holders, QString());
    });
}

void ServerControl::stop(const std::function<void(const StopResult &)> &done) {
    if (!m_profile.canStopStart() || m_profile.stopCommand.trimmed().isEmpty()) {
        StopResult r;
        r.message = m_profile.validate().isEmpty() ? u"The server profile has no stop command."_s
                                                   : m_profile.validate();
        return done(r);
    }
    QPointer<ServerControl> self(this);
    probeHolders([self, done](const QList<QPair<int, GpuProcess>> &before, const QString &error) {
        if (!self)
            return;
        const bool listed = error.isEmpty();
        if (!error.isEmpty())
            emit self->status(
                u"Could not list the GPU processes before stopping (%1); stopping anyway."_s.arg(error));
        emit self->status(u"Stopping the server: %1"_s.arg(self->m_profile.stopCommand));
        self->m_calls->shell(
            self->m_profile.stopCommand, 300000, [self, done, before, listed](const HostCalls::Shell &s) {
                if (!self)
                    return;
                if (!s.ok()) {
                    StopResult r;
                    // No process held a GPU and the stop command found nothing to stop: the server is down.
                    r.notRunning = listed && before.isEmpty();
                    r.message =
                        r.notRunning
                            ? u"The server is not running: no process holds a GPU, and the stop command "
                              u"found nothing to stop (%1)."_s.arg(s.failure())
                            : u"The stop command failed: %1. Nothing else was changed; check the server "
                              u"profile's stop command."_s.arg(s.failure());
                    return done(r);
                }
                auto timer = std::make_shared<QElapsedTimer>();
                timer->start();
                self->waitGpusFree(before, done, timer);
            });
    });
}

void ServerControl::waitGpusFree(const QList<QPair<int, GpuProcess>> &before,
                                 const std::function<void(const StopResult &)> &done,
                                 const std::shared_ptr<QElapsedTimer> &timer) {
    QPointer<ServerControl> self(this);
    probeHolders([self, before, done, timer](const QList<QPair<int, GpuProcess>> &now, const QString &error) {
        if (!self)
            return;
        StopResult r;
        if (!error.isEmpty()) {
            r.message = u"The server was stopped, but the GPUs could not be checked: %1"_s.arg(error);
            return done(r);
        }
        // Leftovers: processes that held GPU memory before the stop and still do (orphaned
        // scheduler/engine processes keep ~100 GB and the port), or that appeared since.
        for (const auto &h : now) {
            r.leftoverGpus.append(h.first);
            r.leftovers.append(h.second);
        }
        if (r.leftovers.isEmpty()) {
            r.ok = true;
            r.message = u"The server stopped and every GPU is free (%1 s)."_s.arg(timer->elapsed() / 1000.0,
                                                                                  0, 'f', 1);
            return done(r);
        }
        if (timer->elapsed() < qint64(self->m_gpuWaitS) * 1000) {
            emit self->status(u"Waiting for the GPUs to be released (%1 process(es) still hold memory)"_s.arg(
                r.leftovers.size()));
            QTimer::singleShot(1000, self, [self, before, done, timer] {
                if (self)
                    self->waitGpusFree(before, done, timer);
            });
            return;
        }
        QStringList names;
        for (qsizetype i = 0; i < r.leftovers.size(); ++i)
            names.append(u"GPU %1: pid %2 %3 (%4 MiB)"_s.arg(r.leftoverGpus[i])
                             .arg(r.leftovers[i].pid)
                             .arg(r.leftovers[i].name)
                             .arg(r.leftovers[i].usedMiB));
        r.message =
            u"The stop command ran, but these processes still hold GPU memory after %1 s: %2. moetune "
            u"does not kill processes by name: stop them yourself (for example kill PID) and check again."_s
                .arg(self->m_gpuWaitS)
                .arg(names.join(u"; "_s));
        Q_UNUSED(before)
        done(r);
    });
}

QString ServerControl::logSinceCommand(const LogMark &mark) const {
    const ServerProfile &p = m_profile;
    if (!p.logFile.isEmpty()) {
        const QString f = shellQuotePath(p.logFile);
        if (mark.offset < 0)
            return u"cat -- "_s + f;
        // A restart that truncates the log starts it again: then all of it is new.
        return u"s=$(wc -c < %1 2>/dev/null || echo 0); if [ \"$s\" -lt %2 ]; then cat -- %1; else tail -c +%3 -- %1; fi"_s
            .arg(f)
            .arg(mark.offset)
            .arg(mark.offset + 1);
    }
    if (p.kind == ServerProfile::Kind::Systemd && !p.unit.isEmpty())
        return (p.userUnit ? u"journalctl --user -u "_s : u"journalctl -u "_s) + shellQuote(p.unit) +
               u" --since @%1 --no-pager -o cat"_s.arg(mark.epoch);
    if (p.kind == ServerProfile::Kind::Docker && !p.unit.isEmpty())
        return u"docker logs --since %1 "_s.arg(mark.epoch) + shellQuote(p.unit) + u" 2>&1"_s;
    return u"{ "_s + p.logCommand + u" ; } 2>&1"_s;
}

void ServerControl::markLog(const std::function<void(const LogMark &, const QString &error)> &done) {
    QString cmd = u"date +%s"_s;
    if (!m_profile.logFile.isEmpty())
        cmd += u"; wc -c < "_s + shellQuotePath(m_profile.logFile) + u" 2>/dev/null || echo 0"_s;
    m_calls->shell(
        cmd, 30000,
        [done](const HostCalls::Shell &s) {
            LogMark m;
            if (!s.ok() || s.out.isEmpty())
                return done(m, s.failure().isEmpty() ? u"no output from date"_s : s.failure());
            m.epoch = s.out.value(0).trimmed().toLongLong();
            if (s.out.size() > 1)
                m.offset = s.out.value(1).trimmed().toLongLong();
            done(m, QString());
        },
        true);
}

void ServerControl::start(const std::function<void(const StartResult &)> &done) {
    const QString invalid = m_profile.validate();
    if (!invalid.isEmpty()) {
        StartResult r;
        r.message = invalid;
        return done(r);
    }
    QPointer<ServerControl> self(this);
    markLog([self, done](const LogMark &mark, const QString &error) {
        if (!self)
            return;
        if (!error.isEmpty()) {
            StartResult r;
            r.message =
                u"Could not read where the server's log stands: %1. The server was not started."_s.arg(error);
            return done(r);
        }
        emit self->status(u"Starting the server: %1"_s.arg(self->m_profile.startCommand));
        self->m_calls->shell(
            self->m_profile.startCommand, 120000, [self, done, mark](const HostCalls::Shell &s) {
                if (!self)
                    return;
                if (!s.ok()) {
                    StartResult r;
                    r.mark = mark;
                    r.message =
                        u"The start command failed: %1. The server is not running: fix the profile's start "
                        u"command and start it again (the tuned files stay in place; undo-push removes them)."_s
                            .arg(s.failure());
                    return done(r);
                }
                auto timer = std::make_shared<QElapsedTimer>();
                timer->start();
                self->pollReady(mark, timer, done);
            });
    });
}

void ServerControl::pollReady(const LogMark &mark, const std::shared_ptr<QElapsedTimer> &timer,
                              const std::function<void(const StartResult &)> &done) {
    QString cmd;
    const bool byLine = m_profile.readiness == ServerProfile::Readiness::LogLine;
    if (byLine) {
        cmd = u"{ "_s + logSinceCommand(mark) + u" ; } | grep -F -c -e "_s + shellQuote(m_profile.readyLine) +
              u" || true"_s;
    } else {
        const QString url = shellQuote(m_profile.healthUrl);
        cmd = u"if command -v curl >/dev/null 2>&1; then curl -fsS -m 5 -o /dev/null "_s + url +
              u" && echo 1 || echo 0; else python3 -c 'import sys,urllib.request\ntry:\n "
              u"print(1 if urllib.request.urlopen(sys.argv[1],timeout=5).status==200 else 0)\nexcept "
              u"Exception:\n print(0)' "_s +
              url + u"; fi"_s;
    }
    QPointer<ServerControl> self(this);
    m_calls->shell(
        cmd, 30000,
        [self, mark, timer, done, byLine](const HostCalls::Shell &s) {
            if (!self)
                return;
            StartResult r;
            r.mark = mark;
            if (!s.error.isEmpty()) {
                r.message =
                    u"Lost track of the server while waiting for it to become ready: %1"_s.arg(s.error);
                return done(r);
            }
            if (s.out.value(0).trimmed().toInt() > 0) {
                r.ok = true;
                r.readyAfterS = double(timer->elapsed()) / 1000.0;
                r.message = u"The server is ready (%1 s after the start)."_s.arg(r.readyAfterS, 0, 'f', 1);
                return done(r);
            }
            const int limit = self->m_profile.readyTimeoutS;
            if (timer->elapsed() >= qint64(limit) * 1000) {
                r.message =
                    (byLine ? u"The readiness line \"%1\" did not appear within %2 s."_s.arg(
                                  self->m_profile.readyLine)
                            : u"%1 did not answer within %2 s."_s.arg(self->m_profile.healthUrl))
                        .arg(limit) +
                    u" The server may still be starting or may have failed: read its log (moetune-cli "
                    u"diagnose --host) before pushing again."_s;
                return done(r);
            }
            emit self->status(
                u"Waiting for the server to become ready (%1 s of %2 s)"_s.arg(timer->elapsed() / 1000)
                    .arg(limit));
            QTimer::singleShot(1000, self, [self, mark, timer, done] {
                if (self)
                    self->pollReady(mark, timer, done);
            });
        },
        true);
}

void ServerControl::fetchLogSince(const LogMark &mark, const QString &localFile,
                                  const std::function<void(bool ok, const QString &error)> &done) {
    m_calls->shellToFile(logSinceCommand(mark), localFile, 300000,
                         [done](const HostCalls::Shell &s) { done(s.ok(), s.failure()); });
}

} // namespace moetune

namespace moetune {

void ServerControl::fetchCurrentLog(qint64 maxBytes, const QString &localFile,
                                    const std::function<void(bool ok, const QString &error)> &done) {
    QString cmd;
    if (!m_profile.logFile.isEmpty())
        cmd = u"tail -c %1 -- "_s.arg(maxBytes) + shellQuotePath(m_profile.logFile);
    else if (!m_profile.logCommand.isEmpty())
        cmd = u"{ "_s + m_profile.logCommand + u" ; } 2>&1 | tail -c %1"_s.arg(maxBytes);
    if (cmd.isEmpty())
        return done(false, u"The server profile names no log file or log command."_s);
    m_calls->shellToFile(cmd, localFile, 300000,
                         [done](const HostCalls::Shell &s) { done(s.ok(), s.failure()); });
}

} // namespace moetune
