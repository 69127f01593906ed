// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// hostText / hostProbeForDisplay: strings a hostile host sends in its probe (GPU and process names,
// paths, model names) are shown as one plain line: no terminal escape sequences, no control characters,
// no bidirectional overrides or invisible characters, no flood.
#include "core/tuning/hosttext.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

// Nothing a terminal or a text widget would act on instead of showing.
QString hiddenIn(const QString &s) {
    for (qsizetype i = 0; i < s.size(); ++i) {
        const QChar c = s[i];
        if (c.isHighSurrogate() && i + 1 < s.size() && s[i + 1].isLowSurrogate()) {
            ++i;
            continue;
        }
        if (c.unicode() < 0x20 || c.unicode() == 0x7f || c.category() == QChar::Other_Control ||
            c.category() == QChar::Other_Format || c.isSurrogate() || c.unicode() == 0x2028 ||
            c.unicode() == 0x2029)
            return u"U+%1 at %2"_s.arg(uint(c.unicode()), 4, 16, QChar(u'0')).arg(i);
    }
    return {};
}

} // namespace

class TestHostText : public QObject {
    Q_OBJECT
private slots:
    void hostile_data() {
        QTest::addColumn<QString>("raw");
        QTest::addColumn<QString>("shown");
        QTest::newRow("plain GPU name") << u"NVIDIA H200"_s << u"NVIDIA H200"_s;
        QTest::newRow("plain path, spaces, non-ASCII")
            << u"/home/jürgen/模型 dir/config.json"_s << u"/home/jürgen/模型 dir/config.json"_s;
        QTest::newRow("emoji (surrogate pair) kept") << u"GPU 🚀 0"_s << u"GPU 🚀 0"_s;
        QTest::newRow("SGR colour") << u"\x1b[1;31mNVIDIA H200\x1b[0m"_s << u"NVIDIA H200"_s;
        QTest::newRow("clear screen, cursor home") << u"\x1b[2J\x1b[HNVIDIA H200"_s << u"NVIDIA H200"_s;
        QTest::newRow("cursor up and erase line (rewrites earlier output)")
            << u"python3\x1b[1A\x1b[2KGPU 0: fine"_s << u"python3GPU 0: fine"_s;
        QTest::newRow("OSC title, BEL") << u"\x1b]0;owned\x07H200"_s << u"H200"_s;
        QTest::newRow("OSC 8 hyperlink")
            << u"\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"_s << u"click"_s;
        QTest::newRow("charset switch") << u"\x1b(0lqqk\x1b(B"_s << u"lqqk"_s;
        QTest::newRow("C1 CSI (U+009B)") << u"A\u009b31mB"_s << u"A31mB"_s;
        QTest::newRow("C1 OSC/ST (U+009D, U+009C)") << u"A\u009d0;t\u009cB"_s << u"A0;tB"_s;
        QTest::newRow("right-to-left override") << u"sglang\u202Enohtyp.exe"_s << u"sglangnohtyp.exe"_s;
        QTest::newRow("bidi isolates and marks")
            << u"\u2066a\u2067b\u2068c\u2069\u200Ed\u200F\u061C"_s << u"abcd"_s;
        QTest::newRow("zero-width and BOM")
            << u"NVI\u200BDIA\u200C \u200DH\u2060200\uFEFF"_s << u"NVIDIA H200"_s;
        QTest::newRow("newline injection")
            << u"H200\nServer:      pid 1, rm -rf /"_s << u"H200 Server:      pid 1, rm -rf /"_s;
        QTest::newRow("CR overwrite") << u"real name\rfake name"_s << u"real name fake name"_s;
        QTest::newRow("CRLF, tab, VT, FF, NEL, LS, PS")
            << u"a\r\nb\tc\vd\fe\u0085f\u2028g\u2029h"_s << u"a  b c d e f g h"_s;
        QTest::newRow("NUL, BEL, backspace, DEL") << u"H2\u0000\u0007\b\u007f00"_s << u"H200"_s;
        QTest::newRow("lone surrogates")
            << QString(u"A"_s + QChar(0xD800) + u"B"_s + QChar(0xDC00)) << u"AB"_s;
        QTest::newRow("only escapes") << u"\x1b[31m\x1b[0m"_s << QString();
        QTest::newRow("unterminated CSI") << u"name\x1b["_s << u"name"_s;
    }
    void hostile() {
        QFETCH(QString, raw);
        QFETCH(QString, shown);
        const QString got = hostText(raw);
        QCOMPARE(got, shown);
        QVERIFY2(hiddenIn(got).isEmpty(), qPrintable(hiddenIn(got)));
    }

    void overLong_data() {
        QTest::addColumn<QString>("raw");
        QTest::addColumn<qsizetype>("max");
        QTest::addColumn<QString>("shown");
        QTest::newRow("1 MB GPU name") << QString(1 << 20, u'A') << hostTextMaxChars
                                       << QString(hostTextMaxChars, u'A') +
                                              u"… (%1 more characters)"_s.arg((1 << 20) - hostTextMaxChars);
        QTest::newRow("exactly the limit") << QString(10, u'x') << qsizetype(10) << QString(10, u'x');
        QTest::newRow("escapes do not count")
            << u"\x1b[31m"_s + QString(10, u'x') << qsizetype(10) << QString(10, u'x');
        QTest::newRow("pair not split") << u"abc🚀🚀"_s << qsizetype(4) << u"abc🚀… (1 more characters)"_s;
        QTest::newRow("flood of bidi overrides")
            << QString(100000, QChar(0x202E)) + u"x"_s << hostTextMaxChars << u"x"_s;
    }
    void overLong() {
        QFETCH(QString, raw);
        QFETCH(qsizetype, max);
        QFETCH(QString, shown);
        QCOMPARE(hostText(raw, max), shown);
    }

    // Every string of a probe, nested ones and the raw JSON too, comes out clean; numbers untouched.
    void probeForDisplay() {
        const QString evil = u"\x1b[31mX\u202E\n\x1b]0;t\x07Y"_s;
        HostProbe p;
        p.hostName = evil;
        p.pythonExecutable = evil;
        p.configRoot = evil;
        p.userConfigFolder = evil;
        GpuInfo g;
        g.index = 3;
        g.memoryTotalMiB = 143771;
        g.name = evil;
        g.deviceName = evil;
        g.processes.append({4242, evil, 1000});
        p.gpus.append(g);
        p.tritonFolders.append({evil, std::nullopt, {evil, u"E=1,N=2,device_name=H200.json"_s}});
        p.configFiles = {evil};
        ServerProcess s;
        s.pid = 77;
        s.modelPath = evil;
        s.commandLine = evil;
        s.arguments = {evil};
        s.launch.logFile = evil;
        s.launch.environment.insert(evil, evil);
        p.servers.append(s);
        p.raw = QJsonObject{{"host"_L1, QJsonObject{{"os"_L1, evil}, {"cpu_count"_L1, 64}}},
                            {"gpu_error"_L1, evil},
                            {"list"_L1, QJsonArray{evil, 1}}};
        const HostProbe d = hostProbeForDisplay(p);
        const QString clean = u"X Y"_s;
        QCOMPARE(d.hostName, clean);
        QCOMPARE(d.pythonExecutable, clean);
        QCOMPARE(d.configRoot, clean);
        QCOMPARE(d.userConfigFolder, clean);
        QCOMPARE(d.gpus.first().name, clean);
        QCOMPARE(d.gpus.first().deviceName, clean);
        QCOMPARE(d.gpus.first().processes.first().name, clean);
        QCOMPARE(d.gpus.first().processes.first().pid, qint64(4242));
        QCOMPARE(d.gpus.first().index, 3);
        QCOMPARE(d.gpus.first().memoryTotalMiB, qint64(143771));
        QCOMPARE(d.tritonFolders.first().name, clean);
        QCOMPARE(d.tritonFolders.first().files, (QStringList{clean, u"E=1,N=2,device_name=H200.json"_s}));
        QCOMPARE(d.configFiles, QStringList{clean});
        QCOMPARE(d.servers.first().modelPath, clean);
        QCOMPARE(d.servers.first().commandLine, clean);
        QCOMPARE(d.servers.first().arguments, QStringList{clean});
        QCOMPARE(d.servers.first().launch.logFile, clean);
        QCOMPARE(d.servers.first().launch.environment.value(clean), clean);
        QCOMPARE(d.raw.value("host"_L1).toObject().value("os"_L1).toString(), clean);
        QCOMPARE(d.raw.value("host"_L1).toObject().value("cpu_count"_L1).toInt(), 64);
        QCOMPARE(d.raw.value("gpu_error"_L1).toString(), clean);
        QCOMPARE(d.raw.value("list"_L1).toArray().first().toString(), clean);
        // The original is left as it came: what the program acts on.
        QCOMPARE(p.configRoot, evil);
        const QString all = QString::fromUtf8(QJsonDocument(d.raw).toJson());
        QVERIFY(!all.contains(QChar(0x202E)));
    }
};

QTEST_GUILESS_MAIN(TestHostText)
#include "tst_hosttext.moc"
