// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Fleet tune, rollout and undo (issue 46 points 3 and 4) against FleetFixture's standard scenario plus one
// host outside the selection: 11 hosts, 10 real sshd on 127.0.0.1, each with its own labelled fake server
// tree (PRACTICE / TEST DOUBLE: fake SGLang packages, a fake fused-MoE kernel source, a fake nvidia-smi, the
// fake SGLang server; the trees are marked as test doubles, so the agent installs SIMULATED results there
// and nowhere else). Three tuning groups (H200 + Triton 3.6.0: gpu-01, gpu-02, gpu-03 whose restart fails,
// gpu-10; H100: gpu-04, gpu-05; H200 + Triton 3.5.0: gpu-06, gpu-07), gpu-08 unreachable, gpu-09 with a
// changed host key, gpu-11 not selected. Diagnose (FleetDiagnoseFlow), tune once per group on the
// synthetic backend (every number SIMULATED), canary + rolling push that stops at gpu-03 and undoes it,
// fleet undo of the group; then the same through moetune-cli (fleet tune / push / undo). The agent, sshd,
// install-config, the profiles' shell commands and every file are real; config folders are compared byte
// for byte.
#include "clirun.h"
#include "core/util/shellquote.h"
#include "fleetfixture.h"
#include "remote/agent/agentclient.h"
#include "remote/fleet/fleetdiagnoseflow.h"
#include "remote/fleet/fleetrolloutflow.h"
#include "remote/fleet/fleettuneflow.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/waiter.h"
#include "remote/hosts/hoststore.h"

#include <QCoreApplication>
#include <QDirIterator>
#include <QJsonArray>
#include <QMap>
#include <QSettings>
#include <QtTest>

#include <memory>

using namespace Qt::StringLiterals;
using namespace moetune;
using namespace moetune::test;

namespace {

using Snapshot = QMap<QString, QByteArray>;

Snapshot snapshot(const QString &root) {
    Snapshot s;
    QDirIterator it(root, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        if (QFileInfo(path).isDir()) {
            s.insert(path + u'/', QByteArray("<folder>"));
            continue;
        }
        QFile f(path);
        s.insert(path, f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>"));
    }
    return s;
}

QString diff(const Snapshot &a, const Snapshot &b) {
    QStringList out;
    for (auto it = a.cbegin(); it != a.cend(); ++it) {
        if (!b.contains(it.key()))
            out.append(u"only before: "_s + it.key());
        else if (b.value(it.key()) != it.value())
            out.append(u"differs: "_s + it.key());
    }
    for (auto it = b.cbegin(); it != b.cend(); ++it)
        if (!a.contains(it.key()))
            out.append(u"only after: "_s + it.key());
    return out.join(u'\n');
}

struct Window {
    QString host;
    double stop = 0;
    double start = 0;
};

} // namespace

class TestFleetRollout : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<FleetFixture> m_fleet;
    QString m_workspace;
    QString m_cli;
    FleetRecord m_record;
    QHash<QString, QPointer<HostSession>> m_sessions;
    QMap<QString, Snapshot> m_before; // every host's config folder before anything was pushed
    int m_h200 = -1, m_h100 = -1, m_old = -1;

    int index(const QString &name) const { return m_fleet->indexOf(name); }
    QString restartsFile(int i) const { return m_fleet->root(i) + u"/restarts.txt"_s; }

    // The fixture's host, its profile's stop and start commands writing when they ran (host-side clock,
    // nanoseconds) into the host's tree: the restart windows the max-parallel check reads.
    HostConfig hostConfig(int i) const {
        HostConfig c = m_fleet->hostConfig(i);
        const QString file = shellQuote(restartsFile(i));
        c.serverProfile.stopCommand =
            u"printf 'stop %s\\n' \"$(date +%s.%N)\" >> "_s + file + u"; "_s + c.serverProfile.stopCommand;
        c.serverProfile.startCommand =
            u"printf 'start %s\\n' \"$(date +%s.%N)\" >> "_s + file + u"; "_s + c.serverProfile.startCommand;
        return c;
    }

    FleetSessionProvider provider() {
        return [this](const FleetHost &host, QString *error) -> HostSession * {
            if (HostSession *s = m_sessions.value(host.name))
                return s;
            const int i = index(host.name);
            if (i < 0) {
                *error = u"not a host of the test fleet"_s;
                return nullptr;
            }
            auto *s = new HostSession(hostConfig(i),
                                      m_fleet->environment(AgentClient::defaultLocalAgentPath()), this);
            connect(s, &HostSession::hostKeyUnknown, s, [s] { s->answerHostKey(false); });
            connect(s, &HostSession::secretRequested, s, [s] { s->cancelSecret(); });
            connect(s, &HostSession::stateChanged, s,
                    [name = host.name](Transport::State st, const QString &m) {
                        qInfo("session %s: %s %s", qPrintable(name), qPrintable(Transport::stateName(st)),
                              qPrintable(m));
                    });
            m_sessions.insert(host.name, s);
            return s;
        };
    }

    const FleetHostRecord &rec(const QString &name) const { return *m_record.host(name); }
    int groupOf(const QString &host) const {
        for (int g = 0; g < m_record.groups.size(); ++g)
            if (m_record.groups.at(g).group.hosts.contains(host))
                return g;
        return -1;
    }
    QString stages() const {
        QStringList out;
        for (const FleetHostRecord &h : m_record.hosts)
            out << u"%1 %2: %3"_s.arg(h.host.name, fleetStageName(h.stage), h.reason);
        return out.join(u'\n');
    }

    QList<Window> windows(const QStringList &hosts) const {
        QList<Window> out;
        for (const QString &name : hosts) {
            QFile f(restartsFile(index(name)));
            if (!f.open(QIODevice::ReadOnly))
                continue;
            Window w;
            w.host = name;
            for (const QByteArray &line : f.readAll().split('\n')) {
                const QList<QByteArray> parts = line.split(' ');
                if (parts.size() != 2)
                    continue;
                if (parts[0] == "stop")
                    w.stop = parts[1].toDouble();
                else if (parts[0] == "start" && w.stop > 0) {
                    w.start = parts[1].toDouble();
                    out.append(w);
                    w = Window{name};
                }
            }
        }
        std::sort(out.begin(), out.end(), [](const Window &a, const Window &b) { return a.stop < b.stop; });
        return out;
    }

    // Runs a rollout or an undo of one group through the flows and waits for its end.
    bool runRollout(const std::function<void(FleetRolloutFlow &)> &start, QString *message,
                    QList<QPair<QString, double>> *restarting = nullptr) {
        FleetRolloutFlow flow(&m_record, provider(), m_workspace);
        Waiter waiter;
        bool ok = false;
        connect(&flow, &FleetRolloutFlow::hostChanged, &flow, [&](int i) {
            const FleetHostRecord &h = m_record.hosts.at(i);
            qInfo("[%s] %s: %s", qPrintable(h.host.name), qPrintable(fleetStageName(h.stage)),
                  qPrintable(h.reason));
            if (restarting)
                restarting->append({h.host.name + u' ' + fleetStageName(h.stage),
                                    double(QDateTime::currentMSecsSinceEpoch()) / 1000.0});
        });
        connect(&flow, &FleetRolloutFlow::finished, &flow, [&](int, bool o, const QString &m) {
            ok = o;
            *message = m;
            waiter.done();
        });
        start(flow);
        if (!waiter.wait(600000))
            *message = u"timed out"_s;
        return ok;
    }

    moetune::test::CliResult cli(const QStringList &args) {
        return runCli(m_cli,
                      args + QStringList{u"--workspace"_s, m_workspace, u"--ssh-config"_s,
                                         m_fleet->sshHome().configPath()},
                      600000);
    }

    void reload() {
        QString error;
        const auto r =
            FleetRecord::load(QDir(m_workspace).filePath(u"fleet/%1.json"_s.arg(m_record.id)), &error);
        QVERIFY2(r, qPrintable(error));
        m_record = *r;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        qunsetenv("SSH_AUTH_SOCK");
        QList<FleetHostSpec> specs = FleetFixture::standardScenario();
        FleetHostSpec outside; // a host of the inventory the user did not select: never touched
        outside.name = u"gpu-11"_s;
        outside.gpuCount = 8;
        outside.groups = {u"h200"_s};
        specs.append(outside);
        m_fleet = std::make_unique<FleetFixture>(specs);
        QString error;
        QVERIFY2(m_fleet->start(&error), qPrintable(error));
        // The CLI runs as this user: the fleet's ~/.ssh, the app's saved hosts (python, log, profile) in
        // its settings, a workspace of the test's own.
        qputenv("HOME", m_fleet->home().toUtf8());
        qputenv("XDG_CONFIG_HOME", (m_dir.path() + u"/config"_s).toUtf8());
        qputenv("XDG_DATA_HOME", (m_dir.path() + u"/data"_s).toUtf8());
        m_workspace = m_dir.path() + u"/workspace"_s;
        {
            QSettings settings(m_dir.path() + u"/config/moetune/moetune.conf"_s, QSettings::IniFormat);
            HostStore store(&settings, m_fleet->sshHome().configPath());
            for (int i = 0; i < m_fleet->size(); ++i)
                store.save(hostConfig(i));
            settings.sync();
            QCOMPARE(settings.status(), QSettings::NoError);
        }
        m_cli = QCoreApplication::applicationDirPath() + u"/../../src/cli/moetune-cli"_s;
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
        for (int i = 0; i < m_fleet->size(); ++i)
            m_before.insert(m_fleet->spec(i).name, snapshot(m_fleet->configRoot(i)));
    }

    void cleanupTestCase() {
        for (const QPointer<HostSession> &s : std::as_const(m_sessions))
            delete s.data();
        m_sessions.clear();
        m_fleet.reset();
    }

    // The set: every host but gpu-11. Diagnosed by F1's flow: three groups; gpu-08 and gpu-09 unreachable
    // with their reasons.
    void diagnoseTheSet() {
        m_record.id = FleetRecord::newId();
        m_record.createdAt = double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
        m_record.selection = u"every host but gpu-11"_s;
        for (const FleetHost &h : m_fleet->fleetHosts()) {
            if (h.name == u"gpu-11"_s)
                continue;
            FleetHostRecord r;
            r.host = h;
            m_record.hosts.append(r);
        }
        FleetDiagnoseFlow flow(&m_record, provider(), m_workspace);
        // As the CLI's provider does: a session the diagnosis is done with is let go (it disconnects it),
        // so the tune and rollout flows later connect sessions of their own.
        flow.setSessionDone([this](const FleetHost &host, HostSession *session) {
            m_sessions.remove(host.name);
            session->deleteLater();
        });
        Waiter waiter;
        connect(&flow, &FleetDiagnoseFlow::finished, &flow, [&] { waiter.done(); });
        flow.start();
        QVERIFY(waiter.wait(600000));
        QCOMPARE(m_record.groups.size(), 3);
        m_h200 = groupOf(u"gpu-01"_s);
        m_h100 = groupOf(u"gpu-04"_s);
        m_old = groupOf(u"gpu-06"_s);
        QVERIFY2(m_h200 >= 0 && m_h100 >= 0 && m_old >= 0, qPrintable(stages()));
        QCOMPARE(m_record.groups.at(m_h200).group.hosts,
                 (QStringList{u"gpu-01"_s, u"gpu-02"_s, u"gpu-03"_s, u"gpu-10"_s}));
        QCOMPARE(rec(u"gpu-08"_s).stage, FleetHostStage::Unreachable);
        QCOMPARE(rec(u"gpu-09"_s).stage, FleetHostStage::Unreachable);
        QVERIFY2(rec(u"gpu-09"_s).reason.contains(u"changed"_s), qPrintable(rec(u"gpu-09"_s).reason));
        QVERIFY(!rec(u"gpu-08"_s).reason.isEmpty());
    }

    // One job per group, in parallel, each on a host of its group: gpu-02 chosen by the user for the H200
    // group, the others picked. Every number is SIMULATED (synthetic backend).
    void tuneOncePerGroup() {
        QVERIFY(m_h200 >= 0);
        FleetTuneFlow flow(&m_record, provider(), m_workspace);
        FleetTuneFlow::Options o;
        o.backend = u"synthetic"_s;
        o.batchSizes = {1, 16};
        flow.setOptions(o);
        Waiter waiter;
        QMap<int, QPair<bool, QString>> ended;
        QSet<int> progressed;
        connect(&flow, &FleetTuneFlow::progress, &flow, [&](int g, qint64, qint64) { progressed.insert(g); });
        connect(&flow, &FleetTuneFlow::status, &flow,
                [](int, const QString &l) { qInfo("%s", qPrintable(l)); });
        connect(&flow, &FleetTuneFlow::hostChanged, &flow, [&](int i) {
            qInfo("[%s] %s: %s", qPrintable(m_record.hosts.at(i).host.name),
                  qPrintable(fleetStageName(m_record.hosts.at(i).stage)),
                  qPrintable(m_record.hosts.at(i).reason));
        });
        connect(&flow, &FleetTuneFlow::finished, &flow, [&](int g, bool ok, const QString &m) {
            ended.insert(g, {ok, m});
            if (ended.size() == 2)
                waiter.done();
        });
        flow.tuneGroup(m_h200, u"gpu-02"_s);
        flow.tuneGroup(m_h100, QString());
        QVERIFY(flow.isRunning(m_h200) && flow.isRunning(m_h100)); // both at once
        QVERIFY2(waiter.wait(600000), qPrintable(stages()));
        for (const int g : {m_h200, m_h100}) {
            QVERIFY2(ended.value(g).first, qPrintable(ended.value(g).second + u'\n' + stages()));
            const FleetGroupRecord &gr = m_record.groups.at(g);
            QCOMPARE(gr.state, u"tuned"_s);
            QVERIFY(gr.group.hosts.contains(gr.tuneHost));
            QVERIFY(!gr.runId.isEmpty());
            QCOMPARE(
                gr.resultFile,
                QDir(m_workspace).filePath(u"fleet/%1/group-%2/result.json"_s.arg(m_record.id).arg(g + 1)));
            QFile f(gr.resultFile);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QJsonObject result = QJsonDocument::fromJson(f.readAll()).object();
            QCOMPARE(result.value("format"_L1).toString(), u"moetune-result"_s);
            QVERIFY(result.value("simulated"_L1).toBool()); // labelled: no GPU measured it
            QCOMPARE(rec(gr.tuneHost).stage, FleetHostStage::Tuned);
            QVERIFY(ended.value(g).second.contains(u"SIMULATED"_s));
            QVERIFY(progressed.contains(g));
        }
        QCOMPARE(m_record.groups.at(m_h200).tuneHost, u"gpu-02"_s);
        // The files are named for each group's GPU: the H100 group's result is not the H200 one's.
        QFile h100(m_record.groups.at(m_h100).resultFile);
        QVERIFY(h100.open(QIODevice::ReadOnly));
        QVERIFY(h100.readAll().contains("NVIDIA_H100_80GB_HBM3"));
        // A host that is no host of the group is refused before anything runs.
        QString message;
        connect(&flow, &FleetTuneFlow::finished, &flow, [&](int, bool, const QString &m) { message = m; });
        flow.tuneGroup(m_h200, u"gpu-04"_s);
        QVERIFY2(message.contains(u"not a host of group"_s), qPrintable(message));
        reload(); // saved after every outcome
        QCOMPARE(m_record.groups.at(m_h200).state, u"tuned"_s);
    }

    // Canary gpu-01, then one host at a time: gpu-02 (the tune host, its own run), gpu-03 whose restart fails
    // (stopped there and undone: its folder is what it was), gpu-10 skipped and untouched.
    void rollingPushStopsAtTheFailingHostAndUndoesIt() {
        QVERIFY(m_h200 >= 0 && !m_record.groups.at(m_h200).resultFile.isEmpty());
        FleetRolloutFlow::Options o;
        o.canary = u"gpu-01"_s;
        o.maxParallel = 1;
        QString message;
        QList<QPair<QString, double>> events;
        const bool ok = runRollout([&](FleetRolloutFlow &f) { f.rollOut(m_h200, o); }, &message, &events);
        QVERIFY2(!ok, qPrintable(message));
        QVERIFY2(message.contains(u"stopped at gpu-03"_s), qPrintable(message + u'\n' + stages()));
        QCOMPARE(m_record.groups.at(m_h200).canary, u"gpu-01"_s);
        QCOMPARE(m_record.groups.at(m_h200).state, u"stopped"_s);
        QCOMPARE(rec(u"gpu-01"_s).stage, FleetHostStage::Proved);
        QCOMPARE(rec(u"gpu-02"_s).stage, FleetHostStage::Proved);
        QVERIFY2(rec(u"gpu-03"_s).stage == FleetHostStage::Undone, qPrintable(stages()));
        QVERIFY2(rec(u"gpu-03"_s).reason.contains(u"restart failed"_s), qPrintable(rec(u"gpu-03"_s).reason));
        QVERIFY(rec(u"gpu-03"_s).undone);
        QCOMPARE(rec(u"gpu-10"_s).stage, FleetHostStage::Skipped);
        QVERIFY2(rec(u"gpu-10"_s).reason.contains(u"gpu-03"_s), qPrintable(rec(u"gpu-10"_s).reason));
        // gpu-01 imported the group's result as a run of its own; gpu-02 pushed the run tuned there.
        QVERIFY(!rec(u"gpu-01"_s).runId.isEmpty());
        QVERIFY(rec(u"gpu-01"_s).runId != m_record.groups.at(m_h200).runId);
        QCOMPARE(rec(u"gpu-02"_s).runId, m_record.groups.at(m_h200).runId);
        for (const QString &h : {u"gpu-01"_s, u"gpu-02"_s}) {
            const int i = index(h);
            QVERIFY2(!diff(m_before.value(h), snapshot(m_fleet->configRoot(i))).isEmpty(), qPrintable(h));
            QVERIFY(QFile::exists(m_fleet->configRoot(i) + u'/' + m_fleet->tritonFolder(i) + u'/' +
                                  m_fleet->missingConfig(i)));
            QVERIFY(rec(h).push.changedSomething());
            QVERIFY(!rec(h).proof.isEmpty());
        }
        // Read back: the failing host's folder is byte for byte what it was; the skipped one never changed.
        for (const QString &h : {u"gpu-03"_s, u"gpu-10"_s, u"gpu-08"_s, u"gpu-09"_s, u"gpu-11"_s})
            QCOMPARE(diff(m_before.value(h), snapshot(m_fleet->configRoot(index(h)))), QString());
        // Hosts outside the selection and the unreachable ones: no restart, no agent, no run.
        for (const QString &h : {u"gpu-10"_s, u"gpu-11"_s, u"gpu-08"_s, u"gpu-09"_s})
            QVERIFY2(!QFile::exists(restartsFile(index(h))), qPrintable(h));
        QVERIFY(!QFileInfo::exists(m_fleet->sshd(index(u"gpu-11"_s))->remoteHome() + u"/.cache/moetune"_s));
        QCOMPARE(rec(u"gpu-08"_s).stage, FleetHostStage::Unreachable);
        QCOMPARE(rec(u"gpu-09"_s).stage, FleetHostStage::Unreachable);
        // --max-parallel 1: no two restarts overlap (the hosts' own clock, from their profiles' commands),
        // in the order canary, gpu-02, gpu-03.
        const QList<Window> w = windows({u"gpu-01"_s, u"gpu-02"_s, u"gpu-03"_s});
        QCOMPARE(w.size(), 3);
        QCOMPARE(w.at(0).host, u"gpu-01"_s);
        QCOMPARE(w.at(1).host, u"gpu-02"_s);
        QCOMPARE(w.at(2).host, u"gpu-03"_s);
        for (qsizetype k = 1; k < w.size(); ++k)
            QVERIFY2(w.at(k).stop > w.at(k - 1).start, qPrintable(w.at(k).host));
        // ... and each host was proved before the next one's restart began (the flow's own events).
        double provedAt = 0;
        for (const auto &e : events) {
            if (e.first.endsWith(u" restarting"_s))
                QVERIFY2(e.second >= provedAt, qPrintable(e.first));
            if (e.first.endsWith(u" proved"_s))
                provedAt = e.second;
        }
        reload();
        QCOMPARE(rec(u"gpu-03"_s).stage, FleetHostStage::Undone);
    }

    // fleet undo of the group through the flow: every pushed host back, read back byte for byte.
    void undoTheGroupThroughTheFlow() {
        QString message;
        const bool ok = runRollout([&](FleetRolloutFlow &f) { f.undoGroup(m_h200); }, &message);
        QVERIFY2(ok, qPrintable(message + u'\n' + stages()));
        QCOMPARE(m_record.groups.at(m_h200).state, u"undone"_s);
        for (const QString &h : {u"gpu-01"_s, u"gpu-02"_s, u"gpu-03"_s, u"gpu-10"_s})
            QCOMPARE(diff(m_before.value(h), snapshot(m_fleet->configRoot(index(h)))), QString());
        QCOMPARE(rec(u"gpu-01"_s).stage, FleetHostStage::Undone);
        QCOMPARE(rec(u"gpu-02"_s).stage, FleetHostStage::Undone);
        QCOMPARE(rec(u"gpu-10"_s).stage, FleetHostStage::Skipped); // nothing was pushed there
        // Again: nothing left to undo.
        QVERIFY(runRollout([&](FleetRolloutFlow &f) { f.undoGroup(m_h200); }, &message));
        QVERIFY2(message.contains(u"nothing to undo"_s), qPrintable(message));
    }

    // The CLI: tune the Triton 3.5.0 group, push the H100 group (canary gpu-05, two at once) and the 3.5.0
    // group, undo both, on the record the flows saved (the newest of the workspace).
    void throughTheCli() {
        QVERIFY(m_old >= 0);
        const QString oldN = QString::number(m_old + 1);
        const QString h100N = QString::number(m_h100 + 1);
        CliResult r = cli({u"fleet"_s, u"tune"_s, u"--group"_s, oldN, u"--backend"_s, u"synthetic"_s,
                           u"--batch-sizes"_s, u"1,16"_s, u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(u"[gpu-06]"_s) || r.err.contains(u"[gpu-07]"_s), qPrintable(r.err));
        const QJsonObject tuned = r.json();
        QCOMPARE(tuned.value("id"_L1).toString(), m_record.id);
        reload();
        QCOMPARE(m_record.groups.at(m_old).state, u"tuned"_s);

        r = cli({u"fleet"_s, u"push"_s, u"--group"_s, h100N, u"--canary"_s, u"gpu-05"_s, u"--max-parallel"_s,
                 u"2"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err + QString::fromUtf8(r.out)));
        QVERIFY2(r.err.contains(u"[gpu-05] "_s) && r.err.contains(u"[gpu-04] "_s), qPrintable(r.err));
        QVERIFY2(r.out.contains("rolled out"), r.out.constData());
        reload();
        QCOMPARE(m_record.groups.at(m_h100).canary, u"gpu-05"_s);
        for (const QString &h : {u"gpu-04"_s, u"gpu-05"_s}) {
            QCOMPARE(rec(h).stage, FleetHostStage::Proved);
            QVERIFY(!diff(m_before.value(h), snapshot(m_fleet->configRoot(index(h)))).isEmpty());
        }
        const QList<Window> w = windows({u"gpu-05"_s, u"gpu-04"_s});
        QCOMPARE(w.size(), 2);
        QCOMPARE(w.at(0).host, u"gpu-05"_s); // the canary restarted (and was proved) first

        r = cli({u"fleet"_s, u"push"_s, u"--group"_s, oldN, u"--format"_s, u"json"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject pushed = r.json();
        QVERIFY(pushed.value("hosts"_L1).isArray());
        reload();
        for (const QString &h : {u"gpu-06"_s, u"gpu-07"_s})
            QCOMPARE(rec(h).stage, FleetHostStage::Proved);

        r = cli({u"fleet"_s, u"undo"_s, u"--group"_s, h100N});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = cli({u"fleet"_s, u"undo"_s, u"--group"_s, oldN});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        reload();
        for (const QString &h : {u"gpu-04"_s, u"gpu-05"_s, u"gpu-06"_s, u"gpu-07"_s}) {
            QCOMPARE(rec(h).stage, FleetHostStage::Undone);
            QCOMPARE(diff(m_before.value(h), snapshot(m_fleet->configRoot(index(h)))), QString());
        }
        // Still never touched.
        for (const QString &h : {u"gpu-08"_s, u"gpu-09"_s, u"gpu-11"_s, u"gpu-10"_s})
            QCOMPARE(diff(m_before.value(h), snapshot(m_fleet->configRoot(index(h)))), QString());

        // Usage errors: exit 2, nothing run.
        r = cli({u"fleet"_s, u"push"_s, u"--group"_s, u"9"_s});
        QCOMPARE(r.exitCode, 2);
        r = cli({u"fleet"_s, u"push"_s, u"--canary"_s, u"gpu-01"_s});
        QCOMPARE(r.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestFleetRollout)
#include "tst_fleet_rollout.moc"
