// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/flows/pushflow.h"

#include "core/diagnosis/diagnoser.h"
#include "remote/agent/agentclient.h"
#include "remote/hosts/shellquote.h"

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
        self->m_calls->agentJob(dry, [p, done, probeCopy, runK](const HostCalls::Agent &d) mutable {
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
                    p.merges.append(*m);
                }
            }
            done(p);
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
    QPointer<PushFlow> self(this);
    emit status(u"Installing %1 file(s) into %2"_s.arg(preview.diffs.size()).arg(preview.target.folder));
    const JobId id =
        m_calls->agent()->installConfig(preview.runId, preview.framework, true, false, preview.target.folder);
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
            // install-config writes each file atomically and stops at the first failure: put back what it did
            // write before reporting, so the host is as it was.
            QString msg = u"The push failed: %1."_s.arg(a.error);
            if (rec.changedSomething())
                msg +=
                    u" %1 file(s) had been written before the failure; run undo-push to put back what was there."_s
                        .arg(rec.files.size());
            if (!rec.files.isEmpty() && !preview.runDir.isEmpty())
                self->writeRecord(preview.runDir, rec, [done, rec, msg](const QString &) { done(rec, msg); });
            else
                done(rec, msg);
            return;
        }
        self->writeRecord(preview.runDir, rec, [done, rec](const QString &error) {
            done(rec, error.isEmpty()
                          ? QString()
                          : u"The files were installed but the push record could not be written (%1): "
                            u"undo-push will not find it."_s.arg(error));
        });
    });
}

void PushFlow::writeRecord(const QString &runDir, const PushRecord &record,
                           const std::function<void(const QString &)> &done) {
    const QString json = QString::fromUtf8(QJsonDocument(record.toJson()).toJson(QJsonDocument::Indented));
    const QString target = runDir + u'/' + PushRecord::fileNameOnHost();
    const QString part = target + u".part"_s;
    const QString cmd = u"printf '%s' "_s + shellQuote(json) + u" > "_s + shellQuote(part) +
                        u" && mv -f -- "_s + shellQuote(part) + u' ' + shellQuote(target);
    m_calls->shell(
        cmd, 60000, [done](const HostCalls::Shell &s) { done(s.failure()); }, true);
}

void PushFlow::readRecord(
    const QString &runId,
    const std::function<void(const PushRecord &, const QString &, const QString &)> &done) {
    QPointer<PushFlow> self(this);
    runDir(runId, [self, done](const QString &dir, const QString &error) {
        if (!self)
            return;
        if (!error.isEmpty())
            return done({}, {}, error);
        const QString path = dir + u'/' + PushRecord::fileNameOnHost();
        self->m_calls->shell(
            u"cat -- "_s + shellQuote(path), 60000,
            [done, dir, path](const HostCalls::Shell &s) {
                if (!s.ok())
                    return done(
                        {}, dir,
                        u"There is nothing to undo: this run has not been pushed from moetune (a push "
                        u"keeps its record beside the run, and there is none)."_s);
                QJsonParseError pe;
                const QJsonDocument doc = QJsonDocument::fromJson(s.out.join(u'\n').toUtf8(), &pe);
                QString err;
                const auto rec = PushRecord::fromJson(doc.object(), &err);
                if (!rec)
                    return done({}, dir,
                                u"%1 is unreadable: %2"_s.arg(path, pe.error ? pe.errorString() : err));
                done(*rec, dir, QString());
            },
            true);
    });
}

void PushFlow::undo(const QString &runId,
                    const std::function<void(const PushRecord &, const QString &)> &done) {
    QPointer<PushFlow> self(this);
    readRecord(runId, [self, done](const PushRecord &rec, const QString &dir, const QString &error) {
        if (!self)
            return;
        if (!error.isEmpty())
            return done(rec, error);
        if (rec.undoneAt > 0)
            return done(rec, u"That push was already undone."_s);
        // All or nothing: every file must still be what was pushed, every backup still there.
        QString check = u"fail=0\n"_s;
        QString apply;
        for (const PushRecord::File &f : rec.files) {
            if (f.unchanged)
                continue;
            const QString t = shellQuote(f.target);
            check += u"[ \"$(sha256sum < %1 2>/dev/null | cut -d' ' -f1)\" = %2 ] || { echo \"changed since "
                     u"the push, "
                     u"left alone: \"%1; fail=1; }\n"_s.arg(t, shellQuote(f.sha256));
            if (!f.backup.isEmpty()) {
                const QString b = shellQuote(f.backup);
                const QString undoPart = f.target + u".moetune-undo"_s;
                const QString part = shellQuote(undoPart);
                check += u"[ -f %1 ] || { echo \"backup missing: \"%1; fail=1; }\n"_s.arg(b);
                apply +=
                    u"cp -p -- %1 %2 && mv -f -- %2 %3 && echo \"restored \"%3\" from \"%1 || exit 1\n"_s.arg(
                        b, part, t);
            } else {
                apply +=
                    u"rm -f -- %1 && echo \"removed \"%1\" (it did not exist before the push)\" || exit 1\n"_s
                        .arg(t);
            }
            if (!f.createdFolder.isEmpty())
                apply +=
                    u"rmdir -- %1 2>/dev/null && echo \"removed the folder \"%1\" the push had created\"\n"_s
                        .arg(shellQuote(f.createdFolder));
        }
        const QString script = check + u"[ $fail = 0 ] || exit 3\n"_s + apply + u"exit 0\n"_s;
        self->m_calls->shell(script, 120000, [self, done, rec, dir](const HostCalls::Shell &s) {
            if (!self)
                return;
            if (s.exitStatus == 3)
                return done(rec,
                            u"Undo refused, nothing was changed: %1. Restore those files by hand from their "
                            u"backups if you still want to."_s.arg(s.out.join(u"; "_s)));
            if (!s.ok())
                return done(rec, u"Undo failed: %1"_s.arg(s.failure()));
            PushRecord undone = rec;
            undone.undoneAt = double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
            self->writeRecord(dir, undone, [done, undone](const QString &werr) {
                done(undone, werr.isEmpty()
                                 ? QString()
                                 : u"Restored, but the push record could not be updated: %1"_s.arg(werr));
            });
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
        if (!stop.ok) {
            p.message = stop.message +
                        u" The pushed files are in place and the server was not started again by "
                        u"moetune: start it yourself, or undo-push to put back the old files."_s;
            return done(p);
        }
        emit self->status(stop.message);
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
