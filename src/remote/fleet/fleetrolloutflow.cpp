// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/fleet/fleetrolloutflow.h"

#include "core/serving/servingbenchcommand.h"
#include "core/serving/servingworkload.h"
#include "core/util/shellquote.h"
#include "remote/agent/agentclient.h"
#include "remote/fleet/fleetsteps.h"
#include "remote/flows/hostcalls.h"
#include "remote/flows/hostflows.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/pushflow.h"
#include "remote/flows/servercontrol.h"
#include "remote/flows/servingflow.h"
#include "remote/transport/transport.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QPointer>

using namespace Qt::StringLiterals;

namespace moetune {

struct FleetRolloutFlow::Rollout {
    int group = -1;
    Options options;
    bool undo = false; // an undoGroup() holds the group
    QStringList queue; // hosts not started yet, in order (the canary first)
    QString canary;
    int proved = 0;
    QString stoppedAt; // the first host that failed
    QString stopReason;
    bool canaryDone = false;
};

struct FleetRolloutFlow::HostRun {
    std::shared_ptr<Rollout> rollout;
    QString host;
    QPointer<HostSession> session;
    QString runId;
    Diagnosis before;
    HostProbe probe;
    bool haveProbe = false;
    PushFlow::Preview preview;
    QString folder; // local folder for this host's logs
    std::function<void(bool)> done;
    HostFlows *flows() const { return session ? fleetsteps::flowsOf(session) : nullptr; }
};

namespace {

// The push that an undo must put back: a push that changed nothing (the same bytes were there: a rollout
// run again) keeps the record of the earlier push that is not undone yet.
void keepPush(FleetHostRecord *host, const PushRecord &push) {
    if (push.changedSomething()) {
        host->push = push;
        host->undone = false;
    } else if (!host->push.changedSomething() || host->undone) {
        host->push = push;
    }
}

} // namespace

FleetRolloutFlow::FleetRolloutFlow(FleetRecord *record, FleetSessionProvider sessions, QString workspacePath,
                                   QObject *parent)
    : QObject(parent)
    , m_record(record)
    , m_sessions(std::move(sessions))
    , m_workspace(std::move(workspacePath)) {}

FleetRolloutFlow::~FleetRolloutFlow() = default;

int FleetRolloutFlow::hostIndex(const QString &name) const {
    for (qsizetype i = 0; i < m_record->hosts.size(); ++i)
        if (m_record->hosts.at(i).host.name == name)
            return int(i);
    return -1;
}

void FleetRolloutFlow::setHost(const QString &host, FleetHostStage stage, const QString &reason) {
    const int i = hostIndex(host);
    if (i < 0)
        return;
    FleetHostRecord &h = m_record->hosts[i];
    h.stage = stage;
    h.reason = reason;
    if (stage == FleetHostStage::Importing || stage == FleetHostStage::Undoing)
        h.startedAt = fleetsteps::now();
    if (stage == FleetHostStage::Proved || stage == FleetHostStage::Undone ||
        stage == FleetHostStage::UndoFailed || stage == FleetHostStage::Failed ||
        stage == FleetHostStage::ProofFailed || stage == FleetHostStage::Unreachable ||
        stage == FleetHostStage::Skipped)
        h.endedAt = fleetsteps::now();
    emit hostChanged(i);
}

void FleetRolloutFlow::save() {
    fleetsteps::saveRecord(*m_record, m_workspace);
}

void FleetRolloutFlow::rollOut(int group, const Options &options) {
    if (group < 0 || group >= m_record->groups.size())
        return emit finished(group, false,
                             u"There is no group %1 in fleet record %2."_s.arg(group + 1).arg(m_record->id));
    if (m_runs.contains(group))
        return emit finished(group, false, u"Group %1 is busy (a rollout or an undo runs)."_s.arg(group + 1));
    FleetGroupRecord &g = m_record->groups[group];
    if (g.resultFile.isEmpty() || !QFile::exists(g.resultFile) || g.runId.isEmpty())
        return emit finished(
            group, false,
            u"Group %1 has no tuned result to roll out; tune it first (moetune-cli fleet tune "
            u"--group %1)."_s.arg(group + 1));
    if (options.maxParallel < 1)
        return emit finished(group, false, u"At most 0 hosts at once rolls nothing out: give 1 or more."_s);
    // Only the hosts of the group that are in the set; a host diagnosed unreachable stays as it is.
    QStringList hosts;
    for (const QString &name : std::as_const(g.group.hosts)) {
        const FleetHostRecord *h = m_record->host(name);
        if (h && h->stage != FleetHostStage::Unreachable)
            hosts.append(name);
    }
    if (hosts.isEmpty())
        return emit finished(group, false,
                             u"Group %1 has no reachable host to roll out to."_s.arg(group + 1));
    QString canary = options.canary;
    if (!canary.isEmpty() && !hosts.contains(canary))
        return emit finished(
            group, false,
            u"The canary %1 is not a reachable host of group %2 (its hosts: %3)."_s.arg(canary)
                .arg(group + 1)
                .arg(hosts.join(u", "_s)));
    if (canary.isEmpty())
        canary = hosts.contains(g.tuneHost) ? g.tuneHost : hosts.first();
    auto r = std::make_shared<Rollout>();
    r->group = group;
    r->options = options;
    r->canary = canary;
    r->queue = hosts;
    r->queue.removeAll(canary);
    r->queue.prepend(canary);
    m_runs.insert(group, r);
    g.canary = canary;
    g.state = u"rolling out"_s;
    g.reason.clear();
    for (const QString &name : std::as_const(r->queue))
        setHost(name, FleetHostStage::Waiting,
                name == canary ? u"the canary: first"_s : u"waiting for its batch"_s);
    emit groupChanged(group);
    save();
    emit status(group, u"group %1: canary %2, then %3 host(s) at most %4 at once"_s.arg(group + 1)
                           .arg(canary)
                           .arg(r->queue.size() - 1)
                           .arg(options.maxParallel));
    nextBatch(r);
}

void FleetRolloutFlow::nextBatch(const std::shared_ptr<Rollout> &r) {
    if (!r->stoppedAt.isEmpty() || r->queue.isEmpty())
        return endRollout(r);
    const int size = r->canaryDone ? r->options.maxParallel : 1; // the canary goes alone
    const QStringList batch = r->queue.mid(0, size);
    r->queue = r->queue.mid(batch.size());
    auto left = std::make_shared<int>(int(batch.size()));
    QPointer<FleetRolloutFlow> self(this);
    for (const QString &host : batch) {
        runHost(r, host, [self, r, left](bool ok) {
            if (ok)
                ++r->proved;
            if (--*left > 0 || !self)
                return;
            r->canaryDone = true;
            self->nextBatch(r); // every host of the batch ended (proved, or failed and undone)
        });
    }
}

void FleetRolloutFlow::runHost(const std::shared_ptr<Rollout> &r, const QString &host,
                               const std::function<void(bool)> &done) {
    auto h = std::make_shared<HostRun>();
    h->rollout = r;
    h->host = host;
    h->done = done;
    h->folder = QDir(fleetsteps::groupFolder(m_workspace, m_record->id, r->group)).filePath(host);
    QDir().mkpath(h->folder);
    const int index = hostIndex(host);
    QString error;
    HostSession *session = index >= 0 ? m_sessions(m_record->hosts.at(index).host, &error) : nullptr;
    if (!session)
        return hostFailed(h, FleetHostStage::Unreachable, error.isEmpty() ? u"no session"_s : error);
    h->session = session;
    if (FleetHostRecord *rec = m_record->host(host)) { // a new rollout of this host: a fresh outcome
        rec->proof.clear();
        rec->servingVerdict.clear();
        rec->endedAt = 0;
    }
    importRun(h);
}

// The group's result.json into a private folder of the agent's home, then `import-run` -> this host's run
// (the same bytes give the same run again). The tune host pushes its own run.
void FleetRolloutFlow::importRun(const std::shared_ptr<HostRun> &h) {
    const FleetGroupRecord &g = m_record->groups.at(h->rollout->group);
    if (h->host == g.tuneHost) {
        h->runId = g.runId;
        setHost(h->host, FleetHostStage::Importing, u"the group's run %1 was tuned here"_s.arg(g.runId));
        return readBefore(h);
    }
    HostFlows *flows = h->flows();
    if (!flows)
        return hostFailed(h, FleetHostStage::Failed, u"the session is gone"_s);
    setHost(h->host, FleetHostStage::Importing,
            u"copying the group's result.json (run %1 on %2)"_s.arg(g.runId, g.tuneHost));
    QFile f(g.resultFile);
    if (!f.open(QIODevice::ReadOnly))
        return hostFailed(h, FleetHostStage::Failed,
                          u"cannot read the group's result %1: %2"_s.arg(g.resultFile, f.errorString()));
    const QString sha =
        QString::fromLatin1(QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex());
    QPointer<FleetRolloutFlow> self(this);
    const QString tuneHost = g.tuneHost;
    const QString fromRun = g.runId;
    const QString local = g.resultFile;
    flows->calls()->shell(
        u"umask 077 && mkdir -p \"$HOME\"/.cache/moetune/incoming && chmod 700 "
        u"\"$HOME\"/.cache/moetune/incoming "
        u"&& printf '%s\\n' \"$HOME\"/.cache/moetune/incoming"_s,
        30000, [self, h, sha, tuneHost, fromRun, local](const HostCalls::Shell &s) {
            if (!self)
                return;
            if (!s.ok() || s.out.isEmpty())
                return self->hostFailed(h, FleetHostStage::Failed,
                                        u"cannot make the folder for the result: "_s + s.failure());
            const QString remote = s.out.constLast().trimmed() + u"/result-"_s + sha.left(16) + u".json"_s;
            HostFlows *hf = h->flows();
            Transport *t = hf ? hf->calls()->transport() : nullptr;
            if (!t)
                return self->hostFailed(h, FleetHostStage::Failed, u"the session is gone"_s);
            const JobId up = t->upload(local, remote);
            fleetsteps::transfer(t, up, self, [self, h, remote, tuneHost, fromRun](const JobResult &r) {
                if (!self)
                    return;
                if (!r.ok())
                    return self->hostFailed(h, FleetHostStage::Failed,
                                            u"uploading the result to %1 failed: %2"_s.arg(remote, r.error));
                HostFlows *hf2 = h->flows();
                if (!hf2)
                    return self->hostFailed(h, FleetHostStage::Failed, u"the session is gone"_s);
                const JobId id = hf2->calls()->agent()->run(
                    u"import-run"_s, {remote, u"--from-host"_s, tuneHost, u"--from-run"_s, fromRun});
                hf2->calls()->agentJob(id, [self, h](const HostCalls::Agent &a) {
                    if (!self)
                        return;
                    const auto imported = a.of(u"imported"_s);
                    if (!a.ok || imported.isEmpty())
                        return self->hostFailed(h, FleetHostStage::Failed,
                                                u"import-run failed: "_s +
                                                    (a.error.isEmpty() ? u"no run was made"_s : a.error));
                    h->runId = imported.first().value("run_id"_L1).toString();
                    if (FleetHostRecord *rec = self->m_record->host(h->host))
                        rec->runId = h->runId;
                    self->setHost(h->host, FleetHostStage::Importing,
                                  u"imported as run %1%2"_s.arg(
                                      h->runId, imported.first().value("reused"_L1).toBool()
                                                    ? u" (the same bytes were imported before)"_s
                                                    : QString()));
                    self->save();
                    self->readBefore(h);
                });
            });
        });
}

// The server's log before the push (the target's evidence and the proof's "before") and a fresh probe.
void FleetRolloutFlow::readBefore(const std::shared_ptr<HostRun> &h) {
    if (h->session.isNull())
        return hostFailed(h, FleetHostStage::Failed, u"the session is gone"_s);
    if (FleetHostRecord *rec = m_record->host(h->host))
        rec->runId = h->runId;
    setHost(h->host, FleetHostStage::Pushing, u"reading the server's log before the push"_s);
    QPointer<FleetRolloutFlow> self(this);
    fleetsteps::diagnose(h->session, QDir(h->folder).filePath(u"before.log"_s), this,
                         [self, h](const std::optional<Diagnosis> &d, const QString &e) {
                             if (!self)
                                 return;
                             if (!d)
                                 return self->hostFailed(h, FleetHostStage::Failed,
                                                         u"the server's log could not be read: "_s + e);
                             h->before = *d;
                             if (h->session && h->session->lastProbe()) {
                                 h->probe = *h->session->lastProbe();
                                 h->haveProbe = true;
                             }
                             self->previewAndPush(h);
                         });
}

void FleetRolloutFlow::previewAndPush(const std::shared_ptr<HostRun> &h) {
    HostFlows *flows = h->flows();
    if (!flows)
        return hostFailed(h, FleetHostStage::Failed, u"the session is gone"_s);
    const FleetGroupRecord &g = m_record->groups.at(h->rollout->group);
    const Framework fw = frameworkFromString(g.group.key.framework);
    setHost(h->host, FleetHostStage::Pushing, u"preview: the target from the server's own view"_s);
    QPointer<FleetRolloutFlow> self(this);
    flows->push()->preview(
        h->runId, fw, &h->before, h->haveProbe ? &h->probe : nullptr, false,
        [self, h](const PushFlow::Preview &pv) {
            if (!self)
                return;
            h->preview = pv;
            if (!pv.ok())
                return self->hostFailed(h, FleetHostStage::Failed, u"the preview failed: "_s + pv.error);
            if (!pv.canPush())
                return self->hostFailed(h, FleetHostStage::Failed, u"the push was refused: "_s + pv.refused);
            if (h->rollout->options.serving)
                return self->serve(h);
            HostFlows *hf = h->flows();
            if (!hf)
                return self->hostFailed(h, FleetHostStage::Failed, u"the session is gone"_s);
            self->setHost(h->host, FleetHostStage::Pushing, u"installing into %1"_s.arg(pv.target.folder));
            hf->push()->push(pv, [self, h](const PushRecord &rec, const QString &e) {
                if (!self)
                    return;
                if (FleetHostRecord *r = self->m_record->host(h->host))
                    keepPush(r, rec);
                self->save();
                if (!e.isEmpty())
                    return self->hostFailed(h, FleetHostStage::Failed, u"the push failed: "_s + e);
                self->restart(h);
            });
        });
}

void FleetRolloutFlow::restart(const std::shared_ptr<HostRun> &h) {
    HostFlows *flows = h->flows();
    if (!flows)
        return hostFailed(h, FleetHostStage::Failed, u"the session is gone"_s);
    const FleetHostRecord *rec = m_record->host(h->host);
    QStringList targets;
    for (const PushRecord::File &f : rec->push.files)
        targets.append(f.target);
    setHost(h->host, FleetHostStage::Restarting,
            u"restarting the server through its profile, then the proof"_s);
    QPointer<FleetRolloutFlow> self(this);
    flows->push()->restartAndProve(
        h->before, targets, QDir(h->folder).filePath(u"after.log"_s), [self, h](const PushFlow::Proof &p) {
            if (!self)
                return;
            if (FleetHostRecord *r = self->m_record->host(h->host))
                r->proof = p.ok ? p.proof.summary() : p.message;
            if (!p.ok)
                return self->hostFailed(h, FleetHostStage::ProofFailed,
                                        u"the restart failed: "_s + p.message);
            if (h->rollout->options.requireWarningGone && !p.proof.warningGone())
                return self->hostFailed(h, FleetHostStage::ProofFailed,
                                        u"the proof failed: "_s + p.proof.summary());
            self->setHost(h->host, FleetHostStage::Proved, p.proof.summary());
            self->save();
            h->done(true);
        });
}

// Options::serving: ServingFlow::compare runs the benchmark before, pushes, restarts (the log proof) and
// benchmarks after, with the server's own tool.
void FleetRolloutFlow::serve(const std::shared_ptr<HostRun> &h) {
    HostFlows *flows = h->flows();
    if (!flows)
        return hostFailed(h, FleetHostStage::Failed, u"the session is gone"_s);
    const auto workload = ServingWorkload::fromPreset(h->rollout->options.servingPreset);
    if (!workload)
        return hostFailed(h, FleetHostStage::Failed,
                          u"no serving preset \"%1\""_s.arg(h->rollout->options.servingPreset));
    ServingFlow::Plan plan;
    plan.workload = *workload;
    plan.bench = ServingBenchCommand::suggest(h->preview.framework, h->haveProbe ? &h->probe : nullptr,
                                              flows->server()->profile());
    if (const QString invalid = plan.validate(); !invalid.isEmpty())
        return hostFailed(h, FleetHostStage::Failed, u"the serving comparison cannot run: "_s + invalid);
    setHost(h->host, FleetHostStage::Restarting,
            u"serving comparison: benchmark, push, restart, proof, benchmark"_s);
    QPointer<FleetRolloutFlow> self(this);
    flows->serving()->compare(
        plan, h->preview, h->before, QDir(h->folder).filePath(u"after.log"_s),
        [self, h](const ServingFlow::Outcome &o) {
            if (!self)
                return;
            FleetHostRecord *r = self->m_record->host(h->host);
            if (r) {
                keepPush(r, o.record);
                r->proof = o.proof.ok ? o.proof.proof.summary() : o.proof.message;
                r->servingVerdict = o.comparison.verdictSentence();
            }
            self->save();
            if (!o.pushed && o.record.files.isEmpty())
                return self->hostFailed(
                    h, FleetHostStage::Failed,
                    u"the serving comparison pushed nothing: "_s +
                        (o.comparison.error.isEmpty() ? o.comparison.verdictSentence() : o.comparison.error));
            if (!o.proof.ok)
                return self->hostFailed(h, FleetHostStage::ProofFailed,
                                        u"the restart failed: "_s + o.proof.message);
            if (h->rollout->options.requireWarningGone && !o.proof.proof.warningGone())
                return self->hostFailed(h, FleetHostStage::ProofFailed,
                                        u"the proof failed: "_s + o.proof.proof.summary());
            if (o.comparison.verdict() == ServingComparison::Verdict::Slower ||
                o.comparison.verdict() == ServingComparison::Verdict::Failed)
                return self->hostFailed(h, FleetHostStage::ProofFailed,
                                        u"the serving comparison: "_s + o.comparison.verdictSentence());
            self->setHost(h->host, FleetHostStage::Proved,
                          o.proof.proof.summary() + u' ' + o.comparison.verdictSentence());
            self->save();
            h->done(true);
        });
}

// A host failed: the group's rollout stops after this batch; what this host got is undone.
void FleetRolloutFlow::hostFailed(const std::shared_ptr<HostRun> &h, FleetHostStage stage,
                                  const QString &why) {
    const std::shared_ptr<Rollout> &r = h->rollout;
    if (r->stoppedAt.isEmpty()) {
        r->stoppedAt = h->host;
        r->stopReason = why;
    }
    setHost(h->host, stage, why);
    save();
    const FleetHostRecord *rec = m_record->host(h->host);
    if (stage == FleetHostStage::Unreachable || !rec || !rec->push.changedSomething() || rec->undone ||
        h->runId.isEmpty()) {
        return h->done(false); // nothing was changed on the host: nothing to undo
    }
    const QString after =
        stage == FleetHostStage::ProofFailed && why.startsWith(u"the restart failed"_s)
            ? u" The server did not come back after the restart: start it through its "
              u"profile once the cause is fixed."_s
            : u" The server still runs what it loaded at the restart: restart it to load the "
              u"files put back."_s;
    undoHost(h, why, after);
}

void FleetRolloutFlow::undoHost(const std::shared_ptr<HostRun> &h, const QString &why, const QString &after) {
    HostFlows *flows = h->flows();
    if (!flows) {
        setHost(h->host, FleetHostStage::UndoFailed,
                why + u"; the undo could not run: the session is gone"_s);
        save();
        return h->done(false);
    }
    setHost(h->host, FleetHostStage::Undoing, why + u"; undoing this host"_s);
    QPointer<FleetRolloutFlow> self(this);
    flows->push()->undoRun(h->runId, [self, h, why, after](const PushFlow::Undo &u) {
        if (!self)
            return;
        FleetHostRecord *rec = self->m_record->host(h->host);
        if (u.ok) {
            if (rec)
                rec->undone = true;
            self->setHost(h->host, FleetHostStage::Undone, why + u"; undone: "_s + u.message + after);
        } else {
            self->setHost(h->host, FleetHostStage::UndoFailed, why + u"; the undo failed: "_s + u.error);
        }
        self->save();
        h->done(false);
    });
}

void FleetRolloutFlow::endRollout(const std::shared_ptr<Rollout> &r) {
    FleetGroupRecord &g = m_record->groups[r->group];
    for (const QString &name : std::as_const(r->queue))
        setHost(name, FleetHostStage::Skipped,
                u"not touched: the rollout of group %1 stopped at %2 (%3)"_s.arg(r->group + 1)
                    .arg(r->stoppedAt, r->stopReason));
    const bool ok = r->stoppedAt.isEmpty();
    QString message;
    if (ok) {
        g.state = u"rolled out"_s;
        g.reason.clear();
        message =
            u"Group %1 rolled out: %2 host(s) pushed, restarted and proved (canary %3)."_s.arg(r->group + 1)
                .arg(r->proved)
                .arg(r->canary);
    } else {
        g.state = u"stopped"_s;
        g.reason = u"stopped at %1: %2"_s.arg(r->stoppedAt, r->stopReason);
        message = u"Group %1 stopped at %2 (%3); %4 host(s) proved, %5 not touched."_s.arg(r->group + 1)
                      .arg(r->stoppedAt, r->stopReason)
                      .arg(r->proved)
                      .arg(r->queue.size());
    }
    m_runs.remove(r->group);
    emit groupChanged(r->group);
    save();
    emit finished(r->group, ok, message);
}

void FleetRolloutFlow::undoGroup(int group) {
    if (group < 0 || group >= m_record->groups.size())
        return emit finished(group, false,
                             u"There is no group %1 in fleet record %2."_s.arg(group + 1).arg(m_record->id));
    if (m_runs.contains(group))
        return emit finished(group, false, u"Group %1 is busy (a rollout or an undo runs)."_s.arg(group + 1));
    QStringList hosts;
    for (const QString &name : std::as_const(m_record->groups.at(group).group.hosts)) {
        const FleetHostRecord *h = m_record->host(name);
        if (h && !h->undone && !h->runId.isEmpty() && h->push.changedSomething())
            hosts.append(name);
    }
    if (hosts.isEmpty())
        return emit finished(
            group, true,
            u"Group %1: nothing to undo (no host has a push that is not undone)."_s.arg(group + 1));
    auto r = std::make_shared<Rollout>();
    r->group = group;
    r->undo = true;
    m_runs.insert(group, r);
    FleetGroupRecord &g = m_record->groups[group];
    g.state = u"undoing"_s;
    emit groupChanged(group);
    emit status(group, u"group %1: undoing %2 host(s) one at a time"_s.arg(group + 1).arg(hosts.size()));
    undoNext(group, hosts, 0);
}

void FleetRolloutFlow::undoNext(int group, QStringList hosts, int failures) {
    FleetGroupRecord &g = m_record->groups[group];
    if (hosts.isEmpty()) {
        m_runs.remove(group);
        g.state = failures ? u"failed"_s : u"undone"_s;
        g.reason = failures ? u"%1 host(s) could not be undone"_s.arg(failures) : QString();
        emit groupChanged(group);
        save();
        return emit finished(
            group, failures == 0,
            failures ? u"Group %1: %2 host(s) could not be undone; see their reasons."_s.arg(group + 1).arg(
                           failures)
                     : u"Group %1 undone: every pushed host was put back and read back."_s.arg(group + 1));
    }
    const QString name = hosts.takeFirst();
    const int index = hostIndex(name);
    QString error;
    HostSession *session = index >= 0 ? m_sessions(m_record->hosts.at(index).host, &error) : nullptr;
    HostFlows *flows = session ? fleetsteps::flowsOf(session) : nullptr;
    if (!flows) {
        setHost(name, FleetHostStage::UndoFailed, u"the undo could not reach the host: "_s + error);
        save();
        return undoNext(group, hosts, failures + 1);
    }
    const QString runId = m_record->hosts.at(index).runId;
    setHost(name, FleetHostStage::Undoing, u"undoing run %1 (from the record)"_s.arg(runId));
    QPointer<FleetRolloutFlow> self(this);
    flows->push()->undoRun(runId, [self, group, hosts, failures, name](const PushFlow::Undo &u) {
        if (!self)
            return;
        FleetHostRecord *rec = self->m_record->host(name);
        if (u.ok) {
            if (rec)
                rec->undone = true;
            self->setHost(name, FleetHostStage::Undone,
                          u.message + (u.changedSomething
                                           ? u" Restart the server to load the files put back."_s
                                           : QString()));
        } else {
            self->setHost(name, FleetHostStage::UndoFailed, u"the undo failed: "_s + u.error);
        }
        self->save();
        self->undoNext(group, hosts, failures + (u.ok ? 0 : 1));
    });
}

} // namespace moetune
