// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "remote/hosts/hoststore.h"
#include "remote/hosts/sshconfig.h"

#include <QDir>
#include <QFile>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

class TestHostStore : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_config;

    void write(const QString &path, const QByteArray &text) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_config = m_dir.path() + u"/config"_s;
        write(m_dir.path() + u"/extra.conf"_s, "Host included-box\n    HostName 10.0.0.9\n    User carol\n");
        write(m_config, (u"# a comment\n"
                         "Include %1/extra.conf\n"
                         "Host gpu-7 gpu7\n"
                         "    HostName 192.168.1.7\n"
                         "    User alice\n"
                         "    Port 2222\n"
                         "    IdentityFile %1/id_gpu\n"
                         "    ProxyJump bastion.example.com\n"
                         "Host bastion.example.com\n"
                         "    User jump\n"
                         "Host=eq-box\n"
                         "    HostName=172.16.0.5\n"
                         "Host *.internal !secret.internal\n"
                         "    User bob\n"
                         "Host *\n"
                         "    ServerAliveInterval 30\n"_s.arg(m_dir.path()))
                            .toUtf8());
    }

    void aliases() {
        QStringList errors;
        const QStringList a = HostStore::sshConfigAliases(m_config, &errors);
        QCOMPARE(a, (QStringList{u"included-box"_s, u"gpu-7"_s, u"gpu7"_s, u"bastion.example.com"_s,
                                 u"eq-box"_s}));
        QVERIFY(errors.isEmpty());
    }

    void resolve_data() {
        QTest::addColumn<QString>("alias");
        QTest::addColumn<QString>("hostName");
        QTest::addColumn<QString>("user");
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("proxyJump");
        QTest::addColumn<bool>("hasIdentity");
        QTest::newRow("full entry") << u"gpu-7"_s << u"192.168.1.7"_s << u"alice"_s << 2222
                                    << u"bastion.example.com"_s << true;
        QTest::newRow("second name of a Host line")
            << u"gpu7"_s << u"192.168.1.7"_s << u"alice"_s << 2222 << u"bastion.example.com"_s << true;
        QTest::newRow("Key=value syntax")
            << u"eq-box"_s << u"172.16.0.5"_s << QString() << 0 << QString() << false;
        QTest::newRow("from an Include")
            << u"included-box"_s << u"10.0.0.9"_s << u"carol"_s << 0 << QString() << false;
        QTest::newRow("pattern match")
            << u"db.internal"_s << QString() << u"bob"_s << 0 << QString() << false;
    }

    void resolve() {
        QFETCH(QString, alias);
        QFETCH(QString, hostName);
        QFETCH(QString, user);
        QFETCH(int, port);
        QFETCH(QString, proxyJump);
        QFETCH(bool, hasIdentity);
        const HostConfig h = HostStore::resolveSshConfig(alias, m_config);
        QCOMPARE(h.alias, alias);
        QCOMPARE(h.hostName, hostName);
        if (!user.isEmpty())
            QCOMPARE(h.user, user);
        QCOMPARE(h.port, port);
        QCOMPARE(h.proxyJump, proxyJump);
        QCOMPARE(!h.identityFiles.isEmpty(), hasIdentity);
        if (hasIdentity)
            QCOMPARE(h.identityFiles.first(), m_dir.path() + u"/id_gpu"_s);
        QVERIFY(h.fromSshConfig);
    }

    // The config as OpenSSH reads it (SshConfig), where libssh 0.10's parser is wrong: a Host line that
    // matches one pattern but excludes the host with ! does not apply; Match; first value wins.
    void opensshRules_data() {
        QTest::addColumn<QByteArray>("config");
        QTest::addColumn<QString>("host");
        QTest::addColumn<QString>("hostName");
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("knownHosts");
        QTest::newRow("negated pattern after a match") << QByteArray("Host b* !box\n    HostName 10.9.9.9\n"
                                                                     "Host box\n    HostName 10.0.0.1\n")
                                                       << u"box"_s << u"10.0.0.1"_s << 0 << QString();
        QTest::newRow("negated pattern first") << QByteArray("Host !box *\n    Port 1\nHost *\n    Port 2\n")
                                               << u"box"_s << QString() << 2 << QString();
        QTest::newRow("other name of the pattern")
            << QByteArray("Host b* !box\n    Port 1\n") << u"bee"_s << QString() << 1 << QString();
        QTest::newRow("Match originalhost") << QByteArray("Match originalhost box\n    HostName 10.0.0.2\n")
                                            << u"box"_s << u"10.0.0.2"_s << 0 << QString();
        QTest::newRow("Match host sees HostName")
            << QByteArray(
                   "Host box\n    HostName 10.0.0.3\nMatch host 10.0.0.3\n    UserKnownHostsFile /a /b\n")
            << u"box"_s << u"10.0.0.3"_s << 0 << u"/a /b"_s;
        QTest::newRow("Match !originalhost")
            << QByteArray("Match !originalhost box\n    Port 7\n") << u"box"_s << QString() << 0 << QString();
        QTest::newRow("Match exec") << QByteArray("Match exec \"test %h = box\"\n    Port 8\n") << u"box"_s
                                    << QString() << 8 << QString();
        QTest::newRow("first value wins, tokens") << QByteArray("Host box\n    UserKnownHostsFile /kh/%n_%p\n"
                                                                "    Port 2200\nHost *\n    Port 22\n"
                                                                "    UserKnownHostsFile /other\n")
                                                  << u"box"_s << QString() << 2200 << u"/kh/box_2200"_s;
        QTest::newRow("comment after the value") << QByteArray("Host box   # the lab box\n    Port 9 # ssh\n")
                                                 << u"box"_s << QString() << 9 << QString();
    }

    void opensshRules() {
        QFETCH(QByteArray, config);
        QFETCH(QString, host);
        QFETCH(QString, hostName);
        QFETCH(int, port);
        QFETCH(QString, knownHosts);
        const QString path = m_dir.path() + u"/openssh_rules"_s;
        write(path, config);
        QString error;
        const SshConfigValues v = SshConfig::resolve(host, {path}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(v.hostName, hostName);
        QCOMPARE(v.port, port);
        QCOMPARE(v.userKnownHostsFiles.value_or(QStringList()).join(u' '), knownHosts);
        // the host list shows what the connection uses, except that it never runs a `Match exec` command
        const HostConfig h = HostStore::resolveSshConfig(host, path);
        QCOMPARE(h.hostName, hostName);
        QCOMPARE(h.port, config.contains("Match exec") ? 0 : port);
    }

    void settingsMergeAndAppHosts() {
        QSettings settings(m_dir.path() + u"/moetune.ini"_s, QSettings::IniFormat);
        HostStore store(&settings, m_config);
        QCOMPARE(store.hosts().size(), 5);

        HostConfig mine;
        mine.alias = u"lab box"_s;
        mine.hostName = u"10.1.2.3"_s;
        mine.user = u"me"_s;
        mine.python = u"/opt/venv/bin/python"_s;
        mine.logSource = LogSource::fromString(u"docker logs --tail 20000 sglang"_s);
        store.save(mine);

        // moetune settings of an ssh-config host are kept beside it; the connection comes from the config
        HostConfig gpu = *store.host(u"gpu-7"_s);
        gpu.python = u"~/venv/bin/python"_s;
        gpu.logSource = LogSource::fromString(u"/var/log/sglang.log"_s);
        gpu.hostName = u"evil.example.com"_s; // not taken: ~/.ssh/config is the source of truth
        store.save(gpu);

        HostStore reread(&settings, m_config);
        const auto all = reread.hosts();
        QCOMPARE(all.size(), 6);
        QCOMPARE(all.last(), mine);
        QVERIFY(!all.last().fromSshConfig);
        const HostConfig g = *reread.host(u"gpu-7"_s);
        QCOMPARE(g.python, u"~/venv/bin/python"_s);
        QCOMPARE(g.logSource.kind, LogSource::Kind::File);
        QCOMPARE(g.hostName, u"192.168.1.7"_s);
        QCOMPARE(reread.host(u"lab box"_s)->logSource.kind, LogSource::Kind::Command);

        QVERIFY(!reread.remove(u"gpu-7"_s)); // lives in ~/.ssh/config: not ours to delete
        QVERIFY(reread.remove(u"lab box"_s));
        QCOMPARE(reread.hosts().size(), 5);
    }

    void brokenSettingsReported() {
        QSettings settings(m_dir.path() + u"/broken.ini"_s, QSettings::IniFormat);
        settings.setValue(u"hosts/bad"_s, QByteArray("{not json"));
        HostStore store(&settings, m_dir.path() + u"/no-such-config"_s);
        QCOMPARE(store.hosts().size(), 0);
        QCOMPARE(store.errors().size(), 1);
        QVERIFY(store.errors().first().contains(u"bad"_s));
    }

    // HOST strings as the CLI takes them, against the realistic config of initTestCase (Include, Host *,
    // patterns): typed specs get the matching patterns like ssh, and libssh gets a name it accepts.
    void resolveSpec_data() {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("sshName");
        QTest::addColumn<QString>("hostName");
        QTest::addColumn<QString>("user");
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("label");
        QTest::addColumn<QString>("error");
        QTest::newRow("alias") << u"gpu-7"_s << u"gpu-7"_s << u"192.168.1.7"_s << u"alice"_s << 2222
                               << u"gpu-7"_s << QString();
        QTest::newRow("user@ip:port") << u"me@127.0.0.1:2200"_s << u"127.0.0.1"_s << u"127.0.0.1"_s << u"me"_s
                                      << 2200 << u"me@127.0.0.1:2200"_s << QString();
        QTest::newRow("pattern applies to a typed name")
            << u"db.internal:2022"_s << u"db.internal"_s << u"db.internal"_s << u"bob"_s << 2022
            << u"db.internal:2022"_s << QString();
        QTest::newRow("typed user wins over the pattern")
            << u"root@db.internal"_s << u"db.internal"_s << u"db.internal"_s << u"root"_s << 0
            << u"root@db.internal"_s << QString();
        QTest::newRow("bracketed v6") << u"me@[::1]:2201"_s << u"::1"_s << u"::1"_s << u"me"_s << 2201
                                      << u"me@[::1]:2201"_s << QString();
        QTest::newRow("local") << u"local"_s << u"local"_s << QString() << QString() << 0
                               << u"Local machine"_s << QString();
        QTest::newRow("empty") << u" "_s << QString() << QString() << QString() << 0 << QString()
                               << u"no HOST given"_s;
        QTest::newRow("not a host") << u"a b;c"_s << QString() << QString() << QString() << 0 << QString()
                                    << u"is not a host"_s;
        QTest::newRow("port out of range") << u"me@gpu:99999"_s << QString() << QString() << QString() << 0
                                           << QString() << u"out of range"_s;
    }

    void resolveSpec() {
        QFETCH(QString, spec);
        QFETCH(QString, sshName);
        QFETCH(QString, hostName);
        QFETCH(QString, user);
        QFETCH(int, port);
        QFETCH(QString, label);
        QFETCH(QString, error);
        QSettings settings(m_dir.path() + u"/resolve.ini"_s, QSettings::IniFormat);
        const HostStore store(&settings, m_config);
        QString why;
        const auto h = store.resolve(spec, &why);
        if (!error.isEmpty()) {
            QVERIFY(!h);
            QVERIFY2(why.contains(error), qPrintable(why));
            return;
        }
        QVERIFY2(h, qPrintable(why));
        QCOMPARE(h->sshName(), sshName);
        QCOMPARE(h->hostName, hostName);
        QCOMPARE(h->user, user);
        QCOMPARE(h->port, port);
        QCOMPARE(h->label(), label);
        QCOMPARE(h->local, spec == u"local"_s);
    }

    void localMachineSettingsShared() {
        QSettings settings(m_dir.path() + u"/local.ini"_s, QSettings::IniFormat);
        HostStore store(&settings, m_config);
        HostConfig local = store.localHost();
        QVERIFY(local.local);
        QCOMPARE(local.alias, HostStore::localAlias());
        local.python = u"/opt/venv/bin/python"_s;
        local.logSource = LogSource::fromString(u"/var/log/my server.log"_s);
        store.save(local);
        // What the app saved is what the CLI's `local` resolves to, and it is not an ordinary host.
        QString error;
        const auto again = HostStore(&settings, m_config).resolve(u"local"_s, &error);
        QVERIFY2(again, qPrintable(error));
        QCOMPARE(again->python, u"/opt/venv/bin/python"_s);
        QCOMPARE(again->logSource.value, u"/var/log/my server.log"_s);
        QVERIFY(again->local);
        for (const HostConfig &h : store.hosts())
            QVERIFY(h.alias != HostStore::localAlias());
    }

    void userSshFiles() {
        const QString home = m_dir.path() + u"/home"_s;
        QVERIFY(QDir().mkpath(home + u"/.ssh"_s));
        const QByteArray oldHome = qgetenv("HOME");
        qputenv("HOME", home.toUtf8());
        SshOptions o = HostStore::userSshOptions();
        QCOMPARE(o.sshDir, home + u"/.ssh"_s);
        QVERIFY(o.knownHostsFile.isEmpty());  // the config's UserKnownHostsFile, else ssh's two defaults
        QCOMPARE(o.sshConfigFile, u"none"_s); // no config file: libssh must not read the passwd home's
        write(home + u"/.ssh/config"_s, "# only a comment\n");
        o = HostStore::userSshOptions();
        QCOMPARE(o.sshConfigFile, home + u"/.ssh/config"_s);
        qputenv("HOME", oldHome);
    }

    void logSource_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("kind");
        QTest::newRow("empty") << u"  "_s << int(LogSource::Kind::None);
        QTest::newRow("absolute file") << u"/var/log/sglang.log"_s << int(LogSource::Kind::File);
        QTest::newRow("home file") << u"~/logs/server.log"_s << int(LogSource::Kind::File);
        QTest::newRow("journalctl") << u"journalctl -u sglang -n 20000"_s << int(LogSource::Kind::Command);
        QTest::newRow("docker") << u"docker logs --tail 20000 vllm"_s << int(LogSource::Kind::Command);
    }

    void logSource() {
        QFETCH(QString, text);
        QFETCH(int, kind);
        QCOMPARE(int(LogSource::fromString(text).kind), kind);
    }
};

QTEST_GUILESS_MAIN(TestHostStore)
#include "tst_hoststore.moc"
