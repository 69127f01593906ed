// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Host keys are checked as strictly as OpenSSH checks them, whatever ~/.ssh/config says: a REAL sshd
// (SshdFixture) and a realistic HOME (SshHome: a config with comments, Host * StrictHostKeyChecking
// no / accept-new, Include; known_hosts with hashed names, patterns, @revoked and @cert-authority lines).
// A changed or revoked key is refused with the fix; "no" / "accept-new" never make it acceptable.
#include "remote/flows/jobwaiter.h"
#include "remote/transport/sshtransport.h"
#include "sshdfixture.h"
#include "sshhome.h"

#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::SshdFixture;
using moetune::test::SshHome;

Q_DECLARE_METATYPE(moetune::Transport::State)

class TestHostKeys : public QObject {
    Q_OBJECT

    SshdFixture m_sshd;
    QTemporaryDir m_home;
    std::unique_ptr<SshHome> m_ssh;

    // The known_hosts text of a scenario: "current" is the sshd's key, "other" another ed25519 key.
    QByteArray knownHostsFor(const QString &scenario) const {
        const QByteArray name = m_sshd.knownHostsName().toUtf8();
        const QByteArray current = SshHome::publicKey(m_sshd.hostPublicKeyFile());
        const QByteArray other = SshHome::publicKey(m_sshd.wrongKey() + u".pub"_s);
        const QByteArray header = "# hosts of the lab\n\ngpu-1.lab,10.0.0.1 " + other + " old laptop\n";
        if (scenario == u"changed"_s || scenario == u"changed hashed"_s)
            return header + name + ' ' + other + '\n';
        if (scenario == u"changed by pattern"_s)
            return header + "[127.0.0.1]:*,gpu-* " + other + '\n';
        if (scenario == u"revoked"_s)
            return header + "@revoked " + name + ' ' + current + '\n';
        if (scenario == u"revoked beside plain line"_s)
            return header + name + ' ' + current + "\n@revoked * " + current + '\n';
        if (scenario == u"cert-authority"_s)
            return header + "@cert-authority *.lab,[127.0.0.1]:* " + other + '\n';
        if (scenario == u"known hashed"_s)
            return header + name + ' ' + current + '\n';
        if (scenario == u"known in a pattern list"_s)
            return header + "gpu-2.lab,!gpu-9.lab," + name + ' ' + current + '\n';
        if (scenario == u"negated"_s)
            return header + "*,!" + name + ' ' + other + '\n';
        return header;
    }

    void writeConfig(const QString &config) {
        m_ssh->writeInclude(u"cluster"_s, "# from the cluster's onboarding page\n"
                                          "Host *\n"
                                          "    StrictHostKeyChecking accept-new\n"
                                          "    UserKnownHostsFile /dev/null\n");
        if (config == u"Host * StrictHostKeyChecking no"_s)
            m_ssh->writeConfig("# ~/.ssh/config\n"
                               "Host gpu-*\n"
                               "    User ops\n"
                               "\n"
                               "Host *\n"
                               "    StrictHostKeyChecking no   # the lab reinstalls nodes often\n"
                               "    ServerAliveInterval 30\n");
        else if (config == u"Include with accept-new"_s)
            m_ssh->writeConfig("Include ~/.ssh/config.d/*\n\nHost gpu-*\n    User ops\n");
        else
            QFile::remove(m_ssh->configPath());
    }

private slots:
    void initTestCase() {
        qunsetenv("SSH_AUTH_SOCK");
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8()); // ~ in the config and in SshOptions is this HOME
        m_ssh = std::make_unique<SshHome>(m_home.path());
        QString error;
        QVERIFY2(m_sshd.start(&error), qPrintable(error));
        QVERIFY(m_ssh->installKey(m_sshd.userKey()));
    }

    void cleanupTestCase() { m_sshd.stop(); }

    void verdict_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<Transport::State>("state");
        QTest::addColumn<QString>("message");
        using S = Transport::State;
        const QList<std::tuple<const char *, S, QString>> scenarios{
            {"changed", S::Failed, u"ssh-keygen -R"_s},
            {"changed hashed", S::Failed, u"ssh-keygen -R"_s},
            {"changed by pattern", S::Failed, u"ssh-keygen -R"_s},
            {"revoked", S::Failed, u"@revoked"_s},
            {"revoked beside plain line", S::Failed, u"@revoked"_s},
            {"cert-authority", S::AwaitingUser, u"checks plain host keys only"_s},
            {"known hashed", S::Connected, QString()},
            {"known in a pattern list", S::Connected, QString()},
            {"negated", S::AwaitingUser, u"is not a known host"_s},
            {"unknown", S::AwaitingUser, u"is not a known host"_s},
        };
        for (const char *config :
             {"no config file", "Host * StrictHostKeyChecking no", "Include with accept-new"}) {
            for (const auto &[scenario, state, message] : scenarios)
                QTest::addRow("%s, %s", config, scenario)
                    << QString::fromLatin1(config) << QString::fromLatin1(scenario) << state << message;
        }
    }

    void verdict() {
        QFETCH(QString, config);
        QFETCH(QString, scenario);
        QFETCH(Transport::State, state);
        QFETCH(QString, message);
        writeConfig(config);
        QVERIFY(m_ssh->writeKnownHosts(knownHostsFor(scenario)));
        QString error;
        if (scenario.endsWith(u"hashed"_s))
            QVERIFY2(m_ssh->hashKnownHosts(&error), qPrintable(error));
        const QByteArray before = m_ssh->knownHosts();

        SshOptions o = m_sshd.options();
        o.sshConfigFile = QFile::exists(m_ssh->configPath()) ? m_ssh->configPath() : u"none"_s;
        o.knownHostsFile = m_ssh->knownHostsPath();
        o.sshDir = m_ssh->sshDir();
        SshTransport t(o);
        QSignalSpy unknown(&t, &SshTransport::hostKeyUnknown);
        t.connectToHost();
        QTRY_VERIFY_WITH_TIMEOUT(t.state() == Transport::State::Connected ||
                                     t.state() == Transport::State::Failed ||
                                     t.state() == Transport::State::AwaitingUser,
                                 20000);
        QVERIFY2(t.state() == state,
                 qPrintable(Transport::stateName(t.state()) + u": "_s + t.stateMessage()));
        QVERIFY2(t.stateMessage().contains(message), qPrintable(t.stateMessage()));
        QCOMPARE(unknown.size(), state == Transport::State::AwaitingUser ? 1 : 0);
        if (state == Transport::State::Failed) {
            QVERIFY2(t.stateMessage().contains(m_sshd.hostKeyFingerprint()), qPrintable(t.stateMessage()));
            QVERIFY2(t.stateMessage().contains(m_ssh->knownHostsPath()), qPrintable(t.stateMessage()));
        }
        if (state == Transport::State::AwaitingUser)
            t.answerHostKey(false);
        QCOMPARE(m_ssh->knownHosts(), before); // nothing recorded behind the user's back

        if (scenario.startsWith(u"revoked"_s)) {
            // OpenSSH's own client, with the same HOME, refuses the revoked key too.
            QProcess ssh;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(u"HOME"_s, m_home.path());
            ssh.setProcessEnvironment(env);
            ssh.start(u"ssh"_s,
                      {u"-F"_s, QFile::exists(m_ssh->configPath()) ? m_ssh->configPath() : u"/dev/null"_s,
                       u"-o"_s, u"UserKnownHostsFile="_s + m_ssh->knownHostsPath(), u"-o"_s,
                       u"BatchMode=yes"_s, u"-p"_s, QString::number(m_sshd.port()),
                       m_sshd.userName() + u"@127.0.0.1"_s, u"true"_s});
            QVERIFY(ssh.waitForFinished(20000));
            QCOMPARE(ssh.exitCode(), 255);
            QVERIFY2(ssh.readAllStandardError().contains("REVOKED"), "ssh accepted a revoked key");
        }
    }

    // "Yes" to an unknown key records it so that ssh and the next connection know it, beside the
    // user's hashed lines; nothing else in the file changes.
    void acceptedKeyRecordedBesideHashedLines() {
        writeConfig(u"Host * StrictHostKeyChecking no"_s);
        QVERIFY(m_ssh->writeKnownHosts(knownHostsFor(u"unknown"_s) + "# last line without a newline"));
        QString error;
        QVERIFY2(m_ssh->hashKnownHosts(&error), qPrintable(error));
        const QByteArray before = m_ssh->knownHosts();
        SshOptions o = m_sshd.options();
        o.sshConfigFile = m_ssh->configPath();
        o.knownHostsFile = m_ssh->knownHostsPath();
        o.sshDir = m_ssh->sshDir();
        {
            SshTransport t(o);
            connect(&t, &SshTransport::hostKeyUnknown, &t, [&t] { t.answerHostKey(true); });
            t.connectToHost();
            QTRY_COMPARE_WITH_TIMEOUT(t.state(), Transport::State::Connected, 20000);
        }
        const QByteArray after = m_ssh->knownHosts();
        QVERIFY(after.startsWith(before));
        const QByteArray recorded =
            m_sshd.knownHostsName().toUtf8() + ' ' + SshHome::publicKey(m_sshd.hostPublicKeyFile()) + '\n';
        QVERIFY2(after.endsWith(recorded), after.constData());
        QByteArray found;
        QVERIFY2(SshdFixture::run(u"ssh-keygen"_s,
                                  {u"-F"_s, m_sshd.knownHostsName(), u"-f"_s, m_ssh->knownHostsPath()},
                                  &error, &found),
                 qPrintable(error));
        QVERIFY(found.contains(SshHome::publicKey(m_sshd.hostPublicKeyFile())));
        SshTransport again(o);
        QSignalSpy unknown(&again, &SshTransport::hostKeyUnknown);
        again.connectToHost();
        QVERIFY2(waitForConnected(&again, 20000, &error), qPrintable(error));
        QCOMPARE(unknown.size(), 0);
    }
};

QTEST_GUILESS_MAIN(TestHostKeys)
#include "tst_hostkeys.moc"
