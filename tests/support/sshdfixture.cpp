// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "sshdfixture.h"

#include "remote/flows/jobwaiter.h"
#include "remote/transport/sshtransport.h"

#include <QDebug>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>

#include <csignal>
#include <pwd.h>
#include <sys/types.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune::test {

namespace {

int freePort() {
    QTcpServer s;
    if (!s.listen(QHostAddress::LocalHost, 0))
        return 0;
    return s.serverPort();
}

qint64 parentOf(qint64 pid) {
    QFile f(u"/proc/%1/stat"_s.arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray stat = f.readAll();
    // "pid (comm) state ppid ...": comm may hold spaces, so look after the last ')'
    const qsizetype close = stat.lastIndexOf(')');
    const QList<QByteArray> fields = stat.mid(close + 2).split(' ');
    return fields.size() > 1 ? fields[1].toLongLong() : -1;
}

QList<qint64> descendants(qint64 root) {
    QList<qint64> out;
    QList<qint64> frontier{root};
    const QStringList entries = QDir(u"/proc"_s).entryList(QDir::Dirs);
    QHash<qint64, qint64> parents;
    for (const QString &e : entries) {
        bool ok = false;
        const qint64 pid = e.toLongLong(&ok);
        if (ok)
            parents.insert(pid, parentOf(pid));
    }
    while (!frontier.isEmpty()) {
        const qint64 p = frontier.takeFirst();
        for (auto it = parents.cbegin(); it != parents.cend(); ++it) {
            if (it.value() == p) {
                out.append(it.key());
                frontier.append(it.key());
            }
        }
    }
    return out;
}

} // namespace

SshdFixture::SshdFixture()
    : m_dir(std::make_unique<QTemporaryDir>()) {}

SshdFixture::~SshdFixture() {
    stop();
}

bool SshdFixture::run(const QString &program, const QStringList &args, QString *error, QByteArray *out,
                      const QByteArray &stdinData) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForStarted(10000)) {
        *error = u"cannot start %1: %2"_s.arg(program, p.errorString());
        return false;
    }
    if (!stdinData.isEmpty())
        p.write(stdinData);
    p.closeWriteChannel();
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        *error = u"%1 timed out"_s.arg(program);
        return false;
    }
    if (out)
        *out = p.readAllStandardOutput();
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        *error =
            u"%1 %2 failed: %3"_s.arg(program, args.join(u' '), QString::fromUtf8(p.readAllStandardError()));
        return false;
    }
    return true;
}

QString SshdFixture::userKey() const {
    return dir() + u"/keys/user_ed25519"_s;
}

QString SshdFixture::encryptedUserKey() const {
    return dir() + u"/keys/user_encrypted"_s;
}

QString SshdFixture::wrongKey() const {
    return dir() + u"/keys/wrong_ed25519"_s;
}

QString SshdFixture::knownHostsFile() const {
    return dir() + u"/client/known_hosts"_s;
}

QString SshdFixture::clientSshDir(bool withDefaultKey) const {
    return dir() + (withDefaultKey ? u"/client/ssh_with_key"_s : u"/client/ssh_empty"_s);
}

QString SshdFixture::userName() const {
    const passwd *pw = getpwuid(getuid());
    return pw ? QString::fromLocal8Bit(pw->pw_name) : qEnvironmentVariable("USER");
}

QString SshdFixture::hostPublicKeyFile() const {
    return dir() + u"/keys/host_ed25519.pub"_s;
}

QString SshdFixture::knownHostsName() const {
    return u"[127.0.0.1]:%1"_s.arg(m_port);
}

QString SshdFixture::hostKeyFingerprint() const {
    QByteArray out;
    QString error;
    run(u"ssh-keygen"_s, {u"-l"_s, u"-E"_s, u"sha256"_s, u"-f"_s, dir() + u"/keys/host_ed25519.pub"_s},
        &error, &out);
    const QList<QByteArray> parts = out.split(' ');
    return parts.size() > 1 ? QString::fromLatin1(parts[1]) : QString();
}

bool SshdFixture::generateKeys(QString *error) {
    QDir d(dir());
    for (const char *sub : {"keys", "client", "client/ssh_with_key", "client/ssh_empty", "home"})
        d.mkpath(QLatin1StringView(sub));
    auto keygen = [&](const QString &path, const QString &pass) {
        QFile::remove(path);
        QFile::remove(path + u".pub"_s);
        return run(u"ssh-keygen"_s,
                   {u"-q"_s, u"-t"_s, u"ed25519"_s, u"-N"_s, pass, u"-C"_s, u"moetune-test"_s, u"-f"_s, path},
                   error);
    };
    if (!keygen(dir() + u"/keys/host_ed25519"_s, QString()) || !keygen(userKey(), QString()) ||
        !keygen(encryptedUserKey(), u"correct horse"_s) || !keygen(wrongKey(), QString()))
        return false;
    QFile auth(dir() + u"/keys/authorized_keys"_s);
    if (!auth.open(QIODevice::WriteOnly))
        return false;
    for (const QString &k : {userKey(), encryptedUserKey()}) {
        QFile pub(k + u".pub"_s);
        pub.open(QIODevice::ReadOnly);
        auth.write(pub.readAll());
    }
    auth.close();
    QFile::copy(userKey(), clientSshDir(true) + u"/id_ed25519"_s);
    QFile::copy(userKey() + u".pub"_s, clientSshDir(true) + u"/id_ed25519.pub"_s);
    QFile::setPermissions(clientSshDir(true) + u"/id_ed25519"_s, QFile::ReadOwner | QFile::WriteOwner);
    QFile(knownHostsFile()).open(QIODevice::WriteOnly);
    return true;
}

bool SshdFixture::writeConfig(QString *error) {
    QFile f(dir() + u"/sshd_config"_s);
    if (!f.open(QIODevice::WriteOnly)) {
        *error = f.errorString();
        return false;
    }
    const QString cfg =
        u"Port %1\n"
        "ListenAddress 127.0.0.1\n"
        "HostKey %2/keys/host_ed25519\n"
        "PidFile %2/sshd.pid\n"
        "AuthorizedKeysFile %2/keys/authorized_keys\n"
        "StrictModes no\n"
        "UsePAM no\n"
        "PermitRootLogin yes\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\n"
        "Subsystem sftp internal-sftp\n"
        "MaxSessions 32\n"
        "MaxStartups 64\n"
        "ClientAliveInterval 0\n"
        "SetEnv HOME=%2/home\n"
        "LogLevel %3\n"_s.arg(m_port)
            .arg(dir(), qEnvironmentVariableIsSet("MOETUNE_SSHD_LOG") ? u"DEBUG"_s : u"ERROR"_s);
    f.write(cfg.toUtf8());
    if (!m_extraConfig.isEmpty())
        f.write(m_extraConfig.toUtf8() + '\n');
    return true;
}

bool SshdFixture::launch(QString *error) {
    if (getuid() == 0)
        QDir().mkpath(u"/run/sshd"_s); // sshd's privilege separation directory (absent without the service)
    for (int attempt = 0; attempt < 5; ++attempt) { // a free port may be taken before sshd binds it
        m_port = freePort();
        if (!writeConfig(error))
            return false;
        bool started = false;
        if (spawn(error, &started))
            return true;
        m_sshd.reset();
        if (!started)
            return false; // no other port helps
    }
    return false;
}

bool SshdFixture::spawn(QString *error, bool *started) {
    m_sshd = std::make_unique<QProcess>();
    m_sshd->setProcessChannelMode(QProcess::MergedChannels);
    m_sshd->start(u"/usr/sbin/sshd"_s, {u"-D"_s, u"-e"_s, u"-f"_s, dir() + u"/sshd_config"_s});
    *started = m_sshd->waitForStarted(5000);
    if (!*started) {
        *error = u"cannot start /usr/sbin/sshd: %1 (install openssh-server)"_s.arg(m_sshd->errorString());
        return false;
    }
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 10000 && m_sshd->state() == QProcess::Running) {
        QTcpSocket s;
        s.connectToHost(QHostAddress::LocalHost, quint16(m_port));
        if (s.waitForConnected(200)) {
            s.abort();
            return true;
        }
        QThread::msleep(50);
    }
    m_sshd->waitForFinished(1000);
    *error = u"sshd did not come up on port %1: %2"_s.arg(m_port).arg(QString::fromUtf8(m_sshd->readAll()));
    return false;
}

bool SshdFixture::start(QString *error) {
    if (!m_dir->isValid()) {
        *error = u"cannot create a temporary folder"_s;
        return false;
    }
    if (!QFile::exists(dir() + u"/keys/host_ed25519"_s) && !generateKeys(error))
        return false;
    return launch(error);
}

bool SshdFixture::restart(QString *error) {
    const int port = m_port;
    stop();
    // keep the port: known_hosts entries are per [host]:port
    m_port = port;
    if (!writeConfig(error))
        return false;
    bool started = false;
    return spawn(error, &started);
}

std::unique_ptr<SshTransport> SshdFixture::connectedTransport(const SshOptions &options, int timeoutMs) {
    QString error;
    if (!trustHostKey(&error)) {
        qWarning() << "cannot trust the test sshd's host key:" << error;
        return nullptr;
    }
    auto t = std::make_unique<SshTransport>(options);
    t->connectToHost();
    if (!waitForConnected(t.get(), timeoutMs, &error)) {
        qWarning() << "connect failed:" << error;
        return nullptr;
    }
    return t;
}

bool SshdFixture::restartWithNewHostKey(QString *error) {
    const QString path = dir() + u"/keys/host_ed25519"_s;
    QFile::remove(path);
    QFile::remove(path + u".pub"_s);
    if (!run(u"ssh-keygen"_s, {u"-q"_s, u"-t"_s, u"ed25519"_s, u"-N"_s, QString(), u"-f"_s, path}, error))
        return false;
    ++m_hostKeyGeneration;
    return restart(error);
}

QList<qint64> SshdFixture::sessionPids() const {
    if (!isRunning())
        return {};
    return descendants(m_sshd->processId());
}

void SshdFixture::killSessions() {
    for (qint64 pid : sessionPids())
        ::kill(pid_t(pid), SIGKILL);
}

void SshdFixture::stopSessions(bool stopIt) {
    for (qint64 pid : sessionPids())
        ::kill(pid_t(pid), stopIt ? SIGSTOP : SIGCONT);
}

void SshdFixture::killAll() {
    if (!m_sshd)
        return;
    const QList<qint64> children = sessionPids();
    m_sshd->kill();
    for (qint64 pid : children)
        ::kill(pid_t(pid), SIGKILL);
    m_sshd->waitForFinished(5000);
}

void SshdFixture::stop() {
    if (!m_sshd)
        return;
    const QList<qint64> children = sessionPids();
    for (qint64 pid : children) {
        ::kill(pid_t(pid), SIGCONT);
        ::kill(pid_t(pid), SIGKILL);
    }
    m_sshd->terminate();
    if (!m_sshd->waitForFinished(5000)) {
        m_sshd->kill();
        m_sshd->waitForFinished(5000);
    }
    m_log += QString::fromUtf8(m_sshd->readAll());
    if (qEnvironmentVariableIsSet("MOETUNE_SSHD_LOG"))
        qInfo("sshd log:\n%s", qPrintable(m_log));
    m_sshd.reset();
}

SshOptions SshdFixture::options(bool withDefaultKey) const {
    SshOptions o;
    o.host.alias = u"testhost"_s;
    o.host.hostName = u"127.0.0.1"_s;
    o.host.port = m_port;
    o.host.user = userName();
    o.sshConfigFile = u"none"_s;
    o.knownHostsFile = knownHostsFile();
    o.sshDir = clientSshDir(withDefaultKey);
    o.connectTimeoutMs = 10000;
    return o;
}

bool SshdFixture::trustHostKey(QString *error) {
    QFile pub(dir() + u"/keys/host_ed25519.pub"_s);
    if (!pub.open(QIODevice::ReadOnly)) {
        *error = pub.errorString();
        return false;
    }
    const QList<QByteArray> parts = pub.readAll().trimmed().split(' ');
    QFile kh(knownHostsFile());
    if (!kh.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        *error = kh.errorString();
        return false;
    }
    kh.write(u"[127.0.0.1]:%1 "_s.arg(m_port).toUtf8() + parts.value(0) + ' ' + parts.value(1) + '\n');
    return true;
}

} // namespace moetune::test
