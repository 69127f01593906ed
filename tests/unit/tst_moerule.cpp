// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The one table of built-in MoE rules (core/diagnosis/moerule.h): its ids are the findings' `rule` in the
// JSON, the report and the CLI (a contract: spelled here once, nowhere else in src/), and every MoE
// finding the builder makes from the recorded logs has a row.
#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/moerule.h"

#include <QDir>
#include <QSet>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

class TestMoeRule : public QObject {
    Q_OBJECT
private slots:
    void tableIsTheEnum() {
        const QList<MoeRuleRow> &rows = MoeRules::table();
        QCOMPARE(rows.size(), qsizetype(MoeRule::BlockFp8Untuned) + 1);
        QSet<QString> ids;
        for (qsizetype i = 0; i < rows.size(); ++i) {
            QCOMPARE(int(rows[i].rule), int(i)); // row() indexes by the enum
            QCOMPARE(&MoeRules::row(rows[i].rule), &rows[i]);
            ids.insert(rows[i].id);
            QCOMPARE(MoeRules::find(MoeRules::id(rows[i].rule)), &rows[i]);
            QVERIFY(MoeRules::is(MoeRules::id(rows[i].rule), rows[i].rule));
        }
        QCOMPARE(ids.size(), rows.size());
    }

    void idsAreTheContract_data() {
        QTest::addColumn<int>("rule");
        QTest::addColumn<QString>("id");
        QTest::addColumn<bool>("lookup");
        QTest::addColumn<int>("family");
        QTest::newRow("config used") << int(MoeRule::ConfigUsed) << u"moe-config-used"_s << false
                                     << int(MoeRuleFamily::MoeKernel);
        QTest::newRow("untuned") << int(MoeRule::Untuned) << u"moe-untuned"_s << true
                                 << int(MoeRuleFamily::MoeKernel);
        QTest::newRow("no path") << int(MoeRule::UntunedNoPath) << u"moe-untuned-no-path"_s << true
                                 << int(MoeRuleFamily::MoeKernel);
        QTest::newRow("fallback") << int(MoeRule::Fallback) << u"moe-fallback"_s << true
                                  << int(MoeRuleFamily::MoeKernel);
        QTest::newRow("down") << int(MoeRule::DownMissing) << u"moe-down-missing"_s << true
                              << int(MoeRuleFamily::MoeKernel);
        QTest::newRow("folder") << int(MoeRule::FolderNoConfig) << u"triton-folder-no-config"_s << true
                                << int(MoeRuleFamily::TritonFolder);
        QTest::newRow("not listed") << int(MoeRule::ShapesNotListed) << u"moe-shapes-not-listed"_s << false
                                    << int(MoeRuleFamily::MoeKernel);
        QTest::newRow("kernel") << int(MoeRule::Kernel) << u"moe-kernel"_s << false
                                << int(MoeRuleFamily::MoeKernel);
        QTest::newRow("deterministic")
            << int(MoeRule::DeterministicDefault) << u"deterministic-default-config"_s << false
            << int(MoeRuleFamily::Deterministic);
        QTest::newRow("block fp8") << int(MoeRule::BlockFp8Untuned) << u"w8a8-block-fp8-untuned"_s << false
                                   << int(MoeRuleFamily::DenseGemm);
    }

    void idsAreTheContract() {
        QFETCH(int, rule);
        QFETCH(QString, id);
        QFETCH(bool, lookup);
        QFETCH(int, family);
        const MoeRuleRow &row = MoeRules::row(MoeRule(rule));
        QCOMPARE(MoeRules::id(MoeRule(rule)), id);
        QCOMPARE(row.lookup, lookup);
        QCOMPARE(int(row.family), family);
    }

    void othersHaveNoRow_data() {
        QTest::addColumn<QString>("id");
        QTest::newRow("data rule of a kernel line") << u"moe-kernel-vllm"_s;
        QTest::newRow("host fact") << u"host-triton-folder-missing"_s;
        QTest::newRow("a prefix") << u"moe-"_s;
        QTest::newRow("server start") << u"server-start"_s;
        QTest::newRow("empty") << QString();
    }

    void othersHaveNoRow() {
        QFETCH(QString, id);
        QCOMPARE(MoeRules::find(id), nullptr);
    }

    // Every finding of the recorded logs whose rule names a MoE kernel, config or folder has a row.
    void everyBuiltInFindingHasARow() {
        const QString dir = QFINDTESTDATA("../data/logs");
        QVERIFY(!dir.isEmpty());
        QSet<QString> seen;
        const QStringList logs = QDir(dir).entryList({u"*.log"_s}, QDir::Files);
        QVERIFY(logs.size() >= 10);
        for (const QString &name : logs) {
            QString error;
            const Diagnosis d = Diagnoser().diagnoseFile(QDir(dir).filePath(name), {}, &error);
            QVERIFY2(error.isEmpty(), qPrintable(error));
            for (const Finding &f : d.findings) {
                if (f.rule.startsWith(u"moe-"_s) || f.rule.startsWith(u"triton-folder"_s) ||
                    f.rule.startsWith(u"deterministic"_s) || f.rule.startsWith(u"w8a8-block"_s)) {
                    QVERIFY2(MoeRules::find(f.rule), qPrintable(name + u": "_s + f.rule));
                    seen.insert(f.rule);
                }
            }
        }
        // The logs cover the main rows (a test that looked at nothing would pass too).
        for (const MoeRule r : {MoeRule::ConfigUsed, MoeRule::Untuned, MoeRule::Fallback,
                                MoeRule::DownMissing, MoeRule::Kernel, MoeRule::DeterministicDefault})
            QVERIFY2(seen.contains(MoeRules::id(r)), qPrintable(MoeRules::id(r)));
    }
};

QTEST_GUILESS_MAIN(TestMoeRule)
#include "tst_moerule.moc"
