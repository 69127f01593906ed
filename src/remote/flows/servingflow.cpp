// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/servingflow.h"

#include <QElapsedTimer>
#include <QUuid>

using namespace Qt::StringLiterals;

namespace moetune {

struct ServingFlow::Run {
    Plan plan;
    ServingComparison cmp;
    std::optional<PushFlow::Preview> preview;
    Diagnosis before;
    QString afterLog;
    QString order;
    int legIndex = 0;
    QChar files = u'A'; // what the server's folder holds now
    bool restartLegs = false;
    bool everPushed = false;
    Outcome out;
    ServingComparison::Leg leg;
    std::function<void(const Outcome &)> done;
    QElapsedTimer clock; // since the comparison started (its time limit)
    bool toldSensitivity = false;
    qint64 msLeft() const { return qint64(plan.timeLimitS) * 1000 - clock.elapsed(); }
};

QString ServingFlow::Plan::validate() const {
    if (QString w = workload.validate(); !w.isEmpty())
        return w;
    if (QString b = bench.validate(); !b.isEmpty())
        return b;
    if (rigorous && (pairs < 1 || pairs > 50))
        return u"The rigorous mode runs 1 to 50 order-balanced pairs (got %1); 4 is usual."_s.arg(pairs);
    if (adaptive && rigorous && pairs < 2)
        return u"The adaptive mode needs a cap of at least 2 pairs (got %1)."_s.arg(pairs);
    if (!(marginPct >= 0.5 && marginPct <= 50))
        return u"The margin must be between 0.5% and 50% (got %1%)."_s.arg(marginPct);
    if (timeLimitS < 60)
        return u"The comparison's time limit must be at least 60 seconds (got %1)."_s.arg(timeLimitS);
    return {};
}

ServingFlow::ServingFlow(HostCalls *calls, PushFlow *push, ServerControl *server, QObject *parent)
    : QObject(parent)
    , m_calls(calls)
    , m_push(push)
    , m_server(server) {}

void ServingFlow::cancel() {
    m_cancel = true;
}

void ServingFlow::benchmark(const Plan &plan, const std::function<void(const ServingComparison &)> &done) {
    auto run = std::make_shared<Run>();
    run->plan = plan;
    run->cmp.workload = plan.workload;
    run->cmp.bench = plan.bench;
    run->order = u"A"_s;
    run->done = [done](const Outcome &o) { done(o.comparison); };
    run->clock.start();
    m_cancel = false;
    m_running = true;
    if (const QString invalid = plan.validate(); !invalid.isEmpty()) {
        run->cmp.error = invalid;
        return finish(run);
    }
    nextLeg(run);
}

void ServingFlow::compare(const Plan &plan, const PushFlow::Preview &preview, const Diagnosis &before,
                          const QString &afterLogFile, const std::function<void(const Outcome &)> &done) {
    auto run = std::make_shared<Run>();
    run->plan = plan;
    run->cmp.workload = plan.workload;
    run->cmp.bench = plan.bench;
    run->cmp.rigorous = plan.rigorous;
    run->cmp.pairs = plan.rigorous ? plan.pairs : 1;
    run->cmp.adaptive = plan.rigorous && plan.adaptive;
    run->cmp.marginPct = plan.marginPct;
    run->clock.start();
    run->cmp.runId = preview.runId;
    run->cmp.configsSimulated = preview.simulated;
    run->preview = preview;
    run->before = before;
    run->afterLog = afterLogFile;
    run->order = ServingComparison::legOrder(plan.pairs, plan.rigorous);
    run->restartLegs = plan.rigorous;
    run->done = done;
    m_cancel = false;
    m_running = true;
    if (const QString invalid = plan.validate(); !invalid.isEmpty()) {
        run->cmp.error = invalid;
        return finish(run);
    }
    if (!preview.ok()) {
        run->cmp.error = preview.error;
        return finish(run);
    }
    if (!m_server || !m_push) {
        run->cmp.error = u"No server profile: moetune cannot restart the server between the legs."_s;
        return finish(run);
    }
    if (const QString p = m_server->profile().validate(); !p.isEmpty()) {
        run->cmp.error = p + u" The benchmark after the push needs a restart."_s;
        return finish(run);
    }
    nextLeg(run);
}

void ServingFlow::nextLeg(const std::shared_ptr<Run> &run) {
    const auto hours = [](int s) { return QString::number(s / 3600.0, 'g', 3); };
    const bool pairBoundary = run->legIndex % 2 == 0;
    const int pairsDone = run->cmp.completePairs();
    if (pairBoundary && pairsDone >= 2 && run->cmp.rigorous && !run->toldSensitivity) {
        // From two pairs on the boot-to-boot noise is known: what the planned pairs can tell.
        run->toldSensitivity = true;
        if (const QString see = run->cmp.sensitivitySentence(); !see.isEmpty())
            emit status(see);
    }
    if (run->cmp.adaptive && pairBoundary && pairsDone >= 2) {
        // The stopping rule looks at the interval's width only (precision), never at the change.
        if (const QString stop = run->cmp.adaptiveStop(); !stop.isEmpty()) {
            run->cmp.stopReason = stop;
            return finish(run);
        }
        if (run->msLeft() <= 0) {
            run->cmp.stopReason =
                u"Adaptive: stopped after %1 pairs at the time limit of %2 h."_s.arg(pairsDone).arg(
                    hours(run->plan.timeLimitS));
            return finish(run);
        }
    }
    if (run->legIndex >= run->order.size())
        return finish(run);
    if (m_cancel) {
        run->cmp.error = u"Cancelled after %1 of %2 legs."_s.arg(run->legIndex).arg(run->order.size());
        return finish(run);
    }
    if (run->msLeft() <= 0) {
        run->cmp.error =
            u"The comparison's time limit of %1 h ran out after %2 of %3 legs: not measured. "
            u"Fewer pairs, prompts or concurrencies fit in it."_s.arg(hours(run->plan.timeLimitS))
                .arg(run->legIndex)
                .arg(run->order.size());
        return finish(run);
    }
    const QChar arm = run->order.at(run->legIndex);
    emit legStarted(run->legIndex, int(run->order.size()), arm);
    emit status(u"Leg %1 of %2 (%3: %4)"_s.arg(run->legIndex + 1)
                    .arg(run->order.size())
                    .arg(arm)
                    .arg(arm == u'A' ? u"the files the server had"_s : u"the pushed files"_s));
    QPointer<ServingFlow> self(this);
    runLeg(run, arm, [self, run](bool ok) {
        if (!self)
            return;
        run->cmp.legs.append(run->leg);
        emit self->legFinished(run->legIndex, run->cmp);
        ++run->legIndex;
        if (!ok)
            return self->finish(run);
        self->nextLeg(run);
    });
}

void ServingFlow::runLeg(const std::shared_ptr<Run> &run, QChar arm, const std::function<void(bool)> &next) {
    run->leg = ServingComparison::Leg{};
    run->leg.arm = arm;
    QPointer<ServingFlow> self(this);
    const auto bench = [self, run, next] {
        if (!self)
            return;
        self->benchOne(run, 0, [run, next] { next(run->leg.ok()); });
    };
    const bool needsFiles = arm != run->files;
    // Plain mode: the first leg is the server as it is; a leg whose files change always restarts.
    const bool needsRestart = needsFiles || run->restartLegs;
    if (!needsRestart)
        return bench();
    const auto afterFiles = [self, run, next, bench](const QString &error) {
        if (!self)
            return;
        if (!error.isEmpty()) {
            run->leg.error = error;
            run->cmp.error = error;
            return next(false);
        }
        self->restart(run, [run, next, bench](const QString &e) {
            if (!e.isEmpty()) {
                run->leg.error = e;
                run->cmp.error = e;
                return next(false);
            }
            bench();
        });
    };
    if (needsFiles)
        setFiles(run, arm, afterFiles);
    else
        afterFiles(QString());
}

void ServingFlow::setFiles(const std::shared_ptr<Run> &run, QChar arm,
                           const std::function<void(const QString &)> &done) {
    QPointer<ServingFlow> self(this);
    if (arm == u'B') {
        emit status(u"Pushing the run's files for a B leg"_s);
        m_push->push(*run->preview, [self, run, done](const PushRecord &rec, const QString &error) {
            if (!self)
                return;
            run->out.record = rec;
            if (!error.isEmpty())
                return done(u"The push failed: %1"_s.arg(error));
            run->files = u'B';
            run->everPushed = true;
            done(QString());
        });
        return;
    }
    emit status(u"Putting the old files back for an A leg (undo of the push)"_s);
    m_push->undo(run->preview->runId, [self, run, done](const PushRecord &rec, const QString &error) {
        if (!self)
            return;
        run->out.record = rec;
        if (!error.isEmpty())
            return done(u"Putting the old files back failed: %1"_s.arg(error));
        run->files = u'A';
        done(QString());
    });
}

void ServingFlow::restart(const std::shared_ptr<Run> &run, const std::function<void(const QString &)> &done) {
    QPointer<ServingFlow> self(this);
    if (run->files == u'B' && !run->out.proof.ok && run->preview) {
        // The first boot on the pushed files is also the log proof (warning gone, ranks using them).
        QStringList targets;
        for (const PushRecord::File &f : run->out.record.files)
            targets.append(f.target);
        m_push->restartAndProve(run->before, targets, run->afterLog,
                                [self, run, done](const PushFlow::Proof &p) {
                                    if (!self)
                                        return;
                                    run->out.proof = p;
                                    if (!p.ok)
                                        return done(p.message);
                                    done(QString());
                                });
        return;
    }
    emit status(u"Restarting the server through its profile"_s);
    m_server->stop([self, done](const ServerControl::StopResult &stop) {
        if (!self)
            return;
        if (!stop.ok)
            return done(stop.message);
        self->m_server->start(
            [done](const ServerControl::StartResult &start) { done(start.ok ? QString() : start.message); });
    });
}

void ServingFlow::benchOne(const std::shared_ptr<Run> &run, int ci, const std::function<void()> &next) {
    const QList<int> &cs = run->plan.workload.concurrencies;
    if (ci >= cs.size())
        return next();
    const int c = cs.at(ci);
    const QString nonce = QUuid::createUuid().toString(QUuid::Id128);
    const QString script = run->plan.bench.script(run->plan.workload, c, nonce);
    const QString manual = run->plan.bench.manualCommand(run->plan.workload, c);
    run->leg.commands.append(manual);
    emit status(u"Serving benchmark at concurrency %1: %2"_s.arg(c).arg(manual));
    QPointer<ServingFlow> self(this);
    // At most 4 h per run, and never past the whole comparison's time limit.
    const qint64 left = run->msLeft();
    if (left <= 0) {
        run->leg.error = u"The comparison's time limit of %1 s ran out before the run at concurrency %2."_s
                             .arg(run->plan.timeLimitS)
                             .arg(c);
        run->cmp.error = run->leg.error;
        return next();
    }
    const int timeoutMs = int(qMin<qint64>(qint64(4) * 3600 * 1000, left));
    m_calls->shell(script, timeoutMs, [self, run, ci, c, nonce, manual, next](const HostCalls::Shell &s) {
        if (!self)
            return;
        const QString marker = ServingBenchCommand::resultMarker(nonce);
        const qsizetype at = s.out.indexOf(marker);
        const QStringList printed = at < 0 ? s.out : s.out.mid(0, at);
        const QStringList file = at < 0 ? QStringList() : s.out.mid(at + 1);
        const QString tryIt = u" Try it by hand on the host: %1"_s.arg(manual);
        if (!s.error.isEmpty()) {
            run->leg.error = u"The serving benchmark could not run: %1."_s.arg(s.error) + tryIt;
            run->cmp.error = run->leg.error;
            return next();
        }
        if (s.exitStatus != 0) {
            const QString all = (printed + s.err).join(u'\n');
            QString why =
                ServingBenchCommand::missingToolSentence(s.exitStatus, all, run->plan.bench.framework);
            if (why.isEmpty()) {
                const QStringList tail = s.err.mid(qMax(0, int(s.err.size()) - 3));
                why = u"The serving benchmark failed (exit status %1%2)."_s.arg(s.exitStatus)
                          .arg(tail.isEmpty() ? QString() : u": "_s + tail.join(u' ').trimmed());
            }
            run->leg.error = why + tryIt;
            run->cmp.error = run->leg.error;
            return next();
        }
        QString perr;
        std::optional<ServingResult> r;
        if (!file.join(QString()).trimmed().isEmpty())
            r = ServingResult::fromJsonLines(file.join(u'\n').toUtf8(), &perr);
        if (!r) {
            QString blockErr;
            r = ServingResult::fromPrintedBlock(printed.join(u'\n'), &blockErr);
            if (!r && perr.isEmpty())
                perr = blockErr;
        }
        if (!r) {
            run->leg.error =
                u"The serving benchmark ran but its result could not be read (%1)."_s.arg(perr) + tryIt;
            run->cmp.error = run->leg.error;
            return next();
        }
        r->concurrency = c;
        // A practice double's figures: the comparison says SIMULATED wherever it shows them.
        run->cmp.servingSimulated = run->cmp.servingSimulated || r->simulated;
        // A run is a result only if the benchmark succeeded: every request asked for completed, none
        // failed, every figure positive. Anything else names itself and nothing is compared.
        if (const QString problem = r->problem(run->plan.workload.numPrompts); !problem.isEmpty()) {
            run->leg.results.append(*r);
            run->leg.error = problem + tryIt;
            run->cmp.error = run->leg.error;
            return next();
        }
        run->leg.results.append(*r);
        self->benchOne(run, ci + 1, next);
    });
}

void ServingFlow::finish(const std::shared_ptr<Run> &run) {
    QPointer<ServingFlow> self(this);
    const auto deliver = [self, run] {
        if (!self)
            return;
        self->m_running = false; // before done, which may start the next one
        run->out.comparison = run->cmp;
        run->out.pushed = run->files == u'B';
        if (run->everPushed && !run->out.pushed)
            run->out.comparison.note = u"The server runs the old files (the push was undone for the last A "
                                       u"leg); push again to use the "
                                       u"new ones."_s;
        run->done(run->out);
    };
    // Rigorous runs that end on an A leg push again so that the server ends on the files that were
    // pushed (the user asked for the push; Undo is offered when it is slower).
    if (run->cmp.error.isEmpty() && run->everPushed && run->files == u'A' && run->preview) {
        emit status(u"Pushing the run's files again (the last leg ran on the old ones)"_s);
        setFiles(run, u'B', [self, run, deliver](const QString &error) {
            if (!self)
                return;
            if (!error.isEmpty()) {
                run->cmp.error = error;
                return deliver();
            }
            self->restart(run, [run, deliver](const QString &e) {
                if (!e.isEmpty())
                    run->cmp.error = u"The files are pushed again but the restart failed: "_s + e;
                deliver();
            });
        });
        return;
    }
    deliver();
}

} // namespace moetune
