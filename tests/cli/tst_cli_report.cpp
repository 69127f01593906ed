// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// `moetune-cli report` end to end on the real binary: text, Markdown and PDF of the demo workspace (a
// real recorded H200 sweep) and of a real agent run folder from the synthetic backend (the labelled
// GPU test double); the PDF command runs without a display (no DISPLAY, offscreen chosen by the CLI).
#include "syntheticrun.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

class TstCliReport : public QObject {
    Q_OBJECT

private:
    struct Run {
        int code = -1;
        QString out;
        QString err;
    };
    QTemporaryDir m_dir;
    QString m_simulatedRun;

    Run cli(const QStringList &args) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // As on a server without a display: the command must pick the offscreen platform itself.
        env.remove(u"DISPLAY"_s);
        env.remove(u"WAYLAND_DISPLAY"_s);
        env.remove(u"QT_QPA_PLATFORM"_s);
        env.insert(u"HOME"_s, m_dir.filePath(u"home"_s));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(MOETUNE_CLI_PATH), args);
        if (!p.waitForFinished(120000))
            return {};
        return Run{p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
                   QString::fromUtf8(p.readAllStandardError())};
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QString error;
        m_simulatedRun = moetune::test::runSyntheticTune(
            QStringLiteral(MOETUNE_AGENT_PYZ), m_dir.filePath(u"agent"_s), QJsonArray{1, 64}, &error);
        QVERIFY2(!m_simulatedRun.isEmpty(), qPrintable(error));
    }

    void textAndMarkdown_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("expected");
        QTest::newRow("text") << u"text"_s << u"256    m32n128k128g1w4s2"_s;
        QTest::newRow("markdown") << u"markdown"_s
                                  << u"| 256 | `m32n128k128g1w4s2` | 349.3 | 490.5 | 1.40x | 274.2 | 79% |"_s;
    }
    void textAndMarkdown() {
        QFETCH(QString, format);
        QFETCH(QString, expected);
        const Run r =
            cli({u"report"_s, u"demo"_s, u"--run"_s, u"20261129-qwen3-h200-fast"_s, u"--format"_s, format});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(expected), qPrintable(r.out));
        QVERIFY(!r.out.contains(u"SIMULATED"_s));
    }

    void demoReportsItsHeadlineRun() {
        // The first report a user sees (no --run) is the run the app opens on, not the newest run (the
        // server-kernel run against SGLang's already tuned file, whose geomean is 1.00x).
        const Run r = cli({u"report"_s, u"demo"_s});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains(u"20261129-qwen3-h200-fast"_s), qPrintable(r.err));
        QVERIFY2(!r.out.contains(u"Geometric mean speedup: 1.00x"_s), qPrintable(r.out));
        QVERIFY2(r.out.contains(u"256    m32n128k128g1w4s2"_s), qPrintable(r.out));
    }

    void pdfOfTheDemo() {
        const QString pdf = m_dir.filePath(u"demo.pdf"_s);
        const Run r =
            cli({u"report"_s, u"demo"_s, u"--run"_s, u"20261129-qwen3-h200-fast"_s, u"--pdf"_s, pdf});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.startsWith(u"Wrote "_s));
        QProcess text;
        text.start(u"pdftotext"_s, {u"-layout"_s, pdf, u"-"_s});
        QVERIFY(text.waitForFinished(30000));
        const QString content = QString::fromUtf8(text.readAllStandardOutput());
        QVERIFY(QRegularExpression(u"4096 +m128n256k64g16w8s4 +910\\.7 +1424\\.3 +1\\.56x +281\\.4 +31%"_s)
                    .match(content)
                    .hasMatch());
    }

    void simulatedRunFolderGetsAMarkedName() {
        // The name given is the name written; the report and the message say SIMULATED.
        const Run r = cli({u"report"_s, m_simulatedRun, u"--pdf"_s, m_dir.filePath(u"sim.pdf"_s)});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(QFileInfo(m_dir.filePath(u"sim.pdf"_s)).size() > 1000);
        QVERIFY(!QFileInfo::exists(m_dir.filePath(u"SIMULATED-sim.pdf"_s)));
        QVERIFY(r.err.contains(u"the run is simulated"_s));
        // A folder as --pdf: the suggested name says SIMULATED too.
        const Run inFolder = cli({u"report"_s, m_simulatedRun, u"--pdf"_s, m_dir.path()});
        QCOMPARE(inFolder.code, 0);
        const QStringList made = QDir(m_dir.path()).entryList({u"SIMULATED-moetune-report-*.pdf"_s});
        QCOMPARE(made.size(), 1);
        const Run text = cli({u"report"_s, m_simulatedRun});
        QVERIFY(text.out.startsWith(u"SIMULATED"_s));
    }

    void badInputSaysWhy_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("expected");
        QTest::newRow("no argument") << QStringList{u"report"_s} << 2 << u"give one RUN or WORKSPACE"_s;
        QTest::newRow("missing folder")
            << QStringList{u"report"_s, u"/nonexistent/run"_s} << 2 << u"does not exist"_s;
        QTest::newRow("unknown run") << QStringList{u"report"_s, u"demo"_s, u"--run"_s, u"nope"_s} << 2
                                     << u"no run 'nope'"_s;
        QTest::newRow("bad format") << QStringList{u"report"_s, u"demo"_s, u"--format"_s, u"yaml"_s} << 2
                                    << u"--format must be text or markdown"_s;
        QTest::newRow("unwritable pdf")
            << QStringList{u"report"_s, u"demo"_s, u"--pdf"_s, u"/nonexistent/dir/r.pdf"_s} << 1
            << u"Could not write"_s;
    }
    void badInputSaysWhy() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, expected);
        const Run r = cli(args);
        QCOMPARE(r.code, code);
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TstCliReport)
#include "tst_cli_report.moc"
