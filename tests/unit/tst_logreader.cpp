// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// LogReader: line cleaning, newline counting, the multi-literal search, and the three input paths.
#include "core/diagnosis/literalsearcher.h"
#include "core/diagnosis/logreader.h"
#include "trickledevice.h"

#include <QBuffer>
#include <QTemporaryFile>
#include <QTest>

using namespace moetune;
using namespace Qt::StringLiterals;

namespace {

struct Seen {
    qint64 line;
    QByteArray text;
    bool operator==(const Seen &) const = default;
};

QList<Seen> readAll(LogReader &reader, QByteArrayView text) {
    QList<Seen> out;
    reader.readBuffer(text, [&](const LogReader::Hit &h) { out.append({h.line, h.text}); });
    return out;
}

} // namespace

class TestLogReader : public QObject {
    Q_OBJECT

private slots:
    void cleanLine_data();
    void cleanLine();
    void cleanTextIsCleanLinePerLine_data();
    void cleanTextIsCleanLinePerLine();
    void countNewlines();
    void searcherFindsEveryLiteral_data();
    void searcherFindsEveryLiteral();
    void searcherAgreesWithNaiveSearch_data();
    void searcherAgreesWithNaiveSearch();
    void presentIn();
    void hitsAndLineNumbers_data();
    void hitsAndLineNumbers();
    void deviceInTinyChunks();
    void fileMatchesBuffer();
    void contextAroundHit();
};

void TestLogReader::cleanLine_data() {
    QTest::addColumn<QByteArray>("raw");
    QTest::addColumn<QByteArray>("clean");
    QTest::newRow("plain") << QByteArray("hello world") << QByteArray("hello world");
    QTest::newRow("CRLF") << QByteArray("hello\r") << QByteArray("hello");
    QTest::newRow("many CR at end") << QByteArray("hello\r\r") << QByteArray("hello");
    QTest::newRow("progress bar") << QByteArray(" 10%|#|\r 50%|###|\r100%|#####|")
                                  << QByteArray("100%|#####|");
    QTest::newRow("SGR colour") << QByteArray("\x1b[1;31mERROR\x1b[0m: x") << QByteArray("ERROR: x");
    QTest::newRow("cursor moves") << QByteArray("a\x1b[2Kb\x1b[1Ac") << QByteArray("abc");
    QTest::newRow("OSC hyperlink") << QByteArray("\x1b]8;;http://x\x07link\x1b]8;;\x1b\\ end")
                                   << QByteArray("link end");
    QTest::newRow("charset") << QByteArray("\x1b(Bok") << QByteArray("ok");
    QTest::newRow("lone ESC at end") << QByteArray("ok\x1b") << QByteArray("ok");
    QTest::newRow("tab kept") << QByteArray("a\tb") << QByteArray("a\tb");
    QTest::newRow("other controls dropped") << QByteArray("a\x01\x08"
                                                          "b\x7f"
                                                          "c")
                                            << QByteArray("abc");
    QTest::newRow("invalid UTF-8 kept as bytes") << QByteArray("\xff\xfe ok") << QByteArray("\xff\xfe ok");
    QTest::newRow("empty") << QByteArray() << QByteArray();
}

void TestLogReader::cleanLine() {
    QFETCH(QByteArray, raw);
    QFETCH(QByteArray, clean);
    QCOMPARE(LogReader::cleanLine(raw), clean);
}

void TestLogReader::cleanTextIsCleanLinePerLine_data() {
    QTest::addColumn<QByteArray>("raw");
    QTest::newRow("plain") << QByteArray("a\nb\n");
    QTest::newRow("CRLF") << QByteArray("one\r\ntwo\r\n\r\nfour");
    QTest::newRow("bars and colours")
        << QByteArray(" 1%\r 9%\r100%\n\x1b[32mINFO\x1b[0m x\n\x1b]8;;u\x07l\x1b]8;;\x1b\\\n");
    QTest::newRow("controls, tab, UTF-8") << QByteArray("\x01a\tb\x7f\n\xc3\xa9t\xc3\xa9\x08\n");
    QTest::newRow("ESC at a line end") << QByteArray("x\x1b\ny\x1b[\nz");
    QTest::newRow("only newlines") << QByteArray("\n\n\n");
    QTest::newRow("empty") << QByteArray();
}

void TestLogReader::cleanTextIsCleanLinePerLine() {
    // The editor (cleanText over UTF-16) and the evidence (cleanLine over bytes) show the same text,
    // with the same line count.
    QFETCH(QByteArray, raw);
    QByteArrayList cleaned;
    for (const QByteArray &line : raw.split('\n'))
        cleaned.append(LogReader::cleanLine(line));
    const QString expected = QString::fromUtf8(cleaned.join('\n'));
    const QString shown = LogReader::cleanText(QString::fromUtf8(raw));
    QCOMPARE(shown, expected);
    QCOMPARE(shown.count(u'\n'), raw.count('\n'));
}

void TestLogReader::countNewlines() {
    // Every length around the vector width and the 255-vector fold, newlines at varying spots.
    for (int n : {0, 1, 15, 16, 17, 31, 255 * 16 - 1, 255 * 16, 255 * 16 + 1, 254 * 16 * 3 + 5, 100000}) {
        QByteArray data(n, 'a');
        qint64 expected = 0;
        for (int i = 0; i < n; ++i) {
            if (i % 7 == 3 || i % 13 == 0) {
                data[i] = '\n';
                ++expected;
            }
        }
        QCOMPARE(LogReader::countNewlines(data), expected);
    }
    QCOMPARE(LogReader::countNewlines(QByteArray(70000, '\n')), 70000);
}

void TestLogReader::searcherFindsEveryLiteral_data() {
    QTest::addColumn<QByteArray>("literal");
    QTest::addColumn<QByteArray>("simd");
    for (const char *simd : {"widest", "ssse3"}) {
        for (const char *l :
             {"sub-optimal", "KV Cache is allocated", "avail mem=", "Automatically detected platform",
              "NCCL error", "Traceback (most recent call last)"})
            QTest::addRow("%s %s", simd, l) << QByteArray(l) << QByteArray(simd);
    }
}

void TestLogReader::searcherFindsEveryLiteral() {
    QFETCH(QByteArray, literal);
    QFETCH(QByteArray, simd);
    qputenv("MOETUNE_SIMD", simd); // "" = the widest the CPU has
    const QList<QByteArray> all{"sub-optimal", "KV Cache is allocated",
                                "avail mem=",  "Automatically detected platform",
                                "NCCL error",  "Traceback (most recent call last)"};
    LiteralSearcher s(all);
    // At every offset within a 64-byte frame (SIMD lanes, block edges, the end of the buffer).
    for (int at = 0; at < 64; ++at) {
        QByteArray hay = QByteArray(at, 'x') + literal + QByteArray(at % 5, 'y');
        QCOMPARE(s.findNext(hay, 0), at);
        QCOMPARE(s.findNext(hay, at + 1), -1);
        hay = QByteArray(200, 'z') + hay;
        QCOMPARE(s.findNext(hay, 0), 200 + at);
    }
    qunsetenv("MOETUNE_SIMD");
}

void TestLogReader::searcherAgreesWithNaiveSearch_data() {
    QTest::addColumn<QByteArray>("simd");
    QTest::newRow("widest") << QByteArray();
    QTest::newRow("ssse3") << QByteArray("ssse3");
}

void TestLogReader::searcherAgreesWithNaiveSearch() {
    QFETCH(QByteArray, simd);
    qputenv("MOETUNE_SIMD", simd);
    const QList<QByteArray> literals{"sub-optimal", "MoE kernel config", "GPU KV cache size",
                                     "avail mem=", "ready to roll"};
    LiteralSearcher s(literals);
    QByteArray text;
    quint32 x = 99;
    const char *words[] = {"sub", "optimal", "-",     "MoE",   " kernel", " config", "GPU",
                           " KV", " cache",  " size", "avail", " mem",    "=",       "ready",
                           " to", " roll",   "\n",    " ",     "x"};
    for (int i = 0; i < 200000; ++i) {
        x = x * 1664525u + 1013904223u;
        text += words[(x >> 16) % (sizeof(words) / sizeof(words[0]))];
    }
    text += "sub-optimal";
    s.adapt(text.left(1 << 16));
    // Lines holding a literal, found two ways.
    QList<qsizetype> viaSearcher, naive;
    for (qsizetype pos = 0;;) {
        const qsizetype hit = s.findNext(text, pos);
        if (hit < 0)
            break;
        const qsizetype start = text.lastIndexOf('\n', hit) + 1;
        viaSearcher << start;
        const qsizetype end = text.indexOf('\n', hit);
        if (end < 0)
            break;
        pos = end + 1;
    }
    for (qsizetype start = 0; start < text.size();) {
        qsizetype end = text.indexOf('\n', start);
        if (end < 0)
            end = text.size();
        const QByteArrayView line(text.constData() + start, end - start);
        for (const QByteArray &l : literals) {
            if (line.contains(l)) {
                naive << start;
                break;
            }
        }
        start = end + 1;
    }
    qunsetenv("MOETUNE_SIMD");
    QVERIFY(naive.size() > 100);
    QCOMPARE(viaSearcher, naive);
}

void TestLogReader::presentIn() {
    LiteralSearcher s({"sub-optimal", "avail mem=", "KV Cache is allocated", "sub-optimal"});
    QCOMPARE(s.literals().size(), 3); // duplicates folded
    QCOMPARE(s.presentIn("nothing here at all"), quint64(0));
    QCOMPARE(s.presentIn("x avail mem=3 GB, sub-optimal"), quint64(0b011));
    QCOMPARE(s.presentIn("KV Cache is allocated"), quint64(0b100));
}

void TestLogReader::hitsAndLineNumbers_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QList<qint64>>("lines");
    QTest::addColumn<qint64>("linesRead");
    QTest::newRow("none") << QByteArray("a\nb\nc\n") << QList<qint64>{} << qint64(3);
    QTest::newRow("first and last") << QByteArray("NEEDLE1\nb\nNEEDLE2") << QList<qint64>{1, 3} << qint64(3);
    QTest::newRow("CRLF") << QByteArray("a\r\nNEEDLE\r\nb\r\n") << QList<qint64>{2} << qint64(3);
    QTest::newRow("CR is not a line") << QByteArray("a\rb\rNEEDLE\nc\n") << QList<qint64>{1} << qint64(2);
    QTest::newRow("two on a line, one hit")
        << QByteArray("x NEEDLE NEEDLE\n") << QList<qint64>{1} << qint64(1);
    QTest::newRow("empty lines") << QByteArray("\n\n\nNEEDLE\n\n") << QList<qint64>{4} << qint64(5);
    QTest::newRow("empty input") << QByteArray() << QList<qint64>{} << qint64(0);
}

void TestLogReader::hitsAndLineNumbers() {
    QFETCH(QByteArray, text);
    QFETCH(QList<qint64>, lines);
    QFETCH(qint64, linesRead);
    LogReader reader({"NEEDLE"});
    QList<qint64> got;
    for (const Seen &s : readAll(reader, text))
        got << s.line;
    QCOMPARE(got, lines);
    QCOMPARE(reader.linesRead(), linesRead);
    QCOMPARE(reader.bytesRead(), text.size());
}

void TestLogReader::deviceInTinyChunks() {
    // A sequential device that hands out 7 bytes at a time: lines straddle every read.
    QByteArray text;
    for (int i = 0; i < 500; ++i)
        text +=
            (i % 9 == 0 ? "line with sub-optimal in it " : "ordinary line ") + QByteArray::number(i) + '\n';
    test::TrickleDevice dev(text, 7);
    LogReader a({"sub-optimal"});
    QList<Seen> fromDevice;
    QString error;
    QVERIFY(a.readDevice(
        &dev,
        [&](const LogReader::Hit &h) {
            fromDevice.append({h.line, h.text});
        },
        {}, &error));
    LogReader b({"sub-optimal"});
    QCOMPARE(fromDevice, readAll(b, text));
    QCOMPARE(fromDevice.size(), 56);
    QCOMPARE(a.linesRead(), 500);
}

void TestLogReader::fileMatchesBuffer() {
    QTemporaryFile f;
    QVERIFY(f.open());
    QByteArray text;
    for (int i = 0; i < 20000; ++i)
        text += i % 1000 == 7 ? "[TP1] avail mem=12.5 GB\n" : "[TP1] Decode batch. #running-req: 3\n";
    f.write(text);
    f.flush();
    LogReader a({"avail mem="});
    QList<Seen> fromFile;
    QString error;
    QVERIFY(a.readFile(
        f.fileName(),
        [&](const LogReader::Hit &h) {
            fromFile.append({h.line, h.text});
        },
        {}, &error));
    LogReader b({"avail mem="});
    QCOMPARE(fromFile, readAll(b, text));
    QCOMPARE(fromFile.size(), 20);
    QCOMPARE(fromFile.front().line, 8);
    QCOMPARE(a.linesRead(), 20000);
}

void TestLogReader::contextAroundHit() {
    LogReader reader({"NEEDLE"});
    QByteArray before, after;
    reader.readBuffer("one\ntwo\nNEEDLE here\nthree\nfour\n", [&](const LogReader::Hit &h) {
        before = h.before.toByteArray();
        after = h.after.toByteArray();
    });
    QCOMPARE(before, QByteArray("one\ntwo\n"));
    QCOMPARE(after, QByteArray("three\nfour\n"));
}

QTEST_GUILESS_MAIN(TestLogReader)
#include "tst_logreader.moc"
