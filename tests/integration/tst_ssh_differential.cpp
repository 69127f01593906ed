// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// moetune decides like OpenSSH's own client: every case (an ~/.ssh/config, known_hosts files, a target)
// is run through `ssh -o BatchMode=yes -o ConnectTimeout=5 [-p PORT] TARGET true` and through moetune's
// connection path (HostStore::resolve + HostStore::userSshOptions + SshTransport, what the CLI and the app
// use) against the same real sshd (SshdFixture) with the same HOME, and the two verdicts (connects / refuses
// / would ask) must be the same. The few cases where moetune is stricter on purpose are marked and listed in
// docs/ssh.md with the reason.
//
// OpenSSH takes "~" and its default files from the passwd entry, not from $HOME: ssh runs under
// nss_wrapper (libnss-wrapper) with a passwd line whose home is the test's HOME, so both read the same
// files. No agent from the environment: the cases that need one start their own (SshAgentFixture).
#include "remote/hosts/hoststore.h"
#include "remote/transport/sshtransport.h"
#include "sshagentfixture.h"
#include "sshdfixture.h"
#include "sshhome.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::SshAgentFixture;
using moetune::test::SshdFixture;
using moetune::test::SshHome;

namespace sshdiff {

enum class Verdict { Connects, Refuses, Asks };

inline QString verdictName(Verdict v) {
    switch (v) {
    case Verdict::Connects:
        return u"connects"_s;
    case Verdict::Refuses:
        return u"refuses"_s;
    case Verdict::Asks:
        return u"asks"_s;
    }
    return {};
}

// One case: the files under HOME (path relative to HOME -> text with placeholders), the target as typed
// (an alias, or user@host:port), and what ssh does. moetune must do the same, unless `moetune` is set:
// then it is an expected difference (moetune stricter on purpose, docs/ssh.md).
struct Case {
    const char *name;
    QByteArray config;
    QList<std::pair<QString, QByteArray>> files;
    QString target;
    Verdict ssh;
    std::optional<Verdict> moetune = std::nullopt;
    bool agent = false;     // an ssh-agent holding the authorised key, for both clients
    bool defaultKey = true; // ~/.ssh/id_ed25519 is the authorised key
    bool certHost = false;  // against the second sshd, whose host key has a certificate signed by %CA%
};

} // namespace sshdiff

using sshdiff::Case;
using sshdiff::Verdict;
Q_DECLARE_METATYPE(sshdiff::Verdict)

class TestSshDifferential : public QObject {
    Q_OBJECT

    SshdFixture m_sshd;
    SshdFixture m_certSshd; // HostCertificate: its host key signed by the test's CA (ssh-keygen -s)
    const SshdFixture *m_current = &m_sshd;
    QTemporaryDir m_tmp;
    QString m_home;
    std::unique_ptr<SshHome> m_ssh;
    SshAgentFixture m_agent;
    QString m_nssWrapper;
    QList<Case> m_cases;
    int m_agree = 0;
    int m_expectedDifferences = 0;

    QByteArray expand(QByteArray text) const {
        const SshdFixture &sshd = *m_current; // the case's sshd
        const QByteArray cur = SshHome::publicKey(sshd.hostPublicKeyFile());
        const QByteArray other = SshHome::publicKey(sshd.wrongKey() + u".pub"_s);
        const QByteArray ecdsa = SshHome::publicKey(m_tmp.path() + u"/keys/other_ecdsa.pub"_s);
        text.replace("%CA%", SshHome::publicKey(m_tmp.path() + u"/keys/ca.pub"_s));
        text.replace("%IP%", (sshd.userName() + u"@127.0.0.1:"_s + QString::number(sshd.port())).toUtf8());
        text.replace("%NAME%", sshd.knownHostsName().toUtf8());
        text.replace("%CUR%", cur);
        text.replace("%OTHER%", other);
        text.replace("%ECDSA%", ecdsa);
        text.replace("%PORT%", QByteArray::number(sshd.port()));
        text.replace("%USER%", sshd.userName().toUtf8());
        text.replace("%HOME%", QFile::encodeName(m_home));
        text.replace("%USERKEY%", QFile::encodeName(m_tmp.path() + u"/keys/user_copy"_s));
        text.replace("%WRONGKEY%", QFile::encodeName(sshd.wrongKey()));
        return text;
    }

    // Writes the case's files into a fresh ~/.ssh (and the other paths it names).
    bool writeFiles(const Case &c, QString *error) {
        QDir(m_ssh->sshDir()).removeRecursively();
        QDir(m_home + u"/etc"_s).removeRecursively();
        QDir().mkpath(m_ssh->sshDir());
        QFile::setPermissions(m_ssh->sshDir(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        if (c.defaultKey && !m_ssh->installKey(m_current->userKey())) {
            *error = u"cannot install the default key"_s;
            return false;
        }
        if (!c.config.isNull() && !m_ssh->writeConfig(expand(c.config))) {
            *error = u"cannot write the config"_s;
            return false;
        }
        for (const auto &[path, raw] : c.files) {
            const bool hash = raw.startsWith("HASH:");
            const bool krl = raw.startsWith("KRL:");
            const QString full = m_home + u'/' + QString::fromUtf8(expand(path.toUtf8()));
            QDir().mkpath(QFileInfo(full).path());
            QFile f(full);
            if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
                *error = f.errorString();
                return false;
            }
            f.write(expand(hash ? raw.mid(5) : krl ? raw.mid(4) : raw));
            f.close();
            if (hash && !SshdFixture::run(u"ssh-keygen"_s, {u"-q"_s, u"-H"_s, u"-f"_s, full}, error))
                return false;
            QFile::remove(full + u".old"_s);
            if (krl) { // the text is a list of public keys: made into a binary KRL as ssh-keygen -k does
                const QString list = full + u".keys"_s;
                QFile::rename(full, list);
                if (!SshdFixture::run(u"ssh-keygen"_s, {u"-q"_s, u"-k"_s, u"-f"_s, full, list}, error))
                    return false;
            }
        }
        return true;
    }

    QProcessEnvironment sshEnvironment(bool agent) const {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"HOME"_s, m_home);
        env.insert(u"LD_PRELOAD"_s, m_nssWrapper);
        env.insert(u"NSS_WRAPPER_PASSWD"_s, m_tmp.path() + u"/passwd"_s);
        env.insert(u"NSS_WRAPPER_GROUP"_s, m_tmp.path() + u"/group"_s);
        env.remove(u"SSH_AUTH_SOCK"_s);
        env.remove(u"SSH_ASKPASS"_s);
        env.remove(u"DISPLAY"_s);
        if (agent)
            env.insert(u"SSH_AUTH_SOCK"_s, m_agent.socket());
        return env;
    }

    // OpenSSH's verdict. In batch mode ssh never prompts: an unknown key it would have asked about ends
    // in "Host key verification failed." alone; a refusal says why (changed, revoked, strict checking).
    Verdict runSsh(const Case &c, QString *log) {
        // no -F: ssh reads ~/.ssh/config and /etc/ssh/ssh_config, as moetune does
        QStringList args{u"-o"_s, u"BatchMode=yes"_s, u"-o"_s, u"ConnectTimeout=5"_s};
        QString target = QString::fromUtf8(expand(c.target.toUtf8()));
        const qsizetype colon = target.lastIndexOf(u':');
        if (colon > 0 && !target.endsWith(u']')) {
            args << u"-p"_s << target.mid(colon + 1);
            target = target.left(colon);
        }
        args << target << u"true"_s;
        QProcess ssh;
        ssh.setProcessEnvironment(sshEnvironment(c.agent));
        ssh.start(u"ssh"_s, args);
        ssh.closeWriteChannel();
        if (!ssh.waitForFinished(20000)) {
            ssh.kill();
            ssh.waitForFinished();
        }
        const QString err = QString::fromUtf8(ssh.readAllStandardError());
        *log = err.trimmed();
        if (ssh.exitStatus() == QProcess::NormalExit && ssh.exitCode() == 0)
            return Verdict::Connects;
        if (err.contains(u"Host key verification failed."_s) &&
            !err.contains(u"REMOTE HOST IDENTIFICATION HAS CHANGED"_s) &&
            !err.contains(u"revoked"_s, Qt::CaseInsensitive) && !err.contains(u"requested strict checking"_s))
            return Verdict::Asks;
        return Verdict::Refuses;
    }

    // moetune's verdict, through the path the CLI takes (HostSession does the same for the app).
    Verdict runMoetune(const Case &c, QString *log) {
        QSettings settings(m_tmp.path() + u"/moetune.ini"_s, QSettings::IniFormat);
        settings.clear();
        const HostStore store(&settings, HostStore::defaultSshConfigPath());
        QString error;
        const auto host = store.resolve(QString::fromUtf8(expand(c.target.toUtf8())), &error);
        if (!host) {
            *log = error;
            return Verdict::Refuses;
        }
        SshOptions o = HostStore::userSshOptions();
        o.host = *host;
        o.connectTimeoutMs = 5000;
        o.maxReconnectAttempts = 0;
        if (c.agent)
            qputenv("SSH_AUTH_SOCK", m_agent.socket().toUtf8());
        SshTransport t(o);
        QSignalSpy unknown(&t, &SshTransport::hostKeyUnknown);
        connect(&t, &SshTransport::secretRequested, &t, [&t] { t.cancelSecret(); });
        t.connectToHost();
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < 20000 && t.state() != Transport::State::Connected &&
               t.state() != Transport::State::Failed && unknown.isEmpty())
            QTest::qWait(10);
        *log = Transport::stateName(t.state()) + u": "_s + t.stateMessage();
        const bool asked = !unknown.isEmpty();
        const bool connected = t.state() == Transport::State::Connected;
        if (asked)
            t.answerHostKey(false);
        t.disconnectFromHost();
        qunsetenv("SSH_AUTH_SOCK");
        return connected ? Verdict::Connects : asked ? Verdict::Asks : Verdict::Refuses;
    }

    void addCases();

private slots:
    void initTestCase() {
        qunsetenv("SSH_AUTH_SOCK");
        QVERIFY(m_tmp.isValid());
        m_home = m_tmp.path() + u"/home"_s;
        QVERIFY(QDir().mkpath(m_home));
        qputenv("HOME", m_home.toUtf8());
        m_ssh = std::make_unique<SshHome>(m_home);
        for (const char *dir :
             {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"}) {
            const QString p = QLatin1StringView(dir) + u"/libnss_wrapper.so"_s;
            if (QFile::exists(p)) {
                m_nssWrapper = p;
                break;
            }
        }
        QVERIFY2(!m_nssWrapper.isEmpty(),
                 "libnss_wrapper.so not found: install libnss-wrapper (packaging/install-deps.sh); OpenSSH "
                 "reads ~ from the passwd entry, so without it ssh would read the real user's files");
        const passwd *pw = getpwuid(getuid());
        const group *gr = getgrgid(getgid());
        QVERIFY(pw && gr);
        QFile passwdFile(m_tmp.path() + u"/passwd"_s);
        QVERIFY(passwdFile.open(QIODevice::WriteOnly));
        passwdFile.write(QByteArray(pw->pw_name) + ":x:" + QByteArray::number(getuid()) + ':' +
                         QByteArray::number(getgid()) + ":test:" + QFile::encodeName(m_home) + ":/bin/sh\n");
        passwdFile.close();
        QFile groupFile(m_tmp.path() + u"/group"_s);
        QVERIFY(groupFile.open(QIODevice::WriteOnly));
        groupFile.write(QByteArray(gr->gr_name) + ":x:" + QByteArray::number(getgid()) + ":\n");
        groupFile.close();

        QString error;
        QVERIFY2(m_sshd.start(&error), qPrintable(error));
        QDir().mkpath(m_tmp.path() + u"/keys"_s);
        QVERIFY2(SshdFixture::run(u"ssh-keygen"_s,
                                  {u"-q"_s, u"-t"_s, u"ecdsa"_s, u"-N"_s, QString(), u"-f"_s,
                                   m_tmp.path() + u"/keys/other_ecdsa"_s},
                                  &error),
                 qPrintable(error));
        // the authorised key at a path that is not one of ssh's defaults
        QVERIFY(QFile::copy(m_sshd.userKey(), m_tmp.path() + u"/keys/user_copy"_s));
        QVERIFY(QFile::copy(m_sshd.userKey() + u".pub"_s, m_tmp.path() + u"/keys/user_copy.pub"_s));
        QFile::setPermissions(m_tmp.path() + u"/keys/user_copy"_s, QFile::ReadOwner | QFile::WriteOwner);
        QVERIFY2(m_agent.start(m_tmp.path() + u"/agent.sock"_s, &error), qPrintable(error));
        // The second sshd presents a host certificate: its key signed by a CA, for the name 127.0.0.1.
        QVERIFY2(m_certSshd.start(&error), qPrintable(error));
        const QString ca = m_tmp.path() + u"/keys/ca"_s;
        QVERIFY2(SshdFixture::run(u"ssh-keygen"_s,
                                  {u"-q"_s, u"-t"_s, u"ed25519"_s, u"-N"_s, QString(), u"-f"_s, ca}, &error),
                 qPrintable(error));
        QVERIFY2(
            SshdFixture::run(u"ssh-keygen"_s,
                             {u"-q"_s, u"-s"_s, ca, u"-I"_s, u"moetune-test-host"_s, u"-h"_s, u"-n"_s,
                              u"127.0.0.1"_s, u"-V"_s, u"-5m:+1d"_s, m_certSshd.hostKeyFile() + u".pub"_s},
                             &error),
            qPrintable(error));
        m_certSshd.setExtraConfig(u"HostCertificate "_s + m_certSshd.hostKeyFile() + u"-cert.pub"_s);
        QVERIFY2(m_certSshd.restart(&error), qPrintable(error));
        QVERIFY2(m_agent.add(m_sshd.userKey(), &error), qPrintable(error));
        addCases();
    }

    void cleanupTestCase() {
        qInfo("%d cases: %d agree, %d expected differences (docs/ssh.md)", int(m_cases.size()), m_agree,
              m_expectedDifferences);
        m_sshd.stop();
        m_certSshd.stop();
    }

    void sameVerdict_data() {
        QTest::addColumn<int>("index");
        for (int i = 0; i < m_cases.size(); ++i)
            QTest::newRow(m_cases[i].name) << i;
    }

    void sameVerdict() {
        QFETCH(int, index);
        const Case &c = m_cases[index];
        m_current = c.certHost ? &m_certSshd : &m_sshd;
        QString error;
        QVERIFY2(writeFiles(c, &error), qPrintable(error));
        QString sshLog;
        const Verdict ssh = runSsh(c, &sshLog);
        QVERIFY2(writeFiles(c, &error), qPrintable(error)); // ssh may have recorded a key (accept-new)
        QString moetuneLog;
        const Verdict mine = runMoetune(c, &moetuneLog);
        const bool agree = mine == ssh;
        qInfo("%s: ssh %s, moetune %s%s", c.name, qPrintable(verdictName(ssh)), qPrintable(verdictName(mine)),
              agree ? "" : " (DIFFERENT)");
        if (agree)
            ++m_agree;
        else if (c.moetune && mine == *c.moetune)
            ++m_expectedDifferences;
        // The case is what it says: OpenSSH's own verdict is the one written down.
        QVERIFY2(ssh == c.ssh,
                 qPrintable(u"ssh %1 (expected %2): %3"_s.arg(verdictName(ssh), verdictName(c.ssh), sshLog)));
        const Verdict want = c.moetune.value_or(ssh);
        QVERIFY2(mine == want, qPrintable(u"moetune %1, ssh %2: %3 | ssh: %4"_s.arg(
                                   verdictName(mine), verdictName(ssh), moetuneLog, sshLog)));
    }
};

void TestSshDifferential::addCases() {
    using V = Verdict;
    const QString ip = u"%1@127.0.0.1:%2"_s.arg(m_sshd.userName()).arg(m_sshd.port());
    // An alias that names the fixture's sshd, for cases about the config itself.
    const QByteArray box = "Host box\n    HostName 127.0.0.1\n    Port %PORT%\n    User %USER%\n";
    const QString kh = u".ssh/known_hosts"_s;
    const QString kh2 = u".ssh/known_hosts2"_s;
    m_cases = {
        // known_hosts, ssh's default files
        {"unknown host", {}, {}, ip, V::Asks},
        {"known plain", {}, {{kh, "%NAME% %CUR%\n"}}, ip, V::Connects},
        {"known hashed", {}, {{kh, "HASH:%NAME% %CUR%\n"}}, ip, V::Connects},
        {"changed key", {}, {{kh, "%NAME% %OTHER%\n"}}, ip, V::Refuses},
        {"changed key hashed", {}, {{kh, "HASH:%NAME% %OTHER%\n"}}, ip, V::Refuses},
        {"revoked key", {}, {{kh, "%NAME% %CUR%\n@revoked %NAME% %CUR%\n"}}, ip, V::Refuses},
        {"revoked by pattern", {}, {{kh, "@revoked * %CUR%\n%NAME% %CUR%\n"}}, ip, V::Refuses},
        // ssh retries an unknown [host]:port without the port, and takes only an exact match from that
        {"plain line without the port", {}, {{kh, "127.0.0.1 %CUR%\n"}}, ip, V::Connects},
        {"plain line without the port, changed", {}, {{kh, "127.0.0.1 %OTHER%\n"}}, ip, V::Asks},
        {"plain line without the port, revoked",
         {},
         {{kh, "127.0.0.1 %CUR%\n@revoked %NAME% %CUR%\n"}},
         ip,
         V::Refuses},
        {"plain line without the port, [host]:port changed",
         {},
         {{kh, "127.0.0.1 %CUR%\n%NAME% %OTHER%\n"}},
         ip,
         V::Refuses},
        {"plain line without the port, HostKeyAlias",
         "HostKeyAlias lab-box\n",
         {{kh, "127.0.0.1 %CUR%\n"}},
         ip,
         V::Asks},
        {"port pattern", {}, {{kh, "[127.0.0.1]:* %CUR%\n"}}, ip, V::Connects},
        {"star pattern", {}, {{kh, "* %CUR%\n"}}, ip, V::Connects},
        {"negated in the line, plain name matches", {}, {{kh, "*,!%NAME% %CUR%\n"}}, ip, V::Connects},
        {"negated in the line, both names", {}, {{kh, "*,!%NAME%,!127.0.0.1 %CUR%\n"}}, ip, V::Asks},
        {"other host only", {}, {{kh, "gpu-1.lab,10.0.0.1 %CUR%\n"}}, ip, V::Asks},
        {"known in known_hosts2", {}, {{kh2, "%NAME% %CUR%\n"}}, ip, V::Connects},
        {"changed in known_hosts2, known in known_hosts",
         {},
         {{kh, "%NAME% %CUR%\n"}, {kh2, "%NAME% %OTHER%\n"}},
         ip,
         V::Connects},
        {"changed in known_hosts2 only", {}, {{kh2, "%NAME% %OTHER%\n"}}, ip, V::Refuses},
        {"other key type known", {}, {{kh, "%NAME% %ECDSA%\n"}}, ip, V::Refuses},

        // UserKnownHostsFile
        {"UserKnownHostsFile known",
         "UserKnownHostsFile ~/.ssh/kh_a\n",
         {{u".ssh/kh_a"_s, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        {"UserKnownHostsFile changed, default file knows it",
         "UserKnownHostsFile ~/.ssh/kh_a\n",
         {{u".ssh/kh_a"_s, "%NAME% %OTHER%\n"}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses},
        {"UserKnownHostsFile empty, default file knows it",
         "UserKnownHostsFile ~/.ssh/kh_a\n",
         {{u".ssh/kh_a"_s, ""}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Asks},
        {"UserKnownHostsFile two files, known in the second",
         "UserKnownHostsFile ~/.ssh/kh_a ~/.ssh/kh_b\n",
         {{u".ssh/kh_a"_s, "other %OTHER%\n"}, {u".ssh/kh_b"_s, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        {"UserKnownHostsFile two files, changed in the second",
         "UserKnownHostsFile ~/.ssh/kh_a ~/.ssh/kh_b\n",
         {{u".ssh/kh_b"_s, "%NAME% %OTHER%\n"}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses},
        {"UserKnownHostsFile first line wins",
         box + "    UserKnownHostsFile ~/.ssh/kh_a\nHost *\n    UserKnownHostsFile ~/.ssh/kh_b\n",
         {{u".ssh/kh_b"_s, "%NAME% %CUR%\n"}},
         u"box"_s,
         V::Asks},
        {"UserKnownHostsFile with key=value and quotes",
         "UserKnownHostsFile=\"~/.ssh/my hosts\"\n",
         {{u".ssh/my hosts"_s, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        {"UserKnownHostsFile with %h and %p",
         "UserKnownHostsFile ~/.ssh/kh_%h_%p\n",
         {{u".ssh/kh_127.0.0.1_%PORT%"_s, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        {"UserKnownHostsFile /dev/null",
         "UserKnownHostsFile /dev/null\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Asks},
        {"UserKnownHostsFile hashed changed",
         "UserKnownHostsFile ~/.ssh/kh_a\n",
         {{u".ssh/kh_a"_s, "HASH:%NAME% %OTHER%\n"}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses},

        // GlobalKnownHostsFile
        {"GlobalKnownHostsFile known",
         "GlobalKnownHostsFile ~/etc/ssh_known_hosts\n",
         {{u"etc/ssh_known_hosts"_s, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        {"GlobalKnownHostsFile changed",
         "GlobalKnownHostsFile ~/etc/ssh_known_hosts\n",
         {{u"etc/ssh_known_hosts"_s, "%NAME% %OTHER%\n"}},
         ip,
         V::Refuses},
        {"GlobalKnownHostsFile revokes the known key",
         "GlobalKnownHostsFile ~/etc/ssh_known_hosts\n",
         {{u"etc/ssh_known_hosts"_s, "@revoked * %CUR%\n"}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses},
        {"GlobalKnownHostsFile two files, known in the second",
         "GlobalKnownHostsFile ~/etc/a ~/etc/b\n",
         {{u"etc/b"_s, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},

        // RevokedHostKeys
        {"RevokedHostKeys lists the key",
         "RevokedHostKeys %HOME%/.ssh/revoked\n",
         {{u".ssh/revoked"_s, "%CUR%\n"}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses},
        {"RevokedHostKeys lists another key",
         "RevokedHostKeys %HOME%/.ssh/revoked\n",
         {{u".ssh/revoked"_s, "# retired\n%OTHER% old\n"}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        {"RevokedHostKeys KRL with the key",
         "RevokedHostKeys %HOME%/.ssh/revoked.krl\n",
         {{u".ssh/revoked.krl"_s, "KRL:%OTHER%\n%CUR%\n"}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses},
        {"RevokedHostKeys KRL with another key",
         "RevokedHostKeys %HOME%/.ssh/revoked.krl\n",
         {{u".ssh/revoked.krl"_s, "KRL:%OTHER%\n"}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        // OpenSSH 9.2 does not expand ~ in RevokedHostKeys: the file is missing, and ssh refuses
        {"RevokedHostKeys with ~ (not expanded)",
         "RevokedHostKeys ~/.ssh/revoked\n",
         {{u".ssh/revoked"_s, "%OTHER%\n"}, {kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses},
        {"RevokedHostKeys file missing",
         "RevokedHostKeys ~/.ssh/no-such-file\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses},

        // HostKeyAlias
        {"HostKeyAlias known", "HostKeyAlias lab-box\n", {{kh, "lab-box %CUR%\n"}}, ip, V::Connects},
        {"HostKeyAlias changed, real name known",
         "HostKeyAlias lab-box\n",
         {{kh, "lab-box %OTHER%\n%NAME% %CUR%\n"}},
         ip,
         V::Refuses},
        {"HostKeyAlias unknown, real name known",
         "HostKeyAlias lab-box\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Asks},
        {"HostKeyAlias hashed", "HostKeyAlias lab-box\n", {{kh, "HASH:lab-box %CUR%\n"}}, ip, V::Connects},
        {"HostKeyAlias revoked",
         "HostKeyAlias lab-box\n",
         {{kh, "lab-box %CUR%\n@revoked lab-box %CUR%\n"}},
         ip,
         V::Refuses},

        // StrictHostKeyChecking
        {"StrictHostKeyChecking yes, unknown", "StrictHostKeyChecking yes\n", {}, ip, V::Refuses},
        {"StrictHostKeyChecking yes, known",
         "StrictHostKeyChecking yes\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        {"StrictHostKeyChecking yes from Host box, no from Host *",
         box + "    StrictHostKeyChecking yes\nHost *\n    StrictHostKeyChecking no\n",
         {},
         u"box"_s,
         V::Refuses},
        {"StrictHostKeyChecking no, unknown", "StrictHostKeyChecking no\n", {}, ip, V::Connects, V::Asks},
        {"StrictHostKeyChecking no, changed",
         "StrictHostKeyChecking no\n",
         {{kh, "%NAME% %OTHER%\n"}},
         ip,
         V::Connects,
         V::Refuses},
        {"StrictHostKeyChecking accept-new, unknown",
         "StrictHostKeyChecking accept-new\n",
         {},
         ip,
         V::Connects,
         V::Asks},
        {"StrictHostKeyChecking accept-new, changed",
         "StrictHostKeyChecking accept-new\n",
         {{kh, "%NAME% %OTHER%\n"}},
         ip,
         V::Refuses},

        // Host lines with ! and patterns, Match, Include
        {"Host b* !box does not apply to box (HostName)",
         "Host b* !box\n    HostName 127.0.0.2\n" + box,
         {{kh, "%NAME% %CUR%\n"}},
         u"box"_s,
         V::Connects},
        {"Host !box b* does not apply to box (UserKnownHostsFile)",
         "Host !box b*\n    UserKnownHostsFile ~/.ssh/kh_a\n" + box,
         {{u".ssh/kh_a"_s, "%NAME% %CUR%\n"}, {kh, "%NAME% %OTHER%\n"}},
         u"box"_s,
         V::Refuses},
        {"Host * !127.0.0.1 does not apply (StrictHostKeyChecking)",
         "Host * !127.0.0.1\n    StrictHostKeyChecking yes\n",
         {},
         ip,
         V::Asks},
        {"Host * !127.0.0.1 does not apply (HostKeyAlias)",
         "Host * !127.0.0.1\n    HostKeyAlias lab-box\n",
         {{kh, "lab-box %CUR%\n%NAME% %OTHER%\n"}},
         ip,
         V::Refuses},
        {"Host 127.0.0.? applies",
         "Host 127.0.0.?\n    UserKnownHostsFile ~/.ssh/kh_a\n",
         {{u".ssh/kh_a"_s, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        {"Match originalhost",
         "Match originalhost box\n    HostName 127.0.0.1\n    Port %PORT%\n    User %USER%\n",
         {{kh, "%NAME% %CUR%\n"}},
         u"box"_s,
         V::Connects},
        {"Match host sees the HostName",
         box + "Match host 127.0.0.1\n    UserKnownHostsFile ~/.ssh/kh_a\n",
         {{u".ssh/kh_a"_s, "%NAME% %CUR%\n"}},
         u"box"_s,
         V::Connects},
        {"Match originalhost !box does not apply",
         "Match originalhost !box\n    HostName 127.0.0.2\n" + box,
         {{kh, "%NAME% %CUR%\n"}},
         u"box"_s,
         V::Connects},
        {"Include with a Host block",
         "Include ~/.ssh/config.d/*\n",
         {{u".ssh/config.d/lab"_s, box + "    UserKnownHostsFile ~/.ssh/kh_a\n"},
          {u".ssh/kh_a"_s, "%NAME% %CUR%\n"}},
         u"box"_s,
         V::Connects},
        {"Port from a Host pattern for a typed name",
         "Host 127.0.0.1\n    Port %PORT%\n",
         {{kh, "%NAME% %CUR%\n"}},
         m_sshd.userName() + u"@127.0.0.1"_s,
         V::Connects},

        // Identities
        {"IdentityFile names a wrong key: the default key is not tried",
         "IdentityFile %WRONGKEY%\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses},
        {"IdentityFile names the key",
         "IdentityFile %USERKEY%\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Connects,
         std::nullopt,
         false,
         false},
        {"IdentitiesOnly yes: the agent's key is not used",
         "IdentitiesOnly yes\nIdentityFile %WRONGKEY%\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses,
         std::nullopt,
         true,
         false},
        {"IdentitiesOnly no: the agent's key is used",
         "IdentityFile %WRONGKEY%\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Connects,
         std::nullopt,
         true,
         false},
        {"IdentitiesOnly yes without IdentityFile, no default key",
         "IdentitiesOnly yes\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Refuses,
         std::nullopt,
         true,
         false},
        {"IdentitiesOnly yes without IdentityFile: the default key",
         "IdentitiesOnly yes\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Connects},
        {"IdentitiesOnly yes in a negated block",
         "Host * !127.0.0.1\n    IdentitiesOnly yes\n",
         {{kh, "%NAME% %CUR%\n"}},
         ip,
         V::Connects,
         std::nullopt,
         true,
         false},

        // Host certificates (the second sshd): @cert-authority lines, and ssh's fallback to the plain key.
        // libssh 0.10 never asks for a host certificate: moetune sees the plain key (docs/ssh.md).
        {"@cert-authority signed the host",
         {},
         {{kh, "@cert-authority [127.0.0.1]:* %CA%\n"}},
         u"%IP%"_s,
         V::Connects,
         V::Asks,
         false,
         true,
         true},
        {"@cert-authority for other hosts",
         {},
         {{kh, "@cert-authority *.lab %CA%\n"}},
         u"%IP%"_s,
         V::Asks,
         std::nullopt,
         false,
         true,
         true},
        {"@cert-authority revoked",
         {},
         {{kh, "@cert-authority * %CA%\n@revoked * %CA%\n"}},
         u"%IP%"_s,
         V::Refuses,
         std::nullopt,
         false,
         true,
         true},
        {"certificate host, plain key known",
         {},
         {{kh, "%NAME% %CUR%\n"}},
         u"%IP%"_s,
         V::Connects,
         std::nullopt,
         false,
         true,
         true},
        {"certificate host, plain key changed",
         {},
         {{kh, "%NAME% %OTHER%\n"}},
         u"%IP%"_s,
         V::Refuses,
         std::nullopt,
         false,
         true,
         true},
        {"@cert-authority signed the host, plain key changed",
         {},
         {{kh, "@cert-authority * %CA%\n%NAME% %OTHER%\n"}},
         u"%IP%"_s,
         V::Connects,
         V::Refuses,
         false,
         true,
         true},
        {"@cert-authority in GlobalKnownHostsFile",
         "GlobalKnownHostsFile ~/etc/ssh_known_hosts\n",
         {{u"etc/ssh_known_hosts"_s, "@cert-authority [127.0.0.1]:* %CA%\n"}},
         u"%IP%"_s,
         V::Connects,
         V::Asks,
         false,
         true,
         true},
        {"@cert-authority, HostKeyAlias not a principal",
         "HostKeyAlias lab-box\n",
         {{kh, "@cert-authority lab-box %CA%\n"}},
         u"%IP%"_s,
         V::Asks,
         std::nullopt,
         false,
         true,
         true},
        {"@cert-authority, the host key revoked",
         {},
         {{kh, "@cert-authority * %CA%\n@revoked * %CUR%\n"}},
         u"%IP%"_s,
         V::Refuses,
         std::nullopt,
         false,
         true,
         true},
        {"@cert-authority, the CA in RevokedHostKeys",
         "RevokedHostKeys %HOME%/.ssh/revoked\n",
         {{kh, "@cert-authority * %CA%\n"}, {u".ssh/revoked"_s, "%CA%\n"}},
         u"%IP%"_s,
         V::Refuses,
         std::nullopt,
         false,
         true,
         true},
    };
}

QTEST_GUILESS_MAIN(TestSshDifferential)
#include "tst_ssh_differential.moc"
