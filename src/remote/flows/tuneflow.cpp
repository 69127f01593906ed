// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/tuneflow.h"

#include "core/host/hosttext.h"
#include "remote/agent/agentclient.h"
#include "remote/transport/transport.h"

#include <QJsonDocument>
#include <QTimer>

#include <memory>

using namespace Qt::StringLiterals;

namespace moetune {

TuneFlow::TuneFlow(HostCalls *calls, QObject *parent)
    : QObject(parent)
    , m_calls(calls) {}

qint64 TuneFlow::neededMiB(const TuneSpec &spec) {
    return spec.backend == "synthetic"_L1 ? 0 : 4096;
}

void TuneFlow::preflight(
    const TuneSpec &spec,
    const std::function<void(const Preflight &, const HostProbe &, const QString &)> &done) {
    const JobId id = m_calls->agent()->probe();
    m_calls->agentJob(id, [spec, done, choice = m_choice](const HostCalls::Agent &a) {
        const auto probes = a.of(u"probe"_s);
        if (!a.ok || probes.isEmpty())
            return done({}, {}, a.error.isEmpty() ? u"The probe printed no result."_s : a.error);
        QString error;
        const auto parsed = HostProbe::fromJson(probes.first(), &error);
        if (!parsed)
            return done({}, {}, error);
        const HostProbe probe = parsed->focused(choice); // every flow after this acts on that server
        done(Preflight::evaluate(probe, spec.gpus, neededMiB(spec)), probe, QString());
    });
}

void TuneFlow::start(const TuneSpec &spec,
                     const std::function<void(const QString &, const QJsonObject &, const QString &)> &done) {
    const QString invalid = spec.validate();
    if (!invalid.isEmpty())
        return done({}, {}, invalid);
    const JobId id = m_calls->agent()->startTune(spec);
    m_calls->agentJob(id, [done](const HostCalls::Agent &a) {
        const auto started = a.of(u"run_started"_s);
        if (!a.ok || started.isEmpty())
            return done({}, {}, a.error.isEmpty() ? u"The agent started no run."_s : a.error);
        done(started.first().value("run_id"_L1).toString(), started.first(), QString());
    });
}

void TuneFlow::follow(const QString &runId, RunProgress *progress,
                      const std::function<void(bool, const QString &)> &done, bool untilDone) {
    m_stopped = false;
    m_following = true;
    QPointer<TuneFlow> self(this);
    attachOnce(
        runId, progress,
        [self, done](bool ok, const QString &error) {
            if (self)
                self->m_following = false; // before done, which may follow again
            done(ok, error);
        },
        untilDone);
}

void TuneFlow::attachOnce(const QString &runId, RunProgress *progress,
                          const std::function<void(bool, const QString &)> &done, bool untilDone) {
    QStringList args{runId};
    if (progress->lastSeq >= 0)
        args << u"--from"_s << QString::number(progress->lastSeq + 1);
    if (!untilDone)
        args << u"--no-follow"_s;
    if (progress->runId.isEmpty())
        progress->runId = runId; // an event of another run is refused, not counted
    const JobId id = m_calls->agent()->run(u"attach"_s, args);
    m_followJob = id;
    QPointer<TuneFlow> self(this);
    auto refused = std::make_shared<QString>(); // the first event the stream should not have sent
    m_calls->agentJob(
        id,
        [self, runId, progress, done, untilDone, refused](const HostCalls::Agent &a) {
            if (!self)
                return;
            self->m_followJob = 0;
            if (!refused->isEmpty())
                return done(false, *refused);
            if (progress->finished())
                return done(true, QString());
            if (!untilDone && a.status == "interrupted"_L1)
                return done(true, QString());
            if (self->m_stopped)
                return done(false, u"Stopped following the run (it goes on on the host)."_s);
            Transport *t = self->m_calls->transport();
            if (a.ok)
                return done(true, QString());
            // The agent said why (run_dead, run_not_found, ...): not a connection problem.
            if (!a.of(u"error"_s).isEmpty() || !t || self->m_reattaches >= 50)
                return done(false, a.error);
            if (t->state() == Transport::State::Connected) {
                ++self->m_reattaches;
                emit self->reattaching(
                    u"Following run %1 stopped (%2); reattaching from event %3."_s.arg(runId, a.error)
                        .arg(progress->lastSeq + 1));
                return self->attachOnce(runId, progress, done, untilDone);
            }
            emit self->reattaching(u"The connection dropped while following run %1 (%2); reattaching from "
                                   u"event %3 once it is back."_s.arg(runId, a.error)
                                       .arg(progress->lastSeq + 1));
            // Wait for the reconnect, then attach again from the last applied event.
            auto waited = std::make_shared<QMetaObject::Connection>();
            auto timer = std::make_shared<QTimer>();
            timer->setSingleShot(true);
            *waited = connect(t, &Transport::stateChanged, self,
                              [self, runId, progress, done, untilDone, waited, timer](Transport::State s) {
                                  if (s == Transport::State::Connected) {
                                      disconnect(*waited);
                                      timer->stop();
                                      ++self->m_reattaches;
                                      self->attachOnce(runId, progress, done, untilDone);
                                  } else if (s == Transport::State::Failed) {
                                      disconnect(*waited);
                                      timer->stop();
                                      done(false, u"The connection could not be restored: the run goes on on "
                                                  u"the host; attach to it again later."_s);
                                  }
                              });
            connect(timer.get(), &QTimer::timeout, self, [waited, done] {
                disconnect(*waited);
                done(false, u"The connection did not come back in time: the run goes on on the host; attach "
                            u"to it again later."_s);
            });
            timer->start(self->m_reconnectWaitMs);
        },
        [self, progress, refused, id](const AgentEvent &e) {
            if (!self || e.isError() || e.type == "hello"_L1 || !refused->isEmpty())
                return;
            // the command's own final done (after the run's done) carries no seq and is not a run event
            if (!e.object.contains("seq"_L1))
                return;
            QString problem;
            if (progress->apply(e.object, &problem)) {
                emit self->runEvent(e.object);
            } else if (!problem.isEmpty()) {
                *refused = u"Protocol error: agent output line %1 is %2: %3"_s.arg(e.lineNumber)
                               .arg(problem, hostText(QString::fromUtf8(QJsonDocument(e.object).toJson(
                                                          QJsonDocument::Compact)),
                                                      300));
                self->m_calls->agent()->cancel(id); // nothing more of this stream is believed
            }
        });
}

void TuneFlow::stopFollowing() {
    m_stopped = true;
    if (m_followJob && m_calls)
        m_calls->agent()->cancel(m_followJob);
}

void TuneFlow::cancel(const QString &runId, const std::function<void(bool, const QString &)> &done) {
    const JobId id = m_calls->agent()->cancelRun(runId);
    m_calls->agentJob(id, [done](const HostCalls::Agent &a) {
        const auto c = a.of(u"cancelled"_s);
        if (!a.ok || c.isEmpty())
            return done(false, a.error);
        const QString state = c.first().value("state"_L1).toString();
        done(true, c.first().value("signalled"_L1).toBool()
                       ? u"Run cancelled on the host (state %1)."_s.arg(state)
                       : u"The run was not running (state %1); nothing was signalled."_s.arg(state));
    });
}

void TuneFlow::listRuns(const std::function<void(const QList<QJsonObject> &, const QString &)> &done) {
    const JobId id = m_calls->agent()->listRuns();
    m_calls->agentJob(id, [done](const HostCalls::Agent &a) {
        if (!a.ok)
            return done({}, a.error);
        done(a.of(u"run"_s), QString());
    });
}

} // namespace moetune
