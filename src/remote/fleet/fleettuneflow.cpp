// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/fleet/fleettuneflow.h"

#include "core/host/tunejob.h"
#include "core/moe/configname.h"
#include "core/run/runprogress.h"
#include "remote/agent/agentclient.h"
#include "remote/fleet/fleetsteps.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/servercontrol.h"
#include "remote/flows/tuneflow.h"
#include "remote/transport/transport.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QPointer>

using namespace Qt::StringLiterals;

namespace moetune {

struct FleetTuneFlow::Run {
    int group = -1;
    QString chosen;         // the user's host, "" = pick
    QStringList candidates; // hosts of the group to try, in order
    QString firstReachable;
    QString host; // the tune host
    QPointer<HostSession> session;
    TuneSpec spec;
    QString runId;
    RunProgress progress;
    bool stoppedServer = false; // taken out of service through its profile: start it again after
    bool cancelled = false;
    QString serverNote; // what happened to the server taken out of service
    QMetaObject::Connection events;
};

namespace {

// The group's missing file as the diagnosis of the tune host names it (the same shape; up, not _down).
std::optional<TuningTarget> groupTarget(const Diagnosis &diagnosis, const FleetHostFacts &key) {
    const auto wanted = ConfigName::parse(key.missingConfig);
    for (const TuningTarget &t : diagnosis.targets) {
        if (!t.isTunable())
            continue;
        ConfigName up = t.name;
        up.down = false;
        if (wanted) {
            ConfigName w = *wanted;
            w.down = false;
            if (up.sameShape(w))
                return t;
        } else if (up.experts == key.experts && up.n == key.intermediate && up.deviceName == key.deviceName &&
                   up.dtype == key.dtype) {
            return t;
        }
    }
    return std::nullopt;
}

QString blockText(const std::optional<std::array<int, 2>> &b) {
    return b ? u"[%1,%2]"_s.arg((*b)[0]).arg((*b)[1]) : QString();
}

QString normalisedBlock(QString s) {
    return s.remove(u' ');
}

// What the job built on the tune host has that the group's facts do not (empty = the group's file).
QStringList jobDifferences(const TuneSpec &spec, const TuningTarget *target, const FleetHostFacts &key) {
    QStringList out;
    const int n = target ? target->name.n : spec.n;
    if (spec.experts != key.experts || (key.intermediate > 0 && n != key.intermediate))
        out << u"E=%1,N=%2 (the group's file is E=%3,N=%4)"_s.arg(spec.experts)
                   .arg(n)
                   .arg(key.experts)
                   .arg(key.intermediate);
    if (spec.dtype != key.dtype)
        out << u"dtype %1 (the group's is %2)"_s.arg(spec.dtype.isEmpty() ? u"none"_s : spec.dtype,
                                                     key.dtype.isEmpty() ? u"none"_s : key.dtype);
    if (normalisedBlock(blockText(spec.blockShape)) != normalisedBlock(key.blockShape))
        out << u"block shape %1 (the group's is %2)"_s.arg(
            spec.blockShape ? blockText(spec.blockShape) : u"none"_s,
            key.blockShape.isEmpty() ? u"none"_s : key.blockShape);
    if (!key.deviceName.isEmpty() && spec.deviceName != key.deviceName)
        out << u"device %1 (the group's is %2)"_s.arg(spec.deviceName, key.deviceName);
    return out;
}

bool gpusFree(const Preflight &pf) {
    if (!pf.gpuError.isEmpty() || pf.gpus.isEmpty() || !pf.canStart())
        return false;
    for (const Preflight::Gpu &g : pf.gpus)
        if (!g.holders.isEmpty())
            return false;
    return true;
}

} // namespace

FleetTuneFlow::FleetTuneFlow(FleetRecord *record, FleetSessionProvider sessions, QString workspacePath,
                             QObject *parent)
    : QObject(parent)
    , m_record(record)
    , m_sessions(std::move(sessions))
    , m_workspace(std::move(workspacePath)) {}

FleetTuneFlow::~FleetTuneFlow() {
    for (const auto &run : std::as_const(m_runs))
        disconnect(run->events);
}

int FleetTuneFlow::hostIndex(const QString &name) const {
    for (qsizetype i = 0; i < m_record->hosts.size(); ++i)
        if (m_record->hosts.at(i).host.name == name)
            return int(i);
    return -1;
}

void FleetTuneFlow::setHost(const QString &host, FleetHostStage stage, const QString &reason) {
    const int i = hostIndex(host);
    if (i < 0)
        return;
    FleetHostRecord &h = m_record->hosts[i];
    h.stage = stage;
    h.reason = reason;
    if (stage == FleetHostStage::Tuning && h.startedAt == 0)
        h.startedAt = fleetsteps::now();
    if (stage == FleetHostStage::Tuned || stage == FleetHostStage::Failed ||
        stage == FleetHostStage::Unreachable)
        h.endedAt = fleetsteps::now();
    emit hostChanged(i);
}

void FleetTuneFlow::save() {
    fleetsteps::saveRecord(*m_record, m_workspace);
}

void FleetTuneFlow::tuneGroup(int group, const QString &host) {
    if (group < 0 || group >= m_record->groups.size())
        return emit finished(group, false,
                             u"There is no group %1 in fleet record %2."_s.arg(group + 1).arg(m_record->id));
    if (m_runs.contains(group))
        return emit finished(group, false, u"Group %1 is being tuned already."_s.arg(group + 1));
    FleetGroupRecord &g = m_record->groups[group];
    auto run = std::make_shared<Run>();
    run->group = group;
    run->chosen = host;
    if (!host.isEmpty()) {
        if (!g.group.hosts.contains(host))
            return emit finished(
                group, false,
                u"%1 is not a host of group %2 (its hosts: %3)."_s.arg(host).arg(group + 1).arg(
                    g.group.hosts.join(u", "_s)));
        run->candidates = {host};
    } else {
        for (const QString &name : std::as_const(g.group.hosts)) {
            const FleetHostRecord *h = m_record->host(name);
            if (h && h->stage != FleetHostStage::Unreachable)
                run->candidates.append(name);
        }
    }
    if (run->candidates.isEmpty())
        return emit finished(group, false, u"Group %1 has no reachable host to tune on."_s.arg(group + 1));
    m_runs.insert(group, run);
    g.state = u"tuning"_s;
    g.reason.clear();
    emit groupChanged(group);
    emit status(group, host.isEmpty() ? u"group %1: choosing a host whose GPUs are free"_s.arg(group + 1)
                                      : u"group %1: tuning on %2 (chosen)"_s.arg(group + 1).arg(host));
    pick(run, 0);
}

// Tries the candidates in order: the first whose GPUs are free is the tune host; without one, the first
// that answered. A chosen host is taken as it is (its preflight comes with the job).
void FleetTuneFlow::pick(const std::shared_ptr<Run> &run, int candidate) {
    if (run->cancelled)
        return fail(run, u"Cancelled before the run started."_s);
    if (!run->chosen.isEmpty()) {
        run->host = run->chosen;
        return prepare(run);
    }
    if (candidate >= run->candidates.size()) {
        if (run->firstReachable.isEmpty())
            return fail(run, u"No host of group %1 could be reached to tune on."_s.arg(run->group + 1));
        run->host = run->firstReachable;
        emit status(run->group, u"group %1: no host has free GPUs; tuning on %2, the first that answered"_s
                                    .arg(run->group + 1)
                                    .arg(run->host));
        return prepare(run);
    }
    const QString name = run->candidates.at(candidate);
    const int index = hostIndex(name);
    QString error;
    HostSession *session = index >= 0 ? m_sessions(m_record->hosts.at(index).host, &error) : nullptr;
    if (!session) {
        setHost(name, FleetHostStage::Unreachable, error.isEmpty() ? u"no session"_s : error);
        save();
        return pick(run, candidate + 1);
    }
    HostFlows *flows = fleetsteps::flowsOf(session);
    QPointer<FleetTuneFlow> self(this);
    TuneSpec probeSpec; // the GPUs as a real backend needs them: all of them, free memory for a run
    flows->tune()->preflight(
        probeSpec, [self, run, candidate, name](const Preflight &pf, const HostProbe &, const QString &e) {
            if (!self)
                return;
            if (!e.isEmpty()) {
                emit self->status(run->group, u"%1: preflight failed: %2"_s.arg(name, e));
                return self->pick(run, candidate + 1);
            }
            if (run->firstReachable.isEmpty())
                run->firstReachable = name;
            if (gpusFree(pf)) {
                run->host = name;
                emit self->status(run->group, u"group %1: %2 has free GPUs"_s.arg(run->group + 1).arg(name));
                return self->prepare(run);
            }
            self->pick(run, candidate + 1);
        });
}

void FleetTuneFlow::prepare(const std::shared_ptr<Run> &run) {
    const int index = hostIndex(run->host);
    QString error;
    HostSession *session = index >= 0 ? m_sessions(m_record->hosts.at(index).host, &error) : nullptr;
    if (!session) {
        setHost(run->host, FleetHostStage::Unreachable, error);
        return fail(run, u"%1 could not be reached: %2"_s.arg(run->host, error));
    }
    run->session = session;
    FleetGroupRecord &g = m_record->groups[run->group];
    g.tuneHost = run->host;
    emit groupChanged(run->group);
    setHost(run->host, FleetHostStage::Tuning, u"reading the server's log to build the group's job"_s);
    const QString folder = fleetsteps::groupFolder(m_workspace, m_record->id, run->group);
    QDir().mkpath(folder);
    QPointer<FleetTuneFlow> self(this);
    fleetsteps::diagnose(session, QDir(folder).filePath(u"tune-host.log"_s), this,
                         [self, run](const std::optional<Diagnosis> &d, const QString &e) {
                             if (!self)
                                 return;
                             if (!d)
                                 return self->fail(
                                     run, u"The log of %1 could not be diagnosed: %2"_s.arg(run->host, e));
                             self->buildJob(run, *d);
                         });
}

void FleetTuneFlow::buildJob(const std::shared_ptr<Run> &run, const Diagnosis &diagnosis) {
    if (run->cancelled)
        return fail(run, u"Cancelled before the run started."_s);
    const FleetHostFacts &key = m_record->groups.at(run->group).group.key;
    const auto target = groupTarget(diagnosis, key);
    if (!target)
        return fail(run, u"The log of %1 no longer names the group's missing file %2; diagnose the fleet "
                         u"again."_s.arg(run->host, key.missingConfig));
    const std::optional<HostProbe> &probe = run->session->lastProbe();
    TuneJob job = buildTuneJob(&diagnosis, probe ? &*probe : nullptr, target);
    if (!m_options.backend.isEmpty())
        job.spec.backend = m_options.backend;
    if (!m_options.batchSizes.isEmpty())
        job.spec.batchSizes = m_options.batchSizes;
    if (!m_options.strategy.isEmpty())
        job.spec.strategy = m_options.strategy;
    const QStringList differs = jobDifferences(job.spec, job.target ? &*job.target : nullptr, key);
    if (!differs.isEmpty())
        return fail(
            run, u"The job built on %1 is not the group's file: %2."_s.arg(run->host, differs.join(u"; "_s)));
    if (const QString invalid = job.spec.validate(); !invalid.isEmpty())
        return fail(
            run, u"The job for group %1 cannot run on %2: %3"_s.arg(run->group + 1).arg(run->host, invalid));
    run->spec = job.spec;
    emit status(run->group,
                u"group %1: job %2 on %3"_s.arg(run->group + 1).arg(job.spec.summaryText(), run->host));
    preflightAndStart(run, false);
}

void FleetTuneFlow::preflightAndStart(const std::shared_ptr<Run> &run, bool afterStop) {
    HostFlows *flows = run->session ? fleetsteps::flowsOf(run->session) : nullptr;
    if (!flows)
        return fail(run, u"The session of %1 is gone."_s.arg(run->host));
    setHost(run->host, FleetHostStage::Tuning, u"preflight: are the GPUs free"_s);
    QPointer<FleetTuneFlow> self(this);
    flows->tune()->preflight(run->spec, [self, run, afterStop](const Preflight &pf, const HostProbe &,
                                                               const QString &e) {
        if (!self)
            return;
        if (!e.isEmpty())
            return self->fail(run, u"The preflight on %1 failed: %2"_s.arg(run->host, e));
        if (run->cancelled)
            return self->fail(run, u"Cancelled before the run started."_s);
        if (pf.canStart())
            return self->startRun(run);
        HostFlows *hf = run->session ? fleetsteps::flowsOf(run->session) : nullptr;
        const ServerProfile profile = hf ? hf->server()->profile() : ServerProfile{};
        const QString problems = pf.problems.join(u' ');
        if (pf.serverHoldsGpus && !afterStop && self->m_options.takeOutOfService && profile.canStopStart()) {
            self->setHost(
                run->host, FleetHostStage::Tuning,
                u"taking the server out of service through its profile (%1)"_s.arg(profile.summary()));
            hf->server()->stop([self, run](const ServerControl::StopResult &r) {
                if (!self)
                    return;
                if (!r.ok)
                    return self->fail(
                        run, u"The server of %1 could not be stopped: %2"_s.arg(run->host, r.message));
                run->stoppedServer = true;
                self->preflightAndStart(run, true);
            });
            return;
        }
        QString why = u"The GPUs of %1 are not free: %2"_s.arg(run->host, problems);
        if (pf.serverHoldsGpus && !afterStop)
            why +=
                profile.canStopStart()
                    ? u" Take the host out of service (stop its server through its profile) to tune there, "
                      u"or choose another host."_s
                    : u" The host has no server profile to stop its server; choose another host."_s;
        if (run->stoppedServer)
            return self->restoreServer(run, [self, run, why](const QString &note) {
                if (self)
                    self->fail(run, why + u' ' + note);
            });
        self->fail(run, why);
    });
}

void FleetTuneFlow::startRun(const std::shared_ptr<Run> &run) {
    HostFlows *flows = run->session ? fleetsteps::flowsOf(run->session) : nullptr;
    if (!flows)
        return fail(run, u"The session of %1 is gone."_s.arg(run->host));
    setHost(run->host, FleetHostStage::Tuning, u"starting the run"_s);
    QPointer<FleetTuneFlow> self(this);
    flows->tune()->start(run->spec, [self, run](const QString &runId, const QJsonObject &started,
                                                const QString &e) {
        if (!self)
            return;
        if (!e.isEmpty()) {
            const QString why = u"The run did not start on %1: %2"_s.arg(run->host, e);
            if (run->stoppedServer)
                return self->restoreServer(run, [self, run, why](const QString &note) {
                    if (self)
                        self->fail(run, why + u' ' + note);
                });
            return self->fail(run, why);
        }
        run->runId = runId;
        FleetGroupRecord &g = self->m_record->groups[run->group];
        g.runId = runId;
        if (FleetHostRecord *h = self->m_record->host(run->host))
            h->runId = runId;
        const bool simulated = started.value("simulated"_L1).toBool();
        self->setHost(run->host, FleetHostStage::Tuning,
                      u"run %1%2"_s.arg(runId, simulated ? u" [SIMULATED: synthetic backend]"_s : QString()));
        emit self->groupChanged(run->group);
        self->save();
        self->followRun(run);
    });
}

void FleetTuneFlow::followRun(const std::shared_ptr<Run> &run) {
    HostFlows *flows = run->session ? fleetsteps::flowsOf(run->session) : nullptr;
    if (!flows)
        return fail(run, u"The session of %1 is gone."_s.arg(run->host));
    QPointer<FleetTuneFlow> self(this);
    const int group = run->group;
    run->events = connect(flows->tune(), &TuneFlow::runEvent, this, [self, run, group](const QJsonObject &) {
        if (self)
            emit self->progress(group, run->progress.unitsDone(), run->progress.total);
    });
    flows->tune()->follow(run->runId, &run->progress, [self, run](bool ok, const QString &e) {
        if (!self)
            return;
        disconnect(run->events);
        self->runEnded(run, ok, e);
    });
}

void FleetTuneFlow::runEnded(const std::shared_ptr<Run> &run, bool followed, const QString &error) {
    QPointer<FleetTuneFlow> self(this);
    auto next = [self, run, followed, error](const QString &note) {
        if (!self)
            return;
        run->serverNote = note;
        if (!followed)
            return self->fail(
                run,
                u"Following run %1 on %2 failed: %3 %4"_s.arg(run->runId, run->host, error, note).trimmed());
        if (run->progress.doneStatus != "ok"_L1)
            return self->fail(
                run, u"Run %1 on %2 ended %3%4. %5"_s
                         .arg(run->runId, run->host, run->progress.doneStatus,
                              run->progress.error.isEmpty() ? QString() : u": "_s + run->progress.error, note)
                         .trimmed());
        self->fetchResult(run);
    };
    if (run->stoppedServer)
        return restoreServer(run, next);
    next(QString());
}

void FleetTuneFlow::restoreServer(const std::shared_ptr<Run> &run,
                                  const std::function<void(const QString &)> &done) {
    HostFlows *flows = run->session ? fleetsteps::flowsOf(run->session) : nullptr;
    if (!flows)
        return done(u"The server of %1 was stopped for the run and could not be started again (the session "
                    u"is gone): start it through its profile."_s.arg(run->host));
    run->stoppedServer = false;
    setHost(run->host, FleetHostStage::Tuning, u"putting the server back in service (starting it)"_s);
    const QString host = run->host;
    flows->server()->start([done, host](const ServerControl::StartResult &r) {
        done(r.ok ? u"The server of %1 was started again after the run (ready after %2 s)."_s.arg(host).arg(
                        r.readyAfterS, 0, 'f', 1)
                  : u"The server of %1 was stopped for the run and did not start again: %2"_s.arg(host,
                                                                                                  r.message));
    });
}

void FleetTuneFlow::fetchResult(const std::shared_ptr<Run> &run) {
    HostFlows *flows = run->session ? fleetsteps::flowsOf(run->session) : nullptr;
    if (!flows)
        return fail(run, u"The session of %1 is gone."_s.arg(run->host));
    setHost(run->host, FleetHostStage::Tuning, u"fetching the run's result.json"_s);
    QPointer<FleetTuneFlow> self(this);
    // The agent's `result` names the file on the host (a result too long for one line comes in parts,
    // joined by the parser); its bytes are then copied as they are, so every host imports the same bytes.
    const JobId id = flows->calls()->agent()->result(run->runId);
    flows->calls()->agentJob(id, [self, run](const HostCalls::Agent &a) {
        if (!self)
            return;
        const auto results = a.of(u"result"_s);
        if (!a.ok || results.isEmpty())
            return self->fail(run, u"The result of run %1 on %2 could not be read: %3"_s.arg(
                                       run->runId, run->host, a.error.isEmpty() ? u"no result"_s : a.error));
        const QString remote = results.first().value("path"_L1).toString();
        const QString folder = fleetsteps::groupFolder(self->m_workspace, self->m_record->id, run->group);
        QDir().mkpath(folder);
        const QString local = QDir(folder).filePath(u"result.json"_s);
        HostFlows *hf = run->session ? fleetsteps::flowsOf(run->session) : nullptr;
        Transport *t = hf ? hf->calls()->transport() : nullptr;
        if (remote.isEmpty() || !t)
            return self->fail(run, u"Run %1 on %2 names no result file."_s.arg(run->runId, run->host));
        const JobId tid = t->download(remote, local);
        fleetsteps::transfer(t, tid, self, [self, run, local, remote](const JobResult &r) {
            if (!self)
                return;
            if (!r.ok())
                return self->fail(run,
                                  u"Downloading %1 from %2 failed: %3"_s.arg(remote, run->host, r.error));
            FleetGroupRecord &g = self->m_record->groups[run->group];
            g.resultFile = local;
            const QString simulated = run->progress.simulated
                                          ? u" [SIMULATED: synthetic backend, no GPU measured it]"_s
                                          : QString();
            self->setHost(run->host, FleetHostStage::Tuned,
                          u"tuned here: run %1%2"_s.arg(run->runId, simulated));
            self->succeed(run, (u"Group %1 tuned on %2: run %3%4, result in %5. %6"_s.arg(run->group + 1)
                                    .arg(run->host, run->runId, simulated, local, run->serverNote))
                                   .trimmed());
        });
    });
}

void FleetTuneFlow::fail(const std::shared_ptr<Run> &run, const QString &message) {
    if (m_runs.value(run->group) != run)
        return;
    if (!run->host.isEmpty()) {
        const FleetHostRecord *h = m_record->host(run->host);
        if (h && h->stage != FleetHostStage::Unreachable)
            setHost(run->host, FleetHostStage::Failed, message);
    }
    FleetGroupRecord &g = m_record->groups[run->group];
    g.state = u"failed"_s;
    g.reason = message;
    m_runs.remove(run->group);
    emit groupChanged(run->group);
    save();
    emit finished(run->group, false, message);
}

void FleetTuneFlow::succeed(const std::shared_ptr<Run> &run, const QString &message) {
    FleetGroupRecord &g = m_record->groups[run->group];
    g.state = u"tuned"_s;
    g.reason.clear();
    m_runs.remove(run->group);
    emit groupChanged(run->group);
    save();
    emit finished(run->group, true, message);
}

void FleetTuneFlow::cancel(int group) {
    const auto run = m_runs.value(group);
    if (!run)
        return;
    run->cancelled = true;
    HostFlows *flows = run->session ? fleetsteps::flowsOf(run->session) : nullptr;
    if (flows && !run->runId.isEmpty())
        flows->tune()->cancel(run->runId, [](bool, const QString &) {});
}

} // namespace moetune
