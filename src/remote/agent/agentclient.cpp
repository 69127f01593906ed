// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/agent/agentclient.h"

#include "core/run/agentprotocolparser.h"
#include "core/util/shellquote.h"
#include "core/util/version.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTimer>

using namespace Qt::StringLiterals;

namespace moetune {

namespace {
constexpr qsizetype kStderrLineChars = 4096; // a longer stderr line of the agent is cut, saying so

bool isAbsoluteLogPath(const QString &path) {
    return path.startsWith(u'/') || path.startsWith(u"~/"_s);
}

// A log file is always read as a file: a relative one is refused on the host (its folder would be a guess).
QString relativeLogRefusal(const QString &path) {
    return u"printf '%s\\n' "_s +
           shellQuote(u"The log file %1 is a relative path; give it as /path or ~/path."_s.arg(path)) +
           u" >&2; exit 2"_s;
}
} // namespace

struct AgentClient::Command {
    enum class Kind { Agent, Deploy, FetchLog, FollowLog };
    Kind kind = Kind::Agent;
    JobId id = 0;
    JobId transportJob = 0;
    QStringList argv;    // agent command + args
    ExecRequest request; // FetchLog / FollowLog
    AgentProtocolParser parser;
    QString doneStatus;
    QString agentError;    // the agent's error event message
    QString protocolError; // first malformed line / version mismatch
    QStringList stderrTail;
    bool cancelled = false;
    bool launched = false;
    bool sawRunStarted = false;
    std::function<void(const JobResult &)> onTransportDone; // internal steps (deploy, stat)
};

AgentClient::AgentClient(Transport *transport, HostConfig host, QString localAgentPath, QObject *parent)
    : QObject(parent)
    , m_transport(transport)
    , m_host(std::move(host))
    , m_localAgent(std::move(localAgentPath))
    , m_version(versionString()) {
    connect(transport, &Transport::stdoutData, this, &AgentClient::onStdoutData);
    connect(transport, &Transport::stderrLines, this, &AgentClient::onStderrLines);
    connect(transport, &Transport::stdoutLines, this, [this](JobId tid, const QStringList &lines) {
        const JobId id = m_byTransport.value(tid);
        if (id && m_commands.contains(id) && m_commands[id]->kind == Command::Kind::FollowLog)
            emit logLines(id, lines);
    });
    connect(transport, &Transport::progress, this, [this](JobId tid, qint64 done, qint64 total) {
        const JobId id = m_byTransport.value(tid);
        if (id)
            emit progress(id, done, total);
    });
    connect(transport, &Transport::finished, this, &AgentClient::onTransportFinished);
}

AgentClient::~AgentClient() = default;

QString AgentClient::remoteAgentPath(const QString &version) {
    return u"~/.cache/moetune/agent-%1.pyz"_s.arg(version);
}

void AgentClient::setAgentHome(const QString &remoteDir) {
    m_agentHome = remoteDir;
}

JobId AgentClient::startCommand(const QStringList &argv, const std::function<void(Command &)> &setup) {
    auto c = std::make_shared<Command>();
    c->id = m_nextId++;
    c->argv = argv;
    if (setup)
        setup(*c);
    m_commands.insert(c->id, c);
    const JobId id = c->id;
    if (c->kind == Command::Kind::FetchLog || c->kind == Command::Kind::FollowLog) {
        QTimer::singleShot(0, this, [this, id] { launch(id); });
        return id;
    }
    ensureDeployed([this, id](const QString &error) {
        if (!m_commands.contains(id))
            return;
        if (!error.isEmpty())
            return finishCommand(id, false, error, QString());
        if (m_commands[id]->kind == Command::Kind::Deploy)
            return finishCommand(id, true, QString(), u"ok"_s);
        launch(id);
    });
    return id;
}

void AgentClient::launch(JobId id) {
    const auto c = m_commands.value(id);
    if (!c || c->cancelled || !m_transport)
        return;
    ExecRequest req = c->request;
    if (c->kind == Command::Kind::Agent) {
        if (req.command.isEmpty()) { // startTune builds its own command line
            QString cmd = shellQuotePath(m_host.python.isEmpty() ? u"python3"_s : m_host.python) + u' ' +
                          shellQuotePath(remoteAgentPath(m_version));
            if (!m_agentHome.isEmpty()) // a global option: before the command
                cmd += u" --home "_s + shellQuotePath(m_agentHome);
            for (const QString &a : std::as_const(c->argv))
                cmd += u' ' + shellQuote(a);
            req.command = cmd;
        }
        req.rawStdout = true;
    }
    c->launched = true;
    c->transportJob = m_transport->exec(req);
    m_byTransport.insert(c->transportJob, id);
}

JobId AgentClient::internalJob(JobId transportJob, std::function<void(const JobResult &)> done) {
    auto c = std::make_shared<Command>();
    c->kind = Command::Kind::Deploy;
    c->id = m_nextId++;
    c->transportJob = transportJob;
    c->onTransportDone = std::move(done);
    m_commands.insert(c->id, c);
    m_byTransport.insert(transportJob, c->id);
    return c->id;
}

void AgentClient::internalExec(const QString &command,
                               std::function<void(const JobResult &, const QByteArray &stdoutData)> done) {
    ExecRequest req(command);
    req.rawStdout = true;
    const JobId tid = m_transport->exec(req);
    // stdout of internal steps arrives as stdoutData; collect it here rather than through the parser
    auto out = std::make_shared<QByteArray>();
    auto conn = std::make_shared<QMetaObject::Connection>();
    *conn = connect(m_transport, &Transport::stdoutData, this, [tid, out](JobId j, const QByteArray &d) {
        if (j == tid && out->size() < (1 << 20)) // internal steps print a line: a flood is not kept
            out->append(d);
    });
    internalJob(tid, [conn, out, done = std::move(done)](const JobResult &r) {
        disconnect(*conn);
        done(r, *out);
    });
}

void AgentClient::ensureDeployed(std::function<void(const QString &)> then) {
    if (m_deploy == Deploy::Done)
        return QTimer::singleShot(0, this, [then] { then(QString()); });
    m_deployWaiters.append(std::move(then));
    if (m_deploy == Deploy::Running)
        return;
    m_deploy = Deploy::Running;
    auto done = [this](const QString &error) {
        m_deploy =
            error.isEmpty() ? Deploy::Done : Deploy::No; // a failed deploy is retried by the next command
        const auto waiters = std::exchange(m_deployWaiters, {});
        for (const auto &w : waiters)
            w(error);
    };
    QFile f(m_localAgent);
    if (!f.open(QIODevice::ReadOnly))
        return done(u"The agent file %1 is missing (%2); build the moetune_agent target first."_s.arg(
            m_localAgent, f.errorString()));
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&f);
    const QByteArray localSha = hash.result().toHex();
    const QString remote = remoteAgentPath(m_version);
    // The agent's home is created 0700 and must be a folder of the user's that nobody else can write
    // (exit 96 otherwise): the agent runs from it, and runs what it keeps there (issue 42).
    const QString check =
        u"d=\"$HOME\"/.cache/moetune; mkdir -p \"$HOME\"/.cache && { [ -e \"$d\" ] || [ -L \"$d\" ] || "
        u"mkdir -m 700 \"$d\"; } || exit 1; if [ -L \"$d\" ] || [ ! -d \"$d\" ] || [ ! -O \"$d\" ]; then "
        u"exit 96; "
        u"fi; case \"$(ls -ld \"$d\" | cut -c6,9)\" in *w*) exit 96;; esac; "
        u"{ sha256sum < %1 2>/dev/null || true; }"_s.arg(shellQuotePath(remote));
    internalExec(check, [this, done, localSha, remote](const JobResult &r, const QByteArray &out) {
        if (!r.ok())
            return done(u"Cannot check the agent on %1: %2"_s.arg(m_transport->hostLabel(), r.error));
        if (r.exitStatus == 96)
            return done(
                u"The agent's folder ~/.cache/moetune on %1 is a symbolic link, is not yours, or others "
                u"can write into it: moetune runs nothing from it. Remove it (moetune creates it again, "
                u"private to you) or make it yours alone (chown, chmod 700)."_s.arg(
                    m_transport->hostLabel()));
        if (out.left(64) == localSha)
            return done(QString());
        // Another client may deploy at the same moment: each uploads to its own name, and only a file whose
        // bytes on disk hash to ours is moved into place (a shared "<file>.part" could be interleaved).
        const QString tmp = remote + u".%1.tmp"_s.arg(QString::fromLatin1(
                                         QByteArray::number(QRandomGenerator::global()->generate64(), 16)));
        internalJob(m_transport->upload(m_localAgent, tmp), [this, done, localSha, remote,
                                                             tmp](const JobResult &ur) {
            if (!ur.ok())
                return done(u"Cannot upload the agent to %1:%2: %3"_s.arg(m_transport->hostLabel(), remote,
                                                                          ur.error));
            const QString place =
                u"h=$(sha256sum < %1 | cut -c1-64); if [ \"$h\" = %2 ]; then mv -f -- %1 %3; else rm -f -- "
                u"%1; "
                u"echo \"$h\"; exit 3; fi"_s.arg(shellQuotePath(tmp), QString::fromLatin1(localSha),
                                                 shellQuotePath(remote));
            internalExec(place, [this, done, remote](const JobResult &pr, const QByteArray &got) {
                if (!pr.ok())
                    return done(u"Cannot move the agent into place on %1: %2"_s.arg(m_transport->hostLabel(),
                                                                                    pr.error));
                if (pr.exitStatus == 3)
                    return done(
                        u"The agent uploaded to %1:%2 was damaged on the way (its SHA-256 on the host is "
                        u"%3); nothing was run. Try again."_s.arg(m_transport->hostLabel(), remote,
                                                                  QString::fromLatin1(got.trimmed())));
                if (pr.exitStatus != 0)
                    return done(u"Cannot move the agent into place on %1 (exit status %2)."_s.arg(
                        m_transport->hostLabel(), QString::number(pr.exitStatus)));
                done(QString());
            });
        });
    });
}

JobId AgentClient::deploy() {
    return startCommand({}, [](Command &c) { c.kind = Command::Kind::Deploy; });
}

JobId AgentClient::probe() {
    QStringList args{u"probe"_s};
    if (!m_host.python.isEmpty())
        args << u"--python"_s << m_host.python;
    return run(args.takeFirst(), args);
}

JobId AgentClient::startTune(const TuneSpec &spec) {
    return specCommand(u"tune"_s, spec);
}

JobId AgentClient::headroom(const TuneSpec &spec) {
    return specCommand(u"headroom"_s, spec);
}

JobId AgentClient::specCommand(const QString &command, const TuneSpec &spec) {
    // The spec travels inside the command line as a here-document-free file: written by the shell from
    // a quoted JSON string, then handed to the agent.
    const QByteArray json = QJsonDocument(spec.toJson()).toJson(QJsonDocument::Compact);
    QString cmd = u"f=$(mktemp \"${TMPDIR:-/tmp}/moetune-spec.XXXXXX\") && printf '%s' "_s +
                  shellQuote(QString::fromUtf8(json)) + u" > \"$f\" && "_s +
                  shellQuotePath(m_host.python.isEmpty() ? u"python3"_s : m_host.python) + u' ' +
                  shellQuotePath(remoteAgentPath(m_version));
    if (!m_agentHome.isEmpty()) // a global option: before the command
        cmd += u" --home "_s + shellQuotePath(m_agentHome);
    cmd += u' ' + command + u" \"$f\""_s;
    cmd += u"; rc=$?; rm -f \"$f\"; exit $rc"_s;
    return startCommand({}, [cmd, command](Command &c) {
        c.kind = Command::Kind::Agent;
        c.request.command = cmd;
        c.argv = {command};
    });
}

JobId AgentClient::attach(const QString &runId, qint64 fromSeq) {
    QStringList args{runId};
    if (fromSeq > 0)
        args << u"--from"_s << QString::number(fromSeq);
    return run(u"attach"_s, args);
}

JobId AgentClient::cancelRun(const QString &runId) {
    return run(u"cancel"_s, {runId});
}

JobId AgentClient::listRuns() {
    return run(u"runs"_s, {});
}

JobId AgentClient::result(const QString &runId) {
    return run(u"result"_s, {runId});
}

JobId AgentClient::installConfig(const QString &source, Framework framework, bool replace, bool dryRun,
                                 const QString &root, const QStringList &extraArgs) {
    QStringList args{source, u"--framework"_s, frameworkId(framework)};
    if (!m_host.python.isEmpty())
        args << u"--python"_s << m_host.python;
    if (!root.isEmpty())
        args << u"--root"_s << root;
    if (replace)
        args << u"--replace"_s;
    if (dryRun)
        args << u"--dry-run"_s;
    args += extraArgs;
    return run(u"install-config"_s, args);
}

JobId AgentClient::run(const QString &command, const QStringList &args) {
    QStringList argv{command};
    argv += args;
    return startCommand(argv);
}

JobId AgentClient::fetchLog(qint64 maxBytes, const QString &localFile) {
    const LogSource &src = m_host.logSource;
    QString cmd;
    if (src.kind == LogSource::Kind::File && !isAbsoluteLogPath(src.value)) {
        cmd = relativeLogRefusal(src.value);
    } else if (src.kind == LogSource::Kind::File) {
        cmd = u"tail -c %1 -- %2"_s.arg(maxBytes).arg(shellQuotePath(src.value));
    } else if (src.kind == LogSource::Kind::Command) {
        // The user's own command, run as they wrote it; only its last maxBytes are kept. Its exit status
        // (not tail's) is the job's, through fd 3, so a failing command is not taken for an empty log.
        cmd =
            u"exec 4>&1; rc=$( { { ( %1 ) 2>&1 3>&- 4>&- ; echo $? >&3 ; } | tail -c %2 >&4 3>&- ; } 3>&1 ); "
            u"exec 4>&-; exit ${rc:-1}"_s.arg(src.value)
                .arg(maxBytes);
    }
    return startCommand({}, [cmd, maxBytes, localFile](Command &c) {
        c.kind = Command::Kind::FetchLog;
        c.request.command = cmd;
        c.request.stdoutFile = localFile;
        c.request.expectedBytes = maxBytes;
    });
}

JobId AgentClient::followLog() {
    const LogSource &src = m_host.logSource;
    QString cmd;
    if (src.kind == LogSource::Kind::File && !isAbsoluteLogPath(src.value))
        cmd = relativeLogRefusal(src.value);
    else if (src.kind == LogSource::Kind::File)
        cmd = u"tail -n 1000 -F -- %1"_s.arg(shellQuotePath(src.value)); // the latest lines first
    else if (src.kind == LogSource::Kind::Command)
        cmd = u"{ %1 ; } 2>&1"_s.arg(src.value);
    return startCommand({}, [cmd](Command &c) {
        c.kind = Command::Kind::FollowLog;
        c.request.command = cmd;
        c.request.maxLineOutputBytes = -1; // followed for hours: its reader keeps the latest lines only
    });
}

void AgentClient::cancel(JobId id) {
    const auto c = m_commands.value(id);
    if (!c)
        return;
    c->cancelled = true;
    if (c->launched && m_transport)
        m_transport->cancel(c->transportJob);
    else
        finishCommand(id, false, u"Cancelled."_s, u"cancelled"_s);
}

void AgentClient::onStdoutData(JobId tid, const QByteArray &data) {
    const JobId id = m_byTransport.value(tid);
    const auto c = m_commands.value(id);
    if (!c || c->kind != Command::Kind::Agent)
        return;
    handleEvents(*c, c->parser.feed(data));
}

void AgentClient::onStderrLines(JobId tid, const QStringList &lines) {
    const auto c = m_commands.value(m_byTransport.value(tid));
    if (!c)
        return;
    // Only the tail is kept, each line cut to kStderrLineChars with a sentence: 300 MB of stderr without
    // a newline cost what is shown, not what was sent.
    for (const QString &line : lines) {
        if (line.size() <= kStderrLineChars)
            c->stderrTail.append(line);
        else
            c->stderrTail.append(
                line.left(kStderrLineChars) +
                u" [... stderr line cut at %1 characters; %2 more not kept]"_s.arg(kStderrLineChars)
                    .arg(line.size() - kStderrLineChars));
    }
    if (c->stderrTail.size() > 20)
        c->stderrTail = c->stderrTail.mid(c->stderrTail.size() - 20);
}

void AgentClient::handleEvents(Command &c, const QList<AgentEvent> &events) {
    for (const AgentEvent &e : events) {
        emit agentEvent(c.id, e);
        if (e.isError()) {
            if (c.protocolError.isEmpty())
                c.protocolError = e.error;
            if (e.kind == AgentEvent::Kind::VersionMismatch && m_transport)
                m_transport->cancel(c.transportJob); // nothing it says can be trusted to mean what we think
            continue;
        }
        if (e.type == u"probe") {
            QString error;
            if (auto p = HostProbe::fromJson(e.object, &error)) {
                if (p->hostName.isEmpty())
                    p->hostName = m_transport ? m_transport->hostLabel() : QString();
                p->agentVersion = c.parser.agentVersion();
                emit probed(c.id, *p);
            }
        } else if (e.type == u"run_started") {
            c.sawRunStarted = true;
            emit runStarted(c.id, e.object.value("run_id"_L1).toString(), e.object);
        } else if (e.type == u"error") {
            if (c.agentError.isEmpty())
                c.agentError = e.object.value("message"_L1).toString();
        } else if (e.type == u"done") {
            // a run's own done (attach) and the command's done look alike; the last one wins
            c.doneStatus = e.object.value("status"_L1).toString();
            // tune/resume of a run still starting: it exists and goes on, so its id is news like run_started
            if (c.doneStatus == u"detached" && !c.sawRunStarted && e.object.contains("run_id"_L1))
                emit runStarted(c.id, e.object.value("run_id"_L1).toString(), e.object);
        }
    }
}

void AgentClient::onTransportFinished(JobId tid, const JobResult &r) {
    const JobId id = m_byTransport.take(tid);
    const auto c = m_commands.value(id);
    if (!c)
        return;
    if (c->onTransportDone) {
        m_commands.remove(id);
        c->onTransportDone(r);
        return;
    }
    if (c->kind == Command::Kind::Agent)
        handleEvents(*c, c->parser.finish());
    if (c->cancelled)
        return finishCommand(id, false, u"Cancelled."_s, u"cancelled"_s);
    // We stopped it ourselves over a version mismatch: that is the error, not the cancel it caused.
    if (!c->protocolError.isEmpty() && c->kind == Command::Kind::Agent)
        return finishCommand(id, false, c->protocolError, c->doneStatus);
    if (!r.error.isEmpty())
        return finishCommand(id, false, r.error, c->doneStatus);
    if (c->kind != Command::Kind::Agent) {
        if (r.exitStatus != 0) {
            // A command's stderr went into the log: its last lines say why.
            QString why = c->stderrTail.join(u'\n').trimmed();
            if (why.isEmpty() && !c->request.stdoutFile.isEmpty()) {
                QFile out(c->request.stdoutFile);
                if (out.open(QIODevice::ReadOnly)) {
                    out.seek(qMax<qint64>(0, out.size() - 400));
                    why = QString::fromUtf8(out.readAll()).trimmed();
                }
            }
            return finishCommand(id, false,
                                 u"The log source on %1 failed (exit status %2): %3"_s.arg(
                                     m_transport->hostLabel(), QString::number(r.exitStatus),
                                     why.isEmpty() ? u"(it printed nothing)"_s : why),
                                 QString());
        }
        return finishCommand(id, true, QString(), u"ok"_s);
    }
    if (!c->protocolError.isEmpty())
        return finishCommand(id, false, c->protocolError, c->doneStatus);
    if (!c->parser.sawHello()) {
        QString why = c->stderrTail.join(u'\n').trimmed();
        if (r.exitStatus == 127)
            why =
                u"the interpreter %1 was not found on the host. Set the host's python."_s.arg(m_host.python);
        return finishCommand(id, false,
                             u"The agent on %1 did not start (exit status %2): %3"_s.arg(
                                 m_transport->hostLabel(), QString::number(r.exitStatus), why),
                             QString());
    }
    if (c->doneStatus.isEmpty()) {
        return finishCommand(
            id, false,
            u"The agent on %1 stopped without finishing (exit status %2). %3"_s.arg(
                m_transport->hostLabel(), QString::number(r.exitStatus), c->stderrTail.join(u'\n')),
            QString());
    }
    const bool ok = c->doneStatus == u"ok" || c->doneStatus == u"detached";
    QString error;
    if (!ok) {
        error = c->agentError.isEmpty()
                    ? u"The agent's command ended with status \"%1\" (exit status %2)."_s.arg(
                          c->doneStatus, QString::number(r.exitStatus))
                    : c->agentError;
    }
    finishCommand(id, ok, error, c->doneStatus);
}

void AgentClient::finishCommand(JobId id, bool ok, const QString &error, const QString &status) {
    if (!m_commands.remove(id))
        return;
    emit commandFinished(id, ok, error, status);
}

QString AgentClient::defaultLocalAgentPath() {
    const QString name = u"moetune-agent.pyz"_s;
    QString fromEnv = qEnvironmentVariable("MOETUNE_AGENT_PYZ");
    if (!fromEnv.isEmpty() && QFileInfo(fromEnv).isFile())
        return fromEnv;
    const QString exeDir = QCoreApplication::applicationDirPath();
    // Beside the binary, in the build tree (build/X/src/app -> build/X/remote_agent), or under share/.
    const QStringList candidates{exeDir + u'/' + name, exeDir + u"/../../remote_agent/"_s + name,
                                 exeDir + u"/../remote_agent/"_s + name,
                                 exeDir + u"/../share/moetune/"_s + name};
    for (const QString &c : candidates) {
        if (QFileInfo(c).isFile())
            return QDir::cleanPath(c);
    }
    return {};
}

} // namespace moetune
