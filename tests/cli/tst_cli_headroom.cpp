// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// `moetune-cli headroom` end to end on the Local machine: the real binary deploys the real agent and runs
// its headroom check with the synthetic backend (SIMULATED numbers: the labelled test double for a GPU);
// text and JSON output, and the usage errors as sentences.
#include "clirun.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

using Run = moetune::test::CliResult;

class TestCliHeadroom : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;

    Run cli(const QStringList &args) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"HOME"_s, m_home.path());
        env.insert(u"MOETUNE_AGENT_PYZ"_s, QStringLiteral(MOETUNE_AGENT_PYZ));
        env.insert(u"XDG_CONFIG_HOME"_s, m_home.filePath(u"config"_s));
        env.remove(u"SSH_AUTH_SOCK"_s);
        return moetune::test::runCli(QStringLiteral(MOETUNE_CLI_PATH), args, 180000, env);
    }
    static QString fallbackLog() { return QFINDTESTDATA("data/sglang-fallback.log"); }
    static QStringList shape() {
        return {u"--framework"_s, u"sglang"_s,    u"--E"_s,           u"128"_s,          u"--N"_s,
                u"768"_s,         u"--K"_s,       u"2048"_s,          u"--topk"_s,       u"8"_s,
                u"--backend"_s,   u"synthetic"_s, u"--batch-sizes"_s, u"1,16,256,1024"_s};
    }

private slots:
    void initTestCase() { QVERIFY(m_home.isValid()); }

    void text() {
        const Run r = cli(QStringList{u"headroom"_s, u"local"_s} + shape());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.startsWith(u"SIMULATED: "_s), qPrintable(out));
        QVERIFY(out.contains(u"Likely gain"_s));
        QVERIFY(out.contains(u"best screened"_s));
        for (const char *m : {"     1 ", "    16 ", "   256 ", "  1024 "})
            QVERIFY2(out.contains(QLatin1StringView(m)), m);
        QVERIFY(r.err.contains(u"[SIMULATED]"_s)); // the progress lines say it too
    }

    void json() {
        const Run r = cli(QStringList{u"headroom"_s, u"local"_s, u"--format"_s, u"json"_s} + shape());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QVERIFY2(!o.isEmpty(), r.out.constData());
        QCOMPARE(o.value("simulated"_L1).toBool(), true);
        QVERIFY(o.value("verdict"_L1).toString().startsWith(u"SIMULATED: "_s));
        const QStringList kinds{u"worth_tuning"_s, u"some_gain"_s, u"little_to_gain"_s};
        QVERIFY(kinds.contains(o.value("kind"_L1).toString()));
        const QJsonObject h = o.value("headroom"_L1).toObject();
        QCOMPARE(h.value("sizes"_L1).toArray().size(), 4);
        QCOMPARE(o.value("spec"_L1).toObject().value("E"_L1).toInt(), 128);
        for (const QJsonValue &v : h.value("sizes"_L1).toArray())
            QVERIFY(v.toObject().value("gain"_L1).toDouble() >= 1.0);
    }

    void usage_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("sentence");
        QTest::newRow("no host") << QStringList{u"headroom"_s} << u"exactly one HOST"_s;
        QTest::newRow("bad E") << QStringList{u"headroom"_s, u"local"_s, u"--E"_s, u"x"_s} << u"--E wants"_s;
        QTest::newRow("missing K") << QStringList{u"headroom"_s, u"local"_s, u"--framework"_s, u"sglang"_s,
                                                  u"--E"_s,      u"8"_s,     u"--N"_s,         u"64"_s,
                                                  u"--topk"_s,   u"2"_s,     u"--backend"_s,   u"synthetic"_s}
                                   << u"K"_s;
        // The core's JobCheck, as on the Tune page: a job for another N than the log's target is refused.
        const QString log = fallbackLog();
        QTest::newRow("N differs from the log's")
            << QStringList{u"headroom"_s, u"local"_s, u"--from-log"_s, log,    u"--N"_s,       u"512"_s,
                           u"--K"_s,      u"7168"_s,  u"--topk"_s,     u"8"_s, u"--backend"_s, u"synthetic"_s}
            << u"N is 512 but the server wanted N=256"_s;
        // Other file names are a warning (stderr), printed before a refusal of the same job.
        QTest::newRow("tune: other dtype warned, no K refused")
            << QStringList{u"tune"_s,    u"local"_s,     u"--from-log"_s, log,
                           u"--dtype"_s, u"int8_w8a8"_s, u"--backend"_s,  u"synthetic"_s}
            << u"moetune-cli tune: warning: The server looks for E=257,N=256,device_name=NVIDIA_H200,"
               u"dtype=fp8_w8a8,block_shape=[128, 128].json, not E=257,N=256,device_name=NVIDIA_H200,"
               u"dtype=int8_w8a8,block_shape=[128, 128].json"_s;
        QTest::newRow("tune: no K refused")
            << QStringList{u"tune"_s, u"local"_s, u"--from-log"_s, log, u"--backend"_s, u"synthetic"_s}
            << u"K is unknown"_s;
    }
    void usage() {
        QFETCH(QStringList, args);
        QFETCH(QString, sentence);
        const Run r = cli(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(sentence), qPrintable(r.err));
    }

    // The job runs with a warning when its file names are not the ones the log's server looks for.
    void namesWarning() {
        const Run r = cli({u"headroom"_s, u"local"_s, u"--from-log"_s, fallbackLog(), u"--K"_s, u"7168"_s,
                           u"--topk"_s, u"8"_s, u"--backend"_s, u"synthetic"_s, u"--batch-sizes"_s, u"1,16"_s,
                           u"--dtype"_s, u"int8_w8a8"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(u"moetune-cli headroom: warning: The server looks for "_s),
                 qPrintable(r.err));
        QVERIFY2(r.err.contains(u"it would never read this file."_s), qPrintable(r.err));
        QVERIFY(QString::fromUtf8(r.out).startsWith(u"SIMULATED: "_s));
        // The names the server wanted: no warning.
        const Run same =
            cli({u"headroom"_s, u"local"_s, u"--from-log"_s, fallbackLog(), u"--K"_s, u"7168"_s, u"--topk"_s,
                 u"8"_s, u"--backend"_s, u"synthetic"_s, u"--batch-sizes"_s, u"1,16"_s});
        QVERIFY2(same.exitCode == 0, qPrintable(same.err));
        QVERIFY2(!same.err.contains(u"warning"_s), qPrintable(same.err));
    }
};

QTEST_GUILESS_MAIN(TestCliHeadroom)
#include "tst_cli_headroom.moc"
