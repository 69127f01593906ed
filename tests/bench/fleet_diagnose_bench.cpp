// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Fleet diagnose at 1, 8 and 32 hosts (issue 46 "Speed and scale"): FleetFixture hosts on this machine (a
// real sshd each, their own labelled fake server trees: PRACTICE / TEST DOUBLES of an SGLang install and
// server), diagnosed through FleetDiagnoseFlow on a QGuiApplication's thread (offscreen) as the app's Fleet
// view does. Prints, per run: the wall time, the slowest host alone, the ratio (goal: 32 hosts <= 2x the
// slowest alone), the event loop's longest stall (a 5 ms QTimer's largest gap; goal <= 50 ms) and the
// growth of this process's RSS per host. Not a ctest (timings on a shared machine are not a test).
// Usage: fleet_diagnose_bench [hosts = 32]
#include "core/fleet/fleetrecord.h"
#include "fleetfixture.h"
#include "remote/agent/agentclient.h"
#include "remote/fleet/fleetdiagnoseflow.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/waiter.h"
#include "remote/hosts/hoststore.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QGuiApplication>
#include <QSettings>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <sys/resource.h>

using namespace Qt::StringLiterals;
using namespace moetune;
using namespace moetune::test;

namespace {

int openFds() {
    return int(
        QDir(u"/proc/self/fd"_s).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System).size());
}

qint64 statusKb(const char *field) {
    QFile f(u"/proc/self/status"_s);
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith(field))
            return line.mid(qsizetype(qstrlen(field))).trimmed().split(' ').value(0).toLongLong();
    }
    return 0;
}

struct Run {
    qint64 wallMs = 0;
    qint64 slowestHostMs = 0;
    qint64 stallMs = 0;
    qint64 rssBeforeKb = 0;
    qint64 rssAfterKb = 0;
    qint64 rssPeakKb = 0;
    int diagnosed = 0;
    int hosts = 0;
    int peakSessions = 0;
    int fdsBefore = 0;
    int fdsPeak = 0;
};

Run diagnose(const FleetFixture &fleet, const QList<int> &indexes, int maxSessions,
             const QString &settingsFile, const HostSession::Environment &env) {
    FleetRecord record;
    record.id = FleetRecord::newId();
    const QList<FleetHost> all = fleet.fleetHosts();
    for (int i : indexes) {
        FleetHostRecord r;
        r.host = all.at(i);
        record.hosts.append(r);
    }
    QSettings settings(settingsFile, QSettings::IniFormat);
    const HostStore store(&settings, fleet.sshHome().configPath());
    const QString sshConfig = fleet.sshHome().configPath();
    QObject owner;
    FleetDiagnoseFlow flow(
        &record,
        [&](const FleetHost &host, QString *) {
            return new HostSession(fleetHostConfig(host, sshConfig, store), env, &owner);
        },
        QString());
    flow.setMaxSessions(maxSessions);
    flow.setSessionDone([](const FleetHost &, HostSession *s) { s->deleteLater(); });

    Run run;
    run.hosts = int(indexes.size());
    QCoreApplication::processEvents();
    run.rssBeforeKb = statusKb("VmRSS:");
    run.rssPeakKb = run.rssBeforeKb;
    run.fdsBefore = run.fdsPeak = openFds();
    QElapsedTimer gap;
    QTimer tick;
    tick.setInterval(5);
    int ticks = 0;
    QObject::connect(&tick, &QTimer::timeout, [&] {
        run.stallMs = std::max(run.stallMs, gap.restart());
        if (++ticks % 20 == 0) {
            run.rssPeakKb = std::max(run.rssPeakKb, statusKb("VmRSS:"));
            run.fdsPeak = std::max(run.fdsPeak, openFds());
        }
    });
    Waiter waiter;
    QObject::connect(&flow, &FleetDiagnoseFlow::finished, [&waiter] { waiter.done(); });
    QElapsedTimer wall;
    wall.start();
    gap.start();
    tick.start();
    flow.start();
    waiter.wait(0);
    run.wallMs = wall.elapsed();
    tick.stop();
    // The sessions let go (deleteLater) and their threads gone before RSS is read again.
    for (int i = 0; i < 50; ++i) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    }
    run.rssAfterKb = statusKb("VmRSS:");
    run.diagnosed = record.count(FleetHostStage::Diagnosed);
    run.peakSessions = flow.peakSessions();
    for (qint64 ms : flow.hostMs())
        run.slowestHostMs = std::max(run.slowestHostMs, ms);
    for (const FleetHostRecord &h : std::as_const(record.hosts)) {
        if (h.stage != FleetHostStage::Diagnosed)
            std::fprintf(stderr, "  %s: %s: %s\n", qPrintable(h.host.name),
                         qPrintable(fleetStageName(h.stage)), qPrintable(h.reason));
    }
    return run;
}

void print(const char *what, const Run &r) {
    std::printf("%-34s hosts=%2d sessions(peak)=%2d diagnosed=%2d wall=%6lld ms slowest-host-in-run=%6lld ms "
                "longest-stall=%3lld ms rss: before=%lld KB after=%lld KB (%+.1f KB/host) peak=%+lld KB "
                "fds: before=%d peak=%+d (%.1f per session)\n",
                what, r.hosts, r.peakSessions, r.diagnosed, r.wallMs, r.slowestHostMs, r.stallMs,
                r.rssBeforeKb, r.rssAfterKb, double(r.rssAfterKb - r.rssBeforeKb) / std::max(1, r.hosts),
                r.rssPeakKb - r.rssBeforeKb, r.fdsBefore, r.fdsPeak - r.fdsBefore,
                double(r.fdsPeak - r.fdsBefore) / std::max(1, r.peakSessions));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    qunsetenv("SSH_AUTH_SOCK");
    const int n = argc > 1 ? std::clamp(QByteArray(argv[1]).toInt(), 1, 64) : 32;

    QElapsedTimer setup;
    setup.start();
    FleetFixture fleet(FleetFixture::uniform(n));
    QString error;
    if (!fleet.start(&error)) {
        std::fprintf(stderr, "fleet_diagnose_bench: cannot start the fleet: %s\n", qPrintable(error));
        return 2;
    }
    // The hosts' side (sshd, the agent, the fake servers) stands in for machines whose CPU is not ours: at
    // nice 10, so that loopback does not bill the hosts' work to this process's event loop (the agents'
    // commands run under the sshd sessions and inherit it).
    for (int i = 0; i < fleet.size(); ++i) {
        if (fleet.sshd(i))
            ::setpriority(PRIO_PROCESS, pid_t(fleet.sshd(i)->pid()), 10);
    }
    QTemporaryDir tmp;
    const QString settingsFile = tmp.path() + u"/moetune.ini"_s;
    if (!fleet.saveAppHosts(settingsFile)) {
        std::fprintf(stderr, "fleet_diagnose_bench: cannot write the app's hosts\n");
        return 2;
    }
    const HostSession::Environment env = fleet.environment(AgentClient::defaultLocalAgentPath());
    if (env.agentPath.isEmpty()) {
        std::fprintf(stderr, "fleet_diagnose_bench: moetune-agent.pyz not found (set MOETUNE_AGENT_PYZ)\n");
        return 2;
    }
    std::printf("fleet_diagnose_bench: %d fixture hosts started in %lld ms (sshd + fake server each, this "
                "machine: %d CPUs)\n",
                n, setup.elapsed(), QThread::idealThreadCount());

    QList<int> everyHost;
    for (int i = 0; i < n; ++i)
        everyHost.append(i);
    // Cold: the first connection to each host deploys the agent there (its HOME is new).
    print("cold, every host (agent deployed)", diagnose(fleet, everyHost, n, settingsFile, env));

    // Each host alone (the first 8): the slowest is the yardstick.
    qint64 slowestAlone = 0;
    for (int i = 0; i < std::min(n, 8); ++i) {
        const Run r = diagnose(fleet, {i}, 1, settingsFile, env);
        slowestAlone = std::max(slowestAlone, r.wallMs);
        if (i == 0)
            print("1 host alone", r);
    }
    std::printf("slowest host alone (of the first %d, each diagnosed alone): %lld ms\n", std::min(n, 8),
                slowestAlone);

    for (const int hosts : {8, 32}) {
        if (hosts > n)
            continue;
        const QList<int> set = everyHost.mid(0, hosts);
        for (const int sessions : {FleetDiagnoseFlow::kDefaultMaxSessions, hosts}) {
            const Run r = diagnose(fleet, set, sessions, settingsFile, env);
            const QByteArray what = u"%1 hosts, max %2 sessions"_s.arg(hosts).arg(sessions).toUtf8();
            print(what.constData(), r);
            std::printf(
                "  ratio to the slowest alone: %.2fx (goal for 32 hosts: <= 2x) %s; longest stall %lld "
                "ms (goal <= 50 ms) %s\n",
                double(r.wallMs) / double(std::max<qint64>(1, slowestAlone)),
                hosts == 32 ? (r.wallMs <= 2 * slowestAlone ? "met" : "MISSED") : "", r.stallMs,
                r.stallMs <= 50 ? "met" : "MISSED");
            if (sessions == hosts)
                break;
        }
    }
    return 0;
}
