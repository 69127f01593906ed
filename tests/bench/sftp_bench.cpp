// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// SFTP throughput of moetune_remote vs OpenSSH's scp, both against the same test sshd on loopback
// (SshdFixture). Prints MB/s for each direction and the ratio to the "within 2x of scp" goal.
// Usage: sftp_bench [MB=1024]
#include "remote/flows/jobwaiter.h"
#include "remote/transport/sshtransport.h"
#include "sshdfixture.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>

#include <cstdio>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

struct Timing {
    double transferS = 0; // until the last byte moved
    double totalS = 0;    // including the remote sha256sum check (and the mv of an upload)
    bool ok = false;
    QString error;
};

Timing timeJob(Transport *t, bool upload, const QString &local, const QString &remote, qint64 bytes) {
    Timing r;
    QElapsedTimer timer;
    timer.start();
    qint64 lastByteMs = -1;
    JobId id = 0;
    auto c = QObject::connect(t, &Transport::progress, t, [&](JobId j, qint64 done, qint64) {
        if (j == id && done >= bytes && lastByteMs < 0)
            lastByteMs = timer.elapsed();
    });
    id = upload ? t->upload(local, remote) : t->download(remote, local);
    const WaitedJob w = waitForJob(t, id, 30 * 60 * 1000);
    QObject::disconnect(c);
    r.totalS = timer.elapsed() / 1000.0;
    r.transferS = (lastByteMs < 0 ? timer.elapsed() : lastByteMs) / 1000.0;
    r.ok = w.result.ok();
    r.error = w.result.error;
    return r;
}

double timeScp(const QStringList &args, QString *error) {
    QElapsedTimer timer;
    timer.start();
    QProcess p;
    p.start(u"scp"_s, args);
    p.waitForFinished(30 * 60 * 1000);
    if (p.exitCode() != 0)
        *error = QString::fromUtf8(p.readAllStandardError());
    return timer.elapsed() / 1000.0;
}

} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    qunsetenv("SSH_AUTH_SOCK");
    const qint64 mb = argc > 1 ? QByteArray(argv[1]).toLongLong() : 1024;
    const qint64 bytes = mb << 20;
    test::SshdFixture sshd;
    QString error;
    if (!sshd.start(&error) || !sshd.trustHostKey(&error)) {
        std::fprintf(stderr, "sftp_bench: cannot start the test sshd: %s\n", qPrintable(error));
        return 2;
    }
    const QString src = sshd.dir() + u"/src.bin"_s;
    {
        QFile f(src);
        f.open(QIODevice::WriteOnly);
        QByteArray block(1 << 20, Qt::Uninitialized);
        for (qint64 i = 0; i < mb; ++i) {
            QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(block.data()),
                                                  block.size() / 4);
            f.write(block);
        }
    }
    std::printf("file: %lld MB of random bytes, sshd %s on 127.0.0.1:%d\n", qlonglong(mb), "OpenSSH",
                sshd.port());

    SshOptions options = sshd.options();
    options.backgroundPriority = false; // scp runs at nice 0 too: compare the engines, not the niceness
    SshTransport t(options);
    t.connectToHost();
    if (!waitForConnected(&t, 30000, &error)) {
        std::fprintf(stderr, "sftp_bench: %s\n", qPrintable(error));
        return 2;
    }
    const QString remoteUp = sshd.dir() + u"/up-moetune.bin"_s;
    const QString localDown = sshd.dir() + u"/down-moetune.bin"_s;
    const Timing up = timeJob(&t, true, src, remoteUp, bytes);
    QFile::remove(localDown);
    const Timing down = timeJob(&t, false, localDown, remoteUp, bytes);
    if (!up.ok || !down.ok) {
        std::fprintf(stderr, "sftp_bench: transfer failed: %s %s\n", qPrintable(up.error),
                     qPrintable(down.error));
        return 1;
    }
    QFile::remove(remoteUp);
    QFile::remove(localDown);

    const QString target = u"%1@127.0.0.1:"_s.arg(sshd.userName());
    const QStringList common{u"-q"_s,
                             u"-P"_s,
                             QString::number(sshd.port()),
                             u"-i"_s,
                             sshd.userKey(),
                             u"-o"_s,
                             u"UserKnownHostsFile="_s + sshd.knownHostsFile(),
                             u"-o"_s,
                             u"StrictHostKeyChecking=yes"_s,
                             u"-o"_s,
                             u"BatchMode=yes"_s,
                             u"-F"_s,
                             u"/dev/null"_s};
    QString scpError;
    const double scpUp =
        timeScp(common + QStringList{src, target + sshd.dir() + u"/up-scp.bin"_s}, &scpError);
    const double scpDown =
        timeScp(common + QStringList{target + sshd.dir() + u"/up-scp.bin"_s, sshd.dir() + u"/down-scp.bin"_s},
                &scpError);
    if (!scpError.isEmpty()) {
        std::fprintf(stderr, "sftp_bench: scp failed: %s\n", qPrintable(scpError));
        return 1;
    }
    auto rate = [mb](double s) { return double(mb) / s; };
    std::printf("%-34s %10s %10s\n", "", "upload", "download");
    std::printf("%-34s %8.1f MB/s %8.1f MB/s\n", "moetune SFTP (bytes moved)", rate(up.transferS),
                rate(down.transferS));
    std::printf("%-34s %8.1f MB/s %8.1f MB/s\n", "moetune SFTP (+ sha256 verify, mv)", rate(up.totalS),
                rate(down.totalS));
    std::printf("%-34s %8.1f MB/s %8.1f MB/s\n", "scp", rate(scpUp), rate(scpDown));
    const double ratioUp = up.totalS / scpUp;
    const double ratioDown = down.totalS / scpDown;
    std::printf("time ratio moetune/scp (verified): upload %.2fx, download %.2fx -> goal <= 2x: %s\n",
                ratioUp, ratioDown, ratioUp <= 2.0 && ratioDown <= 2.0 ? "MET" : "MISSED");
    std::printf("time ratio moetune/scp (bytes moved only): upload %.2fx, download %.2fx\n",
                up.transferS / scpUp, down.transferS / scpDown);
    return 0;
}
