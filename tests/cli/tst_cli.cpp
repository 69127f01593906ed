// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Runs the real moetune-cli binary on sample logs (tests/cli/data) and checks what a script would rely
// on: exit statuses, error messages, the JSON targets and schema, Markdown, text, stdin and colour.
#include "jsonschemacheck.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace Qt::StringLiterals;

namespace {

struct CliResult {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

QString data(const QString &name) {
    return QFINDTESTDATA(u"data/"_s + name);
}

QString sampleLog(const QString &name) { // the shared sample logs (tests/data/logs)
    return QStringLiteral(MOETUNE_TEST_DATA_DIR "/logs/") + name;
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private:
    // Runs moetune-cli with a private config folder, so the developer's own rule files never leak in.
    CliResult run(const QStringList &args, const QString &stdinFile = {}, const QStringList &extraEnv = {},
                  const QString &program = QStringLiteral(MOETUNE_CLI_PATH)) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"XDG_CONFIG_HOME"_s, m_config.path());
        env.remove(u"NO_COLOR"_s);
        for (const QString &kv : extraEnv)
            env.insert(kv.section(u'=', 0, 0), kv.section(u'=', 1));
        p.setProcessEnvironment(env);
        if (!stdinFile.isEmpty())
            p.setStandardInputFile(stdinFile);
        else
            p.setStandardInputFile(QProcess::nullDevice());
        p.start(program, args);
        CliResult r;
        if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit) {
            qWarning() << "moetune-cli did not finish:" << p.errorString();
            return r;
        }
        r.exitCode = p.exitCode();
        r.out = p.readAllStandardOutput();
        r.err = p.readAllStandardError();
        return r;
    }

    QJsonObject diagnoseJson(const QString &file) {
        const CliResult r = run({u"diagnose"_s, file, u"--format"_s, u"json"_s});
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(r.out, &error);
        if (error.error != QJsonParseError::NoError)
            qWarning() << "not JSON:" << error.errorString() << r.out.left(400) << r.err;
        return doc.object();
    }

    QTemporaryDir m_config;

private slots:
    void initTestCase() {
        QVERIFY(m_config.isValid());
        QVERIFY2(QFileInfo::exists(QStringLiteral(MOETUNE_CLI_PATH)), MOETUNE_CLI_PATH);
        QVERIFY(!data(u"sglang-new.log"_s).isEmpty());
    }

    void exitStatus_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stderrContains"); // empty: stderr must be empty

        const QString d = u"diagnose"_s;
        QTest::newRow("sglang new wording") << QStringList{d, data(u"sglang-new.log"_s)} << 1 << QString();
        QTest::newRow("sglang fallback") << QStringList{d, data(u"sglang-fallback.log"_s)} << 1 << QString();
        QTest::newRow("sglang old wording") << QStringList{d, data(u"sglang-old.log"_s)} << 1 << QString();
        QTest::newRow("vllm") << QStringList{d, data(u"vllm.log"_s)} << 1 << QString();
        QTest::newRow("messy paste") << QStringList{d, data(u"messy-paste.log"_s)} << 1 << QString();
        QTest::newRow("clean") << QStringList{d, data(u"clean.log"_s)} << 0 << QString();
        // A followed log across a restart: the exit status is that of the latest start.
        QTest::newRow("restart after a push, fixed")
            << QStringList{d, data(u"restart-fixed.log"_s)} << 0 << QString();
        QTest::newRow("restart, still untuned")
            << QStringList{d, data(u"restart-still-untuned.log"_s)} << 1 << QString();
        QTest::newRow("deterministic (info only)")
            << QStringList{d, data(u"deterministic.log"_s)} << 0 << QString();
        QTest::newRow("clean json") << QStringList{d, u"--format=json"_s, data(u"clean.log"_s)} << 0
                                    << QString();
        QTest::newRow("findings markdown")
            << QStringList{d, u"-f"_s, u"markdown"_s, data(u"vllm.log"_s)} << 1 << QString();
        QTest::newRow("missing file")
            << QStringList{d, u"/nonexistent/server.log"_s} << 2 << u"no such file"_s;
        QTest::newRow("directory") << QStringList{d, QFileInfo(data(u"clean.log"_s)).absolutePath()} << 2
                                   << u"is a directory"_s;
        QTest::newRow("binary file") << QStringList{d, data(u"binary.bin"_s)} << 2 << u"binary file"_s;
        QTest::newRow("unknown format") << QStringList{d, u"--format"_s, u"xml"_s, data(u"clean.log"_s)} << 2
                                        << u"unknown --format 'xml'"_s;
        QTest::newRow("two files") << QStringList{d, data(u"clean.log"_s), data(u"vllm.log"_s)} << 2
                                   << u"one log at a time"_s;
        QTest::newRow("unknown option") << QStringList{d, u"--bogus"_s} << 2 << u"bogus"_s;
        QTest::newRow("missing rules dir")
            << QStringList{d, u"--rules"_s, u"/nonexistent/rules"_s, data(u"clean.log"_s)} << 2
            << u"no such directory"_s;
        QTest::newRow("no command") << QStringList{} << 2 << u"Usage: moetune-cli <command>"_s;
        QTest::newRow("unknown command")
            << QStringList{u"frobnicate"_s} << 2 << u"unknown command 'frobnicate'"_s;
        QTest::newRow("help") << QStringList{u"--help"_s} << 0 << QString();
        QTest::newRow("help diagnose") << QStringList{u"help"_s, d} << 0 << QString();
        QTest::newRow("diagnose --help") << QStringList{d, u"--help"_s} << 0 << QString();
        QTest::newRow("version") << QStringList{u"--version"_s} << 0 << QString();
        QTest::newRow("empty stdin") << QStringList{d, u"-"_s} << 0 << QString();
    }

    void exitStatus() {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, stderrContains);
        const CliResult r = run(args);
        QVERIFY2(r.exitCode == exitCode,
                 qPrintable(u"exit %1, stderr: %2"_s.arg(r.exitCode).arg(QString::fromUtf8(r.err))));
        if (stderrContains.isEmpty()) {
            QVERIFY2(r.err.isEmpty(), r.err.constData());
            QVERIFY(!r.out.isEmpty());
        } else {
            QVERIFY2(QString::fromUtf8(r.err).contains(stderrContains), r.err.constData());
            QVERIFY2(r.out.isEmpty(), r.out.constData()); // an error prints no half result on stdout
        }
    }

    // A followed log across a restart: the summary and counts speak of the latest start; the earlier
    // start's warning is listed as such.
    void followedLogAcrossARestart_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("summary");
        QTest::addColumn<QString>("counts");
        QTest::newRow("fixed") << u"restart-fixed.log"_s
                               << u"Latest of 2 server starts (from line 6): No problems found in 10 lines"_s
                               << u"0 error(s), 0 warning(s), 4 info"_s;
        QTest::newRow("still untuned")
            << u"restart-still-untuned.log"_s
            << u"Latest of 2 server starts (from line 6): 1 MoE config untuned on NVIDIA_H200 under Triton 3.6.0"_s
            << u"0 error(s), 2 warning(s)"_s;
    }

    void followedLogAcrossARestart() {
        QFETCH(QString, file);
        QFETCH(QString, summary);
        QFETCH(QString, counts);
        const CliResult r = run({u"diagnose"_s, u"--no-color"_s, data(file)});
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.startsWith(summary), qPrintable(out.left(300)));
        QVERIFY2(out.contains(counts), qPrintable(out.left(300)));
        QVERIFY2(out.contains(u"(earlier start 1 of 2)"_s), qPrintable(out));
        QVERIFY2(out.contains(u"Server ready at 10:01:"_s), qPrintable(out));
        const CliResult j = run({u"diagnose"_s, u"--format"_s, u"json"_s, data(file)});
        const QJsonObject root = QJsonDocument::fromJson(j.out).object();
        QCOMPARE(root.value(u"starts"_s).toArray().size(), 2);
        QCOMPARE(root.value(u"starts"_s).toArray().last().toObject().value(u"line"_s).toInt(), 6);
    }

    // diagnose is a plain core application: it runs where a GUI one would abort (no display at all).
    void diagnoseNeedsNoDisplay() {
        const CliResult r = run({u"diagnose"_s, data(u"sglang-new.log"_s), u"--format"_s, u"json"_s}, {},
                                {u"QT_QPA_PLATFORM=xcb"_s, u"DISPLAY="_s, u"WAYLAND_DISPLAY="_s});
        QVERIFY2(r.exitCode == 1, r.err.constData());
        QVERIFY(QJsonDocument::fromJson(r.out).isObject());
    }

    void helpAndVersion() {
        const CliResult help = run({u"--help"_s});
        QVERIFY(help.out.contains("diagnose"));
        QVERIFY(help.out.contains("Exit status"));
        const CliResult dhelp = run({u"diagnose"_s, u"--help"_s});
        QVERIFY(dhelp.out.startsWith("Usage: moetune-cli diagnose [options] [FILE|-]"));
        QVERIFY(dhelp.out.contains("--format"));
        const CliResult version = run({u"--version"_s});
        QVERIFY(version.out.startsWith("moetune-cli " MOETUNE_VERSION));
    }

    void jsonTargets_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("framework");
        QTest::addColumn<int>("experts");
        QTest::addColumn<int>("n");
        QTest::addColumn<QString>("device");
        QTest::addColumn<QJsonValue>("dtype");
        QTest::addColumn<QJsonValue>("blockShape");
        QTest::addColumn<QJsonValue>("tritonFolder");
        QTest::addColumn<QJsonValue>("fallbackFolder");
        QTest::addColumn<bool>("upMissing");
        QTest::addColumn<bool>("downMissing");
        QTest::addColumn<int>("occurrences"); // of the finding about the up file
        QTest::addColumn<QStringList>("sources");

        const QJsonValue null(QJsonValue::Null);
        const QJsonValue block{QJsonArray{128, 128}};
        QTest::newRow("sglang new: 8 ranks, up and down")
            << u"sglang-new.log"_s << u"sglang"_s << 128 << 768 << u"NVIDIA_H200"_s << null << null
            << QJsonValue(u"triton_3_6_0"_s) << null << true << true << 8
            << QStringList{u"TP0"_s, u"TP1"_s, u"TP2"_s, u"TP3"_s, u"TP4"_s, u"TP5"_s, u"TP6"_s, u"TP7"_s};
        QTest::newRow("sglang fallback, fp8 block")
            << u"sglang-fallback.log"_s << u"sglang"_s << 257 << 256 << u"NVIDIA_H200"_s
            << QJsonValue(u"fp8_w8a8"_s) << block << QJsonValue(u"triton_3_6_0"_s)
            << QJsonValue(u"triton_3_4_0"_s) << false << false << 4
            << QStringList{u"TP0"_s, u"TP1"_s, u"TP2"_s, u"TP3"_s};
        QTest::newRow("sglang old wording")
            << u"sglang-old.log"_s << u"sglang"_s << 64 << 704 << u"NVIDIA_H20-3e"_s
            << QJsonValue(u"fp8_w8a8"_s) << null << QJsonValue(u""_s) << null << true << false << 2
            << QStringList{u"TP0"_s, u"TP1"_s};
        QTest::newRow("vllm, both prefixes")
            << u"vllm.log"_s << u"vllm"_s << 256 << 256 << u"NVIDIA_H200"_s << QJsonValue(u"fp8_w8a8"_s)
            << block << QJsonValue(u""_s) << null << true << false << 2
            << QStringList{u"EngineCore_DP0 pid=4105"_s, u"main"_s};
        QTest::newRow("messy paste: CRLF, ANSI, wrapped path")
            << u"messy-paste.log"_s << u"sglang"_s << 160 << 192 << u"NVIDIA_H200"_s << null << null
            << QJsonValue(u"triton_3_6_0"_s) << null << true << false << 1 << QStringList{u"TP0"_s};
    }

    void jsonTargets() {
        QFETCH(QString, file);
        QFETCH(QString, framework);
        QFETCH(int, experts);
        QFETCH(int, n);
        QFETCH(QString, device);
        QFETCH(QJsonValue, dtype);
        QFETCH(QJsonValue, blockShape);
        QFETCH(QJsonValue, tritonFolder);
        QFETCH(QJsonValue, fallbackFolder);
        QFETCH(bool, upMissing);
        QFETCH(bool, downMissing);
        QFETCH(int, occurrences);
        QFETCH(QStringList, sources);

        const QJsonObject d = diagnoseJson(data(file));
        const QJsonArray targets = d.value(u"targets"_s).toArray();
        QCOMPARE(targets.size(), 1); // up and down of one shape are one target
        const QJsonObject t = targets.first().toObject();
        QCOMPARE(t.value(u"framework"_s).toString(), framework);
        QCOMPARE(t.value(u"E"_s).toInt(), experts);
        QCOMPARE(t.value(u"N"_s).toInt(), n);
        QCOMPARE(t.value(u"device_name"_s).toString(), device);
        QCOMPARE(t.value(u"dtype"_s), dtype);
        QCOMPARE(t.value(u"block_shape"_s), blockShape);
        QCOMPARE(t.value(u"triton_folder"_s), tritonFolder);
        QCOMPARE(t.value(u"fallback_folder"_s), fallbackFolder);
        QCOMPARE(t.value(u"up_missing"_s).toBool(), upMissing);
        QCOMPARE(t.value(u"down_missing"_s).toBool(), downMissing);
        QVERIFY(t.value(u"up_path"_s).toString().endsWith(u".json"_s));

        // The finding about the up file carries the same target and counts every rank once.
        const QJsonArray findings = d.value(u"findings"_s).toArray();
        QJsonObject up;
        for (const QJsonValue &v : findings) {
            const QJsonObject f = v.toObject();
            if (f.value(u"target"_s).isObject() && f.value(u"rule"_s).toString() != u"moe-down-missing"_s &&
                f.value(u"severity"_s).toString() != u"info"_s) {
                up = f;
                break;
            }
        }
        QVERIFY2(!up.isEmpty(), QJsonDocument(d).toJson().constData());
        QCOMPARE(up.value(u"occurrences"_s).toInt(), occurrences);
        QStringList seen;
        for (const QJsonValue &s : up.value(u"sources"_s).toArray())
            seen += s.toString();
        QCOMPARE(seen, sources);
        QCOMPARE(up.value(u"target"_s).toObject().value(u"E"_s).toInt(), experts);
        for (const QJsonValue &e : up.value(u"evidence"_s).toArray()) {
            const QJsonObject ev = e.toObject();
            QVERIFY(ev.value(u"line"_s).toInteger() >= 1);
            QVERIFY(ev.value(u"line"_s).toInteger() <= d.value(u"lines_read"_s).toInteger());
        }
        QVERIFY(!d.value(u"summary"_s).toString().isEmpty());
    }

    void rulesFound_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("severity");
        QTest::addColumn<int>("occurrences");
        QTest::newRow("untuned, 8 ranks") << u"sglang-new.log"_s << u"moe-untuned"_s << u"warning"_s << 8;
        QTest::newRow("down missing") << u"sglang-new.log"_s << u"moe-down-missing"_s << u"warning"_s << 8;
        QTest::newRow("nothing loaded from the triton folder")
            << u"sglang-new.log"_s << u"triton-folder-no-config"_s << u"warning"_s << 16;
        QTest::newRow("kv cache") << u"sglang-new.log"_s << u"kv-cache-size"_s << u"info"_s << 8;
        QTest::newRow("fallback") << u"sglang-fallback.log"_s << u"moe-fallback"_s << u"warning"_s << 4;
        QTest::newRow("block fp8 gemm")
            << u"sglang-fallback.log"_s << u"w8a8-block-fp8-untuned"_s << u"warning"_s << 4;
        QTest::newRow("old wording") << u"sglang-old.log"_s << u"moe-untuned"_s << u"warning"_s << 2;
        QTest::newRow("vllm") << u"vllm.log"_s << u"moe-untuned"_s << u"warning"_s << 2;
        QTest::newRow("deterministic: info, exit 0")
            << u"deterministic.log"_s << u"deterministic-default-config"_s << u"info"_s << 2;
    }

    void rulesFound() {
        QFETCH(QString, file);
        QFETCH(QString, rule);
        QFETCH(QString, severity);
        QFETCH(int, occurrences);
        const CliResult r = run({u"diagnose"_s, u"--format=json"_s, data(file)});
        const QJsonObject d = QJsonDocument::fromJson(r.out).object();
        const QJsonObject counts = d.value(u"counts"_s).toObject();
        const bool actionable = counts.value(u"warning"_s).toInt() + counts.value(u"error"_s).toInt() > 0;
        QCOMPARE(r.exitCode, actionable ? 1 : 0);
        for (const QJsonValue &v : d.value(u"findings"_s).toArray()) {
            const QJsonObject f = v.toObject();
            if (f.value(u"rule"_s).toString() != rule)
                continue;
            QCOMPARE(f.value(u"severity"_s).toString(), severity);
            QCOMPARE(f.value(u"occurrences"_s).toInt(), occurrences);
            return;
        }
        QFAIL(qPrintable(u"no finding of rule "_s + rule + u" in "_s + QString::fromUtf8(r.out)));
    }

    void jsonMatchesSchema_data() {
        QTest::addColumn<QString>("file");
        for (const char *f : {"sglang-new.log", "sglang-fallback.log", "sglang-old.log", "vllm.log",
                              "messy-paste.log", "clean.log", "deterministic.log"})
            QTest::newRow(f) << QString::fromLatin1(f);
    }

    void jsonMatchesSchema() {
        QFETCH(QString, file);
        QFile schemaFile(QStringLiteral(MOETUNE_JSON_SCHEMA));
        QVERIFY(schemaFile.open(QIODevice::ReadOnly));
        const QJsonObject schema = QJsonDocument::fromJson(schemaFile.readAll()).object();
        QCOMPARE(schema.value(u"$schema"_s).toString(), u"https://json-schema.org/draft/2020-12/schema"_s);
        const QJsonObject d = diagnoseJson(data(file));
        QVERIFY(!d.isEmpty());
        const QStringList errors = JsonSchemaCheck(schema).validate(d);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
    }

    void schemaCheckRejectsDrift() {
        // The check itself must fail on what it is there to catch.
        QFile schemaFile(QStringLiteral(MOETUNE_JSON_SCHEMA));
        QVERIFY(schemaFile.open(QIODevice::ReadOnly));
        const JsonSchemaCheck check(QJsonDocument::fromJson(schemaFile.readAll()).object());
        QJsonObject d = diagnoseJson(data(u"sglang-new.log"_s));
        QVERIFY(check.validate(d).isEmpty());
        QJsonObject broken = d;
        broken.remove(u"findings"_s);
        QVERIFY(!check.validate(broken).isEmpty());
        broken = d;
        QJsonArray findings = broken.value(u"findings"_s).toArray();
        QJsonObject f = findings.first().toObject();
        f.insert(u"severity"_s, u"catastrophic"_s);
        findings.replace(0, f);
        broken.insert(u"findings"_s, findings);
        QVERIFY(!check.validate(broken).isEmpty());
    }

    void markdown_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("contains");
        QTest::newRow("sglang new") << u"sglang-new.log"_s
                                    << QStringList{u"# "_s, u"| "_s, u"E=128"_s, u"triton_3_6_0"_s};
        QTest::newRow("vllm") << u"vllm.log"_s << QStringList{u"# "_s, u"| "_s, u"E=256"_s, u"fp8_w8a8"_s};
    }

    void markdown() {
        QFETCH(QString, file);
        QFETCH(QStringList, contains);
        const CliResult r = run({u"diagnose"_s, u"--format"_s, u"markdown"_s, data(file)});
        QCOMPARE(r.exitCode, 1);
        const QString md = QString::fromUtf8(r.out);
        for (const QString &c : contains)
            QVERIFY2(md.contains(c), qPrintable(c + u" not in:\n"_s + md));
        QVERIFY(md.contains(u"\n|"_s)); // a table row starts a line
        QVERIFY(!md.contains(u"\x1b["_s));
    }

    void textOutput_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("sglang new") << u"sglang-new.log"_s;
        QTest::newRow("sglang fallback") << u"sglang-fallback.log"_s;
        QTest::newRow("vllm") << u"vllm.log"_s;
    }

    void textOutput() {
        QFETCH(QString, file);
        const QJsonObject d = diagnoseJson(data(file));
        const CliResult r = run({u"diagnose"_s, u"--evidence=0"_s, data(file)});
        QCOMPARE(r.exitCode, 1);
        const QString text = QString::fromUtf8(r.out);
        QVERIFY(text.startsWith(d.value(u"summary"_s).toString() + u'\n'));
        for (const QJsonValue &v : d.value(u"findings"_s).toArray()) {
            const QJsonObject f = v.toObject();
            QVERIFY2(text.contains(f.value(u"severity"_s).toString().toUpper() + u' '), qPrintable(text));
            QVERIFY(text.contains(f.value(u"title"_s).toString()));
            QVERIFY(text.contains(u"seen %1 time"_s.arg(f.value(u"occurrences"_s).toInt())));
            for (const QJsonValue &e : f.value(u"evidence"_s).toArray())
                QVERIFY(text.contains(QString::number(e.toObject().value(u"line"_s).toInteger()) + u" | "_s));
            if (f.value(u"target"_s).isObject()) {
                const QJsonObject t = f.value(u"target"_s).toObject();
                QVERIFY(text.contains(t.value(u"device_name"_s).toString()));
                if (t.value(u"kernel"_s).toString() == u"fused_moe"_s)
                    QVERIFY(text.contains(u"experts (E)   "_s + QString::number(t.value(u"E"_s).toInt())));
                else // the dense block-FP8 GEMM: N and K, no experts
                    QVERIFY(text.contains(u"K             "_s + QString::number(t.value(u"K"_s).toInt())));
            }
            if (!f.value(u"advice"_s).toString().isEmpty())
                QVERIFY(text.contains(u"advice:"_s));
        }
    }

    void evidenceLimit_data() {
        QTest::addColumn<QStringList>("flags");
        QTest::addColumn<QStringList>("shown");
        QTest::addColumn<QString>("more");
        // The first line and the latest ones, with how many lines between them were left out.
        QTest::newRow("default: 3 lines") << QStringList{} << QStringList{u"19 | "_s, u"25 | "_s, u"26 | "_s}
                                          << u"... 5 lines left out (line 20, 21, 22, 23, 24)"_s;
        QTest::newRow("--evidence 1: the latest")
            << QStringList{u"--evidence"_s, u"1"_s} << QStringList{u"26 | "_s}
            << u"... 7 lines left out (line 19, 20, 21, 22, 23, 24, 25)"_s;
        QTest::newRow("--evidence 0: all")
            << QStringList{u"--evidence=0"_s} << QStringList{u"19 | "_s, u"22 | "_s, u"26 | "_s} << QString();
    }

    void evidenceLimit() {
        QFETCH(QStringList, flags);
        QFETCH(QStringList, shown);
        QFETCH(QString, more);
        const CliResult r = run(QStringList{u"diagnose"_s, data(u"sglang-new.log"_s)} + flags);
        QCOMPARE(r.exitCode, 1);
        // The first finding: the untuned up config printed by TP0..TP7 on lines 19-26.
        const QString text = QString::fromUtf8(r.out);
        const QString first = text.section(u"\n\n"_s, 1, 1);
        for (const QString &s : shown)
            QVERIFY2(first.contains(s), qPrintable(first));
        if (more.isEmpty())
            QVERIFY(!first.contains(u"... "_s));
        else
            QVERIFY2(first.contains(more), qPrintable(first));
        QVERIFY(!first.contains(u"27 | "_s)); // line 27 is the down warning: another finding
    }

    void badEvidenceCount() {
        const CliResult r = run({u"diagnose"_s, u"--evidence"_s, u"many"_s, data(u"clean.log"_s)});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("--evidence wants a number"));
    }

    void colour_data() {
        QTest::addColumn<QStringList>("flags");
        QTest::addColumn<QStringList>("env");
        QTest::addColumn<bool>("escapes");
        QTest::newRow("not a tty: plain") << QStringList{} << QStringList{} << false;
        QTest::newRow("--no-color") << QStringList{u"--no-color"_s} << QStringList{} << false;
        QTest::newRow("--color forces") << QStringList{u"--color"_s} << QStringList{} << true;
        QTest::newRow("--no-color wins")
            << QStringList{u"--color"_s, u"--no-color"_s} << QStringList{} << false;
        QTest::newRow("NO_COLOR, not a tty") << QStringList{} << QStringList{u"NO_COLOR=1"_s} << false;
        QTest::newRow("json never coloured")
            << QStringList{u"--color"_s, u"--format=json"_s} << QStringList{} << false;
    }

    void colour() {
        QFETCH(QStringList, flags);
        QFETCH(QStringList, env);
        QFETCH(bool, escapes);
        const CliResult r = run(QStringList{u"diagnose"_s, data(u"messy-paste.log"_s)} + flags, {}, env);
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.out.contains("\x1b["), escapes);
    }

    void stdinInput_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("args");
        for (const char *f : {"sglang-new.log", "vllm.log", "messy-paste.log", "clean.log"}) {
            QTest::newRow(qPrintable(QString::fromLatin1(f) + u" via -"_s))
                << QString::fromLatin1(f) << QStringList{u"diagnose"_s, u"-"_s, u"--format=json"_s};
            QTest::newRow(qPrintable(QString::fromLatin1(f) + u" piped, no FILE"_s))
                << QString::fromLatin1(f) << QStringList{u"diagnose"_s, u"--format=json"_s};
        }
    }

    void stdinInput() {
        QFETCH(QString, file);
        QFETCH(QStringList, args);
        const CliResult fromFile = run({u"diagnose"_s, data(file), u"--format=json"_s});
        const CliResult fromStdin = run(args, data(file));
        QCOMPARE(fromStdin.exitCode, fromFile.exitCode);
        QVERIFY2(fromStdin.err.isEmpty(), fromStdin.err.constData());
        const QJsonObject a = QJsonDocument::fromJson(fromFile.out).object();
        const QJsonObject b = QJsonDocument::fromJson(fromStdin.out).object();
        QVERIFY(!a.isEmpty());
        QCOMPARE(b, a);
    }

    void binaryOnStdin() {
        const CliResult r = run({u"diagnose"_s, u"-"_s}, data(u"binary.bin"_s));
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("stdin looks like a binary file"));
        QVERIFY(r.err.contains("NUL byte at offset 31"));
    }

    void processSubstitution() {
        // `moetune-cli diagnose <(kubectl logs ...)` hands over /dev/fd/N, a pipe that can be read once.
        const QString bash = QStandardPaths::findExecutable(u"bash"_s);
        if (bash.isEmpty())
            QSKIP("bash is not installed");
        const QString script = u"exec \"$0\" diagnose --format=json <(cat \"$1\")"_s;
        const CliResult piped =
            run({u"-c"_s, script, QStringLiteral(MOETUNE_CLI_PATH), data(u"sglang-new.log"_s)}, {}, {}, bash);
        QCOMPARE(piped.exitCode, 1);
        const QJsonObject fromFile = diagnoseJson(data(u"sglang-new.log"_s));
        QCOMPARE(QJsonDocument::fromJson(piped.out).object(), fromFile);
    }

    void slowPipe() {
        // A producer that writes line by line (kubectl logs -f, ssh) after more than the 64 KiB the binary
        // check reads first: the wrapped warning at the end must still be rejoined and found.
        const QString bash = QStandardPaths::findExecutable(u"bash"_s);
        if (bash.isEmpty())
            QSKIP("bash is not installed");
        QTemporaryDir dir;
        const QString filler = dir.filePath(u"filler.log"_s);
        const QString whole = dir.filePath(u"whole.log"_s);
        QFile f(filler);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (int i = 0; i < 1500; ++i)
            f.write(QByteArray(
                "[2026-03-02 10:15:02 TP0] Decode batch. #running-req: 3, #token: 2817, token usage: "
                "0.00, cuda graph: True, gen throughput (token/s): 412.33, #queue-req: 0, \n"));
        f.close();
        QFile messy(data(u"messy-paste.log"_s));
        QVERIFY(messy.open(QIODevice::ReadOnly));
        QVERIFY(QFile::copy(filler, whole));
        QFile w(whole);
        QVERIFY(w.open(QIODevice::Append));
        w.write(messy.readAll());
        w.close();
        const QString script =
            u"{ cat \"$1\"; while IFS= read -r l; do printf '%s\\n' \"$l\"; sleep 0.02; done < \"$2\"; }"
            u" | \"$0\" diagnose --format=json -"_s;
        const CliResult piped =
            run({u"-c"_s, script, QStringLiteral(MOETUNE_CLI_PATH), filler, data(u"messy-paste.log"_s)}, {},
                {}, bash);
        QCOMPARE(piped.exitCode, 1);
        const QJsonObject fromFile = diagnoseJson(whole);
        QCOMPARE(fromFile.value(u"targets"_s).toArray().size(), 1);
        QCOMPARE(QJsonDocument::fromJson(piped.out).object(), fromFile);
    }

    void unreadableFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"secret.log"_s);
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("[2026-03-02 10:14:03] hello\n");
        f.close();
        QVERIFY(f.setPermissions(QFileDevice::Permissions()));
        if (QFile(path).open(QIODevice::ReadOnly))
            QSKIP("running with privileges that read any file (root)");
        const CliResult r = run({u"diagnose"_s, path});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("cannot read") && r.err.contains("permissions"), r.err.constData());
    }

    // Issue 19: which MoE kernel runs, per start, in text and JSON (schema-checked), and what it does to the
    // urgency of the config lookups (and so to the exit status).
    void kernelInUse_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("kernelTitle"); // "" = the log names no kernel
        QTest::addColumn<QString>("summaryHas");
        QTest::addColumn<QStringList>("kernels");    // backend|triton_configs of the latest start
        QTest::addColumn<QString>("lookupSeverity"); // of the missing-config findings; "" = none
        QTest::newRow("vllm MARLIN fp8, a bf16 MTP lookup")
            << sampleLog(u"vllm-marlin-fp8-mtp.log"_s) << 0
            << u"MoE kernel MARLIN (Fp8): no Triton config file is read, tuning would not change its speed"_s
            << u"(the untuned configs concern only layers it does not run: low urgency)"_s
            << QStringList{u"MARLIN|unused"_s} << u"info"_s;
        QTest::newRow("vllm TRITON bf16")
            << sampleLog(u"vllm-triton-bf16.log"_s) << 1
            << u"MoE kernel TRITON (Unquantized): its Triton config files decide its "
               "speed"_s
            << u"1 MoE config untuned on NVIDIA_H200: 1 tuning job"_s << QStringList{u"TRITON|used"_s}
            << u"warning"_s;
        QTest::newRow("vllm DEEPGEMM, its Triton fallback of N=512")
            << sampleLog(u"vllm-deepgemm-fallback.log"_s) << 1
            << u"MoE kernel DEEPGEMM (Fp8): Triton config files matter only for the shapes it hands to Triton"_s
            << u"2 MoE configs untuned"_s << QStringList{u"DEEPGEMM|partly"_s} << QString();
        QTest::newRow("vllm 'FLASHINFER_CUTLASS' NvFp4, quoted")
            << sampleLog(u"vllm-nvfp4-cutlass.log"_s) << 0
            << u"MoE kernel FLASHINFER_CUTLASS (NvFp4): no Triton config file is read, tuning would not "
               u"change "
               "its speed"_s
            << u"No problems found in 4 lines"_s << QStringList{u"FLASHINFER_CUTLASS|unused"_s} << QString();
        QTest::newRow("sglang GPT-OSS triton_kernels")
            << sampleLog(u"sglang-gptoss-triton-kernels.log"_s) << 0
            << u"MoE kernel triton_kernels: no Triton config file is read, tuning would not change its speed"_s
            << u"; MoE kernel triton_kernels"_s << QStringList{u"triton_kernels|unused"_s} << QString();
        QTest::newRow("sglang sm100 flashinfer_trtllm, a bf16 NextN lookup")
            << sampleLog(u"sglang-sm100-nextn.log"_s) << 0
            << u"MoE kernel flashinfer_trtllm: no Triton config file is read, tuning would not change its speed"_s
            << u"low urgency"_s << QStringList{u"flashinfer_trtllm|unused"_s} << u"info"_s;
        QTest::newRow("sglang restart into deterministic mode")
            << sampleLog(u"sglang-restart-deterministic.log"_s) << 0
            << u"MoE kernel deterministic: config files ignored, tuning changes nothing"_s
            << u"Latest of 2 server starts"_s << QStringList{u"deterministic|ignored"_s} << u"info"_s;
        QTest::newRow("no kernel line: Triton assumed")
            << data(u"sglang-new.log"_s) << 1 << QString()
            << u"; the log does not name the MoE kernel (Triton fused MoE assumed)"_s << QStringList{}
            << u"warning"_s;
    }

    void kernelInUse() {
        QFETCH(QString, file);
        QFETCH(int, exitCode);
        QFETCH(QString, kernelTitle);
        QFETCH(QString, summaryHas);
        QFETCH(QStringList, kernels);
        QFETCH(QString, lookupSeverity);
        const CliResult text = run({u"diagnose"_s, u"--no-color"_s, file});
        QCOMPARE(text.exitCode, exitCode);
        const QString out = QString::fromUtf8(text.out);
        const QString summary = out.section(u'\n', 0, 0);
        QVERIFY2(summary.contains(summaryHas), qPrintable(summary));
        if (!kernelTitle.isEmpty())
            QVERIFY2(out.contains(u"INFO     "_s + kernelTitle + u'\n'), qPrintable(out));
        QVERIFY(out.contains(u"[moe-kernel]"_s) == !kernelTitle.isEmpty());

        const CliResult json = run({u"diagnose"_s, u"--format=json"_s, file});
        QCOMPARE(json.exitCode, exitCode);
        const QJsonObject d = QJsonDocument::fromJson(json.out).object();
        QCOMPARE(d.value(u"summary"_s).toString(), summary);
        QFile schemaFile(QStringLiteral(MOETUNE_JSON_SCHEMA));
        QVERIFY(schemaFile.open(QIODevice::ReadOnly));
        const QStringList errors =
            JsonSchemaCheck(QJsonDocument::fromJson(schemaFile.readAll()).object()).validate(d);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
        QStringList got;
        for (const QJsonValue &k :
             d.value(u"starts"_s).toArray().last().toObject().value(u"moe_kernels"_s).toArray())
            got << k.toObject().value(u"backend"_s).toString() + u'|' +
                       k.toObject().value(u"triton_configs"_s).toString();
        QCOMPARE(got, kernels);
        int kernelFindings = 0;
        for (const QJsonValue &v : d.value(u"findings"_s).toArray()) {
            const QJsonObject f = v.toObject();
            if (f.value(u"rule"_s).toString() == u"moe-kernel"_s &&
                f.value(u"start"_s).toInt() == d.value(u"starts"_s).toArray().size()) {
                ++kernelFindings;
                QCOMPARE(f.value(u"title"_s).toString(), kernelTitle);
                QCOMPARE(f.value(u"severity"_s).toString(), u"info"_s);
            }
            const QString rule = f.value(u"rule"_s).toString();
            if (!lookupSeverity.isEmpty() &&
                (rule == u"moe-untuned"_s || rule == u"triton-folder-no-config"_s) &&
                f.value(u"start"_s).toInt() == d.value(u"starts"_s).toArray().size())
                QCOMPARE(f.value(u"severity"_s).toString(), lookupSeverity);
        }
        QCOMPARE(kernelFindings, kernelTitle.isEmpty() ? 0 : 1);
        // Targets are still found where Triton runs any layer.
        if (!lookupSeverity.isEmpty())
            QVERIFY(!d.value(u"targets"_s).toArray().isEmpty());
    }

    // A backend name moetune does not know is taught by a file in the user's rule folder.
    void userBackendName() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString log = dir.filePath(u"b12x.log"_s);
        QFile f(log);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "(EngineCore_DP0 pid=77) INFO 07-01 10:00:00 [mxfp4.py:352] Using 'B12X' Mxfp4 MoE backend.\n");
        f.close();
        auto configs = [&](const QStringList &env) {
            const CliResult r = run({u"diagnose"_s, u"--format=json"_s, log}, {}, env);
            return QJsonDocument::fromJson(r.out)
                .object()
                .value(u"starts"_s)
                .toArray()
                .last()
                .toObject()
                .value(u"moe_kernels"_s)
                .toArray()
                .first()
                .toObject()
                .value(u"triton_configs"_s)
                .toString();
        };
        QCOMPARE(configs({}), u"unknown"_s);
        QTemporaryDir config;
        const QString own = config.filePath(u"moetune/moetune/rules"_s);
        QVERIFY(QDir().mkpath(own));
        QFile rules(own + u"/site-backends.json"_s);
        QVERIFY(rules.open(QIODevice::WriteOnly));
        rules.write(R"({"moe_backends": [{"name": "B12X", "triton_configs": "unused"}]})");
        rules.close();
        QCOMPARE(configs({u"XDG_CONFIG_HOME="_s + config.path()}), u"unused"_s);
    }

    void userRules_data() {
        QTest::addColumn<bool>("viaOption"); // --rules DIR, or the user's own rule folder
        QTest::newRow("--rules DIR") << true;
        QTest::newRow("user rule folder") << false;
    }

    void userRules() {
        QFETCH(bool, viaOption);
        const QString rulesDir = QFileInfo(data(u"rules/frobnicator.json"_s)).absolutePath();
        QStringList args{u"diagnose"_s, u"--format=json"_s, data(u"custom-rule.log"_s)};
        QTemporaryDir config;
        if (viaOption) {
            args += {u"--rules"_s, rulesDir};
        } else {
            const QString own = config.filePath(u"moetune/moetune/rules"_s);
            QVERIFY(QDir().mkpath(own));
            for (const QString &name : QDir(rulesDir).entryList(QDir::Files))
                QVERIFY(QFile::copy(QDir(rulesDir).filePath(name), own + u'/' + name));
        }
        // The user's folder comes from XDG_CONFIG_HOME (QStandardPaths::AppConfigLocation).
        const CliResult r = run(args, {}, {u"XDG_CONFIG_HOME="_s + config.path()});
        QCOMPARE(r.exitCode, 1); // the rule's severity is error
        // The broken file is reported by name on stderr, and does not stop the good one.
        QVERIFY2(r.err.contains("broken.json"), r.err.constData());
        const QJsonObject d = QJsonDocument::fromJson(r.out).object();
        bool found = false;
        for (const QJsonValue &v : d.value(u"findings"_s).toArray()) {
            const QJsonObject f = v.toObject();
            if (f.value(u"rule"_s).toString() == u"test-frobnicator"_s) {
                found = true;
                QCOMPARE(f.value(u"severity"_s).toString(), u"error"_s);
                QCOMPARE(f.value(u"title"_s).toString(), u"Frobnicator stalled (2.50 GiB)"_s);
            }
        }
        QVERIFY2(found, r.out.constData());

        // Without the rules, the same log is clean.
        const CliResult plain = run({u"diagnose"_s, data(u"custom-rule.log"_s)});
        QCOMPARE(plain.exitCode, 0);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
