// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "fleetfixture.h"

#include "core/fleet/inventory.h"
#include "core/util/shellquote.h"
#include "fakehosttree.h"
#include "fakesglanghost.h"
#include "remote/hosts/hoststore.h"
#include "remote/hosts/practiceserver.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSettings>
#include <QThread>

#include <algorithm>
#include <csignal>
#include <pwd.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune::test {

struct FleetFixture::Host {
    FleetHostSpec spec;
    QString root;
    std::unique_ptr<SshdFixture> sshd;
    int port = 0;       // the sshd's, or a port with nothing listening
    int serverPort = 0; // the fake server's --port
};

namespace {

bool fixtureFail(QString *error, const QString &message) {
    if (error)
        *error = message;
    return false;
}

QString fixtureUser() {
    const passwd *pw = ::getpwuid(::getuid());
    return pw ? QString::fromLocal8Bit(pw->pw_name) : qEnvironmentVariable("USER");
}

} // namespace

FleetFixture::FleetFixture(QList<FleetHostSpec> specs) {
    for (FleetHostSpec &s : specs) {
        auto h = std::make_shared<Host>();
        h->spec = std::move(s);
        h->root = m_dir.path() + u"/hosts/"_s + h->spec.name;
        m_hosts.append(h);
    }
    QDir().mkpath(home());
    m_sshHome = std::make_unique<SshHome>(home());
}

FleetFixture::~FleetFixture() {
    for (int i = 0; i < size(); ++i)
        stopServer(i);
}

QList<FleetHostSpec> FleetFixture::standardScenario() {
    QList<FleetHostSpec> out;
    const auto add = [&out](const QString &name, const QString &gpu, const QString &triton,
                            const QString &group) -> FleetHostSpec & {
        FleetHostSpec s;
        s.name = name;
        s.gpuName = gpu;
        s.gpuCount = 8;
        s.triton = triton;
        s.groups = {group};
        out.append(s);
        return out.last();
    };
    const QString h200 = u"NVIDIA H200"_s;
    const QString h100 = u"NVIDIA H100 80GB HBM3"_s;
    add(u"gpu-01"_s, h200, u"3.6.0"_s, u"h200"_s).tags = {u"rack1"_s};
    add(u"gpu-02"_s, h200, u"3.6.0"_s, u"h200"_s);
    add(u"gpu-03"_s, h200, u"3.6.0"_s, u"h200"_s).restartFails = true;
    add(u"gpu-04"_s, h100, u"3.6.0"_s, u"h100"_s).tags = {u"rack1"_s};
    add(u"gpu-05"_s, h100, u"3.6.0"_s, u"h100"_s);
    FleetHostSpec &old6 = add(u"gpu-06"_s, h200, u"3.5.0"_s, u"h200old"_s);
    old6.tags = {u"rack1"_s};
    old6.sglangVersion = u"0.5.4"_s;
    add(u"gpu-07"_s, h200, u"3.5.0"_s, u"h200old"_s).sglangVersion = u"0.5.4"_s;
    add(u"gpu-08"_s, h200, u"3.6.0"_s, u"h200"_s).unreachable = true;
    add(u"gpu-09"_s, h200, u"3.6.0"_s, u"h200"_s).hostKeyChanged = true;
    add(u"gpu-10"_s, h200, u"3.6.0"_s, u"h200"_s);
    return out;
}

QList<FleetHostSpec> FleetFixture::uniform(int n) {
    QList<FleetHostSpec> out;
    for (int i = 1; i <= n; ++i) {
        FleetHostSpec s;
        s.name = u"host-%1"_s.arg(i, 2, 10, QLatin1Char('0'));
        s.groups = {u"bench"_s};
        out.append(s);
    }
    return out;
}

const FleetHostSpec &FleetFixture::spec(int i) const {
    return m_hosts.at(i)->spec;
}

int FleetFixture::indexOf(const QString &name) const {
    for (int i = 0; i < size(); ++i) {
        if (m_hosts.at(i)->spec.name == name)
            return i;
    }
    return -1;
}

SshdFixture *FleetFixture::sshd(int i) const {
    return m_hosts.at(i)->sshd.get();
}

int FleetFixture::sshPort(int i) const {
    return m_hosts.at(i)->port;
}

QString FleetFixture::root(int i) const {
    return m_hosts.at(i)->root;
}

QString FleetFixture::site(int i) const {
    return PracticeServer(root(i)).site();
}

QString FleetFixture::configRoot(int i) const {
    return PracticeServer(root(i)).configRoot();
}

QString FleetFixture::log(int i) const {
    return PracticeServer(root(i)).log();
}

QString FleetFixture::pidFile(int i) const {
    return PracticeServer(root(i)).pidFile();
}

int FleetFixture::serverPort(int i) const {
    return m_hosts.at(i)->serverPort;
}

QString FleetFixture::deviceName(int i) const {
    return QString(spec(i).gpuName).replace(u' ', u'_');
}

QString FleetFixture::tritonFolder(int i) const {
    return u"triton_"_s + QString(spec(i).triton).replace(u'.', u'_');
}

QString FleetFixture::missingConfig(int i) const {
    // Qwen3-30B-A3B at --tp 2: E=128, N = 768 / 2.
    return u"E=128,N=384,device_name=%1.json"_s.arg(deviceName(i));
}

QString FleetFixture::kernelSourcePath(int i) const {
    return site(i) + u"/sglang/srt/layers/moe/fused_moe_triton/fused_moe.py"_s;
}

QString FleetFixture::kernelSourceHash(int i) const {
    QFile f(kernelSourcePath(i));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromLatin1(QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex());
}

qint64 FleetFixture::serverPid(int i) const {
    QFile f(pidFile(i));
    return f.open(QIODevice::ReadOnly) ? f.readAll().trimmed().toLongLong() : 0;
}

bool FleetFixture::createHost(Host &h, QString *error) {
    const PracticeServer tree(h.root);
    if (!tree.create(error))
        return false;
    const FleetHostSpec &s = h.spec;
    // Every host starts without a file for its shape: no fallback from an older Triton either.
    QFile::remove(tree.fallbackFile());
    bool ok = FakeHostTree::writeFile(tree.site() + u"/triton/__init__.py"_s,
                                      "# TEST DOUBLE (moetune fleet fixture): not Triton\n__version__ = \"" +
                                          s.triton.toUtf8() + "\"\n");
    ok = ok && FakeHostTree::writeFile(tree.site() + u"/sglang/__init__.py"_s,
                                       "# TEST DOUBLE (moetune fleet fixture): not SGLang\n__version__ = \"" +
                                           s.sglangVersion.toUtf8() + "\"\n");
    // TEST DOUBLE of SGLang's fused-MoE kernel source: the probe hashes the file defining fused_moe_kernel;
    // the variant changes its bytes, as another SGLang release's kernel code would.
    ok = ok && FakeHostTree::writeFile(
                   tree.site() + u"/sglang/srt/layers/moe/fused_moe_triton/fused_moe.py"_s,
                   "# TEST DOUBLE (moetune fleet fixture): stands in for SGLang's fused_moe.py; no kernel "
                   "runs here.\n# kernel variant: " +
                       s.kernelVariant.toUtf8() +
                       "\n\n\ndef fused_moe_kernel(*args, **kwargs):\n"
                       "    raise NotImplementedError(\"moetune test double: no Triton kernel here\")\n");
    // TEST DOUBLE of nvidia-smi: the spec's GPUs, the first held by the server while it runs.
    QByteArray gpus;
    for (int g = 0; g < s.gpuCount; ++g)
        gpus += "    echo \"" + QByteArray::number(g) + ", " + s.gpuName.toUtf8() + ", GPU-" +
                s.name.toUtf8() + "-" + QByteArray::number(g) + ", 81559, $used, 9.0\"\n";
    const QByteArray pidf = shellQuote(tree.pidFile()).toUtf8();
    ok = ok && FakeHostTree::writeFile(
                   tree.bin() + u"/nvidia-smi"_s,
                   "#!/bin/sh\n# TEST DOUBLE for nvidia-smi (moetune fleet fixture, host " + s.name.toUtf8() +
                       ")\npid=$(cat " + pidf +
                       " 2>/dev/null)\n"
                       "if [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; then used=70000; else used=0; "
                       "pid=; fi\n"
                       "case \"$1\" in\n"
                       "  --query-gpu=*)\n" +
                       gpus +
                       "    ;;\n"
                       "  --query-compute-apps=*) [ -n \"$pid\" ] && echo \"GPU-" +
                       s.name.toUtf8() +
                       "-0, $pid, python3, 70000\" ;;\n"
                       "esac\nexit 0\n",
                   true);
    if (!ok)
        return fixtureFail(error, u"cannot write the fake server tree of %1 under %2"_s.arg(s.name, h.root));
    return true;
}

QString FleetFixture::startCommand(int i) const {
    const PracticeServer tree(root(i));
    return u"cd "_s + shellQuote(root(i)) + u" && { PYTHONPATH="_s + shellQuote(tree.site()) +
           u" FAKESERVER_PID_FILE="_s + shellQuote(tree.pidFile()) + u" FAKESERVER_DEVICE_NAME="_s +
           shellQuote(deviceName(i)) +
           u" FAKESERVER_EXIT_AFTER_S=900 setsid nohup python3 -m sglang.launch_server --model-path "_s +
           shellQuote(tree.model()) + u" --tp 2 --port "_s + QString::number(serverPort(i)) + u" >> "_s +
           shellQuote(tree.log()) + u" 2>&1 < /dev/null & }"_s;
}

ServerProfile FleetFixture::profile(int i) const {
    const PracticeServer tree(root(i));
    ServerProfile p;
    p.kind = ServerProfile::Kind::Command;
    p.logFile = tree.log();
    p.startCommand = spec(i).restartFails
                         ? u"echo 'moetune TEST DOUBLE (fleet fixture): the start command of %1 fails on "
                           u"purpose' >&2; exit 1"_s.arg(spec(i).name)
                         : startCommand(i);
    p.stopCommand = u"kill -TERM \"$(cat "_s + shellQuote(tree.pidFile()) + u")\""_s;
    p.readyLine = u"The server is fired up and ready to roll!"_s;
    p.readyTimeoutS = 30;
    p.server = u"port %1"_s.arg(serverPort(i));
    p.note = u"TEST DOUBLE: the fleet fixture's fake server of %1"_s.arg(spec(i).name);
    return p;
}

bool FleetFixture::startServer(int i, QString *error) {
    const QString logFile = log(i);
    const qint64 before = QFileInfo(logFile).size();
    if (QProcess::execute(u"/bin/sh"_s, {u"-c"_s, startCommand(i)}) != 0)
        return fixtureFail(error, u"the fake server of %1 did not start"_s.arg(spec(i).name));
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 30000) {
        QFile f(logFile);
        if (f.open(QIODevice::ReadOnly) && f.size() > before) {
            f.seek(before);
            if (f.readAll().contains("ready to roll"))
                return true;
        }
        QThread::msleep(20);
    }
    return fixtureFail(error, u"the fake server of %1 did not get ready in 30 s"_s.arg(spec(i).name));
}

void FleetFixture::stopServer(int i) {
    const qint64 pid = serverPid(i);
    if (pid <= 0 || ::kill(pid_t(pid), 0) != 0)
        return;
    ::kill(pid_t(pid), SIGTERM);
    QElapsedTimer t;
    t.start();
    while (::kill(pid_t(pid), 0) == 0 && t.elapsed() < 5000)
        QThread::msleep(20);
    if (::kill(pid_t(pid), 0) == 0)
        ::kill(pid_t(pid), SIGKILL);
}

bool FleetFixture::start(QString *error) {
    if (!m_dir.isValid())
        return fixtureFail(error, u"no temporary folder"_s);
    QList<int> usedPorts;
    const auto freshPort = [&usedPorts] {
        int p = 0;
        do
            p = FakeSglangHost::freePort();
        while (p == 0 || usedPorts.contains(p));
        usedPorts.append(p);
        return p;
    };
    for (const auto &h : std::as_const(m_hosts)) {
        if (!createHost(*h, error))
            return false;
        h->serverPort = freshPort();
        if (h->spec.unreachable) {
            h->port = freshPort(); // nothing listens there
            continue;
        }
        h->sshd = std::make_unique<SshdFixture>();
        if (!h->sshd->start(error))
            return fixtureFail(error, h->spec.name + u": "_s + *error);
        h->port = h->sshd->port();
        usedPorts.append(h->port);
    }

    QByteArray config = "# moetune TEST fleet (fleet fixture): every host is an sshd on 127.0.0.1\n";
    QByteArray known;
    for (const auto &h : std::as_const(m_hosts)) {
        config += "Host " + h->spec.name.toUtf8() + "\n    HostName 127.0.0.1\n    Port " +
                  QByteArray::number(h->port) + "\n    User " + fixtureUser().toUtf8() + "\n";
        if (h->sshd) {
            config += "    IdentityFile " + h->sshd->userKey().toUtf8() + "\n    IdentitiesOnly yes\n";
            known += "[127.0.0.1]:" + QByteArray::number(h->port) + ' ' +
                     SshHome::publicKey(h->sshd->hostPublicKeyFile()) + '\n';
        }
    }
    if (!m_sshHome->writeConfig(config) || !m_sshHome->writeKnownHosts(known))
        return fixtureFail(error, u"cannot write the fleet's ~/.ssh under "_s + home());
    // A reinstalled host: known_hosts keeps the key it had, the sshd now offers another.
    for (const auto &h : std::as_const(m_hosts)) {
        if (h->spec.hostKeyChanged && !h->sshd->restartWithNewHostKey(error))
            return fixtureFail(error, h->spec.name + u": "_s + *error);
    }

    // Every server at once, then wait for each to be ready.
    QList<qint64> logSizes;
    for (int i = 0; i < size(); ++i) {
        logSizes.append(QFileInfo(log(i)).size());
        if (QProcess::execute(u"/bin/sh"_s, {u"-c"_s, startCommand(i)}) != 0)
            return fixtureFail(error, u"the fake server of %1 did not start"_s.arg(spec(i).name));
    }
    QElapsedTimer t;
    t.start();
    for (int i = 0; i < size(); ++i) {
        bool ready = false;
        while (!ready && t.elapsed() < 60000) {
            QFile f(log(i));
            if (f.open(QIODevice::ReadOnly) && f.size() > logSizes.at(i)) {
                f.seek(logSizes.at(i));
                ready = f.readAll().contains("ready to roll");
            }
            if (!ready)
                QThread::msleep(20);
        }
        if (!ready)
            return fixtureFail(error, u"the fake server of %1 did not get ready"_s.arg(spec(i).name));
    }
    return true;
}

HostSession::Environment FleetFixture::environment(const QString &agentPath) const {
    HostSession::Environment env;
    env.ssh.sshConfigFile = m_sshHome->configPath();
    env.ssh.knownHostsFile = m_sshHome->knownHostsPath();
    env.ssh.sshDir = m_sshHome->sshDir();
    env.ssh.useAgent = false;
    env.localHome = home();
    env.agentPath = agentPath;
    return env;
}

HostConfig FleetFixture::hostConfig(int i) const {
    HostConfig c = HostStore::resolveSshConfig(spec(i).name, m_sshHome->configPath());
    c.python = PracticeServer(root(i)).python();
    c.logSource = {LogSource::Kind::File, log(i)};
    c.serverProfile = profile(i);
    return c;
}

bool FleetFixture::saveAppHosts(const QString &settingsFile) const {
    QSettings settings(settingsFile, QSettings::IniFormat);
    HostStore store(&settings, m_sshHome->configPath());
    for (int i = 0; i < size(); ++i)
        store.save(hostConfig(i));
    settings.sync();
    return settings.status() == QSettings::NoError;
}

QList<FleetHost> FleetFixture::fleetHosts() const {
    QList<FleetHost> out;
    for (int i = 0; i < size(); ++i) {
        FleetHost h;
        h.name = spec(i).name;
        h.address = u"127.0.0.1"_s;
        h.port = sshPort(i);
        h.user = fixtureUser();
        h.groups = spec(i).groups;
        h.groups.sort();
        h.tags = spec(i).tags;
        out.append(h);
    }
    return out;
}

bool FleetFixture::writeInventoryIni(const QString &path) const {
    QByteArray text = "# moetune TEST fleet (fleet fixture): Ansible INI inventory, hosts on 127.0.0.1\n";
    const auto line = [this](int i) -> QByteArray {
        QByteArray l = spec(i).name.toUtf8() +
                       " ansible_host=127.0.0.1 ansible_port=" + QByteArray::number(sshPort(i)) +
                       " ansible_user=" + fixtureUser().toUtf8();
        if (!spec(i).tags.isEmpty())
            l += " moetune_tags=" + spec(i).tags.join(u',').toUtf8();
        return l + '\n';
    };
    QStringList groups;
    for (int i = 0; i < size(); ++i) {
        if (spec(i).groups.isEmpty())
            text += line(i);
        for (const QString &g : spec(i).groups) {
            if (!groups.contains(g))
                groups.append(g);
        }
    }
    for (const QString &g : std::as_const(groups)) {
        text += "\n[" + g.toUtf8() + "]\n";
        for (int i = 0; i < size(); ++i) {
            if (spec(i).groups.contains(g))
                text += line(i);
        }
    }
    return FakeHostTree::writeFile(path, text);
}

bool FleetFixture::writeInventoryYaml(const QString &path) const {
    const auto host = [this](int i, const QByteArray &indent) -> QByteArray {
        QByteArray h = indent + spec(i).name.toUtf8() + ":\n" + indent + "  ansible_host: 127.0.0.1\n" +
                       indent + "  ansible_port: " + QByteArray::number(sshPort(i)) + "\n" + indent +
                       "  ansible_user: " + fixtureUser().toUtf8() + "\n";
        if (!spec(i).tags.isEmpty())
            h += indent + "  moetune_tags: [" + spec(i).tags.join(u", "_s).toUtf8() + "]\n";
        return h;
    };
    QByteArray text =
        "# moetune TEST fleet (fleet fixture): Ansible YAML inventory, hosts on 127.0.0.1\nall:\n";
    QByteArray ungrouped;
    QStringList groups;
    for (int i = 0; i < size(); ++i) {
        if (spec(i).groups.isEmpty())
            ungrouped += host(i, "    ");
        for (const QString &g : spec(i).groups) {
            if (!groups.contains(g))
                groups.append(g);
        }
    }
    if (!ungrouped.isEmpty())
        text += "  hosts:\n" + ungrouped;
    if (!groups.isEmpty()) {
        text += "  children:\n";
        for (const QString &g : std::as_const(groups)) {
            text += "    " + g.toUtf8() + ":\n      hosts:\n";
            for (int i = 0; i < size(); ++i) {
                if (spec(i).groups.contains(g))
                    text += host(i, "        ");
            }
        }
    }
    return FakeHostTree::writeFile(path, text);
}

} // namespace moetune::test
