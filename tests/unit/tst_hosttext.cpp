// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// hostText / hostProbeForDisplay: strings a hostile host sends in its probe (GPU and process names,
// paths, model names) are shown as one plain line: no terminal escape sequences, no control characters,
// no bidirectional overrides or invisible characters, no flood.
#include "core/diagnosis/diagnoser.h"
#include "core/host/hostmismatch.h"
#include "core/host/hostprobemerge.h"
#include "core/host/hosttext.h"
#include "core/host/preflight.h"

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

// hiddenIn for text of several lines (a finding's explanation may have its own line breaks).
QString hiddenInLines(const QString &s) {
    for (const QString &line : s.split(u'\n')) {
        const QString h = hiddenIn(line);
        if (!h.isEmpty())
            return h + u" in: "_s + line.left(80);
    }
    return {};
}

// A hostile host: every string it sends carries an escape sequence, a bidi override and a line break
// ("X", "Y" and the name around them survive as "X Y").
const QString kEvil = u"X\x1b[2J\x1b]0;owned\x07\u202E\nY"_s;

HostProbe hostileProbe() {
    HostProbe p;
    p.hostName = u"gpu-box "_s + kEvil;
    p.framework = Framework::SGLang;
    p.frameworkVersion = kEvil;
    p.tritonVersion = TritonVersion{3, 5, 0};
    p.configRoot = u"/opt/"_s + kEvil;
    p.pythonExecutable = kEvil;
    p.pythonVersion = kEvil;
    p.torchVersion = kEvil;
    GpuInfo g;
    g.index = 0;
    g.name = u"NVIDIA "_s + kEvil;
    g.deviceName = kEvil;
    g.memoryTotalMiB = 143771;
    g.memoryUsedMiB = 140000;
    g.processes.append({4242, u"sglang::scheduler "_s + kEvil, 140000});
    p.gpus.append(g);
    p.tritonFolders.append({u"triton_3_4_0 "_s + kEvil, TritonVersion{3, 4, 0}, {kEvil}});
    ServerProcess s;
    s.pid = 4242;
    s.framework = Framework::SGLang;
    s.tensorParallel = 1;
    s.modelPath = u"/models/"_s + kEvil;
    s.shape = MoeShape{128, 8, 2048, 768, std::nullopt, QString()};
    p.servers.append(s);
    p.raw = QJsonObject{{"gpu_error"_L1, kEvil}};
    return p;
}

const QByteArray kLogWarning =
    "[2026-12-01 10:00:00 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config "
    "file not found at /sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/"
    "triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200.json, you can create them with https://github.com/"
    "sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n"
    "[2026-12-01 10:00:00 TP1] Using default MoE kernel config. Performance might be sub-optimal! Config "
    "file not found at /sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/"
    "triton_3_6_0/E=128,N=768,device_name=NVIDIA_H200.json, you can create them with https://github.com/"
    "sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n"_ba;

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

    // The sentences built from a probe - diagnose --host's host findings (mergeHostProbe), the
    // log-and-host mismatches, the tune preflight - show the host's strings cleaned, and do show them.
    void hostFindingsClean() {
        const Diagnosis log = Diagnoser().diagnoseText(kLogWarning);
        QVERIFY(!log.targets.isEmpty());
        const Diagnosis d = mergeHostProbe(log, hostileProbe(), u"alias "_s + kEvil);
        int hostFindings = 0;
        QString all = d.summary;
        for (const Finding &f : d.findings) {
            if (!f.rule.startsWith(u"host-"_s))
                continue;
            ++hostFindings;
            for (const QString &text : {f.title, f.explanation, f.advice}) {
                QVERIFY2(hiddenInLines(text).isEmpty(), qPrintable(f.rule + u": "_s + hiddenInLines(text)));
                all += u'\n' + text;
            }
            for (const Evidence &e : f.evidence)
                QVERIFY2(hiddenIn(e.text).isEmpty(), qPrintable(f.rule + u": "_s + hiddenIn(e.text)));
        }
        QVERIFY(hostFindings >= 3);
        QVERIFY2(hiddenInLines(d.summary).isEmpty(), qPrintable(hiddenInLines(d.summary)));
        QVERIFY2(all.contains(u"alias X Y"_s), qPrintable(all));   // the host's name
        QVERIFY2(all.contains(u"NVIDIA X Y"_s), qPrintable(all));  // a GPU's name
        QVERIFY2(all.contains(u"/models/X Y"_s), qPrintable(all)); // the served model
        QVERIFY2(all.contains(u"/opt/X Y"_s), qPrintable(all));    // the config root
        QVERIFY2(!all.contains(QChar(0x1b)) && !all.contains(QChar(0x202E)), qPrintable(all));
        // The targets are the log's, untouched by the host's strings.
        QCOMPARE(d.targets.first().name.fileName(d.targets.first().framework),
                 log.targets.first().name.fileName(log.targets.first().framework));
    }
    void hostMismatchesClean() {
        const Diagnosis log = Diagnoser().diagnoseText(kLogWarning);
        const QStringList m = hostMismatches(log, hostileProbe(), u"alias "_s + kEvil);
        // Two ranks in the log, one GPU; the log tuned for NVIDIA_H200; Triton 3.6.0 against 3.5.0.
        QCOMPARE(m.size(), 3);
        for (const QString &sentence : m)
            QVERIFY2(hiddenIn(sentence).isEmpty(), qPrintable(hiddenIn(sentence) + u": "_s + sentence));
        QVERIFY2(m.join(u'|').contains(u"GPUs of alias X Y are NVIDIA_X_Y"_s), qPrintable(m.join(u'|')));
    }
    void preflightClean() {
        const Preflight p = Preflight::evaluate(hostileProbe(), {}, 10000);
        QCOMPARE(p.gpus.size(), 1);
        QCOMPARE(p.gpus.first().name, u"NVIDIA X Y"_s);
        QCOMPARE(p.gpus.first().holders.first().name, u"sglang::scheduler X Y"_s);
        QCOMPARE(p.gpus.first().holders.first().pid, qint64(4242));
        QVERIFY(p.gpus.first().heldByServer);
        QCOMPARE(p.gpuError, u"X Y"_s);
        QVERIFY(!p.canStart()); // 3.7 GiB free, 9.8 GiB needed
        for (const QString &line : p.problems + p.holderLines())
            QVERIFY2(hiddenIn(line).isEmpty(), qPrintable(hiddenIn(line) + u": "_s + line));
        QVERIFY2(p.problems.join(u'|').contains(u"sglang::scheduler X Y"_s),
                 qPrintable(p.problems.join(u'|')));
    }
};

QTEST_GUILESS_MAIN(TestHostText)
#include "tst_hosttext.moc"
