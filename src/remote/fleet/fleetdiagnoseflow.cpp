// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/fleet/fleetdiagnoseflow.h"

#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "remote/flows/hostsession.h"

#include <QDateTime>
#include <QDir>
#include <QMap>
#include <QPointer>
#include <QTemporaryFile>
#include <QTimer>

#include <sys/resource.h>

using namespace Qt::StringLiterals;

namespace moetune {

struct FleetDiagnoseFlow::Active {
    int index = -1;
    QPointer<HostSession> session;
    QList<QMetaObject::Connection> connections;
    bool connectedByUs = false;
    bool diagnosing = false;
    bool keyUnknown = false;
    QString promptReason; // a password / passphrase prompt was cancelled
    JobId probeJob = 0;
    JobId diagnoseJob = 0;
    std::unique_ptr<QTemporaryFile> log;
    QTimer *timeout = nullptr;
    QElapsedTimer clock;
};

namespace {

double fleetNow() {
    return double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
}

// "8x NVIDIA H200", "4x NVIDIA H100 80GB HBM3, 4x NVIDIA A100" (in the order the probe lists them).
QString fleetGpuText(const HostProbe &probe) {
    QStringList names;
    QMap<QString, int> counts;
    for (const GpuInfo &g : probe.gpus) {
        if (!counts.contains(g.name))
            names.append(g.name);
        counts[g.name] += 1;
    }
    QStringList parts;
    for (const QString &n : std::as_const(names))
        parts.append(u"%1x %2"_s.arg(counts.value(n)).arg(n));
    return parts.join(u", "_s);
}

// The fused-MoE target of the latest start that wants a file, up half first.
const TuningTarget *fleetWantedTarget(const Diagnosis &d) {
    for (const TuningTarget &t : d.targets) {
        if (t.isTunable() && t.needsTuning())
            return &t;
    }
    return nullptr;
}

QString fleetMoeKernelText(const Diagnosis &d) {
    const TuningTarget *fused = nullptr;
    for (const TuningTarget &t : d.targets) {
        if (t.isTunable()) {
            fused = &t;
            if (t.needsTuning())
                break;
        }
    }
    if (!fused)
        return u"not named in the log"_s;
    if (fused->upFellBack)
        return u"Triton fused MoE, config from %1"_s.arg(
            fused->fallbackFolder.isEmpty() ? u"another Triton's folder"_s : fused->fallbackFolder);
    if (fused->upMissing)
        return u"Triton fused MoE, default config"_s;
    if (fused->upLoaded)
        return u"Triton fused MoE, tuned config"_s;
    return u"Triton fused MoE"_s;
}

QString fleetBlockShape(const ConfigName &name) {
    return name.blockShape ? u"[%1,%2]"_s.arg((*name.blockShape)[0]).arg((*name.blockShape)[1]) : QString();
}

} // namespace

FleetDiagnoseFlow::FleetDiagnoseFlow(FleetRecord *record, FleetSessionProvider sessions,
                                     QString workspacePath, QObject *parent)
    : QObject(parent)
    , m_record(record)
    , m_sessions(std::move(sessions))
    , m_workspace(std::move(workspacePath)) {
    m_saveTimer = new QTimer(this);
    m_saveTimer->setSingleShot(true);
    connect(m_saveTimer, &QTimer::timeout, this, &FleetDiagnoseFlow::save);
}

FleetDiagnoseFlow::~FleetDiagnoseFlow() {
    for (const auto &a : m_active) {
        for (const auto &c : a->connections)
            disconnect(c);
    }
}

void FleetDiagnoseFlow::setMaxSessions(int n) {
    m_sessionsAsked = m_maxSessions = std::clamp(n, 1, kMaxSessionsCap);
}

void FleetDiagnoseFlow::setLogBytes(qint64 bytes) {
    m_logBytes = std::max<qint64>(bytes, 4096);
}

void FleetDiagnoseFlow::setHostTimeoutS(int seconds) {
    m_hostTimeoutS = std::max(seconds, 1);
}

void FleetDiagnoseFlow::setDiagnoser(const Diagnoser &diagnoser) {
    m_diagnoser = diagnoser;
}

void FleetDiagnoseFlow::setSessionDone(std::function<void(const FleetHost &, HostSession *)> done) {
    m_sessionDone = std::move(done);
}

void FleetDiagnoseFlow::start() {
    if (m_running || !m_record)
        return;
    m_running = true;
    m_next = 0;
    m_done = 0;
    m_peak = 0;
    m_saveError.clear();
    // Every session in flight holds file descriptors: the bound fits the process's soft limit.
    m_maxSessions = m_sessionsAsked;
    m_sessionsNote.clear();
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
        const auto fit =
            int(std::max<rlim_t>(1, (files.rlim_cur > rlim_t(kFdsReserved) + rlim_t(kFdsPerSession)
                                         ? files.rlim_cur - rlim_t(kFdsReserved)
                                         : rlim_t(kFdsPerSession)) /
                                        rlim_t(kFdsPerSession)));
        if (fit < m_maxSessions) {
            m_sessionsNote =
                u"%1 sessions at once instead of %2: the open-file limit (ulimit -n) is %3, and each "
                u"session may hold %4 files"_s.arg(fit)
                    .arg(m_maxSessions)
                    .arg(qulonglong(files.rlim_cur))
                    .arg(kFdsPerSession);
            m_maxSessions = fit;
        }
    }
    m_hostMs = QList<qint64>(m_record->hosts.size(), -1);
    for (int i = 0; i < m_record->hosts.size(); ++i) {
        FleetHostRecord &h = m_record->hosts[i];
        h.stage = FleetHostStage::Waiting;
        h.reason.clear();
        h.startedAt = h.endedAt = 0;
    }
    m_sinceSave.start();
    save();
    if (m_record->hosts.isEmpty()) {
        QTimer::singleShot(0, this, &FleetDiagnoseFlow::finishAll);
        return;
    }
    launchNext();
}

void FleetDiagnoseFlow::cancel() {
    if (!m_running)
        return;
    m_next = int(m_record->hosts.size()); // nothing more starts
    for (int i = 0; i < m_record->hosts.size(); ++i) {
        if (m_record->hosts.at(i).stage == FleetHostStage::Waiting) {
            setStage(i, FleetHostStage::Skipped, u"cancelled before its turn"_s);
            ++m_done;
        }
    }
    if (m_active.empty()) {
        QTimer::singleShot(0, this, &FleetDiagnoseFlow::finishAll);
        return;
    }
    while (!m_active.empty())
        finishHost(m_active.front().get(), FleetHostStage::Failed, u"cancelled before its diagnosis ended"_s);
}

FleetDiagnoseFlow::Active *FleetDiagnoseFlow::activeFor(int index) const {
    for (const auto &a : m_active) {
        if (a->index == index)
            return a.get();
    }
    return nullptr;
}

void FleetDiagnoseFlow::setStage(int index, FleetHostStage stage, const QString &reason) {
    FleetHostRecord &h = m_record->hosts[index];
    h.stage = stage;
    h.reason = reason;
    emit hostChanged(index);
}

void FleetDiagnoseFlow::launchNext() {
    // One host per turn of the event loop: making a session (reading the ssh config, starting its thread)
    // takes milliseconds, and 32 of them in one go would stall the window for their sum.
    if (!m_running || int(m_active.size()) >= m_maxSessions || m_next >= m_record->hosts.size())
        return;
    startHost(m_next++);
    if (m_running && int(m_active.size()) < m_maxSessions && m_next < m_record->hosts.size())
        QTimer::singleShot(0, this, &FleetDiagnoseFlow::launchNext);
}

void FleetDiagnoseFlow::startHost(int index) {
    auto owned = std::make_unique<Active>();
    Active *a = owned.get();
    a->index = index;
    a->clock.start();
    m_active.push_back(std::move(owned));
    m_peak = std::max(m_peak, int(m_active.size()));
    FleetHostRecord &rec = m_record->hosts[index];
    rec.startedAt = fleetNow();
    setStage(index, FleetHostStage::Connecting, u"connecting"_s);

    QString error;
    HostSession *s = m_sessions ? m_sessions(rec.host, &error) : nullptr;
    if (!s) {
        finishHost(a, FleetHostStage::Unreachable,
                   error.isEmpty() ? u"no session could be made for this host"_s : error);
        return;
    }
    a->session = s;
    a->timeout = new QTimer(this);
    a->timeout->setSingleShot(true);
    connect(a->timeout, &QTimer::timeout, this, [this, index] {
        if (Active *x = activeFor(index)) {
            const bool connected = x->diagnosing;
            finishHost(x, connected ? FleetHostStage::Failed : FleetHostStage::Unreachable,
                       connected ? u"its diagnosis did not end within %1 s"_s.arg(m_hostTimeoutS)
                                 : u"did not connect within %1 s"_s.arg(m_hostTimeoutS));
        }
    });
    a->timeout->start(m_hostTimeoutS * 1000);

    // A fleet never asks: an unknown key is answered "no", a password or passphrase prompt cancelled.
    a->connections.append(connect(s, &HostSession::hostKeyUnknown, this, [this, index] {
        if (Active *x = activeFor(index)) {
            x->keyUnknown = true;
            x->session->answerHostKey(false);
        }
    }));
    a->connections.append(
        connect(s, &HostSession::secretRequested, this, [this, index](SshTransport::SecretKind kind) {
            if (Active *x = activeFor(index)) {
                x->promptReason = kind == SshTransport::SecretKind::Passphrase ? fleetPassphraseReason()
                                                                               : fleetPasswordReason();
                x->session->cancelSecret();
            }
        }));
    a->connections.append(connect(s, &HostSession::stateChanged, this,
                                  [this, index](Transport::State state, const QString &message) {
                                      Active *x = activeFor(index);
                                      if (!x)
                                          return;
                                      if (state == Transport::State::Connected && !x->diagnosing)
                                          beginDiagnosis(x);
                                      else if (state == Transport::State::Failed)
                                          onConnectionFailed(x, message);
                                  }));
    a->connections.append(connect(s, &HostSession::destroyed, this, [this, index] {
        if (Active *x = activeFor(index))
            finishHost(x, FleetHostStage::Failed, u"its session was closed before the diagnosis ended"_s);
    }));
    if (s->state() == Transport::State::Connected) {
        beginDiagnosis(a);
    } else {
        a->connectedByUs = true;
        s->connectToHost();
    }
}

void FleetDiagnoseFlow::onConnectionFailed(Active *a, const QString &message) {
    QString reason;
    if (a->keyUnknown)
        reason = fleetUnknownHostKeyReason(m_record->hosts.at(a->index).host.name);
    else if (!a->promptReason.isEmpty())
        reason = a->promptReason;
    else
        reason = message.isEmpty() ? u"could not connect"_s : message;
    finishHost(a, FleetHostStage::Unreachable, reason);
}

void FleetDiagnoseFlow::beginDiagnosis(Active *a) {
    a->diagnosing = true;
    setStage(a->index, FleetHostStage::Diagnosing, u"probing and reading the server log"_s);
    HostSession *s = a->session;
    const int index = a->index;
    a->connections.append(
        connect(s, &HostSession::hostDiagnosed, this, [this, index](JobId id, const Diagnosis &d) {
            Active *x = activeFor(index);
            if (x && id == x->diagnoseJob)
                onDiagnosed(x, d);
        }));
    a->connections.append(connect(
        s, &HostSession::jobFailed, this, [this, index](JobId id, HostSession::Flow, const QString &error) {
            Active *x = activeFor(index);
            if (!x)
                return;
            if (id == x->diagnoseJob)
                finishHost(x, FleetHostStage::Failed, error);
            else if (id == x->probeJob)
                finishHost(x, FleetHostStage::Failed,
                           u"the probe failed, so the server's log is not known: "_s + error);
        }));
    if (s->host().logSource.kind != LogSource::Kind::None) {
        runDiagnosis(a);
        return;
    }
    // No log source in the host's settings: the log file the probe sees its server write.
    a->connections.append(connect(s, &HostSession::probed, this, [this, index](JobId id, const HostProbe &) {
        Active *x = activeFor(index);
        if (!x || id != x->probeJob)
            return;
        x->probeJob = 0;
        HostSession *session = x->session;
        const auto &probe = session->lastProbe();
        const QString logFile =
            probe && probe->servers.size() == 1 ? probe->servers.first().launch.logFile : QString();
        if (logFile.isEmpty()) {
            const qsizetype servers = probe ? probe->servers.size() : 0;
            finishHost(x, FleetHostStage::Failed,
                       u"no log source: the host's settings name no server log, and %1. Set its log file or "
                       u"command, or its server, in the host's settings (Hosts page)"_s.arg(
                           servers > 1    ? u"%1 servers run there, none chosen"_s.arg(servers)
                           : servers == 1 ? u"its server writes no log file"_s
                                          : u"the probe found no running server"_s));
            return;
        }
        HostConfig config = session->host();
        config.logSource = {LogSource::Kind::File, logFile};
        session->setHost(config);
        runDiagnosis(x);
    }));
    a->probeJob = s->probe();
}

void FleetDiagnoseFlow::runDiagnosis(Active *a) {
    a->log = std::make_unique<QTemporaryFile>(QDir::tempPath() + u"/moetune-fleet-log-XXXXXX.log"_s);
    if (!a->log->open()) {
        finishHost(a, FleetHostStage::Failed, u"no temporary file for the log: "_s + a->log->errorString());
        return;
    }
    a->log->close();
    QString error;
    a->diagnoseJob = a->session->diagnoseHost(m_logBytes, a->log->fileName(), m_diagnoser, &error);
    if (!a->diagnoseJob)
        finishHost(a, FleetHostStage::Failed, error);
}

void FleetDiagnoseFlow::onDiagnosed(Active *a, const Diagnosis &d) {
    FleetHostRecord &rec = m_record->hosts[a->index];
    HostSession *s = a->session;
    const std::optional<HostProbe> &probe = s->lastProbe();
    const ServerProcess *server = probe && probe->servers.size() == 1 ? &probe->servers.first() : nullptr;
    const QString probeError = s->probeError(a->diagnoseJob);

    rec.gpu.clear();
    rec.framework.clear();
    rec.frameworkVersion.clear();
    rec.triton.clear();
    rec.model.clear();
    rec.findings.clear();
    if (probe) {
        rec.gpu = fleetGpuText(*probe);
        if (probe->framework != Framework::Unknown)
            rec.framework = frameworkId(probe->framework);
        rec.frameworkVersion = probe->frameworkVersion;
        rec.triton = probe->tritonVersion ? probe->tritonVersion->toString() : QString();
    }
    if (server) {
        if (!server->launch.serverTriton.isEmpty())
            rec.triton = server->launch.serverTriton; // what the server itself imports
        rec.model = server->modelPath;
        if (rec.framework.isEmpty() && server->framework != Framework::Unknown)
            rec.framework = frameworkId(server->framework);
    }
    rec.moeKernel = fleetMoeKernelText(d);

    // The findings of the latest server start, most severe first (the diagnosis' order), capped.
    QStringList lines;
    for (const Finding &f : d.findings) {
        if (d.isLatest(f))
            lines.append(u"%1: %2"_s.arg(severityName(f.severity), f.title));
    }
    if (!probeError.isEmpty())
        lines.prepend(u"the probe failed, so host facts are missing: "_s + probeError);
    if (probe && !server) // the kernel hash and the served model are then unknown
        lines.prepend(
            probe->servers.size() > 1
                ? u"%1 servers run there and none is chosen: choose one in the host's server profile"_s.arg(
                      probe->servers.size())
            : !probe->serverChoiceProblem.isEmpty() ? probe->serverChoiceProblem.left(300)
                                                    : u"the probe found no running server"_s);
    if (lines.size() > kMaxFindingsPerHost) {
        const qsizetype more = lines.size() - (kMaxFindingsPerHost - 1);
        lines = lines.mid(0, kMaxFindingsPerHost - 1);
        lines.append(u"... and %1 more"_s.arg(more));
    }
    rec.findings = lines;

    FleetHostFacts f;
    f.host = rec.host.name;
    f.framework = rec.framework;
    f.frameworkVersion = rec.frameworkVersion;
    f.tritonVersion = rec.triton;
    if (server)
        f.kernelSourceHash = server->launch.kernelSourceHash;
    if (const TuningTarget *t = fleetWantedTarget(d)) {
        if (t->framework != Framework::Unknown)
            f.framework = frameworkId(t->framework);
        if (t->tritonVersion)
            f.tritonVersion = t->tritonVersion->toString();
        f.tritonFolder = t->tritonFolder;
        f.deviceName = t->name.deviceName;
        f.experts = t->name.experts;
        f.intermediate = t->name.n;
        f.dtype = t->name.dtype;
        f.blockShape = fleetBlockShape(t->name);
        ConfigName wanted = t->name;
        wanted.down = !(t->upMissing || t->upFellBack);
        f.missingConfig = wanted.fileName(t->framework);
    }
    rec.facts = f;
    finishHost(a, FleetHostStage::Diagnosed,
               f.missingConfig.isEmpty() ? u"diagnosed: no fused-MoE config missing"_s
                                         : u"diagnosed: wants %1"_s.arg(f.missingConfig));
}

void FleetDiagnoseFlow::finishHost(Active *a, FleetHostStage stage, const QString &reason) {
    const int index = a->index;
    for (const auto &c : a->connections)
        disconnect(c);
    a->connections.clear();
    if (a->timeout)
        a->timeout->deleteLater();
    m_hostMs[index] = a->clock.elapsed();
    QPointer<HostSession> session = a->session;
    const bool disconnectIt = a->connectedByUs;
    if (session && stage != FleetHostStage::Diagnosed) { // timed out or cancelled: stop what still runs
        if (a->diagnoseJob)
            session->cancel(a->diagnoseJob);
        if (a->probeJob)
            session->cancel(a->probeJob);
    }
    auto it = std::find_if(m_active.begin(), m_active.end(), [a](const auto &p) { return p.get() == a; });
    std::unique_ptr<Active> owned = std::move(*it); // the log file goes with it
    m_active.erase(it);
    ++m_done;

    FleetHostRecord &rec = m_record->hosts[index];
    rec.endedAt = fleetNow();
    setStage(index, stage, reason);
    scheduleSave();

    // The session is let go after the signal that ended the host has returned.
    const FleetHost host = rec.host;
    QTimer::singleShot(0, this, [this, session, disconnectIt, host] {
        if (!session)
            return;
        if (disconnectIt)
            session->disconnectFromHost();
        if (m_sessionDone)
            m_sessionDone(host, session);
    });
    if (m_done >= m_record->hosts.size())
        QTimer::singleShot(0, this, &FleetDiagnoseFlow::finishAll);
    else
        QTimer::singleShot(0, this, &FleetDiagnoseFlow::launchNext);
}

void FleetDiagnoseFlow::scheduleSave() {
    // After every outcome, but at most about once a second: a record of 1,000 hosts is a megabyte.
    if (m_sinceSave.elapsed() >= 1000)
        save();
    else if (!m_saveTimer->isActive())
        m_saveTimer->start(int(1000 - m_sinceSave.elapsed()));
}

void FleetDiagnoseFlow::save() {
    m_saveTimer->stop();
    m_sinceSave.restart();
    QString error;
    if (!m_workspace.isEmpty() && !m_record->save(m_workspace, &error))
        m_saveError = error;
}

void FleetDiagnoseFlow::finishAll() {
    if (!m_running)
        return;
    // Hosts left Waiting (cancel) were marked; every host has an outcome now.
    m_running = false;
    m_record->regroup();
    for (int i = 0; i < m_record->hosts.size(); ++i)
        emit hostChanged(i);
    save();
    emit finished();
}

} // namespace moetune
