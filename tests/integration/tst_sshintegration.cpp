// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Integration tests against a REAL OpenSSH sshd started by the test on 127.0.0.1 (SshdFixture).
#include "core/util/shellquote.h"
#include "remote/flows/jobwaiter.h"
#include "remote/transport/sshtransport.h"
#include "sshagentfixture.h"
#include "sshdfixture.h"
#include "sshhome.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QTimer>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::SshAgentFixture;
using moetune::test::SshdFixture;

namespace {

QByteArray fileSha(const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(&f);
    return h.result().toHex();
}

bool writeRandomFile(const QString &path, qint64 bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    QByteArray block(1 << 20, Qt::Uninitialized);
    auto *words = reinterpret_cast<quint32 *>(block.data());
    for (qint64 done = 0; done < bytes; done += block.size()) {
        QRandomGenerator::global()->fillRange(words, block.size() / 4);
        f.write(block.constData(), qMin<qint64>(block.size(), bytes - done));
    }
    return true;
}

// Resident memory of this process in MB (VmRSS of /proc/self/status).
double residentMb() {
    QFile f(u"/proc/self/status"_s);
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
    }
    return -1;
}

QByteArray readAll(const QString &path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestSshIntegration : public QObject {
    Q_OBJECT

    SshdFixture m_sshd;

private slots:
    void initTestCase() {
        qunsetenv("SSH_AUTH_SOCK"); // the developer's agent must not make a refused key pass
        QString error;
        QVERIFY2(m_sshd.start(&error), qPrintable(error));
    }

    void cleanupTestCase() { m_sshd.stop(); }

    void init() {
        if (!m_sshd.isRunning()) {
            QString error;
            QVERIFY2(m_sshd.restart(&error), qPrintable(error));
        }
    }

    void unknownHostKeyAcceptedAndRecorded() {
        QFile(m_sshd.knownHostsFile()).open(QIODevice::WriteOnly | QIODevice::Truncate);
        SshTransport t(m_sshd.options());
        QSignalSpy unknown(&t, &SshTransport::hostKeyUnknown);
        t.connectToHost();
        QTRY_COMPARE_WITH_TIMEOUT(unknown.size(), 1, 20000);
        QCOMPARE(unknown[0][0].toString(), u"ssh-ed25519"_s);
        QCOMPARE(unknown[0][1].toString(), m_sshd.hostKeyFingerprint());
        QCOMPARE(t.state(), Transport::State::AwaitingUser);
        QVERIFY(readAll(m_sshd.knownHostsFile()).isEmpty()); // nothing recorded before the answer
        t.answerHostKey(true);
        QTRY_COMPARE_WITH_TIMEOUT(t.state(), Transport::State::Connected, 20000);
        QVERIFY(readAll(m_sshd.knownHostsFile()).contains(u"[127.0.0.1]:%1"_s.arg(m_sshd.port()).toUtf8()));

        // and the next connection does not ask again
        SshTransport again(m_sshd.options());
        QSignalSpy unknown2(&again, &SshTransport::hostKeyUnknown);
        again.connectToHost();
        QTRY_COMPARE_WITH_TIMEOUT(again.state(), Transport::State::Connected, 20000);
        QCOMPARE(unknown2.size(), 0);
    }

    void unknownHostKeyRejected() {
        QFile(m_sshd.knownHostsFile()).open(QIODevice::WriteOnly | QIODevice::Truncate);
        SshTransport t(m_sshd.options());
        connect(&t, &SshTransport::hostKeyUnknown, &t, [&t] { t.answerHostKey(false); });
        t.connectToHost();
        QTRY_COMPARE_WITH_TIMEOUT(t.state(), Transport::State::Failed, 20000);
        QVERIFY(t.stateMessage().contains(u"not accepted"_s));
        QVERIFY(readAll(m_sshd.knownHostsFile()).isEmpty());
    }

    void changedHostKeyRefused() {
        QString error;
        QVERIFY2(m_sshd.trustHostKey(&error), qPrintable(error));
        const QByteArray before = readAll(m_sshd.knownHostsFile());
        QVERIFY2(m_sshd.restartWithNewHostKey(&error), qPrintable(error));
        SshTransport t(m_sshd.options());
        QSignalSpy unknown(&t, &SshTransport::hostKeyUnknown);
        t.connectToHost();
        QTRY_COMPARE_WITH_TIMEOUT(t.state(), Transport::State::Failed, 20000);
        QCOMPARE(unknown.size(), 0); // never offered to the user as "unknown"
        QVERIFY2(t.stateMessage().contains(u"changed"_s), qPrintable(t.stateMessage()));
        QVERIFY(t.stateMessage().contains(m_sshd.hostKeyFingerprint()));
        QVERIFY(t.stateMessage().contains(u"ssh-keygen -R"_s));
        QCOMPARE(readAll(m_sshd.knownHostsFile()), before); // nothing rewritten
    }

    void authentication_data() {
        QTest::addColumn<QString>("method");
        QTest::addColumn<bool>("succeeds");
        QTest::newRow("default key in ~/.ssh") << u"default"_s << true;
        QTest::newRow("IdentityFile") << u"identity"_s << true;
        QTest::newRow("encrypted IdentityFile, passphrase asked") << u"encrypted"_s << true;
        QTest::newRow("encrypted default key, no IdentityFile, passphrase asked")
            << u"encrypted default"_s << true;
        QTest::newRow("ssh-agent") << u"agent"_s << true;
        QTest::newRow("wrong key refused") << u"wrong"_s << false;
    }

    void authentication() {
        QFETCH(QString, method);
        QFETCH(bool, succeeds);
        QString error;
        QVERIFY2(m_sshd.trustHostKey(&error), qPrintable(error));
        SshOptions o = m_sshd.options(method == u"default"_s);
        SshAgentFixture agent;
        if (method == u"identity"_s)
            o.host.identityFiles = {m_sshd.userKey()};
        if (method == u"encrypted"_s)
            o.host.identityFiles = {m_sshd.encryptedUserKey()};
        if (method == u"wrong"_s)
            o.host.identityFiles = {m_sshd.wrongKey()};
        const test::SshHome home(m_sshd.dir() + u"/home-with-encrypted-key"_s);
        if (method == u"encrypted default"_s) {
            QVERIFY(home.installKey(m_sshd.encryptedUserKey())); // ~/.ssh/id_ed25519, with a passphrase
            o.sshDir = home.sshDir();
        }
        if (method == u"agent"_s) {
            QVERIFY2(agent.start(m_sshd.dir() + u"/agent.sock"_s, &error), qPrintable(error));
            QVERIFY2(agent.add(m_sshd.userKey(), &error), qPrintable(error));
            qputenv("SSH_AUTH_SOCK", QFile::encodeName(agent.socket()));
        }
        SshTransport t(o);
        QSignalSpy secrets(&t, &SshTransport::secretRequested);
        connect(&t, &SshTransport::secretRequested, &t, [&t](SshTransport::SecretKind kind) {
            if (kind == SshTransport::SecretKind::Passphrase)
                t.provideSecret({u"correct horse"_s});
            else
                t.cancelSecret();
        });
        t.connectToHost();
        QTRY_VERIFY_WITH_TIMEOUT(
            t.state() == Transport::State::Connected || t.state() == Transport::State::Failed, 30000);
        qunsetenv("SSH_AUTH_SOCK");
        QCOMPARE(t.state() == Transport::State::Connected, succeeds);
        if (method.startsWith(u"encrypted"_s)) {
            QCOMPARE(secrets.size(), 1);
            QCOMPARE(secrets[0][0].value<SshTransport::SecretKind>(), SshTransport::SecretKind::Passphrase);
            QVERIFY2(secrets[0][1].toStringList().value(0).contains(method == u"encrypted"_s
                                                                        ? m_sshd.encryptedUserKey()
                                                                        : home.sshDir() + u"/id_ed25519"_s),
                     qPrintable(secrets[0][1].toStringList().value(0)));
        }
        if (!succeeds)
            QVERIFY2(t.stateMessage().contains(u"Authentication"_s), qPrintable(t.stateMessage()));
        if (succeeds) {
            const WaitedJob w = waitForJob(&t, t.exec(ExecRequest(u"id -un"_s)), 20000);
            QCOMPARE(w.stdoutLines, QStringList{m_sshd.userName()});
        }
    }

    // The transport's state follows a request at once: two callers that each ensure a connection in one
    // event-loop turn make one handshake (before: two, the second tearing the first down), and a job
    // submitted right after a disconnect request connects again and runs (before: it waited on the
    // session being stopped, since the state still read Connected).
    void requestsChangeTheStateAtOnce() {
        QString error;
        QVERIFY2(m_sshd.trustHostKey(&error), qPrintable(error));
        SshTransport t(m_sshd.options());
        QSignalSpy states(&t, &Transport::stateChanged);
        for (int caller = 0; caller < 2; ++caller) {
            if (t.state() == Transport::State::Disconnected || t.state() == Transport::State::Failed)
                t.connectToHost();
        }
        QTRY_COMPARE_WITH_TIMEOUT(t.state(), Transport::State::Connected, 20000);
        int handshakes = 0;
        for (const QList<QVariant> &s : states)
            handshakes += s.at(0).value<Transport::State>() == Transport::State::Connecting ? 1 : 0;
        QCOMPARE(handshakes, 1);
        t.disconnectFromHost();
        QCOMPARE(t.state(), Transport::State::Disconnected);
        t.connectToHost();
        const JobId id = t.exec(ExecRequest(u"echo again"_s));
        const WaitedJob w = waitForJob(&t, id, 30000);
        QVERIFY2(w.result.error.isEmpty(), qPrintable(w.result.error));
        QCOMPARE(w.stdoutLines, QStringList{u"again"_s});
    }

    void execStreaming() {
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        QSignalSpy batches(t.get(), &Transport::stdoutLines);
        const JobId id = t->exec(ExecRequest(u"seq 1 100000; echo oops >&2; exit 3"_s));
        const WaitedJob w = waitForJob(t.get(), id, 60000);
        QVERIFY2(w.result.error.isEmpty(), qPrintable(w.result.error));
        QCOMPARE(w.result.exitStatus, 3);
        QCOMPARE(w.stdoutLines.size(), 100000);
        QCOMPARE(w.stdoutLines.first(), u"1"_s);
        QCOMPARE(w.stdoutLines[49999], u"50000"_s);
        QCOMPARE(w.stdoutLines.last(), u"100000"_s);
        QCOMPARE(w.stderrLines, QStringList{u"oops"_s});
        QVERIFY(batches.size() > 1);      // streamed, not delivered at the end
        QVERIFY(batches.size() < 100000); // batched: not one queued signal per line
    }

    // A host that prints without pause while the receiving thread stops taking output for a while (a
    // GUI thread busy for 4 s after 3 s of streaming): the worker stops reading while batches wait, so
    // this process's memory stays bounded whatever is printed - short lines, one endless line, raw
    // bytes, stderr. (Before the fix, empty batches had driven the undelivered count below zero during
    // the first seconds, and the backlog then grew without limit.)
    void chattyHostMemoryBounded_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<bool>("raw");
        QTest::newRow("yes: short lines") << u"yes"_s << false;
        QTest::newRow("one line without end") << u"tr '\\0' x < /dev/zero"_s << false;
        QTest::newRow("raw stdout (agent protocol)") << u"yes moetune-event"_s << true;
        QTest::newRow("stderr") << u"yes >&2"_s << false;
    }

    void chattyHostMemoryBounded() {
        QFETCH(QString, command);
        QFETCH(bool, raw);
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        qint64 received = 0;
        auto count = [&received](JobId, const QStringList &lines) {
            for (const QString &l : lines)
                received += l.size() + 1;
        };
        connect(t.get(), &Transport::stdoutLines, this, count);
        connect(t.get(), &Transport::stderrLines, this, count);
        connect(t.get(), &Transport::stdoutData, this,
                [&received](JobId, const QByteArray &d) { received += d.size(); });
        bool done = false;
        JobResult result;
        connect(t.get(), &Transport::finished, this, [&](JobId, const JobResult &r) {
            result = r;
            done = true;
        });
        const double before = residentMb();
        double peak = before;
        QTimer sampler;
        connect(&sampler, &QTimer::timeout, this, [&peak] { peak = qMax(peak, residentMb()); });
        sampler.start(20);
        ExecRequest r(u"timeout 9 sh -c %1; true"_s.arg(shellQuote(command)));
        r.rawStdout = raw;
        r.maxLineOutputBytes = -1; // the backpressure bound is what is measured here, not the output's bound
        const JobId id = t->exec(r);
        qint64 receivedBeforeBusy = 0;
        QTimer::singleShot(3000, this, [&] {
            receivedBeforeBusy = received;
            QThread::sleep(4); // busy: nothing delivered, whatever the worker queues stays in memory
            peak = qMax(peak, residentMb());
            t->cancel(id);
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 60000);
        sampler.stop();
        const double growth = peak - before;
        qInfo("%s: %.1f MB received (%.1f MB before the busy 4 s), resident memory grew by %.1f MB",
              qPrintable(command), received / 1e6, receivedBeforeBusy / 1e6, growth);
        QVERIFY2(result.cancelled, qPrintable(result.error));
        QVERIFY2(receivedBeforeBusy > 1000000,
                 qPrintable(QString::number(receivedBeforeBusy))); // it streamed
#if defined(__SANITIZE_ADDRESS__)
        // Under ASan freed blocks sit in its quarantine (256 MB by default) and every block carries redzones,
        // so resident memory says nothing about the session's buffering: the bound is asserted by the CI
        // build's run of this same test; here the same traffic is run for memory errors.
        qInfo("ASan build: the resident-memory bound is checked by the non-sanitized run");
#else
        QVERIFY2(growth < 64, qPrintable(u"grew by %1 MB"_s.arg(growth)));
#endif
    }

    // Issue 42 item 6: a line-mode command that prints more than its bound is stopped with a sentence that
    // says its output was truncated; what reached the caller stays near the bound (stdout or stderr).
    void execOutputBounded_data() {
        QTest::addColumn<QString>("command");
        QTest::newRow("stdout") << u"yes 0123456789abcdef | head -c 67108864"_s;
        QTest::newRow("stderr") << u"yes 0123456789abcdef | head -c 67108864 >&2"_s;
    }

    void execOutputBounded() {
        QFETCH(QString, command);
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        ExecRequest r(command);
        r.maxLineOutputBytes = qint64{1} << 20;
        const WaitedJob w = waitForJob(t.get(), t->exec(r), 60000);
        QVERIFY2(w.result.error.contains(u"printed more than 1 MiB"_s) &&
                     w.result.error.contains(u"truncated"_s),
                 qPrintable(w.result.error));
        qint64 got = 0;
        for (const QString &l : w.stdoutLines + w.stderrLines)
            got += l.size() + 1;
        QVERIFY2(got <= (qint64{2} << 20), qPrintable(QString::number(got)));
    }

    void execExitStatus_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<int>("status");
        QTest::addColumn<QStringList>("out");
        QTest::newRow("true") << u"true"_s << 0 << QStringList{};
        QTest::newRow("exit 42") << u"echo a; exit 42"_s << 42 << QStringList{u"a"_s};
        QTest::newRow("no trailing newline") << u"printf 'x\\ny'"_s << 0 << QStringList{u"x"_s, u"y"_s};
        QTest::newRow("stdin") << u"cat"_s << 0 << QStringList{u"in put"_s};
    }

    void execExitStatus() {
        QFETCH(QString, command);
        QFETCH(int, status);
        QFETCH(QStringList, out);
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        ExecRequest r(command);
        if (command == u"cat"_s)
            r.stdinData = "in put\n";
        const WaitedJob w = waitForJob(t.get(), t->exec(r), 20000);
        QCOMPARE(w.result.exitStatus, status);
        QCOMPARE(w.stdoutLines, out);
    }

    void execCancelAndTimeout() {
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        const QString marker = u"37.%1"_s.arg(QRandomGenerator::global()->bounded(100000, 999999));
        QSignalSpy finished(t.get(), &Transport::finished);
        const JobId id = t->exec(ExecRequest(u"sleep "_s + marker));
        QTest::qWait(500);
        QElapsedTimer timer;
        timer.start();
        t->cancel(id);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 5000);
        QVERIFY(timer.elapsed() < 5000);
        const auto r = finished[0][1].value<JobResult>();
        QVERIFY(r.cancelled);
        // the remote command was signalled, not left running on the host
        QTRY_VERIFY_WITH_TIMEOUT(QProcess::execute(u"pgrep"_s, {u"-f"_s, u"sleep "_s + marker}) == 1, 5000);

        ExecRequest slow(u"sleep 30"_s);
        slow.timeoutMs = 700;
        const WaitedJob w = waitForJob(t.get(), t->exec(slow), 10000);
        QVERIFY2(w.result.error.contains(u"timed out"_s), qPrintable(w.result.error));
    }

    void sftpRoundTrip50MB() {
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        const QString local = m_sshd.dir() + u"/big.bin"_s;
        QVERIFY(writeRandomFile(local, 50 << 20));
        const QByteArray sha = fileSha(local);
        QDir().mkpath(m_sshd.dir() + u"/remote"_s);
        const QString remote = m_sshd.dir() + u"/remote/big.bin"_s;
        QSignalSpy progress(t.get(), &Transport::progress);
        const WaitedJob up = waitForJob(t.get(), t->upload(local, remote), 120000);
        QVERIFY2(up.result.ok(), qPrintable(up.result.error));
        QCOMPARE(up.result.sha256, sha);
        QCOMPARE(up.result.bytes, qint64(50 << 20));
        QCOMPARE(fileSha(remote), sha);
        QVERIFY(!QFile::exists(remote + u".part"_s));
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.last()[1].toLongLong(), qint64(50 << 20));

        const QString back = m_sshd.dir() + u"/back.bin"_s;
        const WaitedJob down = waitForJob(t.get(), t->download(remote, back), 120000);
        QVERIFY2(down.result.ok(), qPrintable(down.result.error));
        QCOMPARE(down.result.sha256, sha);
        QCOMPARE(fileSha(back), sha);
        QFile::remove(local);
        QFile::remove(back);
        QFile::remove(remote);
    }

    void atomicReplace() {
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        const QString remote = m_sshd.dir() + u"/remote/config.json"_s;
        QDir().mkpath(m_sshd.dir() + u"/remote"_s);
        QFile old(remote);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("old\n");
        old.close();
        const QString local = m_sshd.dir() + u"/new.json"_s;
        QFile n(local);
        QVERIFY(n.open(QIODevice::WriteOnly));
        n.write("{\n    \"1\": {}\n}\n");
        n.close();
        const WaitedJob w = waitForJob(t.get(), t->replaceFile(local, remote), 30000);
        QVERIFY2(w.result.ok(), qPrintable(w.result.error));
        QCOMPARE(readAll(remote), QByteArray("{\n    \"1\": {}\n}\n"));
        QVERIFY(!QFile::exists(remote + u".part"_s));

        // a folder that does not exist: a clear error, the target untouched
        const WaitedJob bad =
            waitForJob(t.get(), t->replaceFile(local, m_sshd.dir() + u"/missing/dir/x.json"_s), 30000);
        QVERIFY(!bad.result.ok());
        QVERIFY2(bad.result.error.contains(u"missing/dir/x.json.part"_s), qPrintable(bad.result.error));
    }

    void hostileNames_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("spaces") << u"a file with  spaces.json"_s;
        QTest::newRow("single quote") << u"it's.json"_s;
        QTest::newRow("double quote") << u"say \"hi\".json"_s;
        QTest::newRow("command substitution") << u"$(touch PWNED).json"_s;
        QTest::newRow("backticks") << u"`touch PWNED`.json"_s;
        QTest::newRow("semicolon") << u"a; touch PWNED.json"_s;
        QTest::newRow("newline") << u"line1\ntouch PWNED.json"_s;
        QTest::newRow("glob and dash") << u"-rf *.json"_s;
        QTest::newRow("dollar var") << u"$HOME ${IFS}.json"_s;
    }

    void hostileNames() {
        QFETCH(QString, name);
        auto t = m_sshd.connectedTransport(m_sshd.options());
        QVERIFY(t);
        const QString folder = m_sshd.dir() + u"/hostile"_s;
        QDir(folder).removeRecursively();
        QVERIFY(QDir().mkpath(folder));
        const QString local = m_sshd.dir() + u"/payload.txt"_s;
        QFile p(local);
        QVERIFY(p.open(QIODevice::WriteOnly));
        p.write("payload\n");
        p.close();
        const QString remote = folder + u'/' + name;
        const WaitedJob up = waitForJob(t.get(), t->replaceFile(local, remote), 30000);
        QVERIFY2(up.result.ok(), qPrintable(up.result.error));
        QCOMPARE(readAll(remote), QByteArray("payload\n"));

        ExecRequest cat(u"cd "_s + shellQuote(folder) + u" && cat -- "_s + shellQuotePath(remote));
        const WaitedJob c = waitForJob(t.get(), t->exec(cat), 20000);
        QCOMPARE(c.result.exitStatus, 0);
        QCOMPARE(c.stdoutLines, QStringList{u"payload"_s});

        const QString printf =
            u"cd "_s + shellQuote(folder) + u" && "_s + shellJoin({u"printf"_s, u"%s"_s, name});
        const WaitedJob echo = waitForJob(t.get(), t->exec(ExecRequest(printf)), 20000);
        QCOMPARE(echo.stdoutLines.join(u'\n'), name);

        const QString back = m_sshd.dir() + u"/back.txt"_s;
        const WaitedJob down = waitForJob(t.get(), t->download(remote, back), 30000);
        QVERIFY2(down.result.ok(), qPrintable(down.result.error));
        QCOMPARE(readAll(back), QByteArray("payload\n"));
        // nothing executed: no PWNED anywhere it could have been created
        QVERIFY(!QFile::exists(folder + u"/PWNED"_s));
        QVERIFY(!QFile::exists(QDir::homePath() + u"/PWNED"_s));
        QCOMPARE(QDir(folder).entryList(QDir::Files | QDir::NoDotAndDotDot), QStringList{name});
    }

    void sshdKilledMidTransfer_data() {
        QTest::addColumn<bool>("upload");
        QTest::newRow("upload") << true;
        QTest::newRow("download") << false;
    }

    void sshdKilledMidTransfer() {
        QFETCH(bool, upload);
        SshOptions o = m_sshd.options();
        o.maxReconnectAttempts = 0;
        auto t = m_sshd.connectedTransport(o);
        QVERIFY(t);
        const QString big = m_sshd.dir() + u"/big2.bin"_s;
        QVERIFY(writeRandomFile(big, 200 << 20));
        const QString target =
            upload ? m_sshd.dir() + u"/remote/killed.bin"_s : m_sshd.dir() + u"/local-killed.bin"_s;
        QDir().mkpath(m_sshd.dir() + u"/remote"_s);
        QFile::remove(target);
        bool killed = false;
        connect(t.get(), &Transport::progress, this, [&](JobId, qint64 done, qint64) {
            if (done > 0 && !killed) {
                killed = true;
                m_sshd.killAll();
            }
        });
        const JobId id = upload ? t->upload(big, target) : t->download(big, target);
        const WaitedJob w = waitForJob(t.get(), id, 120000);
        QVERIFY(killed);
        QVERIFY(!w.result.ok());
        QVERIFY(w.result.connectionLost);
        QVERIFY2(w.result.error.contains(u"lost"_s), qPrintable(w.result.error));
        QVERIFY2(w.result.error.contains(u"nothing was written at the target"_s), qPrintable(w.result.error));
        QVERIFY(!QFile::exists(target)); // no half file at the target
        QTRY_COMPARE_WITH_TIMEOUT(t->state(), Transport::State::Failed, 10000);
        QFile::remove(big);
        QFile::remove(target + u".part"_s);
    }

    void reconnectAfterDrop() {
        SshOptions o = m_sshd.options();
        o.initialBackoffMs = 300;
        auto t = m_sshd.connectedTransport(o);
        QVERIFY(t);
        const QString counter = m_sshd.dir() + u"/counter.txt"_s;
        QFile::remove(counter);
        QSignalSpy states(t.get(), &Transport::stateChanged);
        QSignalSpy finished(t.get(), &Transport::finished);
        const JobId running = t->exec(ExecRequest(u"sleep 20"_s));
        QTest::qWait(300);
        QElapsedTimer timer;
        timer.start();
        m_sshd.killSessions(); // the link drops; sshd's listener stays (the host is still there)
        QTRY_VERIFY_WITH_TIMEOUT(t->state() != Transport::State::Connected, 5000);
        const qint64 detectedMs = timer.elapsed();
        QVERIFY2(detectedMs < 5000, qPrintable(QString::number(detectedMs)));
        // queued while down: runs once after the reconnect
        const JobId queued = t->exec(ExecRequest(u"echo x >> "_s + shellQuote(counter)));
        QTRY_COMPARE_WITH_TIMEOUT(t->state(), Transport::State::Connected, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 20000);
        QHash<JobId, JobResult> results;
        for (const auto &f : finished)
            results.insert(f[0].value<JobId>(), f[1].value<JobResult>());
        QVERIFY(results[running].connectionLost);
        QVERIFY(results[running].error.contains(u"not re-run"_s));
        QCOMPARE(results[queued].exitStatus, 0);
        QCOMPARE(readAll(counter), QByteArray("x\n"));
        bool sawReconnecting = false;
        for (const auto &s : states)
            sawReconnecting |= s[0].value<Transport::State>() == Transport::State::Reconnecting;
        QVERIFY(sawReconnecting);
    }

    // Jobs waiting in the queue when the connection cannot be (re)made fail with the reason, at once,
    // instead of waiting forever: a reconnect that meets a changed host key, a first connection whose
    // host key is not accepted, an authentication that fails.
    void queuedJobsFailWithTheConnection_data() {
        QTest::addColumn<QString>("how");
        QTest::addColumn<QString>("reason");
        QTest::newRow("reconnect meets a changed host key") << u"reconnect"_s << u"changed"_s;
        QTest::newRow("first connect, host key not accepted") << u"reject"_s << u"not accepted"_s;
        QTest::newRow("first connect, authentication fails") << u"auth"_s << u"Authentication"_s;
    }

    void queuedJobsFailWithTheConnection() {
        QFETCH(QString, how);
        QFETCH(QString, reason);
        QString error;
        SshOptions o = m_sshd.options();
        o.initialBackoffMs = 200;
        std::unique_ptr<SshTransport> t;
        JobId queued = 0;
        if (how == u"reconnect"_s) {
            t = m_sshd.connectedTransport(o);
            QVERIFY(t);
            QVERIFY2(m_sshd.restartWithNewHostKey(&error), qPrintable(error)); // drops the link too
            QTRY_VERIFY_WITH_TIMEOUT(t->state() != Transport::State::Connected, 10000);
            queued = t->exec(ExecRequest(u"echo never"_s));
        } else {
            QFile(m_sshd.knownHostsFile()).open(QIODevice::WriteOnly | QIODevice::Truncate);
            if (how == u"auth"_s) {
                QVERIFY2(m_sshd.trustHostKey(&error), qPrintable(error));
                o = m_sshd.options(false);
                o.host.identityFiles = {m_sshd.wrongKey()};
            }
            t = std::make_unique<SshTransport>(o);
            connect(t.get(), &SshTransport::hostKeyUnknown, t.get(), [&t] { t->answerHostKey(false); });
            queued = t->exec(ExecRequest(u"echo never"_s)); // submitted before connecting: it waits
            t->connectToHost();
        }
        const WaitedJob w = waitForJob(t.get(), queued, 30000);
        QCOMPARE(t->state(), Transport::State::Failed);
        QVERIFY2(!w.result.ok(), qPrintable(w.result.error));
        QVERIFY2(w.result.error.contains(u"never ran"_s), qPrintable(w.result.error));
        QVERIFY2(w.result.error.contains(reason), qPrintable(w.result.error));
        QVERIFY(w.stdoutLines.isEmpty());
    }

    void silentLinkDetected() {
        SshOptions o = m_sshd.options();
        o.keepaliveIntervalMs = 1000;
        o.deadAfterMs = 3000;
        o.initialBackoffMs = 300;
        auto t = m_sshd.connectedTransport(o);
        QVERIFY(t);
        QTest::qWait(200);
        QElapsedTimer timer;
        timer.start();
        m_sshd.stopSessions(true); // the session stops answering, TCP stays open: only keepalive can tell
        QTRY_VERIFY_WITH_TIMEOUT(t->state() != Transport::State::Connected, 10000);
        const qint64 ms = timer.elapsed();
        QVERIFY2(ms >= 2000 && ms < 8000, qPrintable(QString::number(ms)));
        m_sshd.stopSessions(false);
        QTRY_COMPARE_WITH_TIMEOUT(t->state(), Transport::State::Connected, 20000);
        const WaitedJob w = waitForJob(t.get(), t->exec(ExecRequest(u"echo back"_s)), 20000);
        QCOMPARE(w.stdoutLines, QStringList{u"back"_s});
    }
};

QTEST_GUILESS_MAIN(TestSshIntegration)
#include "tst_sshintegration.moc"
