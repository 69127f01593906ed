// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// known_hosts lines read as OpenSSH reads them (KnownHostsEntry, KnownHosts): markers, malformed lines,
// patterns, negations, "[host]:port", and hashed names checked against what ssh-keygen -H writes.
#include "remote/hosts/knownhosts.h"
#include "sshdfixture.h"
#include "sshhome.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

// Real public key blobs (base64), made with ssh-keygen for this test.
const QByteArray kKey = "AAAAC3NzaC1lZDI1NTE5AAAAIEBv9I/xMDv1ozQ0Sja2HdPa9J7MUGDnXRZQsoFT5rSf";

} // namespace

class TestKnownHosts : public QObject {
    Q_OBJECT
private slots:
    void parse_data() {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<int>("marker");
        QTest::addColumn<QString>("error");
        QTest::newRow("plain") << "gpu-1 ssh-ed25519 " + kKey << true << 0 << QString();
        QTest::newRow("comment after the key")
            << "gpu-1 ssh-ed25519 " + kKey + " root@gpu-1" << true << 0 << QString();
        QTest::newRow("tabs and CRLF") << "gpu-1\tssh-ed25519\t" + kKey + "\r\n" << true << 0 << QString();
        QTest::newRow("revoked") << "@revoked * ssh-ed25519 " + kKey << true << 1 << QString();
        QTest::newRow("cert-authority")
            << "@cert-authority *.lab ssh-ed25519 " + kKey << true << 2 << QString();
        QTest::newRow("comment line") << QByteArray("   # gpu-1 ssh-ed25519 x") << false << 0 << QString();
        QTest::newRow("blank") << QByteArray(" \t\n") << false << 0 << QString();
        QTest::newRow("unknown marker")
            << "@trusted gpu-1 ssh-ed25519 " + kKey << false << 0 << u"unknown marker"_s;
        QTest::newRow("no key") << QByteArray("gpu-1 ssh-ed25519") << false << 0 << u"expected"_s;
        QTest::newRow("bad base64") << QByteArray("gpu-1 ssh-ed25519 AAAA$$$$") << false << 0 << u"base64"_s;
        QTest::newRow("type lies") << "gpu-1 ssh-rsa " + kKey << false << 0 << u"not a ssh-rsa key"_s;
    }

    void parse() {
        QFETCH(QByteArray, line);
        QFETCH(bool, valid);
        QFETCH(int, marker);
        QFETCH(QString, error);
        QString why;
        const auto e = KnownHostsEntry::parse(line, &why);
        QCOMPARE(e.has_value(), valid);
        QVERIFY2(error.isEmpty() ? why.isEmpty() : why.contains(error), qPrintable(why));
        if (e) {
            QCOMPARE(int(e->marker), marker);
            QCOMPARE(e->keyType, QByteArray("ssh-ed25519"));
            QCOMPARE(e->key, QByteArray::fromBase64(kKey));
        }
    }

    void matches_data() {
        QTest::addColumn<QByteArray>("hosts");
        QTest::addColumn<QString>("host");
        QTest::addColumn<int>("port");
        QTest::addColumn<bool>("match");
        QTest::newRow("name") << QByteArray("gpu-1") << u"gpu-1"_s << 22 << true;
        QTest::newRow("case folded") << QByteArray("GPU-1.Lab") << u"gpu-1.lab"_s << 22 << true;
        QTest::newRow("other name") << QByteArray("gpu-1") << u"gpu-2"_s << 22 << false;
        QTest::newRow("port given, plain line") << QByteArray("gpu-1") << u"gpu-1"_s << 2222 << false;
        QTest::newRow("[host]:port") << QByteArray("[gpu-1]:2222") << u"gpu-1"_s << 2222 << true;
        QTest::newRow("[host]:22 is written plain") << QByteArray("[gpu-1]:22") << u"gpu-1"_s << 22 << false;
        QTest::newRow("list") << QByteArray("a,b,gpu-1,c") << u"gpu-1"_s << 22 << true;
        QTest::newRow("star") << QByteArray("gpu-*") << u"gpu-17"_s << 22 << true;
        QTest::newRow("star matching a star (fuzz)") << QByteArray("*") << u"*x"_s << 22 << true;
        QTest::newRow("question mark") << QByteArray("gpu-?") << u"gpu-17"_s << 22 << false;
        QTest::newRow("star over a port") << QByteArray("[10.0.0.7]:*") << u"10.0.0.7"_s << 2222 << true;
        QTest::newRow("negated") << QByteArray("gpu-*,!gpu-9") << u"gpu-9"_s << 22 << false;
        QTest::newRow("negation alone never matches") << QByteArray("!gpu-9") << u"gpu-1"_s << 22 << false;
        QTest::newRow("negation of another") << QByteArray("gpu-*,!gpu-9") << u"gpu-1"_s << 22 << true;
        QTest::newRow("empty patterns") << QByteArray(",,") << u"gpu-1"_s << 22 << false;
        QTest::newRow("bad hash") << QByteArray("|1|nope|nope") << u"gpu-1"_s << 22 << false;
    }

    void matches() {
        QFETCH(QByteArray, hosts);
        QFETCH(QString, host);
        QFETCH(int, port);
        QFETCH(bool, match);
        const auto e = KnownHostsEntry::parse(QByteArray(hosts + " ssh-ed25519 " + kKey));
        QVERIFY(e);
        QCOMPARE(e->matches(KnownHostsEntry::lookupName(host, port)), match);
    }

    void globIsLinear() {
        // backtracking glob: a hostile pattern must not take exponential time
        const QByteArray text(20000, 'a');
        QByteArray pattern;
        for (int i = 0; i < 200; ++i)
            pattern += "*a";
        pattern += 'b';
        QVERIFY(!KnownHostsEntry::globMatch(text, pattern));
    }

    // What ssh-keygen -H writes is matched for the same name (and for no other).
    void hashedByOpenSsh_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("plain name") << u"gpu-1.lab"_s;
        QTest::newRow("[host]:port") << u"[127.0.0.1]:2222"_s;
    }

    void hashedByOpenSsh() {
        QFETCH(QString, name);
        QTemporaryDir dir;
        const test::SshHome home(dir.path());
        QVERIFY(home.writeKnownHosts(name.toUtf8() + " ssh-ed25519 " + kKey + '\n'));
        QString error;
        QVERIFY2(home.hashKnownHosts(&error), qPrintable(error));
        const QByteArray hashed = home.knownHosts();
        QVERIFY2(hashed.startsWith("|1|"), hashed.constData());
        const auto e = KnownHostsEntry::parse(hashed);
        QVERIFY(e);
        QVERIFY(e->matches(name.toUtf8()));
        QVERIFY(!e->matches("gpu-2.lab"));
        const bool bracketed = name.startsWith(u'[');
        const QString host = bracketed ? name.mid(1, name.indexOf(u']') - 1) : name;
        const int port = bracketed ? name.mid(name.lastIndexOf(u':') + 1).toInt() : 22;
        const HostKeyVerdict v =
            KnownHosts({home.knownHostsPath()}).check(host, port, QByteArray::fromBase64(kKey));
        QCOMPARE(v.status, HostKeyVerdict::Status::Known);
    }

    void verdicts_data() {
        QTest::addColumn<QByteArray>("file");
        QTest::addColumn<int>("status");
        QTest::addColumn<int>("lines");
        const QByteArray other = "AAAAC3NzaC1lZDI1NTE5AAAAIO6o6Gc1RPcGvzciHqiNgKk6Lvk32mxBnClTfKyzAN3w";
        const QByteArray rsa =
            "AAAAB3NzaC1yc2EAAAADAQABAAAAgQCr819qG0x+kQdHnS80DO8DccE75j5ZYca89nVQrGnGLlEIOmdzn6QmS2dSgK"
            "HjGnMUfy1nMD1tbUTxjJBhlZcpXUky4NEnsr0mJU9ZCrZo3V5FPrkk88wCCaRgRPupfhFsH9N3NBc9QvrOYAYi+t7A"
            "RnjQIxaTVxKGYw3wQrC99w==";
        using S = HostKeyVerdict::Status;
        QTest::newRow("known") << "gpu-1 ssh-ed25519 " + kKey + '\n' << int(S::Known) << 0;
        QTest::newRow("unknown") << "gpu-2 ssh-ed25519 " + kKey + '\n' << int(S::Unknown) << 0;
        QTest::newRow("changed") << "# c\ngpu-1 ssh-ed25519 " + other + '\n' << int(S::Changed) << 1;
        QTest::newRow("changed beats nothing, known beats changed")
            << "gpu-1 ssh-ed25519 " + other + "\ngpu-* ssh-ed25519 " + kKey + '\n'
            << int(S::Known) << 0;
        QTest::newRow("other type") << "gpu-1 ssh-rsa " + rsa + '\n' << int(S::OtherType) << 1;
        QTest::newRow("revoked beats known")
            << "gpu-1 ssh-ed25519 " + kKey + "\n@revoked * ssh-ed25519 " + kKey + '\n'
            << int(S::Revoked) << 1;
        QTest::newRow("revoked other key is no verdict")
            << "gpu-1 ssh-ed25519 " + kKey + "\n@revoked * ssh-ed25519 " + other + '\n'
            << int(S::Known) << 0;
        QTest::newRow("cert-authority only") << "@cert-authority gpu-* ssh-ed25519 " + other + '\n'
                                             << int(S::Unknown) << 0;
        QTest::newRow("malformed lines skipped")
            << "garbage\n@what gpu-1 x y\ngpu-1 ssh-ed25519 " + kKey + '\n'
            << int(S::Known) << 0;
    }

    void verdicts() {
        QFETCH(QByteArray, file);
        QFETCH(int, status);
        QFETCH(int, lines);
        QTemporaryDir dir;
        const test::SshHome home(dir.path());
        QVERIFY(home.writeKnownHosts(file));
        const HostKeyVerdict v = KnownHosts({home.knownHostsPath(), dir.path() + u"/absent"_s})
                                     .check(u"gpu-1"_s, 22, QByteArray::fromBase64(kKey));
        QCOMPARE(int(v.status), status);
        QCOMPARE(v.lines.size(), lines);
        if (file.startsWith("@cert-authority"))
            QCOMPARE(v.certAuthorities.size(), 1);
    }

    void addAppendsAfterALastLineWithoutNewline() {
        QTemporaryDir dir;
        const QString file = dir.path() + u"/new/.ssh/known_hosts"_s; // the folders do not exist yet
        QDir().mkpath(dir.path() + u"/new"_s);
        const KnownHosts kh({file});
        QString error;
        QVERIFY2(kh.add(u"GPU-1"_s, 2222, QByteArray::fromBase64(kKey), &error), qPrintable(error));
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadWrite | QIODevice::Append));
        f.write("# no newline");
        f.close();
        QVERIFY2(kh.add(u"gpu-2"_s, 22, QByteArray::fromBase64(kKey), &error), qPrintable(error));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(),
                 "[gpu-1]:2222 ssh-ed25519 " + kKey + "\n# no newline\ngpu-2 ssh-ed25519 " + kKey + '\n');
        QCOMPARE(int(QFileInfo(file).permissions() & (QFile::ReadGroup | QFile::ReadOther)), 0);
        QCOMPARE(kh.check(u"gpu-1"_s, 2222, QByteArray::fromBase64(kKey)).status,
                 HostKeyVerdict::Status::Known);
    }
};

QTEST_GUILESS_MAIN(TestKnownHosts)
#include "tst_knownhosts.moc"
