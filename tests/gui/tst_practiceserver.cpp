// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The practice server (sandbox) as a new user without a GPU finds it: one click on the Hosts page makes a
// local practice server with its own config tree and log, and the whole loop works from the GUI on it:
// Diagnose host -> Tune this (K and top-k filled, synthetic backend) -> a real agent run (SIMULATED) ->
// Cancel run asks first -> push preview (target folder and diff, also when the push is refused) -> push
// -> restart and prove -> undo. PRACTICE DOUBLES: resources/practice/fake_sglang_server.py stands in for
// the inference server and a script for nvidia-smi (remote/practiceserver.h); the agent, its
// install-config, the shell commands of the profile and every file are real.
#include "app/diagnose/diagnosepage.h"
#include "app/hosts/hostspage.h"
#include "app/mainwindow.h"
#include "app/tune/tunepage.h"
#include "findchild.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "remote/hosts/practiceserver.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::click;
using moetune::test::named;

namespace {

QByteArray readAll(const QString &path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestPracticeServer : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    QString m_agent = QStringLiteral(MOETUNE_AGENT_PYZ);

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        QStandardPaths::setTestModeEnabled(true); // the practice server goes below this HOME
        QSettings().clear();
        QDir().mkpath(m_home.path() + u"/.ssh"_s);
        QVERIFY2(QFileInfo::exists(m_agent), qPrintable(m_agent));
    }
    void cleanupTestCase() {
        PracticeServer practice;
        QFile pid(practice.pidFile());
        if (pid.open(QIODevice::ReadOnly))
            ::kill(pid_t(pid.readAll().trimmed().toLongLong()), SIGTERM);
        QSettings().clear();
    }

    void refusesAForeignFolder() {
        // Only a folder the app made is marked as a double: someone else's folder is never taken over.
        QTemporaryDir foreign;
        QFile other(foreign.filePath(u"notes.txt"_s));
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.close();
        QString error;
        QVERIFY(!PracticeServer(foreign.path()).create(&error));
        QVERIFY2(error.contains(u"is not a practice server"_s), qPrintable(error));
        QVERIFY(!QFile::exists(foreign.filePath(u".moetune-test-double"_s)));
    }

    void wholeLoopFromTheGui() {
        MainWindow window;
        window.hostRegistry()->setAgentPath(m_agent);
        window.resize(1440, 900);
        window.show();
        auto *hosts = window.findChild<HostsPage *>();
        auto *diagnose = window.findChild<DiagnosePage *>();
        auto *tune = window.findChild<TunePage *>(u"tunePage"_s);
        QVERIFY(hosts && diagnose && tune);

        // One click: the practice server exists, runs, and is the selected host, labelled as a double.
        click(hosts, u"practiceButton"_s);
        const PracticeServer practice;
        QVERIFY(practice.root().startsWith(m_home.path()));
        const auto host = window.hostRegistry()->host(PracticeServer::alias());
        QVERIFY(host && host->isPractice());
        QCOMPARE(window.hostRegistry()->displayName(PracticeServer::alias()), u"Practice server (sandbox)"_s);
        QCOMPARE(hosts->currentAlias(), PracticeServer::alias());
        QVERIFY(hosts->bannerText().contains(u"practice double"_s));
        QCOMPARE(QString::fromUtf8(readAll(practice.marker())), PracticeServer::markerText());
        QTRY_VERIFY_WITH_TIMEOUT(readAll(practice.log()).contains("ready to roll"), 30000);
        QVERIFY(readAll(practice.log()).contains("PRACTICE DOUBLE"));
        QVERIFY(practice.isRunning());

        // Diagnose host: its log (fallback on both ranks) on the Diagnose page, from that host.
        QSignalSpy diagnosed(diagnose, &DiagnosePage::diagnosisFinished);
        click(hosts, u"diagnoseHostButton"_s);
        QTRY_VERIFY_WITH_TIMEOUT(diagnosed.count() >= 1 && !diagnose->isBusy() &&
                                     !diagnose->diagnosis().targets.isEmpty(),
                                 120000);
        int row = -1;
        for (int i = 0; i < diagnose->diagnosis().findings.size() && row < 0; ++i)
            if (diagnose->diagnosis().findings.at(i).target)
                row = i;
        QVERIFY(row >= 0);
        diagnose->selectFinding(row);
        click(diagnose, u"tuneButton"_s);
        QCOMPARE(tune->hostAlias(), PracticeServer::alias());
        // K and top-k without typing (the log names the model; the probe reads its config.json).
        QCOMPARE(named<QSpinBox>(tune, u"kSpin"_s)->value(), 2048);
        QCOMPARE(named<QSpinBox>(tune, u"topkSpin"_s)->value(), 8);
        QCOMPARE(named<QComboBox>(tune, u"backendCombo"_s)->currentData().toString(), u"synthetic"_s);
        named<QLineEdit>(tune, u"batchSizesEdit"_s)->setText(u"1,16"_s);
        QCOMPARE(tune->validation(), QString());

        // The run; Cancel run asks first, and Keep Running keeps it.
        QSignalSpy finished(tune, &TunePage::runFinished);
        click(tune, u"startButton"_s);
        auto *cancel = named<QPushButton>(tune, u"cancelButton"_s);
        QTRY_VERIFY_WITH_TIMEOUT(cancel->isEnabled() || finished.count() > 0, 120000);
        if (finished.isEmpty()) {
            QTest::mouseClick(cancel, Qt::LeftButton);
            auto *box = tune->findChild<QMessageBox *>(u"cancelRunConfirm"_s);
            QVERIFY2(box && box->isVisible(), "Cancel run did not ask");
            QTest::mouseClick(named<QPushButton>(box, u"keepRunningButton"_s), Qt::LeftButton);
        } else {
            qWarning("the run finished before Cancel could be clicked: the confirmation was not seen");
        }
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(finished.first().at(1).toString(), u"ok"_s);
        QVERIFY(named<QLabel>(tune, u"runLabel"_s)->text().contains(u"SIMULATED"_s));

        // Without the marker the tree is no double: the preview still shows the folder and the diff,
        // says in the GUI's words why Push is off, and keeps it off.
        QVERIFY(QFile::remove(practice.marker()));
        auto *pushText = named<QPlainTextEdit>(tune, u"pushText"_s);
        QSignalSpy previewed(tune, &TunePage::previewReady);
        click(tune, u"pushPreviewButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(previewed.count(), 1, 120000);
        const QString refused = pushText->toPlainText();
        QVERIFY2(refused.contains(u"Target folder: "_s + practice.wantedFolder()), qPrintable(refused));
        QVERIFY2(refused.contains(u"Push is off for this run"_s) && refused.contains(u"SIMULATED"_s),
                 qPrintable(refused));
        QVERIFY2(refused.contains(u"new file "_s + practice.wantedFolder() + u'/' + practice.upName()),
                 qPrintable(refused));
        QVERIFY2(refused.contains(u"+++ "_s + practice.wantedFolder()), qPrintable(refused)); // the diff
        for (const QString &cli : {u"install-config"_s, u"test fixture"_s, u"--python"_s})
            QVERIFY2(!refused.contains(cli), qPrintable(refused));
        QVERIFY(!named<QPushButton>(tune, u"pushButton"_s)->isEnabled());

        // The practice server's own tree again: preview, push, restart and prove, undo.
        // (The app does not mark that tree again by itself: it is no practice server's any more.)
        QString error;
        QVERIFY(!PracticeServer().create(&error));
        QFile marker(practice.marker());
        QVERIFY(marker.open(QIODevice::WriteOnly));
        marker.write(PracticeServer::markerText().toUtf8());
        marker.close();
        click(tune, u"pushPreviewButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(previewed.count(), 2, 120000);
        QVERIFY2(!pushText->toPlainText().contains(u"Push is off"_s), qPrintable(pushText->toPlainText()));
        QSignalSpy pushed(tune, &TunePage::pushed);
        click(tune, u"pushButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(pushed.count(), 1, 120000);
        QVERIFY2(pushed.first().at(1).toString().isEmpty(), qPrintable(pushText->toPlainText()));
        QVERIFY(QFile::exists(practice.wantedFolder() + u'/' + practice.upName()));
        QSignalSpy proved(tune, &TunePage::proved);
        click(tune, u"restartButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(proved.count(), 1, 240000);
        QVERIFY2(proved.first().at(1).toBool(), qPrintable(pushText->toPlainText()));
        QVERIFY(named<QLabel>(tune, u"proofLabel"_s)->text().contains(u"gone on every rank"_s));
        if (const QString shot = qEnvironmentVariable("MOETUNE_PRACTICE_SCREENSHOT"); !shot.isEmpty()) {
            QTest::qWait(300);
            QVERIFY(window.grab().save(shot, "PNG"));
        }
        QSignalSpy undone(tune, &TunePage::undone);
        click(tune, u"undoButton"_s);
        QTRY_COMPARE_WITH_TIMEOUT(undone.count(), 1, 120000);
        QVERIFY2(undone.first().at(1).toString().isEmpty(), qPrintable(pushText->toPlainText()));
        QVERIFY(!QFile::exists(practice.wantedFolder() + u'/' + practice.upName()));
    }
};

QTEST_MAIN(TestPracticeServer)
#include "tst_practiceserver.moc"
