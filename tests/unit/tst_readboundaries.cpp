// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Regression tests (fuzz findings): the diagnosis of a log must not depend on where reads, file windows
// or the parallel split of a file fall, nor may writing a config file change an integer above 2^53.
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/logreader.h"
#include "core/moe/configfile.h"
#include "trickledevice.h"

#include <QIODevice>
#include <QJsonDocument>
#include <QTemporaryFile>
#include <QTest>

#include <cstring>

using namespace moetune;
using moetune::test::TrickleDevice; // pipe-like reads of at most `chunk` bytes
using namespace Qt::StringLiterals;

namespace {

const QByteArray kPath = "/sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/"
                         "triton_3_6_0/E=160,N=192,device_name=NVIDIA_H200";

// The SGLang warning as an 80-column terminal wrapped it, in colour.
QByteArray wrappedWarning() {
    const QByteArray full = "\x1b[33m[2026-03-02 10:14:25 TP0] Using default MoE kernel config. Performance "
                            "might be sub-optimal! Config file not found at " +
                            kPath + ".json, you can create them with https://github.com/sgl-project\x1b[0m";
    QByteArray out;
    for (qsizetype i = 0; i < full.size(); i += 80)
        out += full.mid(i, 80) + '\n';
    return out;
}

QByteArray downMoeLines() {
    QByteArray out;
    for (int tp = 0; tp < 3; ++tp)
        out += "[2026-03-02 10:14:25 TP" + QByteArray::number(tp) +
               "] Using MoE kernel config with down_moe=False. Performance might be sub-optimal! Config "
               "file not found at " +
               kPath + "_down.json, you can create them with https://github.com/sgl-project\n";
    return out;
}

QByteArray filler(int lines) {
    QByteArray out;
    for (int i = 0; i < lines; ++i)
        out +=
            "Capturing batches (bs=8 avail_mem=20.1 GB):  10%|#  | 1/10 step " + QByteArray::number(i) + '\n';
    return out;
}

// Appends lines of filler so that log ends exactly at byte `size` (a line boundary).
void padTo(QByteArray &log, qsizetype size, char c) {
    while (log.size() + 200 < size)
        log += QByteArray(99, c) + '\n';
    log += QByteArray(size - log.size() - 1, c) + '\n';
}

QByteArray jsonOf(const Diagnosis &d) {
    return QJsonDocument(d.toJson()).toJson(QJsonDocument::Compact);
}

} // namespace

class TestReadBoundaries : public QObject {
    Q_OBJECT

private slots:
    void streamEqualsText_data();
    void streamEqualsText();
    void fileWindowBoundary();
    void rangePlannedOnALongerFile();
    void parallelSplitInsideWrappedWarning_data();
    void parallelSplitInsideWrappedWarning();
    void configIntegerAbove2Pow53_data();
    void configIntegerAbove2Pow53();
};

void TestReadBoundaries::streamEqualsText_data() {
    QTest::addColumn<QByteArray>("log");
    QTest::addColumn<qint64>("chunk");
    const QByteArray wrapped =
        "[2026-03-02 10:14:03] Automatically detected platform cuda.\n" + wrappedWarning();
    const QByteArray down = filler(3) + downMoeLines() + filler(2);
    // Context near a read boundary far into the stream, past the reader's first buffer.
    const QByteArray late = filler(70000) + wrappedWarning() + downMoeLines();
    for (qint64 chunk : {1, 7, 97, 4096}) {
        QTest::addRow("wrapped-%lld", chunk) << wrapped << chunk;
        QTest::addRow("down_moe-%lld", chunk) << down << chunk;
    }
    QTest::addRow("late-4096") << late << qint64(4096);
    QTest::addRow("late-65537") << late << qint64(65537);
}

void TestReadBoundaries::streamEqualsText() {
    QFETCH(QByteArray, log);
    QFETCH(qint64, chunk);
    const Diagnoser diagnoser;
    const Diagnosis text = diagnoser.diagnoseText(log);
    QVERIFY2(!text.targets.isEmpty(), "the log must hold a finding for the comparison to mean something");
    TrickleDevice dev(log, chunk);
    QString error;
    const Diagnosis streamed = diagnoser.diagnoseDevice(&dev, {}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(jsonOf(streamed), jsonOf(text));
}

void TestReadBoundaries::fileWindowBoundary() {
    // The first 16 MB window ends inside the wrapped warning, after its first line.
    const QByteArray head = "[2026-03-02 10:14:03] Automatically detected platform cuda.\n";
    QByteArray log = head;
    padTo(log, LogReader::windowBytes - 100, 'x');
    log += wrappedWarning() + filler(5);
    QTemporaryFile f;
    QVERIFY(f.open());
    QCOMPARE(f.write(log), log.size());
    QVERIFY(f.flush());
    Diagnoser single;
    single.setMaxThreads(1);
    QString error;
    const Diagnosis fromFile = single.diagnoseFile(f.fileName(), {}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const Diagnosis fromText = single.diagnoseText(log);
    QCOMPARE(fromText.targets.size(), 1);
    QCOMPARE(jsonOf(fromFile), jsonOf(fromText));
}

// A part of a parallel read that starts only after the log was truncated (logrotate's copytruncate): its
// range was planned on the longer file, and reading what is left must not pass for the whole log.
void TestReadBoundaries::rangePlannedOnALongerFile() {
    QTemporaryFile f;
    QVERIFY(f.open());
    const QByteArray log = filler(50);
    QCOMPARE(f.write(log), log.size());
    QVERIFY(f.flush());
    QVERIFY(f.resize(0)); // truncated after the plan
    LogReader reader(QList<QByteArray>{});
    QString error;
    QVERIFY(!reader.readOpenFileRange(
        f.handle(), f.fileName(), 0, log.size(), [](const LogReader::Hit &) {}, {}, &error));
    QVERIFY2(error.contains(u"shrank while it was read"_s), qPrintable(error));
    QCOMPARE(reader.linesRead(), 0);
}

void TestReadBoundaries::parallelSplitInsideWrappedWarning_data() {
    QTest::addColumn<QByteArray>("warning");
    QTest::addColumn<int>("startBeforeMiddle");
    // The second half starts with the warning's second line, which alone completes the message.
    QTest::addRow("default config, split after line 1") << wrappedWarning() << 40;
    // The first half rejoins lines 1-4; the second half starts at line 3, whose literal must not count
    // the same message again.
    const QByteArray fallback =
        "[2026-03-02 10:14:25 TP0] Config file not found at /sgl-workspace/configs/triton\n"
        "_3_6_0/E=160,N=192,device_name=NVIDIA_H200.json. Fallback to triton version 3.5.\n"
        "0 and use MoE kernel config from /sgl-workspace/configs/triton_3_5_0/E=160,N=192\n"
        ",device_name=NVIDIA_H200.json\n";
    QTest::addRow("fallback, split after line 2") << fallback << 120;
}

void TestReadBoundaries::parallelSplitInsideWrappedWarning() {
    // No line looks like the start of a server log line, so the split falls at the first '\n' after the
    // middle: inside the wrapped warning. Both halves see it; it must still count once.
    QFETCH(QByteArray, warning);
    QFETCH(int, startBeforeMiddle);
    QByteArray log = "Automatically detected platform cuda.\n";
    const qsizetype total = 2 * 1024 * 1024;
    padTo(log, total / 2 - startBeforeMiddle, 'y');
    log += warning;
    padTo(log, total, 'z');
    QCOMPARE(log.size(), total);
    QTemporaryFile f;
    QVERIFY(f.open());
    QCOMPARE(f.write(log), log.size());
    QVERIFY(f.flush());
    Diagnoser parallel;
    parallel.setMaxThreads(2);
    parallel.setParallelThreshold(1024);
    QString error;
    const Diagnosis split = parallel.diagnoseFile(f.fileName(), {}, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const Diagnosis whole = parallel.diagnoseText(log);
    QVERIFY(!whole.findings.isEmpty());
    QCOMPARE(whole.findings.front().occurrences, 1);
    QCOMPARE(jsonOf(split), jsonOf(whole));
}

void TestReadBoundaries::configIntegerAbove2Pow53_data() {
    QTest::addColumn<QByteArray>("token");
    QTest::addRow("2^53+1") << QByteArray("9007199254740993");
    QTest::addRow("fuzz finding") << QByteArray("1688888888888888888");
    QTest::addRow("qint64 max") << QByteArray("9223372036854775807");
    QTest::addRow("negative") << QByteArray("-9007199254740993");
    QTest::addRow("small") << QByteArray("2");
}

void TestReadBoundaries::configIntegerAbove2Pow53() {
    QFETCH(QByteArray, token);
    const QByteArray json =
        R"({"64": {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64, )"
        R"("GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 2, "matrix_instr_nonkdim": )" +
        token + "}}";
    QString error;
    const std::optional<ConfigFile> parsed = ConfigFile::parse(json, &error);
    QVERIFY2(parsed, qPrintable(error));
    for (const Framework dialect : {Framework::SGLang, Framework::VLLM}) {
        const QByteArray written = parsed->toJson(dialect);
        // json.dumps writes an int's digits exactly.
        const QByteArray expected = "\"matrix_instr_nonkdim\": " + token + '\n';
        QVERIFY2(written.contains(expected), written.constData());
        const std::optional<ConfigFile> again = ConfigFile::parse(written, &error);
        QVERIFY2(again, qPrintable(error));
        QVERIFY(again->entries == parsed->entries);
        QCOMPARE(again->toJson(dialect), written);
    }
}

QTEST_GUILESS_MAIN(TestReadBoundaries)
#include "tst_readboundaries.moc"
