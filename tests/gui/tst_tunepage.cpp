// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The Tune page offscreen: the job filled from a finding, every field checked with a sentence, the file
// names previewed; the live table under QAbstractItemModelTester; the server profile dialog's sentences;
// and, in the main window on the Local machine, the whole workflow a user clicks through: a fake SGLang
// server's log diagnosed -> "Tune this" -> a real agent run with the synthetic backend (SIMULATED
// numbers, a labelled test double for a GPU) -> push preview -> push -> restart through the server
// profile -> the warning gone on every rank -> undo. TEST DOUBLES: resources/practice/fake_sglang_server.py
// stands in for the inference server and a script for nvidia-smi (tests/integration/fakeserverhost.h over
// remote/practiceserver.h); the agent, its install-config, the shell commands of the profile and every file
// are real.
#include "../integration/fakeserverhost.h"
#include "findchild.h"

#include "app/diagnose/diagnosepage.h"
#include "app/mainwindow.h"
#include "app/results/resultspage.h"
#include "app/tune/tunebestmodel.h"
#include "app/tune/tunejobcheck.h"
#include "app/tune/tunepage.h"
#include "app/widgets/serverprofiledialog.h"
#include "charts/livebestchart.h"
#include "core/diagnosis/diagnoser.h"
#include "core/run/workspacerun.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "remote/hosts/hoststore.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QInputDialog>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::click;
using moetune::test::named;

namespace {

const QByteArray fallbackLog =
    "[2026-11-29 10:00:09 TP0] Config file not found at "
    "/srv/cfg/triton_3_6_0/E=128,N=384,device_name=NVIDIA_H200.json. "
    "Fallback to triton version 3.4.0 and use MoE kernel config from /srv/cfg/triton_3_4_0/"
    "E=128,N=384,device_name=NVIDIA_H200.json. Performance might be sub-optimal!\n";

QJsonObject obj(const char *json) {
    return QJsonDocument::fromJson(QByteArray(json)).object();
}

} // namespace

class TestTunePage : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    QString m_agent = QStringLiteral(MOETUNE_AGENT_PYZ);

    // A registry on this test's settings (HOME is a temporary folder with an empty ~/.ssh/config).
    void prepare(HostRegistry *registry) {
        registry->setLocalHome(m_home.path());
        registry->setAgentPath(m_agent);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QDir().mkpath(m_home.path() + u"/.ssh"_s);
        QVERIFY2(QFileInfo::exists(m_agent), qPrintable(m_agent));
        qRegisterMetaType<moetune::HostSession *>();
    }
    void cleanupTestCase() { QSettings().clear(); }

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
            // Without a device name the agent takes the GPU's: the page says so, not "device_name=.json".
            s.deviceName.clear();
            QCOMPARE(TuneJobCheck::check(s, std::nullopt).fileNames.first(),
                     u"E=128,N=384,device_name=<the host's GPU>.json"_s);
        } else {
            bool found = false;
            for (const auto &p : c.problems)
                found = found || (p.field == field && p.sentence.contains(words));
            QVERIFY2(found, qPrintable(c.problems.isEmpty() ? u"no problem"_s : c.problems.first().sentence));
        }
    }

    void pageFromFinding() {
        HostRegistry registry;
        prepare(&registry);
        TunePage page(&registry);
        const Diagnosis d = Diagnoser().diagnoseText(fallbackLog);
        page.tuneTarget(HostStore::localAlias(), d.targets.first(), d);
        QCOMPARE(page.hostAlias(), HostStore::localAlias());
        QCOMPARE(named<QSpinBox>(&page, u"nSpin"_s)->value(), 384);
        QCOMPARE(named<QSpinBox>(&page, u"expertsSpin"_s)->value(), 128);
        QVERIFY(named<QLabel>(&page, u"sourceLabel"_s)->text().contains(u"Local machine"_s));
        // K and top-k are not in the log: the page says so and will not start.
        QVERIFY2(page.validation().contains(u"hidden_size"_s), qPrintable(page.validation()));
        QVERIFY(!named<QPushButton>(&page, u"startButton"_s)->isEnabled());
        QVERIFY(named<QSpinBox>(&page, u"kSpin"_s)->toolTip().contains(u"hidden_size"_s));
        named<QSpinBox>(&page, u"kSpin"_s)->setValue(2048);
        named<QSpinBox>(&page, u"topkSpin"_s)->setValue(8);
        QCOMPARE(page.validation(), QString());
        QVERIFY(named<QSpinBox>(&page, u"kSpin"_s)->toolTip().isEmpty()); // the fixed field says nothing
        QVERIFY(named<QPushButton>(&page, u"startButton"_s)->isEnabled());
        QVERIFY(named<QLabel>(&page, u"fileNamesLabel"_s)
                    ->text()
                    .contains(u"Matches the file the server looked for"_s));
        // A wrong N: the sentence names the fix, the preview says the server would not read it.
        named<QSpinBox>(&page, u"nSpin"_s)->setValue(768);
        QVERIFY(page.validation().contains(u"moe_intermediate_size / TP"_s));
        QVERIFY(named<QLabel>(&page, u"fileNamesLabel"_s)->text().contains(u"would never read this file"_s));
        named<QLineEdit>(&page, u"batchSizesEdit"_s)->setText(u"1,x"_s);
        QVERIFY(page.validation().contains(u"'x' is not a positive number"_s));
        // No host known for a pasted log and none chosen yet (issue 45 point 7: MainWindow asks): the page
        // takes no host on its own and will not start until one is chosen.
        page.tuneTarget(QString(), d.targets.first(), d, false);
        QCOMPARE(page.hostAlias(), QString());
        QVERIFY(named<QLabel>(&page, u"sourceLabel"_s)->text().contains(u"choose the host"_s));
        QVERIFY(!named<QPushButton>(&page, u"startButton"_s)->isEnabled());
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

    void profileDialog_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("stop");
        QTest::addColumn<QString>("start");
        QTest::addColumn<QString>("log");
        QTest::addColumn<int>("timeout");
        QTest::addColumn<bool>("saved");
        QTest::addColumn<QString>("words"); // of the sentence shown ("" = none)
        QTest::newRow("command ok") << u"command"_s << u"kill x"_s << u"run x"_s << u"/srv/s.log"_s << 900
                                    << true << QString();
        QTest::newRow("no start") << u"command"_s << u"kill x"_s << QString() << u"/srv/s.log"_s << 900
                                  << false << u"no start command"_s;
        QTest::newRow("no log") << u"systemd"_s << u"systemctl stop a"_s << u"systemctl start a"_s
                                << QString() << 900 << false << u"neither a log file nor a log command"_s;
        QTest::newRow("timeout too short") << u"docker"_s << u"docker stop a"_s << u"docker start a"_s
                                           << u"/srv/s.log"_s << 5 << false << u"between 10 s and 24 h"_s;
        QTest::newRow("manual is saved") << u"manual"_s << QString() << QString() << QString() << 900 << true
                                         << u"manage the server yourself"_s;
    }
    void profileDialog() {
        QFETCH(QString, kind);
        QFETCH(QString, stop);
        QFETCH(QString, start);
        QFETCH(QString, log);
        QFETCH(int, timeout);
        QFETCH(bool, saved);
        QFETCH(QString, words);
        ServerProfile suggested;
        suggested.kind = ServerProfile::Kind::Systemd;
        suggested.unit = u"sglang.service"_s;
        suggested.stopCommand = u"systemctl stop sglang.service"_s;
        suggested.startCommand = u"systemctl start sglang.service"_s;
        suggested.logCommand = u"journalctl -u sglang.service -o cat"_s;
        suggested.readyLine = u"ready to roll"_s;
        ServerProfileDialog dialog(u"gpu-7"_s, ServerProfile{}, suggested);
        // A host without a profile starts from the probe's suggestion.
        QCOMPARE(dialog.profile().kind, ServerProfile::Kind::Systemd);
        QCOMPARE(named<QLineEdit>(&dialog, u"stopEdit"_s)->text(), suggested.stopCommand);
        QCOMPARE(dialog.problem(), QString());
        auto *kinds = named<QComboBox>(&dialog, u"kindCombo"_s);
        kinds->setCurrentIndex(kinds->findData(kind));
        named<QLineEdit>(&dialog, u"stopEdit"_s)->setText(stop);
        named<QLineEdit>(&dialog, u"startEdit"_s)->setText(start);
        named<QLineEdit>(&dialog, u"logFileEdit"_s)->setText(log);
        named<QLineEdit>(&dialog, u"logCommandEdit"_s)->clear();
        named<QSpinBox>(&dialog, u"timeoutSpin"_s)->setValue(timeout);
        if (words.isEmpty())
            QCOMPARE(dialog.problem(), QString());
        else
            QVERIFY2(dialog.problem().contains(words), qPrintable(dialog.problem()));
        QSignalSpy accepted(&dialog, &ServerProfileDialog::profileAccepted);
        dialog.show();
        QTest::mouseClick(named<QDialogButtonBox>(&dialog, u"buttonBox"_s)->button(QDialogButtonBox::Save),
                          Qt::LeftButton);
        QCOMPARE(accepted.size(), saved ? 1 : 0);
        QCOMPARE(dialog.isVisible(), !saved); // refused: nothing typed is lost
        if (saved)
            QCOMPARE(accepted.first().first().value<ServerProfile>().kind, ServerProfile::kindFromId(kind));
        else
            QCOMPARE(named<QLineEdit>(&dialog, u"stopEdit"_s)->text(), stop);
        // The suggestion can be taken back at any time.
        if (!saved) {
            click(&dialog, u"suggestionButton"_s);
            QCOMPARE(dialog.profile(), suggested);
        }
    }

    void liveRunOnLocalMachine() {
        HostRegistry registry;
        prepare(&registry);
        QSignalSpy created(&registry, &HostRegistry::connectionCreated);
        TunePage page(&registry);
        QTemporaryDir workspace;
        page.setWorkspacePath(workspace.path());
        TuneSpec s;
        s.framework = Framework::SGLang;
        s.experts = 64;
        s.n = 256;
        s.hiddenSize = 1024;
        s.topk = 4;
        s.batchSizes = {1, 16, 64};
        s.backend = u"synthetic"_s;
        page.tuneSpec(HostStore::localAlias(), s);
        QCOMPARE(page.validation(), QString());
        QVERIFY(named<QLabel>(&page, u"fileNamesLabel"_s)->text().contains(u"SIMULATED"_s));
        QSignalSpy finished(&page, &TunePage::runFinished);
        click(&page, u"startButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(finished.first().at(1).toString(), u"ok"_s);
        // One connection, the registry's: the page made none of its own.
        QCOMPARE(created.count(), 1);
        QVERIFY(registry.connection(HostStore::localAlias()));
        QVERIFY(page.progress().simulated);
        QVERIFY(page.progress().measurements > 0);
        QCOMPARE(page.bestModel()->rowCount(), 3);
        QVERIFY(page.liveChart()->isSimulated());
        QCOMPARE(page.liveChart()->batchSizes(), (QList<int>{1, 16, 64}));
        QTRY_VERIFY(named<QLabel>(&page, u"runLabel"_s)->text().contains(u"SIMULATED"_s));
        // The run is listed on the host (the CLI's `runs` reads the same folder).
        auto *runs = named<QComboBox>(&page, u"runsCombo"_s);
        runs->clear();
        click(&page, u"refreshRunsButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(runs->count(), 1, 60000);
        QCOMPARE(runs->currentData().toString(), page.progress().runId);
        QVERIFY(runs->currentText().contains(u"simulated"_s));
        // The run is kept locally as it streamed: every event once, and it reopens offline.
        const QString folder = page.runFolder();
        QCOMPARE(QFileInfo(folder).dir().absolutePath(), QDir(workspace.path()).absolutePath());
        const auto eventLines = [&folder] {
            QFile f(folder + u"/events.jsonl"_s);
            return f.open(QIODevice::ReadOnly) ? f.readAll().count('\n') : -1;
        };
        QCOMPARE(eventLines(), page.progress().lastSeq + 1);
        QString error;
        const auto kept = WorkspaceRun::open(folder, &error);
        QVERIFY2(kept, qPrintable(error));
        QCOMPARE(kept->runId, page.progress().runId);
        QVERIFY(kept->result.simulated);
        QCOMPARE(kept->host, u"Local machine"_s);
        // Attaching again to the finished run resumes after the last event seen: nothing is counted
        // twice, and the local folder still holds each event once.
        const int measured = page.progress().measurements;
        const qint64 lastSeq = page.progress().lastSeq;
        QSignalSpy again(&page, &TunePage::runFinished);
        page.openRun(HostStore::localAlias(), page.progress().runId);
        QTRY_COMPARE_WITH_TIMEOUT(again.count(), 1, 60000);
        QCOMPARE(page.progress().measurements, measured);
        QCOMPARE(page.progress().duplicatesDropped, 0);
        QCOMPARE(eventLines(), lastSeq + 1);
    }

    void tuneThisPushProveUndo() {
        // The fake SGLang server (TEST DOUBLE) runs on this machine and falls back on both ranks.
        test::FakeServerHost fake;
        QString error;
        QVERIFY2(fake.create(&error), qPrintable(error));
        QVERIFY2(fake.startServer(&error), qPrintable(error));

        MainWindow window;
        prepare(window.hostRegistry());
        HostConfig local = window.hostRegistry()->localHost();
        local.python = fake.python();
        window.hostRegistry()->save(local);
        window.show();
        auto *diagnose = window.findChild<DiagnosePage *>();
        auto *tune = window.findChild<TunePage *>(u"tunePage"_s);
        QVERIFY(diagnose && tune);
        QTemporaryDir workspace;
        tune->setWorkspacePath(workspace.path());

        // The server profile, typed in the dialog and saved with the host.
        click(tune, u"profileButton"_s);
        ServerProfileDialog *dialog = nullptr;
        QTRY_VERIFY((dialog = tune->findChild<ServerProfileDialog *>()) && dialog->isVisible());
        dialog->setProfile(fake.profile());
        QCOMPARE(dialog->problem(), QString());
        QTest::mouseClick(named<QDialogButtonBox>(dialog, u"buttonBox"_s)->button(QDialogButtonBox::Save),
                          Qt::LeftButton);
        QCOMPARE(window.hostRegistry()->localHost().serverProfile, fake.profile());
        QVERIFY(named<QLabel>(tune, u"profileLabel"_s)->text().contains(u"plain command"_s) ||
                named<QLabel>(tune, u"profileLabel"_s)->text().contains(fake.log()));

        // Diagnose the server's log, then "Tune this" on its target: the Tune page opens on it.
        QSignalSpy diagnosed(diagnose, &DiagnosePage::diagnosisFinished);
        QVERIFY(diagnose->openFile(fake.log()));
        QTRY_VERIFY_WITH_TIMEOUT(diagnosed.count() >= 1 && !diagnose->isBusy(), 60000);
        int row = -1;
        for (int i = 0; i < diagnose->diagnosis().findings.size() && row < 0; ++i)
            if (diagnose->diagnosis().findings.at(i).target)
                row = i;
        QVERIFY(row >= 0);
        diagnose->selectFinding(row);
        click(diagnose, u"tuneButton"_s);
        // A log opened from a file names no host: the window asks which one tunes it (issue 45 point 7).
        QInputDialog *ask = nullptr;
        QTRY_VERIFY((ask = window.findChild<QInputDialog *>(u"tuneHostDialog"_s)) != nullptr);
        ask->setTextValue(ask->comboBoxItems().first()); // this machine
        ask->accept();
        QTRY_COMPARE(window.page(window.currentPage()), tune);
        QCOMPARE(tune->hostAlias(), HostStore::localAlias());
        QCOMPARE(named<QSpinBox>(tune, u"expertsSpin"_s)->value(), 128);
        QCOMPARE(named<QSpinBox>(tune, u"nSpin"_s)->value(), 384);
        QVERIFY(named<QLabel>(tune, u"fileNamesLabel"_s)->text().contains(u"Matches the file"_s));
        // What the log does not say, typed as a user would (the served model: K 2048, top-k 8).
        named<QSpinBox>(tune, u"kSpin"_s)->setValue(2048);
        named<QSpinBox>(tune, u"topkSpin"_s)->setValue(8);
        named<QLineEdit>(tune, u"batchSizesEdit"_s)->setText(u"1,16,256"_s);
        named<QCheckBox>(tune, u"upDownCheck"_s)->setChecked(true);
        auto *backend = named<QComboBox>(tune, u"backendCombo"_s);
        backend->setCurrentIndex(backend->findData(u"synthetic"_s));
        QCOMPARE(tune->validation(), QString());

        // Preflight: the fake server holds GPU 0; the page says so and offers the profile's stop.
        click(tune, u"preflightButton"_s);
        auto *preflight = named<QPlainTextEdit>(tune, u"preflightText"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!preflight->toPlainText().isEmpty(), 120000);
        QVERIFY2(preflight->toPlainText().contains(u"held by the inference server"_s),
                 qPrintable(preflight->toPlainText()));
        QVERIFY(named<QPushButton>(tune, u"stopServerButton"_s)->isEnabled());
        // Stop server (on this click only): the profile's stop command, then the GPUs checked free.
        const QString pid = preflight->toPlainText().section(u"pid "_s, 1).section(u' ', 0, 0);
        QVERIFY2(!pid.isEmpty(), qPrintable(preflight->toPlainText()));
        click(tune, u"stopServerButton"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!preflight->toPlainText().contains(u"held by the inference server"_s) &&
                                     preflight->toPlainText().contains(u"Ready to start."_s),
                                 120000);
        QVERIFY2(!preflight->toPlainText().contains(u"pid "_s + pid), qPrintable(preflight->toPlainText()));
        QVERIFY(!QFile::exists(fake.pidFile()));

        // The run (synthetic backend: needs no GPU memory, so it starts beside the server).
        QSignalSpy finished(tune, &TunePage::runFinished);
        click(tune, u"startButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(finished.first().at(1).toString(), u"ok"_s);
        const QString runId = finished.first().at(0).toString();
        QCOMPARE(named<QComboBox>(tune, u"runsCombo"_s)->currentData().toString(), runId);

        // Preview: the folder the server's own warning wanted, new files, nothing written yet.
        QSignalSpy previewed(tune, &TunePage::previewReady);
        click(tune, u"pushPreviewButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(previewed.count(), 1, 120000);
        auto *pushText = named<QPlainTextEdit>(tune, u"pushText"_s);
        QVERIFY2(previewed.first().at(1).toString().isEmpty(), qPrintable(pushText->toPlainText()));
        QVERIFY2(pushText->toPlainText().contains(u"Target folder: "_s + fake.wantedFolder()),
                 qPrintable(pushText->toPlainText()));
        QVERIFY(pushText->toPlainText().contains(u"SIMULATED"_s));
        QVERIFY(pushText->toPlainText().contains(u"new file"_s));
        QVERIFY(!QFile::exists(fake.wantedFolder() + u'/' + fake.upName()));

        // Push: both files installed where the server looks.
        QSignalSpy pushed(tune, &TunePage::pushed);
        click(tune, u"pushButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(pushed.count(), 1, 120000);
        QVERIFY2(pushed.first().at(1).toString().isEmpty(), qPrintable(pushText->toPlainText()));
        QVERIFY(QFile::exists(fake.wantedFolder() + u'/' + fake.upName()));
        QVERIFY(QFile::exists(fake.wantedFolder() + u'/' + fake.downName()));

        // Start through the profile (it was stopped for the tuning) and prove: the warning is gone on
        // every rank.
        QSignalSpy proved(tune, &TunePage::proved);
        click(tune, u"restartButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(proved.count(), 1, 240000);
        QVERIFY2(proved.first().at(1).toBool(), qPrintable(pushText->toPlainText()));
        const QString proof = named<QLabel>(tune, u"proofLabel"_s)->text();
        QVERIFY2(proof.contains(u"gone on every rank"_s), qPrintable(proof));
        QVERIFY2(proof.contains(u"TP0"_s) && proof.contains(u"TP1"_s), qPrintable(proof));
        QVERIFY2(pushText->toPlainText().contains(u"ranks using the pushed file: TP0, TP1"_s),
                 qPrintable(pushText->toPlainText()));

        // The local run folder has the log's diagnosis before and the one after the restart.
        QVERIFY(QFile::exists(tune->runFolder() + u"/diagnosis-before.json"_s));
        QVERIFY(QFile::exists(tune->runFolder() + u"/diagnosis-after.json"_s));

        // Every host command the restart ran is shown with its output.
        const QString commands = named<QPlainTextEdit>(tune, u"outputText"_s)->toPlainText();
        QVERIFY2(commands.contains(u"$ "_s + fake.profile().stopCommand), qPrintable(commands.left(2000)));
        QVERIFY2(commands.contains(u"$ "_s + fake.profile().startCommand), qPrintable(commands.left(2000)));

        // Undo: the files that did not exist before the push are gone again.
        QSignalSpy undone(tune, &TunePage::undone);
        click(tune, u"undoButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(undone.count(), 1, 120000);
        QVERIFY2(undone.first().at(1).toString().isEmpty(), qPrintable(pushText->toPlainText()));
        QVERIFY(!QFile::exists(fake.wantedFolder() + u'/' + fake.upName()));
        QVERIFY(!QFile::exists(fake.wantedFolder() + u'/' + fake.downName()));
        QVERIFY(pushText->toPlainText().contains(u"removed "_s));

        // ... and its push tab right after the undo (file-push.png).
        if (const QString shot = qEnvironmentVariable("MOETUNE_TUNE_SCREENSHOT"); !shot.isEmpty()) {
            // MOETUNE_TUNE_SCREENSHOT_SIZE=WxH: another window size (e.g. the declared minimum 1024x640).
            const QStringList size =
                qEnvironmentVariable("MOETUNE_TUNE_SCREENSHOT_SIZE", u"1600x1000"_s).split(u'x');
            window.resize(size.value(0).toInt(), size.value(1).toInt());
            named<QTabWidget>(tune, u"rightTabs"_s)->setCurrentWidget(named<QWidget>(tune, u"pushTab"_s));
            QTest::qWait(400);
            QVERIFY(window.grab().save(QString(shot).replace(u".png"_s, u"-push.png"_s), "PNG"));
        }

        // Show in Results: the Results page opens the local workspace on this run (SIMULATED marked).
        auto *results = window.findChild<ResultsPage *>();
        QVERIFY(results);
        click(tune, u"resultsButton"_s);
        QCOMPARE(window.page(window.currentPage()), results);
        QTRY_VERIFY_WITH_TIMEOUT(results->currentRun() && results->currentRun()->runId == runId, 60000);
        QVERIFY(results->currentRun()->result.simulated);
        // Push to Host from the Results page: the Tune page's push tab on that run and host.
        auto *pushHost = named<QPushButton>(results, u"pushHostButton"_s);
        QVERIFY(pushHost->isVisible());
        QSignalSpy reattached(tune, &TunePage::runFinished);
        click(results, u"pushHostButton"_s);
        QCOMPARE(window.page(window.currentPage()), tune);
        QCOMPARE(named<QTabWidget>(tune, u"rightTabs"_s)->currentWidget(),
                 named<QWidget>(tune, u"pushTab"_s));
        QTRY_COMPARE_WITH_TIMEOUT(reattached.count(), 1, 60000);
        QCOMPARE(named<QComboBox>(tune, u"runsCombo"_s)->currentData().toString(), runId);
        QSignalSpy previewedAgain(tune, &TunePage::previewReady);
        click(tune, u"pushPreviewButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(previewedAgain.count(), 1, 120000);
        QVERIFY2(previewedAgain.first().at(1).toString().isEmpty(), qPrintable(pushText->toPlainText()));
        QVERIFY(named<QPushButton>(tune, u"pushButton"_s)->isEnabled());
        QVERIFY(named<QLabel>(tune, u"proofLabel"_s)->text().isEmpty()); // the old proof is not this push's

        // Never worse than the file the server has, row by row (issue 20): a "shipped" file at the target
        // that a second run measured as the server's default (MOETUNE_SYNTHETIC_DEFAULT_FILE in the host's
        // interpreter makes it the synthetic server's existing file: TEST DOUBLE). The preview lists every
        // row: replaced with its measured gain where the run beat the file's own row, kept unmeasured where
        // the run never measured.
        QVERIFY(QDir().mkpath(fake.wantedFolder()));
        const QString shipped = fake.wantedFolder() + u'/' + fake.upName();
        {
            QFile f(shipped);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\n    \"1\": {\"BLOCK_SIZE_M\": 16, \"BLOCK_SIZE_N\": 32, \"BLOCK_SIZE_K\": 64, "
                    "\"GROUP_SIZE_M\": 1, "
                    "\"num_warps\": 4, \"num_stages\": 3},\n    \"256\": {\"BLOCK_SIZE_M\": 16, "
                    "\"BLOCK_SIZE_N\": 32, "
                    "\"BLOCK_SIZE_K\": 64, \"GROUP_SIZE_M\": 1, \"num_warps\": 4, \"num_stages\": 2},\n    "
                    "\"4096\": "
                    "{\"BLOCK_SIZE_M\": 16, \"BLOCK_SIZE_N\": 32, \"BLOCK_SIZE_K\": 64, \"GROUP_SIZE_M\": 1, "
                    "\"num_warps\": 4, \"num_stages\": 2}\n}\n");
        }
        {
            QFile py(fake.python());
            QVERIFY(py.open(QIODevice::ReadOnly));
            QByteArray script = py.readAll();
            py.close();
            const QByteArray hook =
                "export MOETUNE_SYNTHETIC_DEFAULT_FILE=" + shellQuote(shipped).toUtf8() + "\nexec python3";
            script.replace(QByteArray("exec python3"), hook);
            QVERIFY(py.open(QIODevice::WriteOnly | QIODevice::Truncate));
            py.write(script);
        }
        QSignalSpy secondRun(tune, &TunePage::runFinished);
        click(tune, u"startButton"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!secondRun.isEmpty() && secondRun.last().at(0).toString() != runId, 240000);
        QCOMPARE(secondRun.last().at(1).toString(), u"ok"_s);
        // An H200 NVL's file of the shape beside it: the preview says the server does not read it.
        QVERIFY(
            QFile::copy(shipped, fake.wantedFolder() + u"/E=128,N=384,device_name=NVIDIA_H200_NVL.json"_s));
        QSignalSpy previewedMerge(tune, &TunePage::previewReady);
        click(tune, u"pushPreviewButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(previewedMerge.count(), 1, 120000);
        const QString merged = pushText->toPlainText();
        QVERIFY2(previewedMerge.first().at(1).toString().isEmpty(), qPrintable(merged));
        QVERIFY2(merged.contains(fake.upName() +
                                 u": merged row by row into the file there (the run's default "
                                 u"was this very file)"_s),
                 qPrintable(merged));
        QVERIFY2(merged.contains(u"M=256   replaced"_s), qPrintable(merged));
        QVERIFY2(merged.contains(u"M=4096  kept, unmeasured"_s), qPrintable(merged));
        QVERIFY2(merged.contains(
                     u"for the device name NVIDIA_H200_NVL: the server on NVIDIA_H200 does not read it"_s),
                 qPrintable(merged));
        if (const QString shot = qEnvironmentVariable("MOETUNE_MERGE_SCREENSHOT"); !shot.isEmpty()) {
            window.resize(1600, 1000);
            named<QTabWidget>(tune, u"rightTabs"_s)->setCurrentWidget(named<QWidget>(tune, u"pushTab"_s));
            QTest::qWait(400);
            QVERIFY(window.grab().save(shot, "PNG"));
        }

        // MOETUNE_TUNE_SCREENSHOT=file.png: the window on the Tune page's run tab at the end (docs/images).
        if (const QString shot = qEnvironmentVariable("MOETUNE_TUNE_SCREENSHOT"); !shot.isEmpty()) {
            // MOETUNE_TUNE_SCREENSHOT_SIZE=WxH: another window size (e.g. the declared minimum 1024x640).
            const QStringList size =
                qEnvironmentVariable("MOETUNE_TUNE_SCREENSHOT_SIZE", u"1600x1000"_s).split(u'x');
            window.resize(size.value(0).toInt(), size.value(1).toInt());
            named<QTabWidget>(tune, u"rightTabs"_s)->setCurrentWidget(named<QWidget>(tune, u"liveTab"_s));
            QTest::qWait(400);
            QVERIFY(window.grab().save(shot, "PNG"));
        }
        // The demo workspace ran on a lent machine, not on one of the user's hosts: no Push to Host.
        QSignalSpy demoShown(results, &ResultsPage::workspaceShown);
        results->openDemo();
        QTRY_COMPARE_WITH_TIMEOUT(demoShown.count(), 1, 60000);
        QVERIFY(results->currentRun());
        QVERIFY(!named<QPushButton>(results, u"pushHostButton"_s)->isVisibleTo(results));
        fake.stopServer();
    }
};

QTEST_MAIN(TestTunePage)
#include "tst_tunepage.moc"
