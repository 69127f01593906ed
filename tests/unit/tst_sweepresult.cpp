// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// SweepResult, its incremental builder, the workspace format and the report model, on the demo
// workspace (a real recorded H200 sweep) and on runs of the real agent's synthetic backend (the test
// double for a GPU, labelled simulated).
#include "core/report/report.h"
#include "core/report/reporttext.h"
#include "core/run/agentprotocolparser.h"
#include "core/run/kernelconfigjson.h"
#include "core/run/referencecost.h"
#include "core/run/sweepresult.h"
#include "core/run/sweepresultbuilder.h"
#include "core/run/sweepresultcache.h"
#include "core/run/workspace.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

// A copy of the demo workspace: opening a run writes its cache beside it, never into the source tree.
QString g_demoCopy;
QString demoDir() {
    return g_demoCopy;
}

bool copyTree(const QString &from, const QString &to) {
    QDir().mkpath(to);
    const QDir src(from);
    for (const QString &name : src.entryList(QDir::Files))
        if (!QFile::copy(src.filePath(name), QDir(to).filePath(name)))
            return false;
    for (const QString &name : src.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
        if (!copyTree(src.filePath(name), QDir(to).filePath(name)))
            return false;
    return true;
}

QJsonObject readJson(const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

} // namespace

class TstSweepResult : public QObject {
    Q_OBJECT

private:
    // One real agent run (synthetic backend) shared by the tests that need events and a result.json.
    QTemporaryDir m_home;
    QString m_runDir;
    QByteArray m_stdout;

    bool runAgent(const QJsonObject &spec, QString *runDir, QByteArray *out) {
        const QString specPath = m_home.filePath(u"spec-%1.json"_s.arg(qHash(QJsonDocument(spec).toJson())));
        QFile f(specPath);
        if (!f.open(QIODevice::WriteOnly))
            return false;
        f.write(QJsonDocument(spec).toJson());
        f.close();
        QProcess p;
        p.start(u"python3"_s, {QStringLiteral(MOETUNE_AGENT_PYZ), u"--home"_s, m_home.path(), u"tune"_s,
                               specPath, u"--foreground"_s, u"--new"_s});
        if (!p.waitForFinished(120000) || p.exitCode() != 0) {
            qWarning() << p.readAllStandardError();
            return false;
        }
        *out = p.readAllStandardOutput();
        AgentProtocolParser parser;
        for (const auto &e : parser.feed(*out))
            if (e.type == "run_started"_L1)
                *runDir = e.object.value("run_dir"_L1).toString();
        return !runDir->isEmpty();
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        g_demoCopy = m_home.filePath(u"demo"_s);
        QVERIFY(copyTree(QStringLiteral(MOETUNE_SOURCE_DIR "/resources/demo-workspace"), g_demoCopy));
        const QJsonObject spec{{"framework"_L1, u"sglang"_s},
                               {"E"_L1, 8},
                               {"N"_L1, 128},
                               {"K"_L1, 256},
                               {"topk"_L1, 2},
                               {"ops"_L1, u"up+down"_s},
                               {"batch_sizes"_L1, QJsonArray{1, 16, 256}},
                               {"backend"_L1, u"synthetic"_s}};
        QVERIFY(runAgent(spec, &m_runDir, &m_stdout));
    }

    void kernelConfigKey_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<bool>("valid");
        QTest::newRow("plain") << u"m16n64k128g1w4s3"_s << true;
        QTest::newRow("tma") << u"m64n128k64g16w8s4t"_s << true;
        QTest::newRow("missing field") << u"m16n64k128g1w4"_s << false;
        QTest::newRow("junk") << u"BLOCK_SIZE_M=16"_s << false;
    }
    void kernelConfigKey() {
        QFETCH(QString, key);
        QFETCH(bool, valid);
        const auto c = KernelConfigJson::fromKey(key);
        QCOMPARE(c.has_value(), valid);
        if (valid) {
            QCOMPARE(KernelConfigJson::key(*c), key);
            QCOMPARE(KernelConfigJson::fromJson(KernelConfigJson::toJson(*c)), c);
        }
    }

    // The real recorded H200 sweep: the numbers RESULTS.md reports, read back from the workspace.
    void demoWorkspaceHoldsTheRecordedSweep_data() {
        QTest::addColumn<int>("m");
        QTest::addColumn<QString>("config");
        QTest::addColumn<double>("tunedUs");
        QTest::addColumn<double>("defaultUs");
        QTest::addColumn<double>("speedup");
        QTest::addColumn<double>("floorFraction");
        // Rows of remote_agent/bench/RESULTS.md (Qwen3-30B-A3B TP1 on one H200).
        QTest::newRow("M=1") << 1 << u"m16n64k64g1w4s5"_s << 54.2 << 58.4 << 1.08 << 0.32;
        QTest::newRow("M=256") << 256 << u"m32n128k128g1w4s2"_s << 349.3 << 490.5 << 1.40 << 0.79;
        QTest::newRow("M=4096") << 4096 << u"m128n256k64g16w8s4"_s << 910.7 << 1424.3 << 1.56 << 0.31;
    }
    void demoWorkspaceHoldsTheRecordedSweep() {
        QFETCH(int, m);
        QFETCH(QString, config);
        QFETCH(double, tunedUs);
        QFETCH(double, defaultUs);
        QFETCH(double, speedup);
        QFETCH(double, floorFraction);
        QString error;
        const auto ws = Workspace::open(demoDir(), &error);
        QVERIFY2(ws, qPrintable(error));
        QCOMPARE(ws->runs().size(), 3);
        const WorkspaceRun *run = ws->run(u"20261129-qwen3-h200-fast"_s);
        QVERIFY(run);
        QVERIFY(run->warnings.isEmpty());
        QVERIFY(!run->result.simulated);
        QCOMPARE(run->result.perBatch.size(), 18);
        const BatchSummary *b = run->result.batch(m);
        QVERIFY(b);
        QCOMPARE(qRound(b->bestUs * 10), qRound(tunedUs * 10));
        QCOMPARE(qRound(b->defaultUs * 10), qRound(defaultUs * 10));
        QCOMPARE(qRound(b->speedup * 100), qRound(speedup * 100));
        QCOMPARE(qRound(b->rooflineFraction * 100), qRound(floorFraction * 100));
        QCOMPARE(KernelConfigJson::key(run->result.winner(SweepOp::Both, m)->config), config);
    }

    // The agent's own result.json of a real SGLang-kernel run: read with its issue-9 decisions.
    void agentResultWithDecisions() {
        const auto ws = Workspace::open(demoDir());
        QVERIFY(ws);
        const WorkspaceRun *run = ws->run(u"20261201-080317-04b2f0"_s);
        QVERIFY(run);
        QVERIFY(run->warnings.isEmpty());
        QCOMPARE(run->result.backend, u"server"_s);
        QCOMPARE(run->result.perBatch.size(), 18);
        const QJsonObject raw = readJson(demoDir() + u"/20261201-sglang-h200-server/result.json"_s);
        QCOMPARE(run->result.measurements.size(), raw.value("measurements"_L1).toArray().size());
        for (const auto &v : raw.value("per_batch"_L1).toArray()) {
            const QJsonObject b = v.toObject();
            const BatchSummary *mine = run->result.batch(b.value("m"_L1).toInt());
            QVERIFY(mine);
            QCOMPARE(mine->decision, b.value("decision"_L1).toString());
            QCOMPARE(mine->chosenDefault, b.value("chosen_default"_L1).toBool());
            QCOMPARE(mine->bestUs, b.value("best_us"_L1).toDouble());
        }
    }

    void landscapeMarksWinnerAndDefault() {
        const auto ws = Workspace::open(demoDir());
        QVERIFY(ws);
        const WorkspaceRun *run = ws->run(u"20261129-qwen3-h200-exhaustive"_s);
        QVERIFY(run);
        const auto points = run->result.landscape(SweepOp::Both, 1024);
        // The exhaustive run timed every config of the pruned space once (the bench file says how many),
        // plus the server's default config, which lies outside that space (BLOCK_SIZE_K 32).
        const QJsonObject bench = readJson(QStringLiteral(
            MOETUNE_SOURCE_DIR "/remote_agent/bench/recordings/h200-strategies/qwen3_h200.json"));
        QCOMPARE(points.size(), bench.value("space_sizes"_L1).toObject().value("1024"_L1).toInt() + 1);
        int winners = 0, defaults = 0;
        double fastest = 1e300;
        for (const auto &p : points) {
            winners += p.winner;
            defaults += p.isDefault;
            fastest = qMin(fastest, p.medianUs);
            QVERIFY(p.spread >= 0);
        }
        QCOMPARE(winners, 1);
        QCOMPARE(defaults, 1);
        const auto winner =
            std::find_if(points.cbegin(), points.cend(), [](const auto &p) { return p.winner; });
        // The winner's landscape latency is its own sweep timing; the table's is the re-timed one.
        QVERIFY(winner->medianUs <= fastest * 1.05);
    }

    void resultJsonRoundTrip() {
        const auto ws = Workspace::open(demoDir());
        QVERIFY(ws);
        const SweepResult &a = ws->runs().first().result;
        QString error;
        const auto b = SweepResult::fromJson(a.toJson(), &error);
        QVERIFY2(b, qPrintable(error));
        QCOMPARE(b->measurements.size(), a.measurements.size());
        QCOMPARE(b->perBatch.size(), a.perBatch.size());
        QCOMPARE(b->winners.size(), a.winners.size());
        QCOMPARE(b->toJson(), a.toJson());
    }

    void badResultJsonSaysWhy_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not a result") << QByteArray(R"({"format":"other"})") << u"not a moetune result"_s;
        QTest::newRow("newer version")
            << QByteArray(R"({"format":"moetune-result","version":2})") << u"version 2"_s;
        QTest::newRow("bad op") << QByteArray(R"({"format":"moetune-result","version":1,"ops":["sideways"]})")
                                << u"unknown op \"sideways\""_s;
        QTest::newRow("bad config")
            << QByteArray(
                   R"({"format":"moetune-result","version":1,"measurements":[{"op":"up","m":1,"config":{"BLOCK_SIZE_M":-1}}]})")
            << u"measurements[0]"_s;
    }
    void badResultJsonSaysWhy() {
        QFETCH(QByteArray, json);
        QFETCH(QString, expected);
        QString error;
        QVERIFY(!SweepResult::fromJson(QJsonDocument::fromJson(json).object(), &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    // The builder fed the run's live stdout agrees with the result.json the agent wrote.
    void builderFromEventsMatchesResultJson() {
        SweepResultBuilder builder;
        AgentProtocolParser parser;
        // Split the stream at odd places, as a pipe would.
        for (qsizetype at = 0; at < m_stdout.size(); at += 777)
            for (const auto &e :
                 parser.feed(QByteArrayView(m_stdout).sliced(at, qMin<qsizetype>(777, m_stdout.size() - at))))
                builder.add(e);
        const SweepResult &live = builder.result();
        const auto file = SweepResult::fromJson(readJson(m_runDir + u"/result.json"_s));
        QVERIFY(file);
        QVERIFY(live.simulated);
        QVERIFY(file->simulated);
        QCOMPARE(live.status, u"ok"_s);
        QCOMPARE(live.ops, (QList<SweepOp>{SweepOp::Up, SweepOp::Down}));
        QCOMPARE(live.batchSizes, (QList<int>{1, 16, 256}));
        for (int m : {1, 16, 256}) {
            for (auto op : {SweepOp::Up, SweepOp::Down}) {
                const SweepEntry *a = live.winner(op, m);
                const SweepEntry *b = file->winner(op, m);
                QVERIFY(a && b);
                QCOMPARE(a->config, b->config);
                QCOMPARE(a->medianUs, b->medianUs);
            }
            QCOMPARE(live.batch(m)->bestUs, file->batch(m)->bestUs);
            QCOMPARE(live.batch(m)->defaultUs, file->batch(m)->defaultUs);
        }
        // Timings are units of strategy work and default timings; checks are not counted.
        QCOMPARE(live.measurements.size(), file->measurements.size());
        QCOMPARE(live.files.size(), file->files.size());
    }

    // Re-attaching from the last event seen repeats nothing.
    void builderDropsRepeatedEvents() {
        QFile f(m_runDir + u"/events.jsonl"_s);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray events = f.readAll();
        const qsizetype half = events.indexOf('\n', events.size() / 2) + 1;
        SweepResultBuilder once, twice;
        QVERIFY(once.addEventsFile(events).isEmpty());
        QVERIFY(twice.addEventsFile(events.left(half)).isEmpty());
        // The overlap: attach --from (last seq) sends the last event again.
        const qsizetype back = events.lastIndexOf('\n', half - 2) + 1;
        QVERIFY(twice.addEventsFile(events.mid(back)).isEmpty());
        QCOMPARE(twice.result().measurements.size(), once.result().measurements.size());
        QCOMPARE(twice.lastSeq(), once.lastSeq());
    }

    void agentRunFolderOpensAsWorkspace() {
        QString error;
        const auto ws = Workspace::open(m_runDir, &error);
        QVERIFY2(ws, qPrintable(error));
        QCOMPARE(ws->runs().size(), 1);
        const WorkspaceRun &run = ws->runs().first();
        QVERIFY(run.hasResultFile);
        QVERIFY(run.result.simulated);
        QVERIFY(run.fileStem().startsWith(u"SIMULATED-"_s));
    }

    // A damaged result.json loses nothing: the events rebuild the run and the problem is named.
    void damagedResultFallsBackToEvents() {
        QTemporaryDir dir;
        QVERIFY(QFile::copy(m_runDir + u"/events.jsonl"_s, dir.filePath(u"events.jsonl"_s)));
        QFile bad(dir.filePath(u"result.json"_s));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"format\": \"moetune-result\", \"version\": 1, \"measure");
        bad.close();
        QString error;
        const auto run = WorkspaceRun::open(dir.path(), &error);
        QVERIFY2(run, qPrintable(error));
        QVERIFY(!run->hasResultFile);
        QCOMPARE(run->warnings.size(), 1);
        QVERIFY2(run->warnings.first().contains(u"not valid JSON"_s), qPrintable(run->warnings.first()));
        QCOMPARE(run->result.batchSizes, (QList<int>{1, 16, 256}));
        QVERIFY(run->result.winner(SweepOp::Up, 256));
    }

    // The bundled demo workspace ("bundled": true) is only read: opening its runs writes no cache (it
    // wrote .result.cache into the source tree when opened from there).
    void bundledWorkspaceWritesNoCache() {
        const QString run = QDir(demoDir()).filePath(u"20261129-qwen3-h200-fast"_s);
        QFile::remove(SweepResultCache::cachePath(run));
        const auto opened = WorkspaceRun::open(run);
        QVERIFY(opened && opened->hasResultFile);
        QVERIFY(!QFile::exists(SweepResultCache::cachePath(run)));
    }

    // The binary cache beside result.json gives the same result and follows every change of the file.
    void cacheIsExactAndFollowsTheFile() {
        QTemporaryDir dir;
        for (const QString &name : {u"result.json"_s, u"spec.json"_s, u"events.jsonl"_s})
            QVERIFY(QFile::copy(m_runDir + u'/' + name, dir.filePath(name)));
        const auto first = WorkspaceRun::open(dir.path());
        QVERIFY(first);
        QVERIFY(QFile::exists(SweepResultCache::cachePath(dir.path())));
        const auto cached = SweepResultCache::read(dir.path());
        QVERIFY(cached);
        QCOMPARE(cached->toJson(), first->result.toJson());
        const auto second = WorkspaceRun::open(dir.path());
        QVERIFY(second);
        QCOMPARE(second->result.toJson(), first->result.toJson());
        // Another result.json (here: one measurement fewer) must not be answered from the old cache.
        QJsonObject o = readJson(dir.filePath(u"result.json"_s));
        QJsonArray ms = o.value("measurements"_L1).toArray();
        ms.removeLast();
        o.insert("measurements"_L1, ms);
        QFile f(dir.filePath(u"result.json"_s));
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QJsonDocument(o).toJson());
        f.close();
        QVERIFY(!SweepResultCache::read(dir.path()));
        const auto third = WorkspaceRun::open(dir.path());
        QVERIFY(third);
        QCOMPARE(third->result.measurements.size(), first->result.measurements.size() - 1);
        // A damaged cache is a miss, not an error.
        QFile c(SweepResultCache::cachePath(dir.path()));
        QVERIFY(c.open(QIODevice::ReadWrite));
        QVERIFY(c.resize(c.size() / 2));
        c.close();
        QVERIFY(!SweepResultCache::read(dir.path()));
        const auto fourth = WorkspaceRun::open(dir.path());
        QVERIFY(fourth && fourth->warnings.isEmpty());
        QCOMPARE(fourth->result.measurements.size(), third->result.measurements.size());
    }

    void notARunSaysWhy() {
        QTemporaryDir dir;
        QString error;
        QVERIFY(!Workspace::open(dir.path(), &error));
        QVERIFY2(error.contains(u"holds no tuning runs"_s), qPrintable(error));
        QVERIFY(!Workspace::open(dir.filePath(u"missing"_s), &error));
        QVERIFY2(error.contains(u"does not exist"_s), qPrintable(error));
    }

    void saveAndReopenKeepsEveryPart() {
        QTemporaryDir dir;
        auto ws = Workspace::create(dir.filePath(u"ws"_s), u"test"_s);
        QVERIFY(ws);
        auto run = WorkspaceRun::open(m_runDir);
        QVERIFY(run);
        run->host = u"gpu-7"_s;
        run->diagnosisBefore = QJsonObject{{"summary"_L1, u"1 untuned"_s}, {"findings"_L1, QJsonArray()}};
        run->push =
            QJsonObject{{"installed"_L1, QJsonArray{QJsonObject{{"file_name"_L1, u"E=8.json"_s},
                                                                {"target"_L1, u"/srv/E=8.json"_s},
                                                                {"backup"_L1, u"/srv/E=8.json.bak"_s}}}}};
        QString error;
        QVERIFY2(ws->addRun(*run, &error), qPrintable(error));
        const auto reopened = Workspace::open(ws->path(), &error);
        QVERIFY2(reopened, qPrintable(error));
        QCOMPARE(reopened->runs().size(), 1);
        const WorkspaceRun &back = reopened->runs().first();
        QCOMPARE(back.host, u"gpu-7"_s);
        QCOMPARE(back.runId, run->runId);
        QVERIFY(back.diagnosisBefore);
        QVERIFY(back.result.simulated);
        QCOMPARE(back.result.toJson(), run->result.toJson());
        const Report report = Report::fromRun(back);
        QCOMPARE(report.installed.size(), 1);
        QCOMPARE(report.installed.first().backup, u"/srv/E=8.json.bak"_s);
    }

    void reportTextHoldsTheTable() {
        const auto ws = Workspace::open(demoDir());
        QVERIFY(ws);
        const Report report = Report::fromRun(*ws->run(u"20261129-qwen3-h200-fast"_s));
        QCOMPARE(report.rows.size(), 18);
        QVERIFY(!report.simulated);
        const QString text = ReportText::toText(report);
        QVERIFY(text.contains(u"m128n256k64g16w8s4"_s));
        QVERIFY(text.contains(u"910.7"_s));
        QVERIFY(text.contains(u"1.56x"_s));
        QVERIFY(!text.contains(u"SIMULATED"_s));
        const QString md = ReportText::toMarkdown(report);
        QVERIFY(md.contains(u"| 256 | `m32n128k128g1w4s2` | 349.3 | 490.5 | 1.40x | 274.2 | 79% |"_s));
        // The reference method estimate (~9 h for 18 sizes) beside the measured 74 s.
        QVERIFY(report.referenceSeconds > 8 * 3600 && report.referenceSeconds < 10 * 3600);
        QVERIFY(text.contains(u"74.0 s"_s));
    }

    void simulatedRunIsMarkedInEveryRendering() {
        const auto run = WorkspaceRun::open(m_runDir);
        QVERIFY(run);
        const Report report = Report::fromRun(*run);
        QVERIFY(report.simulated);
        QVERIFY(ReportText::toText(report).startsWith(u"SIMULATED"_s));
        QVERIFY(ReportText::toMarkdown(report).contains(u"**SIMULATED"_s));
    }

    void proofComparesBeforeAndAfter_data() {
        QTest::addColumn<bool>("remains");
        QTest::newRow("gone") << false;
        QTest::newRow("remains") << true;
    }
    void proofComparesBeforeAndAfter() {
        QFETCH(bool, remains);
        auto run = WorkspaceRun::open(m_runDir);
        QVERIFY(run);
        const QJsonObject target{{"E"_L1, 8}, {"N"_L1, 128}};
        const QJsonObject untuned{{"rule"_L1, u"moe-untuned"_s},
                                  {"severity"_L1, u"warning"_s},
                                  {"title"_L1, u"Untuned"_s},
                                  {"occurrences"_L1, 8},
                                  {"target"_L1, target}};
        const QJsonObject inUse{{"rule"_L1, u"moe-tuned-in-use"_s},
                                {"severity"_L1, u"info"_s},
                                {"title"_L1, u"Tuned config in use"_s},
                                {"target"_L1, target}};
        run->diagnosisBefore = QJsonObject{{"summary"_L1, u"before"_s}, {"findings"_L1, QJsonArray{untuned}}};
        run->diagnosisAfter = QJsonObject{{"summary"_L1, u"after"_s},
                                          {"findings"_L1, remains ? QJsonArray{untuned} : QJsonArray{inUse}}};
        const Report report = Report::fromRun(*run);
        QVERIFY(report.proof);
        QCOMPARE(report.proof->before.size(), 1);
        QCOMPARE(report.proof->gone, !remains);
        QCOMPARE(report.proof->inUse.size(), remains ? 0 : 1);
        QCOMPARE(ReportText::toText(report).contains(u"gone on every rank"_s), !remains);
    }

    void referenceCostIsNineHoursForEighteenSizes() {
        QList<int> sizes{1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096};
        const double s = ReferenceCost::estimateSeconds(sizes);
        // docs/servers.md section 7: "~9 h per shape on one GPU".
        QVERIFY2(s > 8.5 * 3600 && s < 9.5 * 3600, qPrintable(QString::number(s / 3600)));
        QVERIFY(ReferenceCost::estimateSeconds({1}) < s / 17);
    }
};

QTEST_GUILESS_MAIN(TstSweepResult)
#include "tst_sweepresult.moc"
