// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// moetune-cli's remote commands end to end: `probe HOST` and `diagnose --host HOST` on the Local machine
// (the real agent zipapp on a fake SGLang install) and over a real sshd on 127.0.0.1 (unknown host key
// refused with its fingerprint, trust-host, then probe), checking output and exit statuses. Every test
// runs twice: with an empty HOME, and with a HOME as users have it (a ~/.ssh/config with comments,
// `Host *` defaults, patterns and an alias of the test sshd; a known_hosts with other hosts' keys).
#include "clirun.h"
#include "fakesglanghost.h"
#include "processscan.h"
#include "sshdfixture.h"
#include "sshhome.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QTest>
#include <QUuid>

#include <csignal>

using namespace Qt::StringLiterals;
using moetune::test::processesWith;
using moetune::test::ProcessField;

using moetune::test::CliResult;

class TestCliHost : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<QTemporaryDir> m_home;
    std::unique_ptr<moetune::test::FakeSglangHost> m_host;
    QString m_cli;
    bool m_realistic = false;

    QString sshDir() const { return m_home->path() + u"/.ssh"_s; }
    static bool write(const QString &path, const QByteArray &text, bool append = false) {
        QFile f(path);
        return f.open(append ? QIODevice::Append : QIODevice::WriteOnly | QIODevice::Truncate) &&
               f.write(text) == text.size();
    }
    // Other hosts' keys, one of them hashed, as ssh leaves them in a user's known_hosts.
    static QByteArray otherKnownHosts() {
        return "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
               "|1|JfKTdBh7rNbXkVAQCRp4OQoPfmI=|USECr3SWf1JUPsms5AqfD5QfxkM= ssh-ed25519 "
               "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n";
    }

    CliResult run(const QStringList &args, int timeoutMs = 120000) {
        return moetune::test::runCli(m_cli, args, timeoutMs);
    }

private slots:
    void initTestCase_data() {
        QTest::addColumn<bool>("realisticHome");
        QTest::newRow("empty HOME") << false;
        QTest::newRow("HOME with ssh config") << true;
    }

    // A fresh HOME per test: the empty one, or one with the files of a user who uses ssh every day.
    void init() {
        QFETCH_GLOBAL(bool, realisticHome);
        m_realistic = realisticHome;
        m_home = std::make_unique<QTemporaryDir>();
        QVERIFY(m_home->isValid());
        qputenv("HOME", m_home->path().toUtf8());
        if (!m_realistic)
            return;
        QVERIFY(QDir().mkpath(sshDir()));
        QVERIFY(write(sshDir() + u"/config"_s, "# ~/.ssh/config of someone who uses ssh every day\n"
                                               "Host *\n"
                                               "    ServerAliveInterval 30\n"
                                               "    # keep connections snappy\n"
                                               "    ConnectTimeout 20\n"
                                               "    HashKnownHosts yes\n"
                                               "\n"
                                               "Host *.example.com !bastion.example.com\n"
                                               "    User somebody\n"
                                               "    ProxyJump bastion.example.com\n"));
        QVERIFY(write(sshDir() + u"/known_hosts"_s, otherKnownHosts()));
        QFile::setPermissions(sshDir() + u"/config"_s, QFile::ReadOwner | QFile::WriteOwner);
    }

    void initTestCase() {
        qunsetenv("SSH_AUTH_SOCK");
        m_host = std::make_unique<moetune::test::FakeSglangHost>();
        QString error;
        QVERIFY2(m_host->create(&error), qPrintable(error));
        // Every test here runs on a host with two servers (issue 41): each finds its own by pid, port or
        // log, never as "the" server of the machine.
        QVERIFY2(m_host->addSecondServer(&error), qPrintable(error));
        m_cli = QCoreApplication::applicationDirPath() + u"/../../src/cli/moetune-cli"_s;
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
    }

    void usageErrors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no host") << QStringList{u"probe"_s} << u"no HOST given"_s;
        QTest::newRow("bad format") << QStringList{u"probe"_s, u"local"_s, u"--format"_s, u"xml"_s}
                                    << u"unknown --format"_s;
        QTest::newRow("not a host") << QStringList{u"probe"_s, u"a b;c"_s} << u"is not a host"_s;
        QTest::newRow("port out of range") << QStringList{u"probe"_s, u"me@gpu:99999"_s} << u"out of range"_s;
        QTest::newRow("diagnose local without log")
            << QStringList{u"diagnose"_s, u"--host"_s, u"local"_s} << u"has no log source"_s;
        QTest::newRow("diagnose missing remote log")
            << QStringList{u"diagnose"_s, u"--host"_s, u"local"_s, u"--log"_s, u"/nonexistent/sglang.log"_s}
            << u"Cannot fetch the log of Local machine"_s;
        QTest::newRow("diagnose bad size")
            << QStringList{u"diagnose"_s, u"--host"_s, u"local"_s, u"--bytes"_s, u"lots"_s}
            << u"--bytes wants a size"_s;
        QTest::newRow("trust-host local") << QStringList{u"trust-host"_s, u"local"_s} << u"no host key"_s;
    }

    void usageErrors() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const CliResult r = run(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    void probeLocalJson() {
        const CliResult r = run({u"probe"_s, u"local"_s, u"--format"_s, u"json"_s});
        // 1: described, and the folder of the installed Triton (triton_3_6_0) is missing.
        QCOMPARE(r.exitCode, 1);
        QJsonParseError pe{};
        const QJsonObject o = QJsonDocument::fromJson(r.out, &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString() + u'\n' + r.err));
        QCOMPARE(o.value("python"_L1).toObject().value("triton"_L1).toString(), u"3.6.0"_s);
        QJsonObject sglang;
        for (const QJsonValue &f : o.value("frameworks"_L1).toArray()) {
            if (f.toObject().value("name"_L1).toString() == u"sglang"_s)
                sglang = f.toObject();
        }
        QCOMPARE(sglang.value("version"_L1).toString(), u"0.5.6"_s);
        QCOMPARE(sglang.value("config_root"_L1).toString(), m_host->configRoot());
        QCOMPARE(sglang.value("triton_folder"_L1).toString(), u"triton_3_6_0"_s);
        QCOMPARE(sglang.value("triton_folder_exists"_L1).toBool(), false);
        QCOMPARE(sglang.value("triton_folders"_L1).toArray().first().toObject().value("name"_L1).toString(),
                 u"triton_3_4_0"_s);
        bool served = false;
        for (const QJsonValue &s : o.value("servers"_L1).toArray())
            served = served || s.toObject().value("model"_L1).toString() == m_host->modelPath();
        QVERIFY(served);
        QCOMPARE(o.value("gpus"_L1).toArray().first().toObject().value("name"_L1).toString(),
                 u"NVIDIA_H200"_s);
        QCOMPARE(o.value("host_spec"_L1).toString(), u"local"_s);
    }

    void probeLocalText() {
        const CliResult r = run({u"probe"_s, u"local"_s});
        QCOMPARE(r.exitCode, 1);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains(u"Framework:   SGLang 0.5.6"_s), qPrintable(out));
        QVERIFY2(out.contains(u"installed Triton: MISSING"_s), qPrintable(out));
        QVERIFY2(out.contains(u"128 experts, top-k 8, hidden size 2048, MoE intermediate size 768"_s),
                 qPrintable(out));
    }

    void diagnoseHostLocal_data() {
        QTest::addColumn<QString>("bytes");
        QTest::addColumn<bool>("fallbackInLog");
        QTest::newRow("whole log") << u"64M"_s << true;
        // Only the last line ("fired up"): nothing to fix in the log, yet the probe still shows the folder
        // of the installed Triton missing (exit 1 either way).
        QTest::newRow("last 60 bytes") << u"60"_s << false;
    }

    void diagnoseHostLocal() {
        QFETCH(QString, bytes);
        QFETCH(bool, fallbackInLog);
        const CliResult r = run({u"diagnose"_s, u"--host"_s, u"local"_s, u"--log"_s, m_host->logPath(),
                                 u"--bytes"_s, bytes, u"--format"_s, u"json"_s});
        QCOMPARE(r.exitCode, 1);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QVERIFY2(!o.isEmpty(), qPrintable(r.err));
        QStringList rules;
        for (const QJsonValue &f : o.value("findings"_L1).toArray())
            rules.append(f.toObject().value("rule"_L1).toString());
        QVERIFY2(rules.contains(u"host-triton-folder-missing"_s), qPrintable(rules.join(u' ')));
        QCOMPARE(rules.contains(u"moe-fallback"_s), fallbackInLog);
    }

    // Issue 41: a host with two servers (two labelled fake servers, two ports, two models). probe lists
    // both and asks which; diagnose --host takes the one writing the log, else asks, else --server; tune
    // fills the job from the chosen server; push writes where the chosen server reads. Never the first.
    void twoServersEachFlowActsOnTheChosenOne() {
        if (m_realistic)
            QSKIP("one HOME is enough: the ssh files play no part here");
        const QString pid1 = QString::number(m_host->serverPid());
        const QString pid2 = QString::number(m_host->secondPid());
        const QString port1 = QString::number(m_host->serverPort());
        const QString port2 = QString::number(m_host->secondPort());
        // probe: both listed with their ports, none chosen, the question names both and the option
        CliResult r = run({u"probe"_s, u"local"_s, u"--format"_s, u"json"_s});
        QJsonObject o = r.json();
        QVERIFY2(!o.isEmpty(), qPrintable(r.err));
        QMap<qint64, int> ports;
        for (const QJsonValue &v : o.value("servers"_L1).toArray())
            ports.insert(qint64(v.toObject().value("pid"_L1).toDouble()),
                         v.toObject().value("port"_L1).toInt());
        QCOMPARE(ports.value(m_host->serverPid()), m_host->serverPort());
        QCOMPARE(ports.value(m_host->secondPid()), m_host->secondPort());
        QVERIFY(o.value("chosen_server"_L1).isNull());
        QString ask = o.value("server_question"_L1).toString();
        QVERIFY2(ask.contains(u"pid %1 on port %2"_s.arg(pid1, port1)) &&
                     ask.contains(u"pid %1 on port %2"_s.arg(pid2, port2)) &&
                     ask.contains(u"--server PID|PORT"_s),
                 qPrintable(ask));
        r = run({u"probe"_s, u"local"_s, u"--format"_s, u"json"_s, u"--server"_s, u"port "_s + port2});
        QCOMPARE(qint64(r.json().value("chosen_server"_L1).toDouble()), m_host->secondPid());
        r = run({u"probe"_s, u"local"_s, u"--server"_s, pid2});
        QString out = QString::fromUtf8(r.out);
        QVERIFY2(
            out.contains(u"Server:      SGLang pid %1 on port %2 (%3), TP 1 (the server flows act on)"_s.arg(
                pid2, port2, m_host->secondModelPath())),
            qPrintable(out));
        QVERIFY2(out.contains(u"Also:        SGLang pid %1 on port %2"_s.arg(pid1, port1)), qPrintable(out));
        QVERIFY2(out.contains(u"60 experts, top-k 4"_s) && !out.contains(u"128 experts"_s), qPrintable(out));
        r = run({u"probe"_s, u"local"_s, u"--server"_s, u"first"_s});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(u"give a pid or a port"_s), qPrintable(r.err));

        // diagnose --host: the server writing the log is the one the host facts are about
        auto served = [](const QJsonObject &d) {
            QStringList titles;
            for (const QJsonValue &f : d.value("findings"_L1).toArray()) {
                if (f.toObject().value("rule"_L1).toString() == u"host-served-model"_s)
                    titles.append(f.toObject().value("title"_L1).toString());
            }
            return titles;
        };
        r = run({u"diagnose"_s, u"--host"_s, u"local"_s, u"--log"_s, m_host->secondLogPath(), u"--format"_s,
                 u"json"_s});
        QStringList titles = served(r.json());
        QVERIFY2(titles.size() == 1 && titles.first().contains(m_host->secondModelPath()),
                 qPrintable(titles.join(u" | "_s) + r.err));
        // a copy of the first log: no server writes it, so it asks (exit 2), naming both and --server
        const QString copy = m_home->path() + u"/copied.log"_s;
        QVERIFY(QFile::copy(m_host->logPath(), copy));
        r = run({u"diagnose"_s, u"--host"_s, u"local"_s, u"--log"_s, copy, u"--format"_s, u"json"_s});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(u"pid %1"_s.arg(pid1)) && r.err.contains(u"pid %1"_s.arg(pid2)) &&
                     r.err.contains(u"--server PID|PORT"_s),
                 qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
        r = run({u"diagnose"_s, u"--host"_s, u"local"_s, u"--log"_s, copy, u"--format"_s, u"json"_s,
                 u"--server"_s, port1});
        titles = served(r.json());
        QVERIFY2(titles.size() == 1 && titles.first().contains(m_host->modelPath()),
                 qPrintable(titles.join(u" | "_s) + r.err));

        // push --dry-run of a (simulated) run: the folder where the CHOSEN server reads its configs
        const QString specFile = m_home->path() + u"/spec.json"_s;
        QVERIFY(write(specFile, R"({"framework":"sglang","E":8,"N":128,"K":256,"topk":2,"backend":"synthetic",
            "batch_sizes":[1,2],"strategy":"exhaustive"})"));
        r = run({u"tune"_s, u"local"_s, u"--spec"_s, specFile, u"--follow"_s, u"--format"_s, u"json"_s,
                 u"--server"_s, port1},
                300000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString runId = r.json().value("run_id"_L1).toString();
        QVERIFY2(!runId.isEmpty(), r.out.constData());
        const QStringList push{u"push"_s, u"local"_s, runId, u"--dry-run"_s, u"--format"_s, u"json"_s};
        r = run(push + QStringList{u"--server"_s, u"port "_s + port2});
        QJsonObject preview = r.json().value("preview"_L1).toObject();
        QCOMPARE(preview.value("folder"_L1).toString(),
                 m_host->secondConfigDir() + u"/configs/triton_3_6_0"_s);
        QVERIFY2(preview.value("source"_L1).toString().contains(u"pid %1 on port %2"_s.arg(pid2, port2)),
                 qPrintable(preview.value("source"_L1).toString()));
        r = run(push + QStringList{u"--server"_s, pid1});
        preview = r.json().value("preview"_L1).toObject();
        QCOMPARE(preview.value("folder"_L1).toString(), m_host->configRoot() + u"/triton_3_6_0"_s);
        r = run(push); // neither serves E=8 and nothing chose: asked, nothing picked
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains(u"runs 2 servers"_s) || r.err.contains(u"servers ("_s), qPrintable(r.err));
        QVERIFY2(r.err.contains(u"--server PID|PORT"_s), qPrintable(r.err));

        // bench: which server's port and model to load? Asked, never the first.
        r = run({u"bench"_s, u"local"_s});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(u"pid %1"_s.arg(pid1)) && r.err.contains(u"--server PID|PORT"_s),
                 qPrintable(r.err));

        // tune from the second server's log: K and top-k from the chosen server's model (top-k 4)
        r = run({u"tune"_s, u"local"_s, u"--from-log"_s, m_host->secondLogPath(), u"--backend"_s,
                 u"synthetic"_s, u"--format"_s, u"json"_s, u"--server"_s, u"port "_s + port2});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject spec = r.json().value("spec"_L1).toObject();
        QCOMPARE(spec.value("E"_L1).toInt(), 60);
        QCOMPARE(spec.value("K"_L1).toInt(), 2048);
        QCOMPARE(spec.value("topk"_L1).toInt(), 4);
        run({u"cancel"_s, u"local"_s, r.json().value("run_id"_L1).toString()});
    }

    void sshUnknownKeyThenTrust() {
        moetune::test::SshdFixture sshd;
        QString error;
        if (!sshd.start(&error))
            QFAIL(qPrintable(u"sshd fixture: "_s + error));
        // The CLI reads $HOME/.ssh like ssh: the fixture's authorised key as the default key.
        const QString ssh = sshDir();
        QDir().mkpath(ssh);
        QVERIFY(QFile::copy(sshd.userKey(), ssh + u"/id_ed25519"_s));
        QFile::setPermissions(ssh + u"/id_ed25519"_s, QFile::ReadOwner | QFile::WriteOwner);
        const QString host = u"%1@127.0.0.1:%2"_s.arg(sshd.userName()).arg(sshd.port());
        const QString hostEntry = u"[127.0.0.1]:%1"_s.arg(sshd.port());
        auto knownHosts = [ssh] {
            QFile f(ssh + u"/known_hosts"_s);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QString fp = sshd.hostKeyFingerprint();
        QVERIFY(fp.startsWith(u"SHA256:"_s));

        CliResult r = run({u"probe"_s, host, u"--format"_s, u"json"_s});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(fp), qPrintable(r.err));
        QVERIFY2(r.err.contains(u"moetune-cli trust-host %1 --fingerprint %2"_s.arg(host, fp)),
                 qPrintable(r.err));
        // nothing recorded, and the user's other hosts untouched
        QCOMPARE(knownHosts(), m_realistic ? otherKnownHosts() : QByteArray());

        r = run({u"trust-host"_s, host, u"--fingerprint"_s, u"SHA256:notthekey"_s});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(u"nothing was recorded"_s), qPrintable(r.err));

        r = run({u"trust-host"_s, host, u"--fingerprint"_s, fp});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(QString::fromUtf8(r.out).contains(fp), r.out.constData());
        QVERIFY2(knownHosts().contains(hostEntry.toUtf8()), knownHosts().constData());
        if (m_realistic)
            QVERIFY(knownHosts().startsWith(otherKnownHosts()));

        // Now known: the probe runs over SSH with an interpreter that sees the fake SGLang install.
        const QString python = m_host->python();
        r = run({u"probe"_s, host, u"--python"_s, python, u"--format"_s, u"json"_s, u"--timeout"_s, u"60"_s});
        QVERIFY2(r.exitCode == 1, qPrintable(r.err));
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value("python"_L1).toObject().value("triton"_L1).toString(), u"3.6.0"_s);

        r = run({u"diagnose"_s, u"--host"_s, host, u"--python"_s, python, u"--log"_s, m_host->logPath(),
                 u"--format"_s, u"json"_s});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(QString::fromUtf8(r.out).contains(u"host-triton-folder-missing"_s), qPrintable(r.err));

        if (!m_realistic)
            return;
        // An alias of ~/.ssh/config for the same sshd: HostName, Port, User and IdentityFile from there.
        QVERIFY(write(ssh + u"/config"_s,
                      u"\n# the lab's test box\nHost moetune-test-sshd\n    HostName 127.0.0.1\n    Port %1\n"
                      u"    User %2\n    IdentityFile ~/.ssh/id_ed25519\n"_s.arg(sshd.port())
                          .arg(sshd.userName())
                          .toUtf8(),
                      true));
        r = run({u"probe"_s, u"moetune-test-sshd"_s, u"--python"_s, python, u"--format"_s, u"json"_s,
                 u"--timeout"_s, u"60"_s});
        QVERIFY2(r.exitCode == 1, qPrintable(r.err));
        QCOMPARE(QJsonDocument::fromJson(r.out).object().value("host_spec"_L1).toString(),
                 u"moetune-test-sshd"_s);
    }

    // A realistic ~/.ssh (an alias with Include and "Host * StrictHostKeyChecking no") and a host whose
    // key changed or is revoked: every command that connects refuses, says why and what to do, and
    // writes nothing; trust-host never calls such a key "already known".
    void sshRefusedWhateverTheConfigSays_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("scenario");
        for (const char *command : {"probe", "diagnose --host", "trust-host"}) {
            for (const char *scenario : {"changed", "changed hashed", "revoked beside plain line"})
                QTest::addRow("%s, %s", command, scenario)
                    << QString::fromLatin1(command) << QString::fromLatin1(scenario);
        }
    }

    void sshRefusedWhateverTheConfigSays() {
        QFETCH(QString, command);
        QFETCH(QString, scenario);
        moetune::test::SshdFixture sshd;
        QString error;
        QVERIFY2(sshd.start(&error), qPrintable(error));
        const moetune::test::SshHome home(m_home->path());
        QVERIFY(home.installKey(sshd.userKey()));
        QVERIFY(home.writeInclude(u"lab"_s, "# lab machines\nHost gpu-*\n    User ops\n"));
        QVERIFY(home.writeConfig("# ~/.ssh/config\nInclude ~/.ssh/config.d/*\n\n"
                                 "Host moetune-sshd\n    HostName 127.0.0.1\n    Port " +
                                 QByteArray::number(sshd.port()) + "\n    User " + sshd.userName().toUtf8() +
                                 "\n    IdentityFile ~/.ssh/id_ed25519\n\n"
                                 "Host *\n    StrictHostKeyChecking no   # nodes get reinstalled\n"
                                 "    UserKnownHostsFile ~/.ssh/known_hosts\n"));
        const QByteArray current = moetune::test::SshHome::publicKey(sshd.hostPublicKeyFile());
        const QByteArray other = moetune::test::SshHome::publicKey(sshd.wrongKey() + u".pub"_s);
        const QByteArray name = sshd.knownHostsName().toUtf8();
        QVERIFY(
            home.writeKnownHosts(scenario.startsWith(u"revoked"_s)
                                     ? QByteArray(name + ' ' + current + "\n@revoked * " + current + '\n')
                                     : QByteArray("gpu-1 " + current + '\n' + name + ' ' + other + '\n')));
        if (scenario.endsWith(u"hashed"_s))
            QVERIFY2(home.hashKnownHosts(&error), qPrintable(error));
        const QByteArray before = home.knownHosts();

        QStringList args = command.split(u' ');
        args << u"moetune-sshd"_s;
        if (command == u"diagnose --host"_s)
            args << u"--log"_s << m_host->logPath();
        if (command != u"trust-host"_s)
            args << u"--python"_s << m_host->python();
        const CliResult r = run(args);
        QFile::remove(home.configPath());
        QVERIFY2(r.exitCode == 2, qPrintable(u"exit %1, stderr:\n%2"_s.arg(r.exitCode).arg(r.err)));
        QVERIFY2(r.err.contains(sshd.hostKeyFingerprint()), qPrintable(r.err));
        if (scenario.startsWith(u"revoked"_s)) {
            QVERIFY2(r.err.contains(u"@revoked"_s), qPrintable(r.err));
        } else {
            QVERIFY2(r.err.contains(u"changed"_s), qPrintable(r.err));
            QVERIFY2(r.err.contains(u"ssh-keygen -R '%1'"_s.arg(sshd.knownHostsName())), qPrintable(r.err));
        }
        QVERIFY2(!r.out.contains("already known"), r.out.constData());
        QVERIFY2(!r.out.contains("Recorded"), r.out.constData());
        QCOMPARE(home.knownHosts(), before);
    }

    // moetune-cli dies (kill -9, as the OOM killer does it) while its command runs on an SSH host: the
    // command and all it started end with it, within seconds, instead of living on at the host. A command
    // that ends by itself leaves what it started in the background running (a server start does that).
    void sshCommandsEndWithTheirCli() {
        moetune::test::SshdFixture sshd;
        QString error;
        QVERIFY2(sshd.start(&error), qPrintable(error));
        const moetune::test::SshHome home(m_home->path());
        QVERIFY(home.installKey(sshd.userKey()));
        // A ~/.ssh as users have it: Host * defaults with StrictHostKeyChecking, other hosts' keys, a
        // revoked key; the alias of the test sshd and its key.
        QVERIFY(
            home.writeConfig("# ~/.ssh/config\nHost moetune-sshd\n    HostName 127.0.0.1\n    Port " +
                             QByteArray::number(sshd.port()) + "\n    User " + sshd.userName().toUtf8() +
                             "\n    IdentityFile ~/.ssh/id_ed25519\n\nHost *\n    ServerAliveInterval 30\n"
                             "    StrictHostKeyChecking accept-new\n"));
        QVERIFY(home.writeKnownHosts(otherKnownHosts() + "@revoked * " +
                                     moetune::test::SshHome::publicKey(sshd.wrongKey() + u".pub"_s) + '\n' +
                                     sshd.knownHostsName().toUtf8() + ' ' +
                                     moetune::test::SshHome::publicKey(sshd.hostPublicKeyFile()) + '\n'));
        // Remote programs named by a token, so that the test finds them (and only them) on this machine.
        const QByteArray token = "moetune-remote-" + QUuid::createUuid().toByteArray(QUuid::Id128);
        const QString sleeper = m_home->path() + u"/sleep-"_s + QString::fromLatin1(token);
        QVERIFY(QFile::link(u"/bin/sleep"_s, sleeper));

        // 1. The log command prints the log, then waits (a quiet `tail -f`, a stuck `docker logs`).
        const QString slowLog = u"cat -- '%1'; '%2' 300 & '%2' 301; wait"_s.arg(m_host->logPath(), sleeper);
        QProcess cli;
        cli.setStandardInputFile(QProcess::nullDevice());
        // --server: a log command names no server; this test's own fake, whatever else runs here.
        cli.start(m_cli, {u"diagnose"_s, u"--host"_s, u"moetune-sshd"_s, u"--log"_s, slowLog, u"--format"_s,
                          u"json"_s, u"--server"_s, u"pid %1"_s.arg(m_host->serverPid())});
        QVERIFY(cli.waitForStarted());
        QVERIFY2(QTest::qWaitFor([&] { return processesWith(token, ProcessField::CommandLine).size() >= 3; },
                                 30000), // sh and two sleeps
                 qPrintable(u"the remote command did not start; stderr: "_s +
                            QString::fromUtf8(cli.readAllStandardError())));
        const qsizetype during = processesWith(token, ProcessField::CommandLine).size();
        ::kill(pid_t(cli.processId()), SIGKILL);
        QVERIFY(cli.waitForFinished(10000));
        QElapsedTimer t;
        t.start();
        const bool gone =
            QTest::qWaitFor([&] { return processesWith(token, ProcessField::CommandLine).isEmpty(); }, 15000);
        const QList<qint64> left = processesWith(token, ProcessField::CommandLine);
        for (qint64 pid : left)
            ::kill(pid_t(pid), SIGKILL); // a clean machine even when the test fails
        QVERIFY2(
            gone,
            qPrintable(u"%1 of %2 remote processes outlived the killed CLI"_s.arg(left.size()).arg(during)));
        qInfo("the remote command and its children ended %lld ms after the CLI was killed", t.elapsed());

        // 2. A command that ends by itself: its background child stays (what a server start relies on).
        const QString startsChild =
            u"'%1' 302 >/dev/null 2>&1 & cat -- '%2'"_s.arg(sleeper, m_host->logPath());
        const CliResult r =
            run({u"diagnose"_s, u"--host"_s, u"moetune-sshd"_s, u"--log"_s, startsChild, u"--format"_s,
                 u"json"_s, u"--server"_s, u"pid %1"_s.arg(m_host->serverPid())});
        QVERIFY2(r.exitCode == 1, qPrintable(r.err)); // the log's MoE warning
        QTest::qWait(1500); // the channel is closed by now: a watcher would have struck
        const QList<qint64> child = processesWith(token, ProcessField::CommandLine);
        for (qint64 pid : child)
            ::kill(pid_t(pid), SIGKILL);
        QCOMPARE(child.size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestCliHost)
#include "tst_cli_host.moc"
