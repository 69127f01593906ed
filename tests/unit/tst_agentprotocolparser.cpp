// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/run/agentprotocolparser.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {
const QByteArray kHello =
    R"({"type":"hello","protocol":1,"agent_version":"0.1.0","capabilities":["probe"],"python":"3.11.2","pid":1})";
const QByteArray kDone = R"({"type":"done","status":"ok","exit_code":0})";

// "hello", "done", "!ParseError", "!VersionMismatch"
QStringList describe(const QList<AgentEvent> &events) {
    QStringList out;
    for (const AgentEvent &e : events) {
        switch (e.kind) {
        case AgentEvent::Kind::ParseError:
            out.append(u"!ParseError"_s);
            break;
        case AgentEvent::Kind::VersionMismatch:
            out.append(u"!VersionMismatch"_s);
            break;
        default:
            out.append(e.type);
        }
    }
    return out;
}
} // namespace

class TestAgentProtocolParser : public QObject {
    Q_OBJECT
private slots:
    void parse_data() {
        QTest::addColumn<QByteArray>("stream");
        QTest::addColumn<int>("chunk"); // bytes per feed(); 0 = all at once
        QTest::addColumn<QStringList>("expected");
        QTest::addColumn<int>("skipped");
        QTest::addColumn<QByteArray>("offending"); // rawLine of the first error event

        const QByteArray ok = kHello + '\n' + kDone + '\n';
        QTest::newRow("one read") << ok << 0 << QStringList{u"hello"_s, u"done"_s} << 0 << QByteArray();
        QTest::newRow("byte by byte") << ok << 1 << QStringList{u"hello"_s, u"done"_s} << 0 << QByteArray();
        QTest::newRow("7-byte reads") << ok << 7 << QStringList{u"hello"_s, u"done"_s} << 0 << QByteArray();
        QTest::newRow("CRLF") << kHello + "\r\n" + kDone + "\r\n"
                              << 5 << QStringList{u"hello"_s, u"done"_s} << 0 << QByteArray();
        QTest::newRow("no final newline")
            << kHello + '\n' + kDone << 0 << QStringList{u"hello"_s, u"done"_s} << 0 << QByteArray();
        QTest::newRow("unknown type skipped") << kHello + "\n{\"type\":\"sparkle\",\"x\":1}\n" + kDone + '\n'
                                              << 3 << QStringList{u"hello"_s, u"done"_s} << 1 << QByteArray();
        QTest::newRow("banner before hello")
            << "Welcome to gpu-7!\n" + ok << 0 << QStringList{u"!ParseError"_s, u"hello"_s, u"done"_s} << 0
            << QByteArray("Welcome to gpu-7!");
        QTest::newRow("truncated json") << kHello + "\n{\"type\":\"progress\",\"done\":1\n"
                                        << 0 << QStringList{u"hello"_s, u"!ParseError"_s} << 0
                                        << QByteArray("{\"type\":\"progress\",\"done\":1");
        QTest::newRow("array, not object")
            << QByteArray("[1,2,3]\n") << 0 << QStringList{u"!ParseError"_s} << 0 << QByteArray("[1,2,3]");
        QTest::newRow("type not a string")
            << QByteArray("{\"type\":3}\n") << 0 << QStringList{u"!ParseError"_s} << 0
            << QByteArray("{\"type\":3}");
        QTest::newRow("empty line") << kHello + "\n\n"
                                    << 0 << QStringList{u"hello"_s, u"!ParseError"_s} << 0 << QByteArray();
        QTest::newRow("invalid UTF-8") << QByteArray("{\"type\":\"log\",\"message\":\"\xff\xfe\"}\n") << 0
                                       << QStringList{u"!ParseError"_s} << 0
                                       << QByteArray("{\"type\":\"log\",\"message\":\"\xff\xfe\"}");
        QTest::newRow("newer protocol")
            << QByteArray(R"({"type":"hello","protocol":2,"agent_version":"9.0"})"
                          "\n")
            << 0 << QStringList{u"!VersionMismatch"_s} << 0
            << QByteArray(R"({"type":"hello","protocol":2,"agent_version":"9.0"})");
        QTest::newRow("hello without protocol")
            << QByteArray(R"({"type":"hello"})"
                          "\n")
            << 0 << QStringList{u"!VersionMismatch"_s} << 0 << QByteArray(R"({"type":"hello"})");
    }

    void parse() {
        QFETCH(QByteArray, stream);
        QFETCH(int, chunk);
        QFETCH(QStringList, expected);
        QFETCH(int, skipped);
        QFETCH(QByteArray, offending);
        AgentProtocolParser parser;
        QList<AgentEvent> events;
        if (chunk == 0) {
            events += parser.feed(stream);
        } else {
            for (qsizetype i = 0; i < stream.size(); i += chunk)
                events +=
                    parser.feed(QByteArrayView(stream).sliced(i, qMin<qsizetype>(chunk, stream.size() - i)));
        }
        events += parser.finish();
        QCOMPARE(describe(events), expected);
        QCOMPARE(parser.skipped(), skipped);
        for (const AgentEvent &e : std::as_const(events)) {
            if (e.isError()) {
                if (!offending.isEmpty())
                    QCOMPARE(e.rawLine, offending);
                QVERIFY(!e.error.isEmpty());
                QVERIFY(e.lineNumber > 0);
                break;
            }
        }
    }

    void versionMismatchSaysWhatToDo() {
        AgentProtocolParser parser;
        const auto events = parser.feed(R"({"type":"hello","protocol":2})"
                                        "\n");
        QCOMPARE(events.size(), 1);
        QVERIFY(events[0].error.contains(u"update moetune"_s));
        QCOMPARE(parser.agentProtocol(), 2);
    }

    void lineNumbersAndSeq() {
        AgentProtocolParser parser;
        const auto events =
            parser.feed(QByteArray(kHello + "\n"
                                            R"({"type":"progress","done":1,"total":2,"seq":41})"
                                            "\n"));
        QCOMPARE(events.size(), 2);
        QCOMPARE(events[1].lineNumber, qint64(2));
        QCOMPARE(events[1].seq(), qint64(41));
        QCOMPARE(events[0].seq(), qint64(-1));
        QCOMPARE(parser.agentVersion(), u"0.1.0"_s);
    }

    void overlongLineIsBounded() {
        AgentProtocolParser parser;
        const QByteArray block(1 << 20, 'x');
        QList<AgentEvent> events;
        for (int i = 0; i < 20; ++i) // 20 MB without a newline
            events += parser.feed(block);
        events += parser.feed(QByteArray("\n" + kDone + "\n"));
        QCOMPARE(describe(events), (QStringList{u"!ParseError"_s, u"done"_s}));
        QVERIFY(events[0].rawLine.size() <= 4096);
        QVERIFY(events[0].error.contains(u"longer than"_s));
    }

    // Issue 45 point 2: a 40 MB result (an exhaustive up+down sweep of 40 batch sizes) travels as
    // result_part lines (remote_agent/moetune_agent/protocol.py result_lines) and comes out whole.
    void resultInParts_data() {
        QTest::addColumn<QString>("damage"); // "", "sha", "missing part", "reordered"
        QTest::newRow("whole") << QString();
        QTest::newRow("damaged") << u"sha"_s;
        QTest::newRow("a part missing") << u"missing part"_s;
        QTest::newRow("parts reordered") << u"reordered"_s;
    }
    void resultInParts() {
        QFETCH(QString, damage);
        QJsonArray measurements;
        const QJsonObject one{{"op"_L1, u"up"_s},
                              {"m"_L1, 4096},
                              {"median_us"_L1, 12.5},
                              {"error"_L1, u"a \"quoted\" \\ message"_s}};
        for (int i = 0; i < 450000; ++i) {
            QJsonObject m = one;
            m.insert("round"_L1, i);
            measurements.append(m);
        }
        const QJsonObject result{{"format"_L1, u"moetune-result"_s}, {"measurements"_L1, measurements}};
        const QByteArray text = QJsonDocument(result).toJson(QJsonDocument::Compact);
        QVERIFY(text.size() > 36 << 20);
        constexpr qsizetype part = 4 << 20;
        const qsizetype count = (text.size() + part - 1) / part;
        QList<QByteArray> lines;
        for (qsizetype i = 0; i < count; ++i)
            lines.append(
                QJsonDocument(QJsonObject{{"type"_L1, u"result_part"_s},
                                          {"run_id"_L1, u"r1"_s},
                                          {"index"_L1, i},
                                          {"count"_L1, count},
                                          {"data"_L1, QString::fromLatin1(text.mid(i * part, part))}})
                    .toJson(QJsonDocument::Compact));
        QByteArray sha = QCryptographicHash::hash(text, QCryptographicHash::Sha256).toHex();
        if (damage == "sha"_L1)
            sha[0] = sha[0] == '0' ? '1' : '0';
        else if (damage == "missing part"_L1)
            lines.removeAt(1);
        else if (damage == "reordered"_L1)
            lines.swapItemsAt(1, 2);
        lines.append(QJsonDocument(QJsonObject{{"type"_L1, u"result"_s},
                                               {"run_id"_L1, u"r1"_s},
                                               {"path"_L1, u"/runs/r1/result.json"_s},
                                               {"result"_L1, QJsonValue()},
                                               {"parts"_L1, count},
                                               {"chars"_L1, text.size()},
                                               {"sha256"_L1, QString::fromLatin1(sha)}})
                         .toJson(QJsonDocument::Compact));
        QByteArray stream = kHello + '\n';
        for (const QByteArray &l : std::as_const(lines)) {
            QVERIFY(l.size() < AgentProtocolParser::kMaxLineBytes);
            stream += l + '\n';
        }
        stream += kDone + '\n';
        AgentProtocolParser parser;
        QList<AgentEvent> events;
        for (qsizetype off = 0; off < stream.size(); off += 1 << 16)
            events += parser.feed(
                QByteArrayView(stream).sliced(off, qMin<qsizetype>(1 << 16, stream.size() - off)));
        events += parser.finish();
        if (damage.isEmpty()) {
            QCOMPARE(describe(events), (QStringList{u"hello"_s, u"result"_s, u"done"_s}));
            QCOMPARE(events[1].object.value("result"_L1).toObject(), result);
        } else {
            QVERIFY(describe(events).contains(u"!ParseError"_s));
            QVERIFY(!describe(events).contains(u"result"_s));
            const QString why = events[1].error;
            QVERIFY2(why.contains(u"out of order"_s) || why.contains(u"incomplete"_s) ||
                         why.contains(u"damaged"_s),
                     qPrintable(why));
        }
    }
};

QTEST_GUILESS_MAIN(TestAgentProtocolParser)
#include "tst_agentprotocolparser.moc"
