// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The facts with one meaning that the app and the CLI both show: compact rank lists, the text-log
// sniff, the tuning target's and tune spec's texts and the one up vs up+down decision.
#include "core/diagnosis/logsniff.h"
#include "core/diagnosis/logtime.h"
#include "core/diagnosis/serverevent.h"
#include "core/diagnosis/sourcelist.h"
#include "core/host/hostprobe.h"
#include "core/job/tunespec.h"
#include "core/job/tuningtarget.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace moetune;
using namespace Qt::StringLiterals;

namespace {

QStringList numbered(const QString &prefix, int from, int to, const QString &suffix = {}) {
    QStringList out;
    for (int i = from; i <= to; ++i)
        out << prefix + QString::number(i) + suffix;
    return out;
}

TuningTarget sglangTarget() {
    TuningTarget t;
    t.framework = Framework::SGLang;
    t.configRoot = u"/opt/sglang/srt/layers/moe/fused_moe_triton/configs"_s;
    t.tritonFolder = u"triton_3_6_0"_s;
    t.tritonVersion = TritonVersion::parse(u"3.6.0"_s);
    t.name = *ConfigName::parse(u"E=128,N=768,device_name=NVIDIA_H200.json"_s);
    return t;
}

} // namespace

class TestCoreText : public QObject {
    Q_OBJECT

private slots:
    void compactSources_data();
    void compactSources();
    void sniff_data();
    void sniff();
    void specTexts();
    void upAndDownDecision_data();
    void upAndDownDecision();
    void serverShapeText();
    void logTimes_data();
    void logTimes();
    void serverEvents_data();
    void serverEvents();
};

void TestCoreText::compactSources_data() {
    QTest::addColumn<QStringList>("sources");
    QTest::addColumn<int>("maxGroups");
    QTest::addColumn<QString>("expected");
    QTest::newRow("none") << QStringList{} << 0 << QString();
    QTest::newRow("one rank") << QStringList{u"TP3"_s} << 0 << u"TP3"_s;
    QTest::newRow("eight ranks") << numbered(u"TP"_s, 0, 7) << 0 << u"TP0-7"_s;
    QTest::newRow("two ranks are a range") << numbered(u"TP"_s, 0, 1) << 0 << u"TP0-1"_s;
    QTest::newRow("gaps, unsorted") << QStringList{u"TP5"_s, u"TP0"_s, u"TP2"_s, u"TP3"_s} << 0
                                    << u"TP0,2-3,5"_s;
    QTest::newRow("duplicates") << QStringList{u"TP1"_s, u"TP1"_s, u"TP2"_s} << 0 << u"TP1-2"_s;
    QTest::newRow("ten and more") << numbered(u"TP"_s, 0, 15) << 0 << u"TP0-15"_s;
    QTest::newRow("main") << QStringList{u"main"_s} << 0 << u"main"_s;
    QTest::newRow("main and ranks") << (QStringList{u"main"_s} + numbered(u"TP"_s, 0, 2)) << 0
                                    << u"main, TP0-2"_s;
    QTest::newRow("DP x TP") << (numbered(u"DP0 TP"_s, 0, 3) + numbered(u"DP1 TP"_s, 0, 3)) << 0
                             << u"DP0 TP0-3, DP1 TP0-3"_s;
    QTest::newRow("vLLM workers drop pids")
        << QStringList{u"VllmWorker TP0 pid=11"_s, u"VllmWorker TP1 pid=12"_s, u"VllmWorker TP2 pid=13"_s}
        << 0 << u"VllmWorker TP0-2"_s;
    QTest::newRow("lone process keeps its pid")
        << QStringList{u"EngineCore_DP0 pid=1234"_s} << 0 << u"EngineCore_DP0 pid=1234"_s;
    QTest::newRow("two processes") << QStringList{u"EngineCore_DP0 pid=1"_s, u"APIServer pid=2"_s} << 0
                                   << u"EngineCore_DP0 pid=1, APIServer pid=2"_s;
    QTest::newRow("pid alone is no rank") << QStringList{u"pid=7"_s, u"pid=8"_s} << 0 << u"pid=7, pid=8"_s;
    QTest::newRow("table cell limit")
        << QStringList{u"main"_s, u"probe"_s, u"TP0"_s, u"TP1"_s, u"APIServer pid=2"_s} << 2
        << u"main, probe +2 more"_s;
    QTest::newRow("limit not reached")
        << (QStringList{u"main"_s} + numbered(u"TP"_s, 0, 7)) << 3 << u"main, TP0-7"_s;
}

void TestCoreText::compactSources() {
    QFETCH(QStringList, sources);
    QFETCH(int, maxGroups);
    QFETCH(QString, expected);
    QCOMPARE(moetune::compactSources(sources, maxGroups), expected);
}

void TestCoreText::sniff_data() {
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("says"); // part of the sentence
    QTest::newRow("text") << QByteArray("[2026-01-01 00:00:00] hello\n") << int(LogSniff::Kind::Text)
                          << QString();
    QTest::newRow("empty") << QByteArray() << int(LogSniff::Kind::Text) << QString();
    QTest::newRow("UTF-8 text") << QByteArray("caf\xc3\xa9 \xe2\x9c\x93\n") << int(LogSniff::Kind::Text)
                                << QString();
    QTest::newRow("gzip") << QByteArray("\x1f\x8b\x08\0\0\0\0\0", 8) << int(LogSniff::Kind::Gzip)
                          << u"gunzip -c FILE | moetune-cli diagnose -"_s;
    QTest::newRow("zstd") << QByteArray("\x28\xb5\x2f\xfd\x04\x00", 6) << int(LogSniff::Kind::Zstd)
                          << u"zstd-compressed"_s;
    QTest::newRow("xz") << QByteArray("\xfd"
                                      "7zXZ\0\0\x04",
                                      8)
                        << int(LogSniff::Kind::Xz) << u"unxz -k"_s;
    QTest::newRow("bzip2") << QByteArray("BZh91AY&SY") << int(LogSniff::Kind::Bzip2) << u"bunzip2"_s;
    QTest::newRow("BZh text is text")
        << QByteArray("BZh is a word\n") << int(LogSniff::Kind::Text) << QString();
    QTest::newRow("ELF") << QByteArray("\x7f"
                                       "ELF\x02\x01\x01\0\0\0",
                                       10)
                         << int(LogSniff::Kind::Binary) << u"NUL byte at offset 7"_s;
    QTest::newRow("NUL late in the head")
        << (QByteArray(40000, 'a') + QByteArray(1, '\0')) << int(LogSniff::Kind::Binary) << u"offset 40000"_s;
    QTest::newRow("NUL past the head") << (QByteArray(LogSniff::headBytes, 'a') + QByteArray(1, '\0'))
                                       << int(LogSniff::Kind::Text) << QString();
}

void TestCoreText::sniff() {
    QFETCH(QByteArray, head);
    QFETCH(int, kind);
    QFETCH(QString, says);
    const LogSniff s = LogSniff::check(head);
    QCOMPARE(int(s.kind), kind);
    QCOMPARE(s.isText(), says.isEmpty());
    const QString sentence = s.problem(u"'server.log'"_s);
    QCOMPARE(sentence.isEmpty(), says.isEmpty());
    if (!says.isEmpty()) {
        QVERIFY2(sentence.contains(says), qPrintable(sentence));
        QVERIFY(sentence.startsWith(u"'server.log' "_s));
        QVERIFY(sentence.contains(u"nothing was diagnosed"_s));
    }
}

void TestCoreText::specTexts() {
    TuningTarget t = sglangTarget();
    t.downMissing = true;
    TuneSpec spec = TuneSpec::fromTarget(t);
    QCOMPARE(spec.shapeText(), u"E=128, N=768, bf16"_s);
    QCOMPARE(spec.summaryText(), u"SGLang: E=128, N=768, bf16, up and down"_s);
    // What the advice quotes is valid JSON that TuneSpec reads back to the same job shape.
    const QJsonDocument doc = QJsonDocument::fromJson(spec.shapeJson().toUtf8());
    QVERIFY(doc.isObject());
    QCOMPARE(doc.object().value("ops"_L1).toString(), u"up+down"_s);
    QCOMPARE(doc.object().value("device_name"_L1).toString(), u"NVIDIA_H200"_s);
    QVERIFY(!doc.object().contains("K"_L1)); // not known from a log
    const auto back = TuneSpec::fromJson(doc.object());
    QVERIFY(back);
    QCOMPARE(back->experts, 128);
    QCOMPARE(back->n, 768);
    QCOMPARE(back->upAndDown, true);

    spec.hiddenSize = 2048;
    spec.topk = 8;
    spec.dtype = u"fp8_w8a8"_s;
    spec.blockShape = std::array<int, 2>{128, 128};
    spec.deviceName = u"GPU \"x\""_s;
    QCOMPARE(spec.shapeText(), u"E=128, N=768, K=2048, top-k 8, fp8_w8a8, block [128, 128]"_s);
    const QJsonObject o = QJsonDocument::fromJson(spec.shapeJson().toUtf8()).object();
    QCOMPARE(o.value("K"_L1).toInt(), 2048);
    QCOMPARE(o.value("topk"_L1).toInt(), 8);
    QCOMPARE(o.value("device_name"_L1).toString(), u"GPU \"x\""_s); // escaped, not broken
}

void TestCoreText::upAndDownDecision_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<bool>("upMissing");
    QTest::addColumn<bool>("downMissing");
    QTest::addColumn<bool>("downFellBack");
    QTest::addColumn<bool>("upAndDown");
    QTest::newRow("SGLang up only") << int(Framework::SGLang) << true << false << false << false;
    QTest::newRow("SGLang down missing") << int(Framework::SGLang) << false << true << false << true;
    QTest::newRow("SGLang both missing") << int(Framework::SGLang) << true << true << false << true;
    QTest::newRow("SGLang down fell back") << int(Framework::SGLang) << false << false << true << true;
    QTest::newRow("vLLM never down") << int(Framework::VLLM) << true << true << false << false;
    QTest::newRow("unknown framework") << int(Framework::Unknown) << true << true << false << false;
}

void TestCoreText::upAndDownDecision() {
    QFETCH(int, framework);
    QFETCH(bool, upMissing);
    QFETCH(bool, downMissing);
    QFETCH(bool, downFellBack);
    QFETCH(bool, upAndDown);
    TuningTarget t = sglangTarget();
    t.framework = Framework(framework);
    t.upMissing = upMissing;
    t.downMissing = downMissing;
    t.downFellBack = downFellBack;
    QCOMPARE(t.tunesDown(), upAndDown);
    QCOMPARE(TuneSpec::fromTarget(t).upAndDown, upAndDown);
}

void TestCoreText::serverShapeText() {
    ServerProcess s;
    QCOMPARE(s.shapeText(), u"not readable (no config.json found for the model)"_s);
    s.tensorParallel = 4;
    s.shape = MoeShape{128, 8, 2048, 3072, std::array<int, 2>{128, 128}, u"fp8"_s};
    QCOMPARE(s.shapeText(), u"128 experts, top-k 8, hidden size 2048, MoE intermediate size 3072 (N = 768 "
                            "per rank at TP 4), fp8, block [128, 128]"_s);
}

QTEST_GUILESS_MAIN(TestCoreText)
void TestCoreText::logTimes_data() {
    QTest::addColumn<QByteArray>("from");
    QTest::addColumn<QByteArray>("to");
    QTest::addColumn<int>("seconds"); // -1: cannot be compared / not a time
    QTest::addColumn<QString>("clock");
    QTest::newRow("SGLang") << "2026-03-14 09:12:01"_ba
                            << "2026-03-14 09:13:35"_ba << 94 << u"09:13:35"_s;
    QTest::newRow("SGLang with milliseconds") << "2026-03-14 09:12:01,250"_ba
                                              << "2026-03-14 09:12:02.750"_ba << 2 << u"09:12:02"_s;
    QTest::newRow("vLLM, no year") << "03-14 09:10:04"_ba
                                   << "03-14 09:11:58"_ba << 114 << u"09:11:58"_s;
    QTest::newRow("vLLM across midnight") << "03-14 23:59:50"_ba
                                          << "03-15 00:00:10"_ba << 20 << u"00:00:10"_s;
    QTest::newRow("across a month end, 2026 not a leap year") << "2026-02-28 23:00:00"_ba
                                                              << "03-01 01:00:00"_ba << 7200 << u"01:00:00"_s;
    QTest::newRow("ISO with Z") << "2026-03-14T09:12:01.000000000Z"_ba
                                << "2026-03-14T09:13:20Z"_ba << 79 << u"09:13:20"_s;
    QTest::newRow("ISO offsets") << "2026-03-14T10:00:00+01:00"_ba
                                 << "2026-03-14T09:00:30Z"_ba << 30 << u"09:00:30"_s;
    QTest::newRow("backwards: none") << "2026-03-14 09:13:35"_ba
                                     << "2026-03-14 09:12:01"_ba << -1 << u"09:12:01"_s;
    QTest::newRow("not a time") << "2026-03-14 09:12:01"_ba
                                << "TP0 09:12"_ba << -1 << QString();
    QTest::newRow("impossible date") << "2026-03-14 09:12:01"_ba
                                     << "2026-02-30 09:12:01"_ba << -1 << QString();
}

void TestCoreText::logTimes() {
    QFETCH(QByteArray, from);
    QFETCH(QByteArray, to);
    QFETCH(int, seconds);
    QFETCH(QString, clock);
    const std::optional<LogTime> a = LogTime::parse(from);
    const std::optional<LogTime> b = LogTime::parse(to);
    QVERIFY(a);
    QCOMPARE(b ? b->clock() : QString(), clock);
    QCOMPARE(LogTime::secondsBetween(a, b).value_or(-1), qint64(seconds));
}

void TestCoreText::serverEvents_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("kind"); // -1 none, 0 start, 1 ready
    QTest::addColumn<int>("strength");
    QTest::addColumn<QByteArray>("match");
    QTest::newRow("SGLang start") << "[2026-03-14 09:12:01] server_args=ServerArgs(model_path='x')"_ba << 0
                                  << 0 << "server_args=ServerArgs("_ba;
    QTest::newRow("vLLM start")
        << "(APIServer pid=1) INFO 03-14 09:10:04 [api_server.py:1839] vLLM API server version 0.11.0"_ba << 0
        << 0 << "vLLM API server version"_ba;
    QTest::newRow("SGLang ready") << "[2026-03-14 09:13:35] The server is fired up and ready to roll!"_ba << 1
                                  << 3 << "The server is fired up and ready to roll"_ba;
    QTest::newRow("vLLM ready with its URL")
        << "(APIServer pid=1) INFO 03-14 09:11:58 [api_server.py:1884] Starting vLLM API server 0 on http://0.0.0.0:8000"_ba
        << 1 << 2 << "Starting vLLM API server 0 on http://0.0.0.0:8000"_ba;
    QTest::newRow("uvicorn") << "INFO:     Application startup complete."_ba << 1 << 1
                             << "Application startup complete"_ba;
    QTest::newRow("vLLM's starting line without a URL is no readiness")
        << "INFO 03-14 09:11:00 Starting vLLM API server engine"_ba << -1 << 0 << QByteArray();
    QTest::newRow("a request line") << "INFO:     127.0.0.1:5 - \"GET /health HTTP/1.1\" 200 OK"_ba << -1 << 0
                                    << QByteArray();
}

void TestCoreText::serverEvents() {
    QFETCH(QByteArray, line);
    QFETCH(int, kind);
    QFETCH(int, strength);
    QFETCH(QByteArray, match);
    const std::optional<ServerEvent> e = ServerEvent::parse(line);
    QCOMPARE(e.has_value(), kind >= 0);
    if (!e)
        return;
    QCOMPARE(int(e->kind), kind);
    QCOMPARE(e->strength, strength);
    QCOMPARE(line.mid(e->matchStart, e->matchLength), match);
}

#include "tst_coretext.moc"
