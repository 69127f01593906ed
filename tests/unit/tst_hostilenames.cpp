// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Issue 42 items 3, 6 and 7 on the local side: a hostile host's run id never names a path outside the
// workspace (RunKeeper, Workspace::addRun); a kept run's events.jsonl that is a FIFO is refused, not read
// (no hang); one too large to keep is read into the result in pieces and copied as a file by save().
#include "core/run/workspace.h"
#include "core/run/workspacerun.h"
#include "remote/flows/runkeeper.h"
#include "remote/flows/tuneflow.h"
#include "remote/transport/localtransport.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <fcntl.h>
#include <future>
#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using moetune::RunKeeper;
using moetune::TuneFlow;
using moetune::Workspace;
using moetune::WorkspaceRun;

class TestHostileNames : public QObject {
    Q_OBJECT
private slots:
    void runIds_data() {
        QTest::addColumn<QString>("id");
        QTest::addColumn<bool>("safe");
        QTest::newRow("agent id") << u"20261201-101010-abcdef"_s << true;
        QTest::newRow("agent id, clash suffix") << u"20261201-101010-abcdef-2"_s << true;
        QTest::newRow("dots in the middle") << u"run.v2_a"_s << true;
        QTest::newRow("parent") << u".."_s << false;
        QTest::newRow("escape") << u"../../.."_s << false;
        QTest::newRow("escape then name") << u"../../x"_s << false;
        QTest::newRow("slash") << u"a/b"_s << false;
        QTest::newRow("absolute") << u"/etc"_s << false;
        QTest::newRow("backslash") << u"a\\b"_s << false;
        QTest::newRow("hidden") << u".cache"_s << false;
        QTest::newRow("empty") << QString() << false;
        QTest::newRow("newline") << u"a\nb"_s << false;
        QTest::newRow("non-ASCII") << u"r\u00e9sum\u00e9"_s << false;
        QTest::newRow("too long") << QString(129, u'a') << false;
    }
    void runIds() {
        QFETCH(QString, id);
        QFETCH(bool, safe);
        QString why;
        QCOMPARE(WorkspaceRun::isSafeRunId(id, &why), safe);
        QCOMPARE(why.isEmpty(), safe);
    }

    // The host's run_started said run_id "../../<name>": nothing is written outside the workspace and
    // the events.jsonl there is not deleted.
    void keeperRefusesAnEscapingRunId() {
        QTemporaryDir tmp;
        const QString ws = tmp.filePath(u"a/b/workspace"_s);
        QVERIFY(QDir().mkpath(ws));
        QFile victim(tmp.filePath(u"a/events.jsonl"_s));
        QVERIFY(victim.open(QIODevice::WriteOnly));
        victim.write("{\"type\":\"mine\"}\n");
        victim.close();
        TuneFlow flow(nullptr);
        RunKeeper keeper(&flow);
        WorkspaceRun run;
        run.runId = u"../.."_s;
        run.spec = QJsonObject{{"E"_L1, 8}};
        QString error;
        QVERIFY(!keeper.begin(ws, run, &error));
        QVERIFY2(error.contains(u"cannot name a run folder"_s), qPrintable(error));
        QVERIFY(keeper.runFolder().isEmpty());
        QVERIFY(QFile::exists(victim.fileName()));
        for (const char *name : {"run.json", "spec.json", "host.json"})
            QVERIFY2(!QFile::exists(tmp.filePath(u"a/"_s + QLatin1StringView(name))), name);
        emit flow.runEvent(QJsonObject{{"type"_L1, u"measurement"_s}});
        QVERIFY(keeper.flush(&error));
        QFile back(victim.fileName());
        QVERIFY(back.open(QIODevice::ReadOnly));
        QCOMPARE(back.readAll(), QByteArray("{\"type\":\"mine\"}\n"));
        // a good id is kept inside the workspace
        run.runId = u"20261201-101010-abcdef"_s;
        QVERIFY2(keeper.begin(ws, run, &error), qPrintable(error));
        QCOMPARE(keeper.runFolder(), QDir(ws).filePath(run.runId));
    }

    void addRunRefusesAnEscapingRunId() {
        QTemporaryDir tmp;
        QString error;
        auto ws = Workspace::create(tmp.filePath(u"w"_s), u"w"_s, &error);
        QVERIFY2(ws, qPrintable(error));
        WorkspaceRun run;
        run.runId = u"../outside"_s;
        run.spec = QJsonObject{{"E"_L1, 8}};
        QVERIFY(!ws->addRun(run, &error));
        QVERIFY(!QFileInfo::exists(tmp.filePath(u"outside"_s)));
    }

    // events.jsonl is a FIFO nobody writes: open() says so at once instead of waiting for a writer.
    void fifoEventsAreRefusedNotRead() {
        QTemporaryDir tmp;
        const QString run = tmp.filePath(u"r1"_s);
        QVERIFY(QDir().mkpath(run));
        QFile spec(run + u"/spec.json"_s);
        QVERIFY(spec.open(QIODevice::WriteOnly));
        spec.write("{\"E\": 8}");
        spec.close();
        const QByteArray fifo = QFile::encodeName(run + u"/events.jsonl"_s);
        QCOMPARE(::mkfifo(fifo.constData(), 0600), 0);
        auto opened = std::async(std::launch::async, [run] {
            QString error;
            auto r = WorkspaceRun::open(run, &error);
            return r ? r->warnings.join(u'\n') : error;
        });
        if (opened.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
            const int fd = ::open(fifo.constData(), O_WRONLY | O_NONBLOCK); // let the stuck read end
            if (fd >= 0)
                ::close(fd);
            opened.wait();
            QFAIL("WorkspaceRun::open waited on a FIFO as events.jsonl");
        }
        const QString warnings = opened.get();
        QVERIFY2(warnings.contains(u"events.jsonl is not a regular file"_s), qPrintable(warnings));

        // a FIFO as a part (push.json) and as the result cache beside a result.json: skipped, no wait
        QFile::remove(QString::fromLocal8Bit(fifo));
        QFile result(run + u"/result.json"_s);
        QVERIFY(result.open(QIODevice::WriteOnly));
        result.write("{\"format\": \"moetune-result\", \"version\": 1, \"run_id\": \"r1\"}");
        result.close();
        const QByteArray push = QFile::encodeName(run + u"/push.json"_s);
        const QByteArray cache = QFile::encodeName(run + u"/.result.cache"_s);
        QCOMPARE(::mkfifo(push.constData(), 0600), 0);
        QCOMPARE(::mkfifo(cache.constData(), 0600), 0);
        auto second = std::async(std::launch::async, [run] {
            QString error;
            auto r = WorkspaceRun::open(run, &error);
            return r ? r->warnings.join(u'\n') : error;
        });
        if (second.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
            for (const QByteArray &name : {push, cache}) {
                const int fd = ::open(name.constData(), O_WRONLY | O_NONBLOCK);
                if (fd >= 0)
                    ::close(fd);
            }
            second.wait();
            QFAIL("WorkspaceRun::open waited on a FIFO as push.json or the result cache");
        }
        const QString again = second.get();
        QVERIFY2(again.contains(u"push.json is not a regular file"_s), qPrintable(again));
    }

    // An events.jsonl over kMaxKeptEventsBytes: streamed into the result (every measurement counted),
    // not kept; save() copies the file.
    void largeEventsAreStreamedNotKept() {
        QTemporaryDir tmp;
        const QString run = tmp.filePath(u"r1"_s);
        QVERIFY(QDir().mkpath(run));
        QFile ev(run + u"/events.jsonl"_s);
        QVERIFY(ev.open(QIODevice::WriteOnly));
        ev.write(
            "{\"type\":\"run_started\",\"run_id\":\"r1\",\"run_dir\":\"/x\",\"pid\":1,\"backend\":\"triton\","
            "\"seq\":0}\n");
        int n = 0;
        while (ev.size() <= WorkspaceRun::kMaxKeptEventsBytes) {
            ++n;
            ev.write(QByteArray("{\"type\":\"measurement\",\"run_id\":\"r1\",\"seq\":") +
                     QByteArray::number(n) + ",\"op\":\"up\",\"m\":" + QByteArray::number(1 << (n % 12)) +
                     ",\"config\":{\"BLOCK_SIZE_M\":16,\"BLOCK_SIZE_N\":64,\"BLOCK_SIZE_K\":128,\"GROUP_SIZE_"
                     "M\":1,"
                     "\"num_warps\":4,\"num_stages\":3},\"round\":0,\"replays\":10,\"median_us\":" +
                     QByteArray::number(10 + n % 97) + ",\"gpu\":0,\"index\":" + QByteArray::number(n) +
                     ",\"ts\":1795994931.7}\n");
        }
        ev.close();
        QString error;
        auto opened = WorkspaceRun::open(run, &error);
        QVERIFY2(opened, qPrintable(error));
        QVERIFY(opened->events.isEmpty());
        QCOMPARE(opened->eventsFile, QDir(run).filePath(u"events.jsonl"_s));
        QVERIFY(!opened->result.measurements.isEmpty());
        QVERIFY2(opened->warnings.join(u'\n').contains(u"not kept in memory"_s),
                 qPrintable(opened->warnings.join(u'\n')));
        WorkspaceRun copy = *opened;
        copy.dir = tmp.filePath(u"copy"_s);
        QVERIFY2(copy.save(&error), qPrintable(error));
        QCOMPARE(QFileInfo(copy.dir + u"/events.jsonl"_s).size(), ev.size());
    }

    // A host command that prints without end (line mode) is stopped once past its bound; the job says the
    // output was truncated, and what was delivered stays near the bound.
    void execOutputIsBounded() {
        QTemporaryDir home;
        moetune::LocalTransport t(home.path());
        moetune::ExecRequest req(u"yes 0123456789abcdef0123456789abcdef | head -c 104857600"_s);
        req.maxLineOutputBytes = qint64{1} << 20;
        const moetune::JobId id = t.exec(req);
        qint64 delivered = 0;
        moetune::JobResult result;
        bool done = false;
        connect(&t, &moetune::Transport::stdoutLines, this, [&](moetune::JobId j, const QStringList &lines) {
            if (j == id)
                for (const QString &l : lines)
                    delivered += l.size() + 1;
        });
        connect(&t, &moetune::Transport::finished, this, [&](moetune::JobId j, const moetune::JobResult &r) {
            if (j == id) {
                result = r;
                done = true;
            }
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 30000);
        QVERIFY2(result.error.contains(u"printed more than 1 MiB"_s) && result.error.contains(u"truncated"_s),
                 qPrintable(result.error));
        QVERIFY2(delivered <= (qint64{1} << 20), qPrintable(QString::number(delivered)));
        // a command within its bound is whole
        moetune::ExecRequest small(u"yes 01234567 | head -n 1000"_s);
        small.maxLineOutputBytes = qint64{1} << 20;
        const moetune::JobId id2 = t.exec(small);
        qint64 lines = 0;
        done = false;
        connect(&t, &moetune::Transport::stdoutLines, this, [&](moetune::JobId j, const QStringList &l) {
            if (j == id2)
                lines += l.size();
        });
        connect(&t, &moetune::Transport::finished, this, [&](moetune::JobId j, const moetune::JobResult &r) {
            if (j == id2) {
                result = r;
                done = true;
            }
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 30000);
        QVERIFY2(result.ok(), qPrintable(result.error));
        QCOMPARE(lines, 1000);
    }
};

QTEST_GUILESS_MAIN(TestHostileNames)
#include "tst_hostilenames.moc"
