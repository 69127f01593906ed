// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Fleet diagnose (issue 46) against FleetFixture's standard scenario: 10 hosts, 9 real sshd on 127.0.0.1,
// each with its own labelled fake server tree (PRACTICE / TEST DOUBLE: fake SGLang packages, a fake
// fused-MoE kernel source, a fake nvidia-smi, the fake SGLang server), forming three tuning groups (two
// GPU names, two Triton versions), plus one unreachable host, one whose host key changed and one whose
// restart fails. The agent, its probe, the transport and the diagnosis are the real ones.
#include "clirun.h"
#include "core/fleet/fleetrecord.h"
#include "fleetfixture.h"
#include "remote/agent/agentclient.h"
#include "remote/fleet/fleetdiagnoseflow.h"
#include "remote/flows/jobwaiter.h"
#include "remote/hosts/hoststore.h"
#include "remote/transport/sshtransport.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace moetune;
using namespace moetune::test;

class TestFleetDiagnose : public QObject {
    Q_OBJECT

    std::unique_ptr<FleetFixture> m_fleet;
    QTemporaryDir m_tmp;

    QString appSettings() const { return m_tmp.path() + u"/moetune.ini"_s; }

    // moetune-cli as a user of this fleet runs it: $HOME with the fleet's ~/.ssh, the app's saved hosts in
    // its settings ($XDG_CONFIG_HOME/moetune/moetune.conf), no ssh-agent.
    CliResult cli(const QStringList &args) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"HOME"_s, m_fleet->home());
        env.insert(u"XDG_CONFIG_HOME"_s, m_tmp.path() + u"/xdg-config"_s);
        env.insert(u"XDG_DATA_HOME"_s, m_tmp.path() + u"/xdg-data"_s);
        env.insert(u"MOETUNE_AGENT_PYZ"_s, AgentClient::defaultLocalAgentPath());
        env.remove(u"SSH_AUTH_SOCK"_s);
        const QString program = QCoreApplication::applicationDirPath() + u"/../../src/cli/moetune-cli"_s;
        return runCli(program, QStringList{u"fleet"_s, u"diagnose"_s} + args, 300000, env);
    }

    // A record of the hosts named (all when empty), diagnosed through FleetDiagnoseFlow with sessions made
    // as the CLI makes them: fleetHostConfig over the fleet's ssh config and the app's saved hosts.
    FleetRecord diagnose(const QStringList &names, const HostSession::Environment &env, int maxSessions,
                         int *peak = nullptr, const QString &workspace = {}) {
        FleetRecord record;
        record.id = FleetRecord::newId();
        record.selection = names.isEmpty() ? u"all"_s : names.join(u' ');
        for (const FleetHost &h : m_fleet->fleetHosts()) {
            if (names.isEmpty() || names.contains(h.name)) {
                FleetHostRecord r;
                r.host = h;
                record.hosts.append(r);
            }
        }
        QSettings settings(appSettings(), QSettings::IniFormat);
        const HostStore store(&settings, m_fleet->sshHome().configPath());
        QObject owner;
        int live = 0;
        int maxLive = 0;
        FleetDiagnoseFlow flow(
            &record,
            [&](const FleetHost &host, QString *) {
                ++live;
                maxLive = std::max(maxLive, live);
                return new HostSession(fleetHostConfig(host, m_fleet->sshHome().configPath(), store), env,
                                       &owner);
            },
            workspace);
        flow.setMaxSessions(maxSessions);
        flow.setSessionDone([&live](const FleetHost &, HostSession *s) {
            --live;
            s->deleteLater();
        });
        QSignalSpy finished(&flow, &FleetDiagnoseFlow::finished);
        flow.start();
        [&] { QVERIFY(finished.wait(240000)); }();
        if (peak)
            *peak = std::max(flow.peakSessions(), maxLive);
        return record;
    }

private slots:
    void initTestCase() {
        qunsetenv("SSH_AUTH_SOCK");
        m_fleet = std::make_unique<FleetFixture>(FleetFixture::standardScenario());
        QString error;
        QVERIFY2(m_fleet->start(&error), qPrintable(error));
        // The app's saved hosts: each names its own server (port) and log, for the flow and the CLI.
        QVERIFY(m_fleet->saveAppHosts(appSettings()));
        QVERIFY(m_fleet->saveAppHosts(m_tmp.path() + u"/xdg-config/moetune/moetune.conf"_s));
        QVERIFY(m_fleet->writeInventoryIni(m_tmp.path() + u"/fleet.ini"_s));
        QVERIFY(m_fleet->writeInventoryYaml(m_tmp.path() + u"/fleet.yml"_s));
    }

    // The fixture itself: every reachable host answers over its own sshd with the fleet's ~/.ssh, the
    // unreachable one does not, the changed key is refused; each server's log names the file it wants.
    void fixtureHostsStartAndAnswer() {
        int sshds = 0;
        for (int i = 0; i < m_fleet->size(); ++i) {
            const FleetHostSpec &spec = m_fleet->spec(i);
            sshds += m_fleet->sshd(i) ? 1 : 0;
            SshOptions o = m_fleet->environment({}).ssh;
            o.host = m_fleet->hostConfig(i);
            o.maxReconnectAttempts = 0;
            o.connectTimeoutMs = 5000;
            SshTransport t(o);
            t.connectToHost();
            QString error;
            const bool connected = waitForConnected(&t, 20000, &error);
            if (spec.unreachable || spec.hostKeyChanged) {
                QVERIFY2(!connected, qPrintable(spec.name));
                if (spec.hostKeyChanged)
                    QVERIFY2(error.contains(u"changed"_s), qPrintable(error));
            } else {
                QVERIFY2(connected, qPrintable(spec.name + u": "_s + error));
            }
            QFile log(m_fleet->log(i));
            QVERIFY(log.open(QIODevice::ReadOnly));
            const QString text = QString::fromUtf8(log.readAll());
            QVERIFY2(text.contains(m_fleet->tritonFolder(i) + u'/' + m_fleet->missingConfig(i)),
                     qPrintable(text));
            QVERIFY2(text.contains(u"PRACTICE DOUBLE"_s), qPrintable(text));
            QVERIFY(m_fleet->serverPid(i) > 0);
        }
        QVERIFY(sshds >= 8);
        // Kernel variants: the same bytes give the same hash on every host.
        QCOMPARE(m_fleet->kernelSourceHash(0), m_fleet->kernelSourceHash(1));
        QCOMPARE(m_fleet->kernelSourceHash(0).size(), 64);
        QVERIFY(m_fleet->deviceName(3) == u"NVIDIA_H100_80GB_HBM3"_s);
    }
    // The standard scenario through the flow: three groups, the unreachable and changed-key hosts listed
    // with their reasons, every diagnosed host's facts from its own server, the record saved.
    void diagnoseTheStandardFleet() {
        const QString workspace = m_tmp.path() + u"/workspace"_s;
        int peak = 0;
        const FleetRecord r =
            diagnose({}, m_fleet->environment(AgentClient::defaultLocalAgentPath()), 8, &peak, workspace);
        QCOMPARE(r.hosts.size(), m_fleet->size());
        QVERIFY2(peak >= 2 && peak <= 8, qPrintable(QString::number(peak)));

        for (int i = 0; i < m_fleet->size(); ++i) {
            const FleetHostSpec &spec = m_fleet->spec(i);
            const FleetHostRecord &h = r.hosts.at(i);
            QCOMPARE(h.host.name, spec.name);
            const QString what = spec.name + u": "_s + fleetStageName(h.stage) + u" " + h.reason;
            if (spec.unreachable) {
                QVERIFY2(h.stage == FleetHostStage::Unreachable, qPrintable(what));
                QVERIFY2(!h.reason.isEmpty(), qPrintable(what));
                QCOMPARE(h.group, -1);
                continue;
            }
            if (spec.hostKeyChanged) {
                QVERIFY2(h.stage == FleetHostStage::Unreachable, qPrintable(what));
                QVERIFY2(h.reason.contains(u"changed"_s), qPrintable(what));
                QCOMPARE(h.group, -1);
                continue;
            }
            QVERIFY2(h.stage == FleetHostStage::Diagnosed, qPrintable(what));
            QCOMPARE(h.gpu, u"8x "_s + spec.gpuName);
            QCOMPARE(h.framework, u"sglang"_s);
            QCOMPARE(h.frameworkVersion, spec.sglangVersion);
            QCOMPARE(h.triton, spec.triton);
            QVERIFY2(h.model.endsWith(u"/models/Qwen3-30B-A3B"_s), qPrintable(h.model));
            QVERIFY2(h.model.startsWith(m_fleet->root(i)), qPrintable(h.model)); // its own server
            QCOMPARE(h.moeKernel, u"Triton fused MoE, default config"_s);
            QVERIFY2(!h.findings.isEmpty(), qPrintable(what));
            QCOMPARE(h.facts.host, spec.name);
            QCOMPARE(h.facts.deviceName, m_fleet->deviceName(i));
            QCOMPARE(h.facts.tritonFolder, m_fleet->tritonFolder(i));
            QCOMPARE(h.facts.experts, 128);
            QCOMPARE(h.facts.intermediate, 384);
            QCOMPARE(h.facts.missingConfig, m_fleet->missingConfig(i));
            QCOMPARE(h.facts.kernelSourceHash, m_fleet->kernelSourceHash(i));
        }

        // Three groups, one tuning job each; the differences named.
        QCOMPARE(r.groups.size(), 3);
        QCOMPARE(r.groups.at(0).group.hosts,
                 (QStringList{u"gpu-01"_s, u"gpu-02"_s, u"gpu-03"_s, u"gpu-10"_s}));
        QCOMPARE(r.groups.at(1).group.hosts, (QStringList{u"gpu-04"_s, u"gpu-05"_s}));
        QCOMPARE(r.groups.at(2).group.hosts, (QStringList{u"gpu-06"_s, u"gpu-07"_s}));
        QCOMPARE(r.groups.at(2).group.frameworkVersions, QStringList{u"0.5.4"_s});
        QCOMPARE(r.differences.size(), 3);
        const QString gpuApart = r.differences.at(0).reasons.join(u'\n');
        QVERIFY2(gpuApart.contains(u"NVIDIA_H200 vs NVIDIA_H100_80GB_HBM3"_s), qPrintable(gpuApart));
        const QString tritonApart = r.differences.at(1).reasons.join(u'\n');
        QVERIFY2(tritonApart.contains(u"Triton 3.6.0 vs 3.5.0"_s), qPrintable(tritonApart));
        QCOMPARE(r.host(u"gpu-05"_s)->group, 1);

        // Saved: the same record read back from <workspace>/fleet/<id>.json.
        QString error;
        const auto saved = FleetRecord::load(workspace + u"/fleet/"_s + r.id + u".json"_s, &error);
        QVERIFY2(saved, qPrintable(error));
        QCOMPARE(saved->toJson(), r.toJson());
    }

    // A fleet never trusts an unknown key and never asks: the host ends Unreachable with the sentence
    // that says how to trust it; a host with no known_hosts entry changes nothing for the others.
    void unknownHostKeyIsRefusedPerHost() {
        HostSession::Environment env = m_fleet->environment(AgentClient::defaultLocalAgentPath());
        env.ssh.knownHostsFile = m_tmp.path() + u"/empty_known_hosts"_s;
        QFile empty(env.ssh.knownHostsFile);
        QVERIFY(empty.open(QIODevice::WriteOnly));
        empty.close();
        const FleetRecord r = diagnose({u"gpu-02"_s}, env, 8);
        QCOMPARE(r.hosts.size(), 1);
        QCOMPARE(r.hosts.at(0).stage, FleetHostStage::Unreachable);
        QCOMPARE(r.hosts.at(0).reason, fleetUnknownHostKeyReason(u"gpu-02"_s));
        QFile after(env.ssh.knownHostsFile);
        QVERIFY(after.open(QIODevice::ReadOnly));
        QVERIFY(after.readAll().isEmpty()); // nothing was written for it
    }
    // `moetune-cli fleet diagnose` over an INI inventory: the record as JSON, its groups and the reasons,
    // exit 1 because two hosts are unreachable; the record saved where it says.
    void cliJsonFromIniInventory() {
        const QString ini = m_tmp.path() + u"/fleet.ini"_s;
        const QString workspace = m_tmp.path() + u"/cli-workspace"_s;
        const CliResult r = cli({u"--inventory"_s, ini, u"--format"_s, u"json"_s, u"--workspace"_s, workspace,
                                 u"--max-sessions"_s, u"4"_s});
        QVERIFY2(r.exitCode == 1, qPrintable(r.err));
        const QJsonObject o = r.json();
        QCOMPARE(o.value("format"_L1).toString(), u"moetune-fleet"_s);
        QCOMPARE(o.value("totals"_L1).toObject().value("diagnosed"_L1).toInt(), 8);
        QCOMPARE(o.value("totals"_L1).toObject().value("unreachable"_L1).toInt(), 2);
        QCOMPARE(o.value("groups"_L1).toArray().size(), 3);
        QString error;
        const auto record = FleetRecord::fromJson(o, &error);
        QVERIFY2(record, qPrintable(error));
        QCOMPARE(record->groups.at(1).group.hosts, (QStringList{u"gpu-04"_s, u"gpu-05"_s}));
        QCOMPARE(record->host(u"gpu-08"_s)->stage, FleetHostStage::Unreachable);
        QVERIFY2(record->host(u"gpu-09"_s)->reason.contains(u"changed"_s),
                 qPrintable(record->host(u"gpu-09"_s)->reason));
        QCOMPARE(record->host(u"gpu-06"_s)->facts.kernelSourceHash,
                 m_fleet->kernelSourceHash(m_fleet->indexOf(u"gpu-06"_s)));
        const QString file = o.value("record_file"_L1).toString();
        QCOMPARE(file, workspace + u"/fleet/"_s + record->id + u".json"_s);
        const auto saved = FleetRecord::load(file, &error);
        QVERIFY2(saved, qPrintable(error));
        QCOMPARE(saved->toJson(), record->toJson());
        QCOMPARE(saved->inventory, ini);
    }

    // The text table over a YAML inventory: every host with its GPU, framework, Triton, model and MoE
    // kernel; the unreachable ones with the reason; the groups and what sets them apart; the record's id.
    void cliTextFromYamlInventory() {
        const QString yml = m_tmp.path() + u"/fleet.yml"_s;
        const CliResult r =
            cli({u"--inventory"_s, yml, u"--workspace"_s, m_tmp.path() + u"/cli-workspace"_s});
        QVERIFY2(r.exitCode == 1, qPrintable(r.err));
        const QString out = QString::fromUtf8(r.out);
        qInfo().noquote() << "moetune-cli fleet diagnose --inventory fleet.yml:\n" << out << r.err;
        for (const QString &line : out.split(u'\n')) {
            if (line.startsWith(u"gpu-04 "_s)) {
                QVERIFY2(line.contains(u"8x NVIDIA H100 80GB HBM3"_s) && line.contains(u"sglang 0.5.6"_s) &&
                             line.contains(u"3.6.0"_s) && line.contains(u"Qwen3-30B-A3B"_s) &&
                             line.contains(u"Triton fused MoE, default config"_s),
                         qPrintable(line));
            }
            if (line.startsWith(u"gpu-08 "_s))
                QVERIFY2(line.contains(u"unreachable: "_s), qPrintable(line));
            if (line.startsWith(u"gpu-09 "_s))
                QVERIFY2(line.contains(u"unreachable: "_s) && line.contains(u"changed"_s), qPrintable(line));
        }
        QVERIFY2(out.contains(u"3 groups (one tuning job each):"_s), qPrintable(out));
        QVERIFY2(out.contains(u"4 hosts: gpu-01, gpu-02, gpu-03, gpu-10"_s), qPrintable(out));
        QVERIFY2(out.contains(u"Group 1 and group 3 apart: Triton 3.6.0 vs 3.5.0"_s), qPrintable(out));
        QVERIFY2(out.contains(u"8 of 10 hosts diagnosed, 2 unreachable, 0 failed."_s), qPrintable(out));
        QVERIFY2(out.contains(u"Fleet record fleet-"_s), qPrintable(out));
        QVERIFY2(r.err.contains(u"[10/10]"_s), qPrintable(r.err)); // a line per host as it ends
    }

    // A group of the inventory, and the ssh config's aliases as the set: every host diagnosed, exit 0.
    void cliGroupAndSshConfig() {
        const QString yml = m_tmp.path() + u"/fleet.yml"_s;
        CliResult r = cli({u"--inventory"_s, yml, u"--group"_s, u"h100"_s, u"--format"_s, u"json"_s,
                           u"--workspace"_s, m_tmp.path() + u"/cli-workspace"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.json().value("hosts"_L1).toArray().size(), 2);
        QCOMPARE(r.json().value("selection"_L1).toString(), u"group h100"_s);
        QCOMPARE(r.json().value("groups"_L1).toArray().size(), 1);

        r = cli({u"--ssh-config"_s, m_fleet->sshHome().configPath(), u"gpu-01"_s, u"gpu-06"_s, u"--format"_s,
                 u"json"_s, u"--workspace"_s, m_tmp.path() + u"/cli-workspace"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.json().value("groups"_L1).toArray().size(), 2);
    }

    // A malformed inventory: exit 2, the file and the line named, nothing connected.
    void cliMalformedInventoryExits2() {
        const QString bad = m_tmp.path() + u"/bad.yml"_s;
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("all:\n  children:\n    h200:\n      hosts: [unclosed\n");
        f.close();
        const CliResult r = cli({u"--inventory"_s, bad});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(u"bad.yml"_s) && r.err.contains(u"inventory"_s), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
        const CliResult unknown =
            cli({u"--inventory"_s, m_tmp.path() + u"/fleet.ini"_s, u"--group"_s, u"nope"_s});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY2(unknown.err.contains(u"nope"_s), qPrintable(unknown.err));
        const CliResult sessions =
            cli({u"--inventory"_s, m_tmp.path() + u"/fleet.ini"_s, u"--max-sessions"_s, u"0"_s});
        QCOMPARE(sessions.exitCode, 2);
    }
    // The session bound fits the open-file limit: with `ulimit -n 100` moetune-cli runs fewer sessions
    // at once than asked, says so, and still diagnoses every host.
    void cliSessionsFitTheOpenFileLimit() {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"HOME"_s, m_fleet->home());
        env.insert(u"XDG_CONFIG_HOME"_s, m_tmp.path() + u"/xdg-config"_s);
        env.insert(u"XDG_DATA_HOME"_s, m_tmp.path() + u"/xdg-data"_s);
        env.insert(u"MOETUNE_AGENT_PYZ"_s, AgentClient::defaultLocalAgentPath());
        env.remove(u"SSH_AUTH_SOCK"_s);
        const QString program = QCoreApplication::applicationDirPath() + u"/../../src/cli/moetune-cli"_s;
        const CliResult r =
            runCli(u"/bin/sh"_s,
                   {u"-c"_s,
                    u"ulimit -n 100 && exec \"$0\" fleet diagnose --inventory \"$1\" gpu-04 gpu-05 "
                    u"--max-sessions 8 --format json"_s,
                    program, m_tmp.path() + u"/fleet.ini"_s},
                   300000, env);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(u"3 sessions at once instead of 8: the open-file limit (ulimit -n) is 100"_s),
                 qPrintable(r.err));
        QCOMPARE(r.json().value("totals"_L1).toObject().value("diagnosed"_L1).toInt(), 2);
    }
};

QTEST_GUILESS_MAIN(TestFleetDiagnose)
#include "tst_fleet_diagnose.moc"
