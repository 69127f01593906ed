// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/pushflow.h"

#include "core/diagnosis/diagnoser.h"
#include "core/util/shellquote.h"
#include "remote/agent/agentclient.h"

#include <QDateTime>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace moetune {

QString PushFlow::refusalSentence(const QString &code, const QString &target) {
    if (code == "simulated"_L1)
        return u"This run's numbers are SIMULATED (synthetic backend, no GPU measured them), so they are "
               u"never "
               u"installed on a real server; only the practice server (the sandbox host 'practice' of "
               u"the Hosts page) takes them. Tune on a GPU (backend auto, triton or server) to push to this host."_s;
    if (code == "symlink_target"_L1)
        return u"%1 is a symbolic link: moetune does not write through a link it did not make. Remove the "
               u"link or point the server at a real folder."_s.arg(target);
    if (code == "not_found"_L1)
        return u"The folder of %1 does not exist and the server would not read a new one there."_s.arg(
            target);
    return u"%1 cannot be replaced (%2)."_s.arg(target, code);
}

QJsonObject PushFlow::Preview::toJson() const {
    QJsonArray ds;
    for (const QJsonObject &d : diffs)
        ds.append(d);
    QJsonArray ms;
    for (const PushRowMerge &m : merges)
        ms.append(m.toJson());
    return QJsonObject{{"run_id"_L1, runId},
                       {"run_dir"_L1, runDir},
                       {"framework"_L1, frameworkId(framework)},
                       {"simulated"_L1, simulated},
                       {"folder"_L1, target.folder},
                       {"source"_L1, target.source},
                       {"warnings"_L1, QJsonArray::fromStringList(target.warnings)},
                       {"persistent_folder"_L1, target.persistentFolder},
                       {"persistent_env"_L1, target.persistentEnv},
                       {"persistent_note"_L1, target.persistentNote},
                       {"files"_L1, ds},
                       {"merges"_L1, ms},
                       {"refused"_L1, refused.isEmpty() ? QJsonValue() : QJsonValue(refused)},
                       {"error"_L1, error.isEmpty() ? QJsonValue() : QJsonValue(error)}};
}

PushFlow::PushFlow(HostCalls *calls, ServerControl *server, QString hostLabel, QObject *parent)
    : QObject(parent)
    , m_calls(calls)
    , m_server(server)
    , m_hostLabel(std::move(hostLabel)) {}

void PushFlow::runDir(const QString &runId,
                      const std::function<void(const QString &, const QString &)> &done) {
    const JobId id = m_calls->agent()->listRuns();
    m_calls->agentJob(id, [runId, done](const HostCalls::Agent &a) {
        if (!a.ok)
            return done({}, a.error);
        for (const QJsonObject &r : a.of(u"run"_s)) {
            if (r.value("run_id"_L1).toString() == runId)
                return done(r.value("run_dir"_L1).toString(), QString());
        }
        done({}, u"There is no run %1 on this host (moetune-cli runs HOST lists them)."_s.arg(runId));
    });
}

void PushFlow::preview(const QString &runId, Framework framework, const Diagnosis *before,
                       const HostProbe *probe, bool persistent,
                       const std::function<void(const Preview &)> &done) {
    const std::optional<Diagnosis> beforeCopy = before ? std::optional<Diagnosis>(*before) : std::nullopt;
    const std::optional<HostProbe> probeCopy = probe ? std::optional<HostProbe>(*probe) : std::nullopt;
    QPointer<PushFlow> self(this);
    const JobId id = m_calls->agent()->result(runId);
    m_calls->agentJob(id, [self, runId, framework, beforeCopy, probeCopy, persistent,
                           done](const HostCalls::Agent &a) {
        if (!self)
            return;
        Preview p;
        p.runId = runId;
        p.framework = framework;
        const auto results = a.of(u"result"_s);
        if (!a.ok || results.isEmpty()) {
            p.error = u"Cannot read the result of run %1: %2"_s.arg(runId, a.error.isEmpty() ? u"no result"_s
                                                                                             : a.error);
            return done(p);
        }
        const QJsonObject res = results.first().value("result"_L1).toObject();
        p.runDir = QFileInfo(results.first().value("path"_L1).toString()).path();
        p.simulated = res.value("simulated"_L1).toBool();
        std::optional<ConfigName> shape;
        for (const QJsonValue f : res.value("files"_L1).toArray()) {
            const QJsonObject fo = f.toObject();
            if (frameworkFromString(fo.value("framework"_L1).toString()) == framework) {
                shape = ConfigName::parse(fo.value("file_name"_L1).toString());
                if (shape && !shape->down)
                    break;
            }
        }
        if (!shape) {
            p.error =
                u"Run %1 has no %2 config file (has it finished?)."_s.arg(runId, frameworkName(framework));
            return done(p);
        }
        shape->down = false;
        p.shape = *shape;
        ServerProfile profile = self->m_server ? self->m_server->profile() : ServerProfile{};
        p.target = PushTarget::choose(framework, *shape, beforeCopy ? &*beforeCopy : nullptr,
                                      probeCopy ? &*probeCopy : nullptr, profile);
        if (persistent)
            p.target = p.target.persistent();
        if (!p.target.error.isEmpty()) {
            p.error = p.target.error;
            return done(p);
        }
        const JobId dry =
            self->m_calls->agent()->installConfig(runId, framework, true, true, p.target.folder);
        const int runK = res.value("shape"_L1).toObject().value("K"_L1).toInt();
        // The server's log shows it loads a fallback file for this shape: the run's baseline is that file
        // (named), not "the server's default".
        QString fallback;
        if (beforeCopy) {
            for (const TuningTarget &t : beforeCopy->targets) {
                if (t.name.sameShape(*shape) && t.upFellBack && !t.fallbackFolder.isEmpty())
                    fallback = t.configRoot + u'/' + t.fallbackFolder + u'/' + t.name.fileName(framework);
            }
        }
        self->m_calls->agentJob(dry, [self, p, done, probeCopy, runK,
                                      fallback](const HostCalls::Agent &d) mutable {
            p.diffs = d.of(u"diff"_s);
            if (!d.ok || p.diffs.isEmpty())
                p.error = u"The push could not be previewed (nothing was changed on the host): %1"_s.arg(
                    d.error.isEmpty() ? u"the agent listed no file to install"_s : d.error);
            for (const QJsonObject &diff : std::as_const(p.diffs)) {
                const QString why = diff.value("refused"_L1).toString();
                if (p.refused.isEmpty() && !why.isEmpty() && why != "exists"_L1)
                    p.refused = refusalSentence(why, diff.value("target"_L1).toString());
                if (auto m = PushRowMerge::fromEvent(diff)) {
                    if (probeCopy) // a served model of this E and N but another K reads the file too
                        m->addServedK(*probeCopy, p.framework, runK);
                    m->simulated = p.simulated;
                    // The log names what the server loads: a baseline that is not that file says so.
                    if (!fallback.isEmpty() && m->mode != "merged"_L1 && !m->baseline.contains(fallback))
                        m->baseline =
                            (m->baseline.isEmpty() ? u"the run's default"_s : m->baseline) +
                            u"; the server's log shows it loads the fallback file %1 instead, which "
                            u"the run did not time, so these gains are not against what it runs now"_s.arg(
                                fallback);
                    p.merges.append(*m);
                }
            }
            if (!self || p.runDir.isEmpty())
                return done(p);
            // What Undo would put back (Undo stays off until there is something).
            self->readHistoryIn(p.runDir, [p, done](const PushHistory &h, const QString &) mutable {
                for (const int i : h.notUndone())
                    p.undoablePushes += h.pushes[i].changedSomething() ? 1 : 0;
                for (PushRowMerge &m : p.merges) // the file there is what this run pushed (issue 45)
                    m.markInstalledByRun(h);
                done(p);
            });
        });
    });
}

void PushFlow::push(const Preview &preview,
                    const std::function<void(const PushRecord &, const QString &)> &done) {
    if (!preview.ok())
        return done({}, preview.error);
    for (const QJsonObject &d : preview.diffs) {
        const QString refused = d.value("refused"_L1).toString();
        if (!refused.isEmpty() && refused != "exists"_L1)
            return done({}, refusalSentence(refused, d.value("target"_L1).toString()) +
                                u" Nothing was pushed."_s);
    }
    // The preview's plan (each file there, or its absence, and the bytes to write): the agent installs
    // exactly that or nothing.
    QStringList plan;
    for (const QJsonObject &d : preview.diffs) {
        const QString name = d.value("file_name"_L1).toString();
        if (!d.contains("new_sha256"_L1)) { // an agent older than the plan: no check possible
            plan.clear();
            break;
        }
        const QJsonValue old = d.value("old_sha256"_L1);
        plan << u"--expect-old"_s << name + u'=' + (old.isString() ? old.toString() : u"absent"_s)
             << u"--expect-new"_s << name + u'=' + d.value("new_sha256"_L1).toString();
    }
    QPointer<PushFlow> self(this);
    emit status(u"Installing %1 file(s) into %2"_s.arg(preview.diffs.size()).arg(preview.target.folder));
    const JobId id = m_calls->agent()->installConfig(preview.runId, preview.framework, true, false,
                                                     preview.target.folder, plan);
    m_calls->agentJob(id, [self, preview, done](const HostCalls::Agent &a) {
        if (!self)
            return;
        PushRecord rec;
        rec.runId = preview.runId;
        rec.host = self->m_hostLabel;
        rec.framework = preview.framework;
        rec.simulated = preview.simulated;
        rec.pushedAt = double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
        for (const QJsonObject &e : a.of(u"installed"_s))
            rec.addInstalled(e);
        if (!a.ok) {
            QStringList why;
            for (const QJsonObject &e : a.of(u"error"_s))
                why.append(e.value("message"_L1).toString());
            const QString reason = why.isEmpty() ? a.error : why.join(u"; "_s);
            if (!rec.changedSomething()) {
                // Nothing written: say so, and keep no record (there is nothing to undo).
                return done(rec, u"Nothing was pushed: %1."_s.arg(reason));
            }
            // A file was written before another failed: keep its record so undo-push puts it back.
            const QString msg = u"The push failed part way: %1. %2 file(s) had been written before the "
                                u"failure; undo puts back "
                                u"what was there."_s.arg(reason)
                                    .arg(rec.files.size());
            if (!preview.runDir.isEmpty())
                self->appendRecord(preview.runDir, rec,
                                   [done, rec, msg](const QString &) { done(rec, msg); });
            else
                done(rec, msg);
            return;
        }
        self->appendRecord(preview.runDir, rec, [done, rec](const QString &error) {
            done(rec, error.isEmpty()
                          ? QString()
                          : u"The files were installed but the push record could not be written (%1): "
                            u"undo-push will not find it."_s.arg(error));
        });
    });
}

void PushFlow::writeHistory(const QString &runDir, const PushHistory &history,
                            const std::function<void(const QString &)> &done) {
    const QString json = QString::fromUtf8(QJsonDocument(history.toJson()).toJson(QJsonDocument::Indented));
    const QString target = runDir + u'/' + PushRecord::fileNameOnHost();
    const QString part = target + u".part"_s;
    const QString cmd = u"printf '%s' "_s + shellQuote(json) + u" > "_s + shellQuote(part) +
                        u" && mv -f -- "_s + shellQuote(part) + u' ' + shellQuote(target);
    m_calls->shell(
        cmd, 60000, [done](const HostCalls::Shell &s) { done(s.failure()); }, true);
}

void PushFlow::readHistoryIn(const QString &dir,
                             const std::function<void(const PushHistory &, const QString &)> &done) {
    const QString path = dir + u'/' + PushRecord::fileNameOnHost();
    // exit 4: no record (never pushed); anything else that fails is an error.
    m_calls->shell(
        u"[ -e %1 ] || exit 4; cat -- %1"_s.arg(shellQuote(path)), 60000,
        [done, path](const HostCalls::Shell &s) {
            if (s.exitStatus == 4)
                return done(PushHistory{}, QString());
            if (!s.ok())
                return done(PushHistory{}, u"%1 cannot be read: %2"_s.arg(path, s.failure()));
            QJsonParseError pe;
            const QJsonDocument doc = QJsonDocument::fromJson(s.out.join(u'\n').toUtf8(), &pe);
            QString err;
            const auto h = PushHistory::fromJson(doc.object(), &err);
            if (!h)
                return done(PushHistory{},
                            u"%1 is unreadable: %2"_s.arg(path, pe.error ? pe.errorString() : err));
            done(*h, QString());
        },
        true);
}

void PushFlow::appendRecord(const QString &runDir, const PushRecord &record,
                            const std::function<void(const QString &)> &done) {
    QPointer<PushFlow> self(this);
    readHistoryIn(runDir, [self, runDir, record, done](const PushHistory &read, const QString &error) {
        if (!self)
            return;
        if (!error.isEmpty())
            return done(error + u" (the earlier pushes' record is kept as it is)"_s);
        PushHistory h = read;
        h.runId = record.runId;
        h.pushes.append(record);
        self->writeHistory(runDir, h, done);
    });
}

void PushFlow::readHistory(
    const QString &runId,
    const std::function<void(const PushHistory &, const QString &, const QString &)> &done) {
    QPointer<PushFlow> self(this);
    runDir(runId, [self, runId, done](const QString &dir, const QString &error) {
        if (!self)
            return;
        if (!error.isEmpty())
            return done({}, {}, error);
        self->readHistoryIn(dir, [done, dir, runId](const PushHistory &h, const QString &err) {
            PushHistory out = h;
            if (out.runId.isEmpty())
                out.runId = runId;
            done(out, dir, err);
        });
    });
}

void PushFlow::undo(const QString &runId,
                    const std::function<void(const PushRecord &, const QString &)> &done) {
    undoRun(runId, [done](const Undo &u) { done(u.record, u.ok ? QString() : u.error); });
}

void PushFlow::undoRun(const QString &runId, const std::function<void(const Undo &)> &done) {
    QPointer<PushFlow> self(this);
    readHistory(runId, [self, runId, done](const PushHistory &h, const QString &dir, const QString &error) {
        if (!self)
            return;
        Undo out;
        if (!error.isEmpty()) {
            out.error = error;
            return done(out);
        }
        if (h.pushes.isEmpty()) {
            out.error =
                u"There is nothing to undo: run %1 has not been pushed from moetune on this host (a push "
                u"keeps its record beside the run, and there is none)."_s.arg(runId);
            return done(out);
        }
        const PushUndo plan = PushUndo::plan(h);
        if (!plan.error.isEmpty()) {
            out.error = plan.error;
            return done(out);
        }
        out.record.runId = runId;
        for (const int i : plan.undone) {
            out.record.framework = h.pushes[i].framework;
            out.record.simulated = h.pushes[i].simulated;
            out.record.files += h.pushes[i].files;
        }
        QStringList noOps;
        for (const int i : plan.noOps)
            noOps.append(QDateTime::fromMSecsSinceEpoch(qint64(h.pushes[i].pushedAt * 1000.0))
                             .toString(u"yyyy-MM-dd HH:mm:ss"_s));
        const QString noOpText =
            noOps.isEmpty()
                ? QString()
                : u" The push of %1 changed nothing (the same bytes were already there), so it is "
                  u"undone to nothing."_s.arg(noOps.join(u", "_s));
        const auto markUndone = [self, dir, h, plan, done](Undo result) {
            PushHistory marked = h;
            const double now = double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
            for (const int i : plan.undone + plan.noOps)
                marked.pushes[i].undoneAt = now;
            self->writeHistory(dir, marked, [done, result](const QString &werr) mutable {
                if (!werr.isEmpty())
                    result.message += u" (The push record could not be updated: %1.)"_s.arg(werr);
                done(result);
            });
        };
        if (plan.nothingToPutBack()) {
            out.ok = true;
            out.message =
                u"Nothing to undo: the push(es) of run %1 changed nothing on the host (the same bytes "
                u"were already there); nothing was touched."_s.arg(runId);
            return markUndone(out);
        }
        self->m_calls->shell(
            plan.script(), 120000,
            [self, runId, plan, out, noOpText, markUndone, done](const HostCalls::Shell &s) mutable {
                if (!self)
                    return;
                if (s.exitStatus ==
                    3) { // a file is not what was pushed, or a backup is gone: nothing touched
                    out.error = plan.refusal(s.out, runId);
                    return done(out);
                }
                if (!s.ok()) {
                    out.error =
                        u"Undo failed part way: %1. Some files may be restored and others not: look at the "
                        u"folder before anything else."_s.arg(s.failure());
                    return done(out);
                }
                out.changedSomething = true;
                const PushUndo::Outcome o = plan.readBack(s.out, runId);
                out.lines = o.lines;
                out.ok = o.ok;
                out.error = o.error;
                out.message = o.ok ? o.summary + noOpText : QString();
                markUndone(out);
            });
    });
}

void PushFlow::restartAndProve(const Diagnosis &before, const QStringList &pushedTargets,
                               const QString &afterLogFile, const std::function<void(const Proof &)> &done,
                               bool serverStopped) {
    if (!m_server) {
        Proof p;
        p.message = u"No server profile."_s;
        return done(p);
    }
    QPointer<PushFlow> self(this);
    const auto afterStop = [self, before, pushedTargets, afterLogFile,
                            done](const ServerControl::StopResult &stop) {
        if (!self)
            return;
        Proof p;
        p.stop = stop;
        p.afterLogFile = afterLogFile;
        if (!stop.ok && stop.notRunning && pushedTargets.isEmpty()) {
            p.message =
                u"The server is not running; nothing was pushed in this session. Start it through its "
                u"profile (or push first) to have something to prove."_s;
            return done(p);
        }
        if (!stop.ok && stop.notRunning) {
            // Down already: starting it loads the pushed files, which is what the restart is for.
            emit self->status(stop.message + u" Starting it through its profile."_s);
        } else if (!stop.ok) {
            p.message =
                stop.message + (pushedTargets.isEmpty()
                                    ? u" Nothing was pushed in this session, and moetune did not start "
                                      u"the server again."_s
                                    : u" The pushed files are in place and the server was not started "
                                      u"again by moetune: start it yourself, or undo-push to put back "
                                      u"the old files."_s);
            return done(p);
        } else {
            emit self->status(stop.message);
        }
        self->m_server->start([self, before, pushedTargets, afterLogFile, done,
                               p](const ServerControl::StartResult &start) mutable {
            if (!self)
                return;
            p.start = start;
            if (!start.ok) {
                p.message = start.message;
                return done(p);
            }
            emit self->status(start.message);
            self->m_server->fetchLogSince(
                start.mark, afterLogFile,
                [before, pushedTargets, afterLogFile, done, p](bool ok, const QString &error) mutable {
                    if (!ok) {
                        p.message =
                            u"The server is ready but its log since the restart could not be read: %1"_s.arg(
                                error);
                        return done(p);
                    }
                    QString derr;
                    p.after = Diagnoser().diagnoseFile(afterLogFile, {}, &derr);
                    if (!derr.isEmpty()) {
                        p.message = u"The log since the restart could not be diagnosed: %1"_s.arg(derr);
                        return done(p);
                    }
                    p.proof = PushProof::compare(before, p.after, pushedTargets, afterLogFile);
                    p.ok = true;
                    p.message = p.proof.summary();
                    done(p);
                });
        });
    };
    if (serverStopped) {
        // Stopped for the tuning (its GPUs checked free then): a stop command now would fail on a
        // server that is not running, so only start it.
        ServerControl::StopResult stopped;
        stopped.ok = true;
        stopped.message = u"The server was stopped before tuning; starting it through its profile."_s;
        return afterStop(stopped);
    }
    emit status(u"Stopping the server through its profile"_s);
    m_server->stop(afterStop);
}

} // namespace moetune
