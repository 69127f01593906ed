// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "remote/flows/hostsession.h"
#include "remote/hosts/hostconfig.h"
#include "sshdfixture.h"
#include "sshhome.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

namespace moetune {
struct FleetHost;
}

namespace moetune::test {

// One host of a test fleet and its knobs.
struct FleetHostSpec {
    QString name; // "gpu-01": the ssh config alias and the inventory name
    QString gpuName =
        QStringLiteral("NVIDIA H200"); // as nvidia-smi prints it; the device name is it with '_'
    int gpuCount = 1;
    QString triton = QStringLiteral("3.6.0");
    QString sglangVersion = QStringLiteral("0.5.6");
    QString kernelVariant = QStringLiteral("a"); // the fused-MoE kernel source's bytes differ per variant
    bool unreachable = false;                    // no sshd: its port has nothing listening
    bool hostKeyChanged = false; // known_hosts has its first key; the sshd then runs with a new one
    bool restartFails = false;   // the server profile's start command fails (the first start works)
    QStringList groups;          // inventory groups
    QStringList tags;            // moetune_tags
};

// A fleet of N hosts on this machine (issue 46), each a real SshdFixture on 127.0.0.1 (its own port, its
// own $HOME) with its own labelled fake server tree: the practice server's tree (PracticeServer, a
// PRACTICE / TEST DOUBLE of an SGLang install, marked as a double so that simulated results may be
// installed into it) with the spec's Triton and SGLang versions, a TEST DOUBLE fused-MoE kernel source
// (sglang/srt/layers/moe/fused_moe_triton/fused_moe.py defining `def fused_moe_kernel(`, its bytes set by
// the kernel variant), a TEST DOUBLE nvidia-smi naming the spec's GPU, and the fake SGLang server
// (resources/practice/fake_sglang_server.py) running on its own port with FAKESERVER_DEVICE_NAME set, so
// its log names the file it wanted and did not find: <configs>/triton_X_Y_Z/E=128,N=384,device_name=DEV.json.
//
// The client side is one user's $HOME (an SshHome): ~/.ssh/config with a Host entry per host (127.0.0.1,
// its port, its key), ~/.ssh/known_hosts with every host's key (the changed-key host: its first key).
// Every fake server runs on THIS machine, so every probe sees all of them: each host's settings (what
// hostConfig() gives, and saveAppHosts() writes as the app's saved hosts) name its own server (its port)
// and its own log, and the choice is made from those, never from "the" server of the machine.
class FleetFixture {
public:
    explicit FleetFixture(QList<FleetHostSpec> specs);
    ~FleetFixture();
    FleetFixture(const FleetFixture &) = delete;
    FleetFixture &operator=(const FleetFixture &) = delete;

    // Issue 46's standard scenario, 10 hosts, 9 real sshd: three groups (H200 + Triton 3.6.0: gpu-01,
    // gpu-02, gpu-03 (restart fails), gpu-10; H100 + Triton 3.6.0: gpu-04, gpu-05; H200 + Triton 3.5.0:
    // gpu-06, gpu-07), gpu-08 unreachable, gpu-09 host key changed. Inventory groups h200, h100, h200old
    // (children of gpus); tag "rack1" on gpu-01, gpu-04, gpu-06.
    static QList<FleetHostSpec> standardScenario();
    // n reachable hosts alike (H200, Triton 3.6.0): "host-01".. (benchmarks).
    static QList<FleetHostSpec> uniform(int n);

    // Starts every sshd and fake server and waits until each server's log says it is ready.
    bool start(QString *error);

    int size() const { return int(m_hosts.size()); }
    const FleetHostSpec &spec(int i) const;
    int indexOf(const QString &name) const;
    SshdFixture *sshd(int i) const; // nullptr for an unreachable host
    int sshPort(int i) const;

    QString home() const { return m_dir.path() + QStringLiteral("/home"); } // the client's $HOME
    const SshHome &sshHome() const { return *m_sshHome; }
    // The ssh files of home(), no agent, and the agent zipapp.
    HostSession::Environment environment(const QString &agentPath) const;

    // The host as the app saves it: the ssh config's connection plus its python (the tree's interpreter
    // wrapper: the TEST DOUBLE nvidia-smi and the fake packages), its log file and its server profile
    // (its own port and log).
    HostConfig hostConfig(int i) const;
    ServerProfile profile(int i) const;
    // Writes hostConfig() of every host into a QSettings file (IniFormat), as the app's HostStore does.
    bool saveAppHosts(const QString &settingsFile) const;
    // The hosts as an inventory names them (ansible_host 127.0.0.1, ansible_port, ansible_user).
    QList<FleetHost> fleetHosts() const;
    bool writeInventoryIni(const QString &path) const;
    bool writeInventoryYaml(const QString &path) const;

    QString root(int i) const;       // the host's fake server tree
    QString site(int i) const;       // its site-packages
    QString configRoot(int i) const; // .../fused_moe_triton/configs
    QString log(int i) const;
    QString pidFile(int i) const;
    int serverPort(int i) const;
    QString deviceName(int i) const;   // "NVIDIA_H200"
    QString tritonFolder(int i) const; // "triton_3_6_0"
    QString
    missingConfig(int i) const; // the up file name the server wants: "E=128,N=384,device_name=....json"
    QString kernelSourcePath(int i) const;
    QString kernelSourceHash(int i) const; // sha256 hex of its bytes
    qint64 serverPid(int i) const;         // from its pid file, 0 when none

    bool startServer(int i, QString *error); // the good start command (also for restartFails hosts)
    void stopServer(int i);

private:
    struct Host;
    bool createHost(Host &h, QString *error);
    QString startCommand(int i) const;

    QTemporaryDir m_dir;
    std::unique_ptr<SshHome> m_sshHome;
    QList<std::shared_ptr<Host>> m_hosts;
};

} // namespace moetune::test
