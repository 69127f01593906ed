// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// `moetune-cli fleet hosts` on the real binary (issue 46): the set an Ansible inventory or an ssh config
// selects, and a malformed inventory's exit status and message.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace Qt::StringLiterals;

namespace {
struct CliResult {
    int code = -1;
    QString out;
    QString err;
};
} // namespace

class TestCliFleet : public QObject {
    Q_OBJECT

    QTemporaryDir m_home;

    CliResult run(const QStringList &args) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"HOME"_s, m_home.path());
        p.setProcessEnvironment(env);
        p.setStandardInputFile(QProcess::nullDevice());
        p.start(QStringLiteral(MOETUNE_CLI_PATH), QStringList{u"fleet"_s} + args);
        if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit)
            return {};
        return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }
    static QString inventory(const QString &name) {
        return QStringLiteral(MOETUNE_TEST_DATA_DIR) + u"/inventory/"_s + name;
    }

private slots:
    void initTestCase() { QVERIFY(m_home.isValid()); }

    void listsTheWholeInventory() {
        const CliResult r = run({u"hosts"_s, u"--inventory"_s, inventory(u"fleet.ini"_s)});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.startsWith(u"7 hosts from "_s), qPrintable(r.out));
        const QStringList lines = r.out.split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 9); // the count, the header, 7 hosts
        QCOMPARE(lines.at(1).simplified(), u"HOST ADDRESS PORT USER GROUPS"_s);
        QCOMPARE(lines.at(2).simplified(), u"bastion 10.0.0.1 - ops -"_s);
        QCOMPARE(lines.at(6).simplified(), u"gpu04 127.0.0.1 2204 tuner gpus,h200"_s);
        QCOMPARE(lines.at(8).simplified(), u"old-b ::1 2300 gpuadmin gpus,h100"_s);
    }

    void selectsAGroupAsJson() {
        const CliResult r = run({u"hosts"_s, u"--inventory"_s, inventory(u"fleet.yml"_s), u"--group"_s,
                                 u"h200"_s, u"--format"_s, u"json"_s});
        QCOMPARE(r.code, 0);
        QJsonParseError parseError{};
        const QJsonObject root = QJsonDocument::fromJson(r.out.toUtf8(), &parseError).object();
        QCOMPARE(parseError.error, QJsonParseError::NoError);
        const QJsonArray hosts = root.value(u"hosts"_s).toArray();
        QCOMPARE(hosts.size(), 4);
        const QJsonObject gpu01 = hosts.at(0).toObject();
        QCOMPARE(gpu01.value(u"name"_s).toString(), u"gpu01"_s);
        QCOMPARE(gpu01.value(u"address"_s).toString(), u"127.0.0.1"_s);
        QCOMPARE(gpu01.value(u"port"_s).toInt(), 2200);
        QCOMPARE(gpu01.value(u"user"_s).toString(), u"tuner"_s);
        QCOMPARE(gpu01.value(u"groups"_s).toArray(), (QJsonArray{u"gpus"_s, u"h200"_s}));
        QCOMPARE(root.value(u"groups"_s).toArray(), (QJsonArray{u"gpus"_s, u"h100"_s, u"h200"_s}));
    }

    void namedHostsAndTags() {
        CliResult r =
            run({u"hosts"_s, u"--inventory"_s, inventory(u"fleet.ini"_s), u"old-a"_s, u"bastion"_s});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.startsWith(u"2 hosts from "_s), qPrintable(r.out));
        r = run({u"hosts"_s, u"--inventory"_s, inventory(u"fleet.ini"_s), u"--tag"_s, u"canary"_s});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.startsWith(u"3 hosts from "_s), qPrintable(r.out));
    }

    void refusesWhatItCannotRead_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        QTest::newRow("malformed INI")
            << QStringList{u"hosts"_s, u"--inventory"_s, inventory(u"bad-range.ini"_s)}
            << inventory(u"bad-range.ini"_s) + u":3: 'web[05:02]': the range [05:02] "
                                               u"runs backwards"_s;
        QTest::newRow("malformed YAML")
            << QStringList{u"hosts"_s, u"--inventory"_s, inventory(u"bad-group-key.yml"_s)}
            << inventory(u"bad-group-key.yml"_s) + u":4: group 'web' has the key "
                                                   u"'host'"_s;
        QTest::newRow("missing file")
            << QStringList{u"hosts"_s, u"--inventory"_s, inventory(u"none.ini"_s)} << u"none.ini"_s;
        QTest::newRow("unknown host")
            << QStringList{u"hosts"_s, u"--inventory"_s, inventory(u"fleet.ini"_s), u"gpu01"_s, u"gpu99"_s}
            << u"not in the inventory: gpu99"_s;
        QTest::newRow("unknown group")
            << QStringList{u"hosts"_s, u"--inventory"_s, inventory(u"fleet.ini"_s), u"--group"_s, u"a100"_s}
            << u"no group 'a100'"_s;
        QTest::newRow("unknown subcommand")
            << QStringList{u"frobnicate"_s} << u"unknown fleet command 'frobnicate'"_s;
        QTest::newRow("bad format") << QStringList{u"hosts"_s, u"--inventory"_s, inventory(u"fleet.ini"_s),
                                                   u"--format"_s, u"xml"_s}
                                    << u"--format is text or json"_s;
    }
    void refusesWhatItCannotRead() {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        const CliResult r = run(args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(says), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    void readsConcreteSshConfigHosts() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(u"ssh_config"_s);
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("Host *\n  User everyone\nHost gpu-a gpu-b !gpu-c gpu-?\n  HostName 10.9.9.9\n  Port 2222\n"
                "Host login\n  User ops\n");
        f.close();
        const CliResult r = run({u"hosts"_s, u"--ssh-config"_s, path, u"--format"_s, u"json"_s});
        QCOMPARE(r.code, 0);
        const QJsonArray hosts = QJsonDocument::fromJson(r.out.toUtf8()).object().value(u"hosts"_s).toArray();
        QStringList names;
        for (const QJsonValue &h : hosts)
            names.append(h.toObject().value(u"name"_s).toString());
        QCOMPARE(names, (QStringList{u"gpu-a"_s, u"gpu-b"_s, u"login"_s}));
        QCOMPARE(hosts.at(0).toObject().value(u"address"_s).toString(), u"10.9.9.9"_s);
        QCOMPARE(hosts.at(0).toObject().value(u"port"_s).toInt(), 2222);
        QCOMPARE(hosts.at(0).toObject().value(u"user"_s).toString(), u"everyone"_s);
        // ssh takes the first value: "Host *" comes first, so its User wins for every host.
        QCOMPARE(hosts.at(2).toObject().value(u"user"_s).toString(), u"everyone"_s);
    }
};

QTEST_GUILESS_MAIN(TestCliFleet)
#include "tst_cli_fleet.moc"
