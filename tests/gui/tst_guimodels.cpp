// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Models of the Diagnose page under QAbstractItemModelTester, with Diagnosis values built from the real
// core types (and, in fromDiagnoser, produced by the real Diagnoser).
#include "app/diagnose/evidencemodel.h"
#include "app/diagnose/findingsfiltermodel.h"
#include "app/diagnose/findingsmodel.h"
#include "app/diagnose/targetfieldsmodel.h"
#include "app/widgets/banner.h"

#include "core/diagnosis/diagnoser.h"

#include "guitestlogs.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QIcon>
#include <QLabel>
#include <QTest>
#include <QToolButton>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

TuningTarget sglangTarget() {
    TuningTarget t;
    t.framework = Framework::SGLang;
    t.configRoot = u"/opt/sglang/configs"_s;
    t.tritonVersion = TritonVersion(3, 6, 0);
    t.tritonFolder = u"triton_3_6_0"_s;
    t.tritonFolderMissing = true;
    t.fallbackFolder = u"triton_3_4_0"_s;
    t.name.experts = 128;
    t.name.n = 768;
    t.name.deviceName = u"NVIDIA_H200"_s;
    t.upFellBack = true;
    t.downMissing = true;
    return t;
}

TuningTarget vllmTarget() {
    TuningTarget t;
    t.framework = Framework::VLLM;
    t.configRoot = u"/venv/vllm/model_executor/layers/fused_moe/configs"_s;
    t.name.experts = 256;
    t.name.n = 256;
    t.name.deviceName = u"NVIDIA_H100_80GB_HBM3"_s;
    t.name.dtype = u"fp8_w8a8"_s;
    t.name.blockShape = std::array<int, 2>{128, 128};
    t.upMissing = true;
    return t;
}

Finding finding(const QString &id, Severity severity, int occurrences, const QStringList &sources,
                std::optional<TuningTarget> target = std::nullopt) {
    Finding f;
    f.id = id;
    f.rule = id.section(u':', 0, 0);
    f.severity = severity;
    f.title = u"Title of "_s + id;
    f.explanation = u"Why "_s + id;
    f.advice = u"Do something about "_s + id;
    f.occurrences = occurrences;
    f.sources = sources;
    f.target = std::move(target);
    for (int i = 0; i < qMin(occurrences, 3); ++i)
        f.evidence.append({qint64(10 + i), u"[TP%1] Using default MoE kernel config."_s.arg(i), 8, 13});
    return f;
}

QStringList ranks(int n) {
    QStringList list;
    for (int i = 0; i < n; ++i)
        list << u"TP"_s + QString::number(i);
    return list;
}

} // namespace

class TestGuiModels : public QObject {
    Q_OBJECT
private slots:
    void findingsModel_data();
    void findingsModel();
    void findingsModelReset();
    void evidenceModel();
    void targetFields_data();
    void targetFields();
    void fromDiagnoser_data();
    void fromDiagnoser();
    void sameTitlesSayWhereTheyDiffer();
    void findingsFilter();
    void bannerCapsLongText();
};

void TestGuiModels::findingsModel_data() {
    QTest::addColumn<QList<Finding>>("findings");
    QTest::addColumn<QStringList>("shownSources");

    QTest::newRow("empty") << QList<Finding>{} << QStringList{};
    QTest::newRow("one untuned, eight ranks")
        << QList<Finding>{finding(u"moe-untuned:E=128"_s, Severity::Warning, 8, ranks(8), sglangTarget())}
        << QStringList{u"TP0-7"_s};
    QTest::newRow("mixed severities")
        << QList<Finding>{finding(u"triton-folder-missing:3.6.0"_s, Severity::Error, 1, {u"main"_s}),
                          finding(u"moe-untuned:E=256"_s, Severity::Warning, 1,
                                  {u"EngineCore_DP0 pid=4242"_s}, vllmTarget()),
                          finding(u"kv-cache:1"_s, Severity::Info, 2, {u"TP0"_s, u"TP1"_s})}
        << QStringList{u"main"_s, u"EngineCore_DP0 pid=4242"_s, u"TP0-1"_s};
}

void TestGuiModels::findingsModel() {
    QFETCH(QList<Finding>, findings);
    QFETCH(QStringList, shownSources);

    FindingsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    Diagnosis diagnosis;
    diagnosis.findings = findings;
    model.setDiagnosis(diagnosis);

    QCOMPARE(model.rowCount(), findings.size());
    QCOMPARE(model.columnCount(), int(FindingsModel::ColumnCount));
    for (int row = 0; row < findings.size(); ++row) {
        const Finding &f = findings.at(row);
        QCOMPARE(model.index(row, FindingsModel::TitleColumn).data().toString(), f.title);
        QCOMPARE(model.index(row, FindingsModel::OccurrencesColumn).data().toInt(), f.occurrences);
        QCOMPARE(model.index(row, FindingsModel::SourcesColumn).data().toString(), shownSources.at(row));
        QCOMPARE(model.index(row, 0).data(FindingsModel::SeverityRole).toInt(), int(f.severity));
        QCOMPARE(model.index(row, 0).data(FindingsModel::FindingIdRole).toString(), f.id);
        QCOMPARE(model.index(row, 0).data(FindingsModel::FirstLineRole).toLongLong(),
                 f.evidence.first().line);
        const QIcon icon =
            model.index(row, FindingsModel::TitleColumn).data(Qt::DecorationRole).value<QIcon>();
        QVERIFY2(!icon.pixmap(16, 16).isNull(), "severity icon must render (SVG from resources)");
        QVERIFY(!model.index(row, FindingsModel::OccurrencesColumn).data(Qt::DecorationRole).isValid());
        QCOMPARE(model.rowOf(f.id), row);
        QCOMPARE(model.finding(row)->id, f.id);
    }
    QCOMPARE(model.rowOf(u"no-such-id"_s), -1);
    QVERIFY(model.finding(int(findings.size())) == nullptr);
    QVERIFY(model.finding(-1) == nullptr);
}

void TestGuiModels::findingsModelReset() {
    FindingsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    Diagnosis d;
    d.findings = {finding(u"a:1"_s, Severity::Warning, 1, {u"main"_s}),
                  finding(u"b:1"_s, Severity::Info, 1, {u"main"_s})};
    model.setDiagnosis(d);
    QCOMPARE(model.rowCount(), 2);
    d.findings.removeFirst();
    model.setDiagnosis(d);
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.index(0, 0).data().toString(), u"Title of b:1"_s);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
}

void TestGuiModels::evidenceModel() {
    EvidenceModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QList<Evidence> evidence{{12, u"[TP0] Using default MoE kernel config."_s, 7, 26},
                                   {40, u"[TP1] Using default MoE kernel config."_s, 7, 26}};
    model.setEvidence(evidence);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(1, EvidenceModel::LineColumn).data().toLongLong(), 40);
    QCOMPARE(model.index(1, EvidenceModel::TextColumn).data().toString(), evidence.at(1).text);
    QCOMPARE(model.index(0, EvidenceModel::TextColumn).data(EvidenceModel::MatchStartRole).toLongLong(), 7);
    QCOMPARE(model.index(0, EvidenceModel::TextColumn).data(EvidenceModel::MatchLengthRole).toLongLong(), 26);
    QCOMPARE(model.index(0, EvidenceModel::TextColumn).data(EvidenceModel::LineRole).toLongLong(), 12);
    model.setEvidence({});
    QCOMPARE(model.rowCount(), 0);
}

void TestGuiModels::targetFields_data() {
    QTest::addColumn<std::optional<TuningTarget>>("target");
    QTest::addColumn<QStringList>("keys");
    QTest::addColumn<QStringList>("values");
    QTest::addColumn<QStringList>("problems");

    const TuningTarget s = sglangTarget();
    QTest::newRow("none") << std::optional<TuningTarget>() << QStringList{u"framework"_s}
                          << QStringList{QString()} << QStringList{};
    QTest::newRow("sglang fallback, folder missing")
        << std::optional<TuningTarget>(s)
        << QStringList{u"framework"_s,  u"triton"_s,     u"tritonFolder"_s, u"fallbackFolder"_s,
                       u"experts"_s,    u"n"_s,          u"device"_s,       u"dtype"_s,
                       u"blockShape"_s, u"configRoot"_s, u"upPath"_s,       u"downPath"_s}
        << QStringList{u"SGLang"_s,
                       u"3.6.0"_s,
                       u"triton_3_6_0 (does not exist)"_s,
                       u"triton_3_4_0"_s,
                       u"128"_s,
                       u"768"_s,
                       u"NVIDIA_H200"_s,
                       u"bf16/fp16"_s,
                       u"none"_s,
                       u"/opt/sglang/configs"_s,
                       s.upPath(),
                       s.downPath()}
        << QStringList{u"tritonFolder"_s, u"up"_s, u"down"_s};
    const TuningTarget v = vllmTarget();
    QTest::newRow("vllm fp8 block") << std::optional<TuningTarget>(v)
                                    << QStringList{u"framework"_s, u"experts"_s,  u"dtype"_s, u"blockShape"_s,
                                                   u"upPath"_s,    u"downPath"_s, u"down"_s}
                                    << QStringList{u"vLLM"_s,  u"256"_s,  u"fp8_w8a8"_s, u"[128, 128]"_s,
                                                   v.upPath(), QString(), QString()}
                                    << QStringList{u"up"_s};
}

void TestGuiModels::targetFields() {
    QFETCH(std::optional<TuningTarget>, target);
    QFETCH(QStringList, keys);
    QFETCH(QStringList, values);
    QFETCH(QStringList, problems);

    TargetFieldsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setTarget(target);
    QCOMPARE(model.hasTarget(), target.has_value());
    for (int i = 0; i < keys.size(); ++i)
        QCOMPARE(model.value(keys.at(i)), values.at(i));
    QStringList flagged;
    for (int row = 0; row < model.rowCount(); ++row) {
        const QModelIndex value = model.index(row, TargetFieldsModel::ValueColumn);
        QCOMPARE(value.data(Qt::EditRole).toString(),
                 model.value(value.data(TargetFieldsModel::KeyRole).toString()));
        if (value.data(TargetFieldsModel::ProblemRole).toBool())
            flagged << value.data(TargetFieldsModel::KeyRole).toString();
    }
    QCOMPARE(flagged, problems);
}

void TestGuiModels::fromDiagnoser_data() {
    QTest::addColumn<QString>("log");
    QTest::addColumn<int>("experts");
    QTest::addColumn<int>("n");
    QTest::newRow("sglang 8 ranks") << guitestlogs::sglangEightRanks() << 128 << 96;
    QTest::newRow("vllm fp8") << guitestlogs::vllmFp8() << 256 << 256;
}

void TestGuiModels::fromDiagnoser() {
    QFETCH(QString, log);
    QFETCH(int, experts);
    QFETCH(int, n);

    const Diagnosis diagnosis = Diagnoser().diagnoseText(log.toUtf8());
    QVERIFY(!diagnosis.findings.isEmpty());
    FindingsModel findings;
    QAbstractItemModelTester findingsTester(&findings,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
    findings.setDiagnosis(diagnosis);
    QCOMPARE(findings.rowCount(), diagnosis.findings.size());

    EvidenceModel evidence;
    QAbstractItemModelTester evidenceTester(&evidence,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
    TargetFieldsModel target;
    QAbstractItemModelTester targetTester(&target, QAbstractItemModelTester::FailureReportingMode::QtTest);
    bool sawTarget = false;
    for (const Finding &f : diagnosis.findings) {
        evidence.setEvidence(f.evidence);
        QCOMPARE(evidence.rowCount(), f.evidence.size());
        target.setTarget(f.target);
        if (f.target && f.target->name.experts == experts) {
            sawTarget = true;
            QCOMPARE(target.value(u"experts"_s), QString::number(experts));
            QCOMPARE(target.value(u"n"_s), QString::number(n));
        }
    }
    QVERIFY2(sawTarget, "the MoE finding must carry its parsed tuning target");
}

void TestGuiModels::sameTitlesSayWhereTheyDiffer() {
    // Issue 12 point 8: three findings with the same words for different config roots name the root.
    Diagnosis d;
    TuningTarget a = sglangTarget();
    TuningTarget b = sglangTarget();
    b.configRoot = u"/srv/other-venv/sglang/configs"_s;
    d.findings = {finding(u"moe-missing:a"_s, Severity::Warning, 1, {}, a),
                  finding(u"moe-missing:b"_s, Severity::Warning, 1, {}, b),
                  finding(u"moe-other:c"_s, Severity::Info, 1, {})};
    d.findings[1].title = d.findings[0].title;
    FindingsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setDiagnosis(d);
    const QString first = model.index(0, FindingsModel::TitleColumn).data().toString();
    const QString second = model.index(1, FindingsModel::TitleColumn).data().toString();
    QVERIFY(first != second);
    QVERIFY2(first.contains(a.installFolder()), qPrintable(first));
    QVERIFY2(second.contains(b.installFolder()), qPrintable(second));
    // A title nobody else has stays as the core wrote it.
    QCOMPARE(model.index(2, FindingsModel::TitleColumn).data().toString(), d.findings.at(2).title);
}

void TestGuiModels::findingsFilter() {
    Diagnosis d;
    d.findings = {finding(u"e:1"_s, Severity::Error, 1, {}), finding(u"w:1"_s, Severity::Warning, 1, {}),
                  finding(u"i:1"_s, Severity::Info, 1, {}), finding(u"i:2"_s, Severity::Info, 1, {})};
    FindingsModel model;
    FindingsFilterModel filter;
    filter.setSourceModel(&model);
    QAbstractItemModelTester tester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setDiagnosis(d);
    QCOMPARE(filter.rowCount(), 4);
    filter.setSeverityShown(Severity::Info, false);
    QCOMPARE(filter.rowCount(), 2);
    filter.setSeverityShown(Severity::Error, false);
    QCOMPARE(filter.rowCount(), 1);
    QCOMPARE(filter.index(0, 0).data(FindingsModel::FindingIdRole).toString(), u"w:1"_s);
    filter.setSeverityShown(Severity::Info, true);
    filter.setSeverityShown(Severity::Error, true);
    QCOMPARE(filter.rowCount(), 4);
}

void TestGuiModels::bannerCapsLongText() {
    // Issue 12 point 8: a summary of many lines shows the first ones and "Show all".
    Banner banner;
    banner.setMaximumLines(2);
    banner.resize(400, 200);
    banner.show();
    QVERIFY(QTest::qWaitForWindowExposed(&banner));
    QString longText;
    for (int i = 0; i < 12; ++i)
        longText += u"Finding number %1 of a long summary that wraps over several lines. "_s.arg(i);
    banner.showMessage(Banner::Kind::Warning, longText);
    auto *more = banner.findChild<QToolButton *>(u"bannerMoreButton"_s);
    QVERIFY(more);
    QTRY_VERIFY(banner.isTruncated());
    QVERIFY(!more->isHidden());
    QVERIFY(more->text().startsWith(u"Show all"_s));
    auto *label = banner.findChild<QLabel *>(u"bannerText"_s);
    QVERIFY(label);
    QVERIFY(label->maximumHeight() <= 3 * label->fontMetrics().lineSpacing());
    QTest::mouseClick(more, Qt::LeftButton);
    QVERIFY(!banner.isTruncated());
    QVERIFY(label->maximumHeight() > 10 * label->fontMetrics().lineSpacing());
    QCOMPARE(more->text(), u"Show less"_s);
    // A short text: nothing to expand.
    banner.showMessage(Banner::Kind::Info, u"short"_s);
    QVERIFY(!banner.isTruncated());
    QVERIFY(more->isHidden());
}

QTEST_MAIN(TestGuiModels)
#include "tst_guimodels.moc"
