// The Tune page offscreen: the job filled from a finding, every field checked with a sentence, the file
// names previewed; the live table under QAbstractItemModelTester; a real run on the Local machine with
// the agent's synthetic backend (SIMULATED numbers, as the page says) started, followed to its end and
// listed among the host's runs.
#include "app/tune/tunebestmodel.h"
#include "app/tune/tunejobcheck.h"
#include "app/tune/tunepage.h"
#include "charts/livebestchart.h"
#include "core/diagnosis/diagnoser.h"
#include "remote/hoststore.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

const QByteArray fallbackLog =
    "[2026-11-29 10:00:09 TP0] Config file not found at "
    "/srv/cfg/triton_3_6_0/E=128,N=384,device_name=NVIDIA_H200.json. "
    "Fallback to triton version 3.4.0 and use MoE kernel config from /srv/cfg/triton_3_4_0/"
    "E=128,N=384,device_name=NVIDIA_H200.json. Performance might be sub-optimal!\n";

HostConfig localMachine() {
    HostConfig h;
    h.alias = HostStore::localAlias();
    h.local = true;
    return h;
}

QJsonObject obj(const char *json) {
    return QJsonDocument::fromJson(QByteArray(json)).object();
}

} // namespace

class TestTunePage : public QObject {
    Q_OBJECT
private slots:
    void jobChecks_data() {
        QTest::addColumn<int>("e");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("topk");
        QTest::addColumn<QString>("field"); // "" = runnable
        QTest::addColumn<QString>("words");
        QTest::newRow("ok") << 128 << 384 << 2048 << 8 << QString() << u"Matches the file"_s;
        QTest::newRow("N is not per rank")
            << 128 << 768 << 2048 << 8 << u"nSpin"_s << u"server wanted N=384"_s;
        QTest::newRow("top-k > E") << 128 << 384 << 2048 << 200 << u"topkSpin"_s
                                   << u"between 1 and E (128)"_s;
        QTest::newRow("no K") << 128 << 384 << 0 << 8 << u"kSpin"_s << u"hidden_size"_s;
        QTest::newRow("E differs") << 129 << 384 << 2048 << 8 << u"expertsSpin"_s << u"wanted E=128"_s;
    }
    void jobChecks() {
        QFETCH(int, e);
        QFETCH(int, n);
        QFETCH(int, k);
        QFETCH(int, topk);
        QFETCH(QString, field);
        QFETCH(QString, words);
        const Diagnosis d = Diagnoser().diagnoseText(fallbackLog);
        QCOMPARE(d.targets.size(), 1);
        TuneSpec s = TuneSpec::fromTarget(d.targets.first());
        s.experts = e;
        s.n = n;
        s.hiddenSize = k;
        s.topk = topk;
        const TuneJobCheck c = TuneJobCheck::check(s, d.targets.first());
        if (field.isEmpty()) {
            QVERIFY(c.ok());
            QVERIFY2(c.fileNamesMatch.contains(words), qPrintable(c.fileNamesMatch));
            QCOMPARE(c.fileNames.first(), u"E=128,N=384,device_name=NVIDIA_H200.json"_s);
        } else {
            bool found = false;
            for (const auto &p : c.problems)
                found = found || (p.field == field && p.sentence.contains(words));
            QVERIFY2(found, qPrintable(c.problems.isEmpty() ? u"no problem"_s : c.problems.first().sentence));
        }
    }

    void pageFromFinding() {
        TunePage page;
        page.setHosts({localMachine()});
        const Diagnosis d = Diagnoser().diagnoseText(fallbackLog);
        page.tuneTarget(HostStore::localAlias(), d.targets.first(), d);
        QCOMPARE(page.findChild<QSpinBox *>(u"nSpin"_s)->value(), 384);
        QCOMPARE(page.findChild<QSpinBox *>(u"expertsSpin"_s)->value(), 128);
        // K and top-k are not in the log: the page says so and will not start.
        QVERIFY2(page.validation().contains(u"hidden_size"_s), qPrintable(page.validation()));
        QVERIFY(!page.findChild<QPushButton *>(u"startButton"_s)->isEnabled());
        page.findChild<QSpinBox *>(u"kSpin"_s)->setValue(2048);
        page.findChild<QSpinBox *>(u"topkSpin"_s)->setValue(8);
        QCOMPARE(page.validation(), QString());
        QVERIFY(page.findChild<QPushButton *>(u"startButton"_s)->isEnabled());
        QVERIFY(page.findChild<QLabel *>(u"fileNamesLabel"_s)
                    ->text()
                    .contains(u"Matches the file the server looked for"_s));
        // A wrong N: the sentence names the fix, the preview says the server would not read it.
        page.findChild<QSpinBox *>(u"nSpin"_s)->setValue(768);
        QVERIFY(page.validation().contains(u"moe_intermediate_size / TP"_s));
        QVERIFY(
            page.findChild<QLabel *>(u"fileNamesLabel"_s)->text().contains(u"would never read this file"_s));
        page.findChild<QLineEdit *>(u"batchSizesEdit"_s)->setText(u"1,x"_s);
        QVERIFY(page.validation().contains(u"'x' is not a positive number"_s));
    }

    void bestModel() {
        TuneBestModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        RunProgress p;
        p.apply(obj(R"({"type":"run_started","run_id":"r","seq":0,"simulated":true})"));
        p.apply(obj(
            R"({"type":"measurement","run_id":"r","seq":1,"op":"both","m":16,"round":-1,"median_us":30.0,"gpu":0})"));
        p.apply(obj(R"({"type":"best","run_id":"r","seq":2,"op":"both","m":16,"median_us":25.0})"));
        model.setProgress(p);
        p.apply(obj(R"({"type":"best","run_id":"r","seq":3,"op":"both","m":1,"median_us":10.0})"));
        p.apply(obj(R"({"type":"best","run_id":"r","seq":4,"op":"both","m":16,"median_us":20.0})"));
        model.setProgress(p);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, TuneBestModel::BatchSize).data().toInt(), 1);
        QCOMPARE(model.index(1, TuneBestModel::Best).data(Qt::UserRole).toDouble(), 20.0);
        QCOMPARE(model.index(1, TuneBestModel::Speedup).data().toString(), u"1.50x"_s);
        QVERIFY(model.index(1, TuneBestModel::Best).data().toString().contains(u"simulated"_s));
        model.setFloors({{16, 18.0}});
        QVERIFY(model.index(1, TuneBestModel::Floor).data().toString().startsWith(u"18.00"_s));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void liveRunOnLocalMachine() {
        QTemporaryDir home;
        TunePage page;
        HostSession::Environment env;
        env.localHome = home.path();
        env.agentPath = QStringLiteral(MOETUNE_AGENT_PYZ);
        page.setEnvironment(env);
        HostConfig local = localMachine();
        page.setHosts({local});
        TuneSpec s;
        s.framework = Framework::SGLang;
        s.experts = 64;
        s.n = 256;
        s.hiddenSize = 1024;
        s.topk = 4;
        s.batchSizes = {1, 16, 64};
        s.backend = u"synthetic"_s;
        page.tuneSpec(local.alias, s);
        QCOMPARE(page.validation(), QString());
        QVERIFY(page.findChild<QLabel *>(u"fileNamesLabel"_s)->text().contains(u"SIMULATED"_s));
        QSignalSpy finished(&page, &TunePage::runFinished);
        QTest::mouseClick(page.findChild<QPushButton *>(u"startButton"_s), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(finished.first().at(1).toString(), u"ok"_s);
        QVERIFY(page.progress().simulated);
        QCOMPARE(page.bestModel()->rowCount(), 3);
        QVERIFY(page.liveChart()->isSimulated());
        QCOMPARE(page.liveChart()->batchSizes(), (QList<int>{1, 16, 64}));
        // The run is listed on the host (the CLI's `runs` reads the same folder).
        QTest::mouseClick(page.findChild<QPushButton *>(u"refreshRunsButton"_s), Qt::LeftButton);
        auto *runs = page.findChild<QComboBox *>(u"runsCombo"_s);
        QTRY_COMPARE_WITH_TIMEOUT(runs->count(), 1, 60000);
        QCOMPARE(runs->currentData().toString(), page.progress().runId);
        QVERIFY(runs->currentText().contains(u"simulated"_s));
    }
};

QTEST_MAIN(TestTunePage)
#include "tst_tunepage.moc"
