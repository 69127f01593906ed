// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// A hostile host's probe strings through the real agent and the real moetune-cli: GPU names, process
// names, nvidia-smi's error text and config file names carrying terminal escape sequences, control
// characters, bidi overrides and floods. `probe` text output shows them cleaned (hostText); the JSON
// output keeps them exactly (escaped by JSON), so nothing is lost. TEST DOUBLES: nvidia-smi (a script
// printing what a hostile host's would) and the fake SGLang host (tests/support/fakesglanghost.h).
#include "clirun.h"
#include "fakesglanghost.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

namespace {

// The first character a terminal would act on instead of showing, or an empty string.
QString hiddenIn(const QString &s) {
    for (qsizetype i = 0; i < s.size(); ++i) {
        const QChar c = s[i];
        if (c == u'\n')
            continue;
        if (c.isHighSurrogate() && i + 1 < s.size() && s[i + 1].isLowSurrogate()) {
            ++i;
            continue;
        }
        if (c.unicode() < 0x20 || c.unicode() == 0x7f || c.category() == QChar::Other_Control ||
            c.category() == QChar::Other_Format || c.isSurrogate())
            return u"U+%1 at %2: ...%3..."_s.arg(uint(c.unicode()), 4, 16, QChar(u'0'))
                .arg(i)
                .arg(s.mid(std::max<qsizetype>(0, i - 30), 60));
    }
    return {};
}

const QByteArray kEsc = "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b[1;31m";
const QByteArray kRlo = "\xe2\x80\xae"; // U+202E RIGHT-TO-LEFT OVERRIDE
const QByteArray kC1Csi = "\xc2\x9b";   // U+009B, the one-character CSI

} // namespace

class TestHostileText : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<moetune::test::FakeSglangHost> m_host;
    QTemporaryDir m_dir;
    QString m_cli;
    QByteArray m_hostileFile;

    using Result = moetune::test::CliResult;
    Result probe(const QString &smi, const QString &format) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"MOETUNE_NVIDIA_SMI"_s, smi);
        return moetune::test::runCli(m_cli, {u"probe"_s, u"local"_s, u"--format"_s, format}, 120000, env);
    }
    QString writeSmi(const QString &name, const QByteArray &gpuLine, const QByteArray &appsLine, int rc,
                     const QByteArray &err) {
        const QString path = m_dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        // TEST DOUBLE for a hostile host's nvidia-smi: prints the bytes given, exactly.
        QFile data(path + u".gpu"_s);
        QFile apps(path + u".apps"_s);
        QFile errs(path + u".err"_s);
        if (!data.open(QIODevice::WriteOnly) || !apps.open(QIODevice::WriteOnly) ||
            !errs.open(QIODevice::WriteOnly))
            return {};
        data.write(gpuLine);
        apps.write(appsLine);
        errs.write(err);
        f.write("#!/bin/sh\n# TEST DOUBLE: a hostile host's nvidia-smi\ncase \"$1\" in\n"
                "  --query-gpu=*) cat \"$0.gpu\"; cat \"$0.err\" >&2; exit " +
                QByteArray::number(rc) +
                " ;;\n"
                "  --query-compute-apps=*) cat \"$0.apps\" ;;\nesac\nexit 0\n");
        f.close();
        QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        return path;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_host = std::make_unique<moetune::test::FakeSglangHost>();
        QString error;
        QVERIFY2(m_host->create(&error), qPrintable(error));
        m_cli = QCoreApplication::applicationDirPath() + u"/../../src/cli/moetune-cli"_s;
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
        // A config file whose name carries escape sequences and a bidi override, in the host's config tree.
        m_hostileFile = "E=8,N=64,device_name=" + kEsc + "NVIDIA_H200" + kRlo + "nosj.exe.json";
        QFile f(m_host->configRoot() + u"/triton_3_4_0/"_s + QFile::decodeName(m_hostileFile));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{}\n");
    }

    void probeText_data() {
        QTest::addColumn<QByteArray>("gpuLine");
        QTest::addColumn<QByteArray>("appsLine");
        QTest::addColumn<int>("rc");
        QTest::addColumn<QByteArray>("stderrText");
        QTest::addColumn<QString>("shown");  // what the text output must show, cleaned
        QTest::addColumn<QString>("rawKey"); // the JSON field that keeps the exact bytes
        QTest::addColumn<QByteArray>("raw");
        const QByteArray name = "NVIDIA H200" + kEsc + kRlo + "evil" + kC1Csi + "31m\x1b[0m";
        QTest::newRow("GPU name") << "0, " + name + ", GPU-1a2b, 143771, 1000, 9.0\n"_ba
                                  << "GPU-1a2b, 4242, python3, 1000\n"_ba << 0 << QByteArray()
                                  << u"GPU 0:       NVIDIA H200evil31m, "_s << u"raw_name"_s << name;
        const QByteArray proc = "python3" + kEsc + "\x1b[1A\x1b[2K" + kRlo + "gpj.exe";
        QTest::newRow("process name")
            << "0, NVIDIA H200, GPU-1a2b, 143771, 1000, 9.0\n"_ba
            << "GPU-1a2b, 4242, " + proc + ", 1000\n"
            << 0 << QByteArray() << u"pid 4242 python3gpj.exe: 1000 MiB"_s << u"process"_s << proc;
        const QByteArray flood = "NVIDIA " + QByteArray(200000, 'A');
        QTest::newRow("flood (200 kB GPU name)")
            << "0, " + flood + ", GPU-1a2b, 143771, 1000, 9.0\n"
            << QByteArray() << 0 << QByteArray()
            << u"NVIDIA %1… (%2 more characters)"_s.arg(QString(505, u'A')).arg(200007 - 512) << u"raw_name"_s
            << flood;
        const QByteArray failure = kEsc + "NVIDIA-SMI has failed" + kRlo + "\r\x1b[2KGPUs: 8 x H200";
        QTest::newRow("nvidia-smi error text")
            << QByteArray() << QByteArray() << 9 << failure + '\n'
            << u"GPUs:        none (NVIDIA-SMI has failed)"_s << u"gpu_error"_s << failure;
    }
    void probeText() {
        QFETCH(QByteArray, gpuLine);
        QFETCH(QByteArray, appsLine);
        QFETCH(int, rc);
        QFETCH(QByteArray, stderrText);
        QFETCH(QString, shown);
        QFETCH(QString, rawKey);
        QFETCH(QByteArray, raw);
        const QString smi = writeSmi(QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'_'),
                                     gpuLine, appsLine, rc, stderrText);
        QVERIFY(!smi.isEmpty());

        const Result text = probe(smi, u"text"_s);
        QVERIFY2(text.exitCode == 0 || text.exitCode == 1, qPrintable(text.err));
        const QString out = QString::fromUtf8(text.out);
        QVERIFY2(hiddenIn(out).isEmpty(), qPrintable(hiddenIn(out)));
        QVERIFY2(!text.out.contains('\x1b') && !text.out.contains(kC1Csi) && !text.out.contains(kRlo),
                 text.out.left(2000).constData());
        QVERIFY2(out.contains(shown), qPrintable(out.left(3000)));
        for (const QString &line : out.split(u'\n'))
            QVERIFY2(line.size() <= 600, qPrintable(u"a line of %1 characters"_s.arg(line.size())));
        // The config file's name is listed cleaned only in JSON (the text lists counts): see below.

        // JSON keeps every byte (escaped as JSON does): nothing the host said is lost.
        const Result json = probe(smi, u"json"_s);
        QVERIFY2(json.exitCode == 0 || json.exitCode == 1, qPrintable(json.err));
        QJsonParseError perr;
        const QJsonObject o = QJsonDocument::fromJson(json.out, &perr).object();
        QVERIFY2(perr.error == QJsonParseError::NoError, qPrintable(perr.errorString()));
        QString value;
        if (rawKey == u"gpu_error"_s) {
            value = o.value(rawKey).toString();
        } else {
            const QJsonObject gpu = o.value("gpus"_L1).toArray().first().toObject();
            value = rawKey == u"process"_s
                        ? gpu.value("processes"_L1).toArray().first().toObject().value("name"_L1).toString()
                        : gpu.value(rawKey).toString();
        }
        // The agent reads nvidia-smi's fields stripped of spaces; of its error text, the first line (Python's
        // splitlines: a CR ends a line too).
        QString expected = QString::fromUtf8(raw).trimmed();
        if (rawKey == u"gpu_error"_s)
            expected = expected.split(u'\n').first().split(u'\r').first();
        QVERIFY2(value == expected, qPrintable(u"JSON %1 = %2"_s.arg(rawKey, value.left(200))));
    }

    // Every field of the probe's JSON is exact; the text output never shows the config file's raw name.
    void configFileNames() {
        const QString smi =
            writeSmi(u"plain"_s, "0, NVIDIA H200, GPU-1a2b, 143771, 1000, 9.0\n", QByteArray(), 0, {});
        const Result json = probe(smi, u"json"_s);
        QVERIFY2(json.exitCode == 0 || json.exitCode == 1, qPrintable(json.err));
        QVERIFY2(QString::fromUtf8(json.out).contains(QString::fromUtf8(m_hostileFile)
                                                          .replace(u"\x1b"_s, u"\\u001b"_s)
                                                          .replace(u"\x07"_s, u"\\u0007"_s)),
                 json.out.left(4000).constData());
        const Result text = probe(smi, u"text"_s);
        QVERIFY2(!text.out.contains('\x1b') && !text.out.contains(kRlo), text.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestHostileText)
#include "tst_hostiletext.moc"
