// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The Hosts page offscreen: its models under QAbstractItemModelTester, the host dialog, and the whole
// "Local machine" flow (connect, probe a fake SGLang install, Diagnose host into the Diagnose page) with
// the real agent zipapp and LocalTransport.
#include "fakesglanghost.h"
#include "findchild.h"
#include "waitforchild.h"

#include "app/diagnose/diagnosepage.h"
#include "app/hosts/hostdialog.h"
#include "app/hosts/hostfoldermodel.h"
#include "app/hosts/hostgpumodel.h"
#include "app/hosts/hostlistmodel.h"
#include "app/hosts/hostoverview.h"
#include "app/hosts/hostspage.h"
#include "app/mainwindow.h"
#include "app/tune/tunepage.h"
#include "app/widgets/banner.h"
#include "app/widgets/logedit.h"
#include "app/widgets/serverprofiledialog.h"
#include "core/host/hostprobe.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#include "remote/flows/hostsessionsync.h"
#include "remote/hosts/hoststore.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>
#include <QTreeView>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::named;

namespace {

// The index of a page in the window's list (pages are added by several features; none is "the last").
int pageIndexOf(const MainWindow &window, const QWidget *page) {
    for (int i = 0; i < window.pageCount(); ++i)
        if (window.page(i) == page)
            return i;
    return -1;
}

HostProbe probeFrom(const QByteArray &json) {
    QJsonParseError e{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &e);
    QString error;
    const auto p = HostProbe::fromJson(doc.object(), &error);
    return p.value_or(HostProbe{});
}

QByteArray sglangProbe(const char *triton, const char *folders) {
    return QByteArray(
               R"({"type":"probe","host":{"hostname":"gpu-7"},"gpus":[],"python":{"executable":"/usr/bin/python3","version":"3.11.2","triton":")") +
           triton +
           R"("},"frameworks":[{"name":"sglang","importable":true,"version":"0.5.6","config_root":"/x/configs","triton_folders":)" +
           folders + R"(}],"servers":[]})";
}

// Widgets and models are found by their object names, as a user finds them by their labels.

HostListModel *hostModel(const HostsPage *page) {
    return named<HostListModel>(page, u"hostListModel"_s);
}

HostOverview *overview(const HostsPage *page) {
    return named<HostOverview>(page, u"hostOverview"_s);
}

} // namespace

class TestHosts : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    std::unique_ptr<test::FakeSglangHost> m_host;
    QString m_agent;

    // A main window whose Hosts page reads this test's settings and an empty ssh config.
    std::unique_ptr<MainWindow> makeWindow(HostsPage **page) {
        auto w = std::make_unique<MainWindow>();
        *page = w->findChild<HostsPage *>();
        w->hostRegistry()->setLocalHome(m_host->homePath());
        w->hostRegistry()->setAgentPath(m_agent);
        return w;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        // Everything this test writes (settings, ~/.ssh, fetched logs) stays in temporary folders.
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        m_host = std::make_unique<test::FakeSglangHost>();
        QString error;
        QVERIFY2(m_host->create(&error), qPrintable(error));
        m_agent = AgentClient::defaultLocalAgentPath();
        QVERIFY2(!m_agent.isEmpty(), "moetune-agent.pyz not found: build the moetune_agent_pyz target first");
    }

    void cleanupTestCase() { QSettings().clear(); }

    void folderModel_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QString>("installedStatus");
        QTest::newRow("installed missing, older present")
            << sglangProbe(
                   "3.6.0",
                   R"([{"name":"triton_3_4_0","files":["a.json"]},{"name":"triton_3_2_0","files":[]}])")
            << QStringList{u"triton_3_6_0"_s, u"triton_3_4_0"_s, u"triton_3_2_0"_s}
            << u"installed Triton: MISSING"_s;
        QTest::newRow("installed present, sorted newest first")
            << sglangProbe(
                   "3.4.0",
                   R"([{"name":"triton_3_2_0","files":[]},{"name":"triton_3_4_0","files":["a.json"]}])")
            << QStringList{u"triton_3_4_0"_s, u"triton_3_2_0"_s} << u"installed Triton: present"_s;
        QTest::newRow("no folders at all")
            << sglangProbe("3.7.0", "[]") << QStringList{u"triton_3_7_0"_s} << u"installed Triton: MISSING"_s;
        QTest::newRow("vllm flat folder")
            << QByteArray(
                   R"({"type":"probe","python":{"triton":"3.6.0"},"frameworks":[{"name":"vllm","importable":true,"config_root":"/v/configs","files":["E=8.json"]}]})")
            << QStringList{u"configs/"_s} << QString();
        QTest::newRow("no framework")
            << QByteArray(R"({"type":"probe","python":{},"frameworks":[]})") << QStringList{} << QString();
    }

    void folderModel() {
        QFETCH(QByteArray, json);
        QFETCH(QStringList, names);
        QFETCH(QString, installedStatus);
        HostFolderModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setProbe(probeFrom(json));
        QStringList got;
        QString status;
        for (int r = 0; r < model.rowCount(); ++r) {
            got.append(model.index(r, HostFolderModel::FolderColumn).data().toString());
            if (model.index(r, 0).data(HostFolderModel::InstalledRole).toBool())
                status = model.index(r, HostFolderModel::StatusColumn).data().toString();
        }
        QCOMPARE(got, names);
        QCOMPARE(status, installedStatus);
    }

    void gpuModel_data() {
        QTest::addColumn<qint64>("used");
        QTest::addColumn<qint64>("total");
        QTest::addColumn<double>("fraction");
        QTest::addColumn<QString>("text");
        QTest::newRow("busy") << qint64(120034) << qint64(143771) << 120034.0 / 143771.0
                              << u"117.2 / 140.4 GiB in use (83%)"_s;
        QTest::newRow("idle") << qint64(0) << qint64(81559) << 0.0 << u"0.0 / 79.6 GiB in use (0%)"_s;
        QTest::newRow("unknown total") << qint64(10) << qint64(0) << -1.0 << u"unknown"_s;
    }

    void gpuModel() {
        QFETCH(qint64, used);
        QFETCH(qint64, total);
        QFETCH(double, fraction);
        QFETCH(QString, text);
        QLocale::setDefault(QLocale::c());
        HostGpuModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        GpuInfo g;
        g.name = u"NVIDIA H200"_s;
        g.memoryUsedMiB = used;
        g.memoryTotalMiB = total;
        g.processes = {{5123, u"python3"_s, used}};
        model.setGpus({g, g});
        QCOMPARE(model.rowCount(), 2);
        const QModelIndex mem = model.index(0, HostGpuModel::MemoryColumn);
        QCOMPARE(mem.data().toString(), text);
        QCOMPARE(mem.data(HostGpuModel::MemoryFractionRole).toDouble(), fraction);
        QVERIFY(model.index(0, HostGpuModel::ProcessesColumn).data().toString().contains(u"pid 5123"_s));
    }

    void dialogValidation_data() {
        QTest::addColumn<QString>("alias");
        QTest::addColumn<int>("logKind");
        QTest::addColumn<QString>("logSource");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("errorPart");
        QTest::newRow("ok file") << u"gpu-9"_s << int(LogSource::Kind::File) << u"/var/log/sglang.log"_s
                                 << true << QString();
        QTest::newRow("ok command") << u"gpu-9"_s << int(LogSource::Kind::Command)
                                    << u"docker logs --tail 20000 sgl"_s << true << QString();
        QTest::newRow("empty name") << QString() << int(LogSource::Kind::None) << QString() << false
                                    << u"name"_s;
        QTest::newRow("space in name")
            << u"gpu 9"_s << int(LogSource::Kind::None) << QString() << false << u"no spaces"_s;
        QTest::newRow("taken name") << u"gpu-1"_s << int(LogSource::Kind::None) << QString() << false
                                    << u"already"_s;
        QTest::newRow("relative log")
            << u"gpu-9"_s << int(LogSource::Kind::File) << u"sglang.log"_s << false << u"absolute"_s;
        QTest::newRow("empty command")
            << u"gpu-9"_s << int(LogSource::Kind::Command) << QString() << false << u"command"_s;
    }

    // Point 9 of issue 12: HostName and User are checked like ssh checks them.
    void dialogRefusesWhatSshRefuses_data() {
        QTest::addColumn<QString>("hostName");
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("proxyJump");
        QTest::addColumn<QString>("errorPart"); // empty: accepted
        QTest::newRow("plain") << u"gpu-7.example.com"_s << u"ubuntu"_s << QString() << QString();
        QTest::newRow("address and jump")
            << u"10.0.0.7"_s << QString() << u"jump@bastion:2222"_s << QString();
        QTest::newRow("ipv6") << u"fe80::1"_s << QString() << QString() << QString();
        QTest::newRow("semicolon") << u"gpu-7;rm -rf ~"_s << QString() << QString() << u"HostName"_s;
        QTest::newRow("command substitution") << u"$(reboot)"_s << QString() << QString() << u"HostName"_s;
        QTest::newRow("backticks") << u"`id`"_s << QString() << QString() << u"HostName"_s;
        QTest::newRow("option host") << u"-oProxyCommand=sh"_s << QString() << QString() << u"'-'"_s;
        QTest::newRow("option user") << u"gpu-7"_s << u"-oProxyCommand=x"_s << QString() << u"User"_s;
        QTest::newRow("user substitution") << u"gpu-7"_s << u"a$(id)"_s << QString() << u"User"_s;
        QTest::newRow("jump host") << u"gpu-7"_s << QString() << u"bastion;id"_s << u"ProxyJump"_s;
        QTest::newRow("jump user") << u"gpu-7"_s << QString() << u"-x@bastion"_s << u"ProxyJump"_s;
    }

    void dialogRefusesWhatSshRefuses() {
        QFETCH(QString, hostName);
        QFETCH(QString, user);
        QFETCH(QString, proxyJump);
        QFETCH(QString, errorPart);
        HostDialog dialog(HostDialog::Mode::Add, HostConfig{}, {});
        QTest::keyClicks(named<QLineEdit>(&dialog, u"aliasEdit"_s), u"gpu-7"_s);
        QTest::keyClicks(named<QLineEdit>(&dialog, u"hostNameEdit"_s), hostName);
        QTest::keyClicks(named<QLineEdit>(&dialog, u"userEdit"_s), user);
        QTest::keyClicks(named<QLineEdit>(&dialog, u"proxyJumpEdit"_s), proxyJump);
        const QString error = named<QLabel>(&dialog, u"errorLabel"_s)->text();
        QCOMPARE(named<QDialogButtonBox>(&dialog, u"buttons"_s)->button(QDialogButtonBox::Ok)->isEnabled(),
                 errorPart.isEmpty());
        if (errorPart.isEmpty())
            QVERIFY2(error.isEmpty(), qPrintable(error));
        else
            QVERIFY2(error.contains(errorPart), qPrintable(error));
    }

    // The labels with a mnemonic point at their field, so '&' never shows and Alt+key jumps there.
    void dialogLabelsHaveBuddies() {
        HostDialog dialog(HostDialog::Mode::Add, HostConfig{}, {});
        const QList<QLabel *> labels = dialog.findChildren<QLabel *>();
        int withMnemonic = 0;
        for (const QLabel *label : labels) {
            if (!label->text().contains(u'&'))
                continue;
            ++withMnemonic;
            QVERIFY2(label->buddy() != nullptr, qPrintable(label->text()));
        }
        QVERIFY(withMnemonic >= 10);
        QCOMPARE(named<QLabel>(&dialog, u"logLabel"_s)->buddy(), named<QWidget>(&dialog, u"logKindCombo"_s));
        QCOMPARE(named<QLabel>(&dialog, u"identityLabel"_s)->buddy(),
                 named<QWidget>(&dialog, u"identityEdit"_s));
    }

    void dialogValidation() {
        QFETCH(QString, alias);
        QFETCH(int, logKind);
        QFETCH(QString, logSource);
        QFETCH(bool, valid);
        QFETCH(QString, errorPart);
        HostDialog dialog(HostDialog::Mode::Add, HostConfig{}, {u"gpu-1"_s, u"local"_s});
        named<QLineEdit>(&dialog, u"aliasEdit"_s)->setText(alias);
        named<QComboBox>(&dialog, u"logKindCombo"_s)
            ->setCurrentIndex(named<QComboBox>(&dialog, u"logKindCombo"_s)->findData(logKind));
        named<QLineEdit>(&dialog, u"logSourceEdit"_s)->setText(logSource);
        QCOMPARE(named<QDialogButtonBox>(&dialog, u"buttons"_s)->button(QDialogButtonBox::Ok)->isEnabled(),
                 valid);
        QCOMPARE(dialog.validationError().isEmpty(), valid);
        if (!valid)
            QVERIFY2(named<QLabel>(&dialog, u"errorLabel"_s)->text().contains(errorPart),
                     qPrintable(named<QLabel>(&dialog, u"errorLabel"_s)->text()));
    }

    void addEditRemoveHostThroughDialog() {
        HostsPage *page = nullptr;
        auto window = makeWindow(&page);
        QVERIFY(page);
        QAbstractItemModelTester tester(hostModel(page),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        // With nothing configured the page offers this machine, so the flow can be tried at once.
        QCOMPARE(hostModel(page)->rowCount(), 1);
        QCOMPARE(hostModel(page)->index(0, 0).data().toString(), u"Local machine"_s);

        page->addHost();
        HostDialog *dialog = test::waitForChild<HostDialog>(page, 2000);
        QVERIFY(dialog);
        QTest::keyClicks(named<QLineEdit>(dialog, u"aliasEdit"_s), u"gpu-7"_s);
        QTest::keyClicks(named<QLineEdit>(dialog, u"hostNameEdit"_s), u"10.1.2.3"_s);
        QTest::keyClicks(named<QLineEdit>(dialog, u"userEdit"_s), u"ubuntu"_s);
        named<QSpinBox>(dialog, u"portSpin"_s)->setValue(2222);
        QTest::keyClicks(named<QLineEdit>(dialog, u"proxyJumpEdit"_s), u"jump@bastion"_s);
        named<QLineEdit>(dialog, u"pythonEdit"_s)->setText(u"/opt/venv/bin/python"_s);
        named<QComboBox>(dialog, u"logKindCombo"_s)
            ->setCurrentIndex(
                named<QComboBox>(dialog, u"logKindCombo"_s)->findData(int(LogSource::Kind::Command)));
        QTest::keyClicks(named<QLineEdit>(dialog, u"logSourceEdit"_s), u"journalctl -u sglang -n 20000"_s);
        QVERIFY(named<QDialogButtonBox>(dialog, u"buttons"_s)->button(QDialogButtonBox::Ok)->isEnabled());
        QTest::mouseClick(named<QDialogButtonBox>(dialog, u"buttons"_s)->button(QDialogButtonBox::Ok),
                          Qt::LeftButton);

        QTRY_COMPARE(hostModel(page)->rowCount(), 2);
        const int row = hostModel(page)->rowOf(u"gpu-7"_s);
        QVERIFY(row >= 0);
        QCOMPARE(hostModel(page)->index(row, HostListModel::AddressColumn).data().toString(),
                 u"ubuntu@10.1.2.3:2222 via jump@bastion"_s);
        QCOMPARE(hostModel(page)->index(row, HostListModel::SourceColumn).data().toString(), u"app"_s);
        QCOMPARE(page->currentAlias(), u"gpu-7"_s);

        // Kept in the settings, where the CLI's HostStore finds it too.
        QSettings settings;
        const auto saved = HostStore(&settings).host(u"gpu-7"_s);
        QVERIFY(saved);
        QCOMPARE(saved->python, u"/opt/venv/bin/python"_s);
        QCOMPARE(saved->logSource.kind, LogSource::Kind::Command);
        QCOMPARE(saved->logSource.value, u"journalctl -u sglang -n 20000"_s);
        QCOMPARE(saved->port, 2222);

        // Edit: the python changes, the rest stays.
        page->editHost();
        dialog = test::waitForChild<HostDialog>(page, 2000);
        QVERIFY(dialog);
        QCOMPARE(named<QLineEdit>(dialog, u"userEdit"_s)->text(), u"ubuntu"_s);
        named<QLineEdit>(dialog, u"pythonEdit"_s)->setText(u"/srv/env/bin/python3"_s);
        QTest::mouseClick(named<QDialogButtonBox>(dialog, u"buttons"_s)->button(QDialogButtonBox::Ok),
                          Qt::LeftButton);
        QTRY_COMPARE(HostStore(&settings).host(u"gpu-7"_s)->python, u"/srv/env/bin/python3"_s);
        QCOMPARE(HostStore(&settings).host(u"gpu-7"_s)->user, u"ubuntu"_s);

        // Remove asks first: Cancel keeps the host, Remove removes it.
        QVERIFY(page->selectHost(u"gpu-7"_s));
        for (const bool confirm : {false, true}) {
            QTest::mouseClick(named<QPushButton>(page, u"removeButton"_s), Qt::LeftButton);
            QMessageBox *box = nullptr;
            QTRY_VERIFY((box = named<QMessageBox>(page, u"removeHostConfirm"_s)) != nullptr);
            QVERIFY2(box->text().contains(u"gpu-7"_s), qPrintable(box->text()));
            QCOMPARE(hostModel(page)->rowCount(), 2); // nothing removed while it asks
            named<QAbstractButton>(box, confirm ? u"confirmRemoveButton"_s : u"cancelRemoveButton"_s)
                ->click();
            QTRY_VERIFY(!named<QMessageBox>(page, u"removeHostConfirm"_s));
            QCOMPARE(hostModel(page)->rowCount(), confirm ? 1 : 2);
            QCOMPARE(bool(HostStore(&settings).host(u"gpu-7"_s)), !confirm);
        }
        // The Local machine entry cannot be removed.
        QVERIFY(page->selectHost(HostListModel::localAlias()));
        QVERIFY(!named<QPushButton>(page, u"removeButton"_s)->isEnabled());
        QVERIFY(!page->removeHostNow());
    }

    void diagnoseWithoutLogSourceSaysWhatToDo() {
        HostsPage *page = nullptr;
        auto window = makeWindow(&page);
        QVERIFY(page->selectHost(HostListModel::localAlias()));
        page->diagnoseHost();
        QVERIFY2(page->bannerText().contains(u"no log source"_s), qPrintable(page->bannerText()));
        QCOMPARE(window->currentPage(), 0);
    }

    void localMachineProbeAndDiagnose() {
        HostsPage *page = nullptr;
        auto window = makeWindow(&page);
        window->show();
        QAbstractItemModelTester tester(hostModel(page),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester gpuTester(overview(page)->gpuModel(),
                                           QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester folderTester(overview(page)->folderModel(),
                                              QAbstractItemModelTester::FailureReportingMode::QtTest);
        const int hostsIndex = pageIndexOf(*window, page);
        window->setCurrentPage(hostsIndex);

        // The Local machine's log source is set like any host's: a file, here with a space in its path.
        HostConfig local = hostModel(page)->entry(HostListModel::localAlias())->host;
        local.logSource = {LogSource::Kind::File, m_host->logPath()};
        page->saveHost(local);
        QVERIFY(page->selectHost(HostListModel::localAlias()));

        page->connectHost();
        const int row = hostModel(page)->rowOf(HostListModel::localAlias());
        QTRY_COMPARE(hostModel(page)->index(row, 0).data(HostListModel::StateRole).toInt(),
                     int(Transport::State::Connected));
        QCOMPARE(hostModel(page)->index(row, HostListModel::StateColumn).data().toString(), u"Connected"_s);

        page->probeHost();
        HostOverview *ov = overview(page);
        QTRY_VERIFY_WITH_TIMEOUT(ov->hasProbe() || page->bannerText().contains(u"failed"_s), 60000);
        QVERIFY2(ov->hasProbe(), qPrintable(page->bannerText()));
        QCOMPARE(ov->field(u"framework"_s), u"SGLang 0.5.6"_s);
        QVERIFY2(ov->field(u"triton"_s).startsWith(u"3.6.0"_s), qPrintable(ov->field(u"triton"_s)));
        QCOMPARE(ov->field(u"configRoot"_s), m_host->configRoot());
        // The folder of the installed Triton is missing: it is listed first and marked so.
        HostFolderModel *folders = ov->folderModel();
        QCOMPARE(folders->rowCount(), 2);
        QCOMPARE(folders->index(0, HostFolderModel::FolderColumn).data().toString(), u"triton_3_6_0"_s);
        QCOMPARE(folders->index(0, HostFolderModel::StatusColumn).data().toString(),
                 u"installed Triton: MISSING"_s);
        QCOMPARE(folders->index(1, HostFolderModel::FolderColumn).data().toString(), u"triton_3_4_0"_s);
        QCOMPARE(folders->index(1, HostFolderModel::FilesColumn).data().toString(), u"1 config file(s)"_s);
        // GPU facts through the nvidia-smi stand-in.
        QCOMPARE(ov->gpuModel()->rowCount(), 1);
        QVERIFY(
            ov->gpuModel()->index(0, HostGpuModel::GpuColumn).data().toString().contains(u"NVIDIA H200"_s));
        QVERIFY(ov->gpuModel()
                    ->index(0, HostGpuModel::ProcessesColumn)
                    .data()
                    .toString()
                    .contains(u"pid 5123"_s));
        // The served model and the tuning job it implies.
        QVERIFY2(ov->field(u"model"_s).contains(m_host->modelPath()), qPrintable(ov->field(u"model"_s)));
        QVERIFY2(ov->field(u"moeShape"_s).contains(u"128 experts, top-k 8, hidden size 2048"_s),
                 qPrintable(ov->field(u"moeShape"_s)));
        QVERIFY2(ov->field(u"suggestedSpec"_s).contains(u"E=128, N=768, K=2048, top-k 8"_s),
                 qPrintable(ov->field(u"suggestedSpec"_s)));
        QVERIFY2(page->bannerText().contains(u"MISSING"_s), qPrintable(page->bannerText()));

        // The server profile dialog starts from the probe's suggestion for the running server; what is
        // saved goes with the host.
        QVERIFY(local.serverProfile.kind == ServerProfile::Kind::None);
        QTest::mouseClick(named<QPushButton>(page, u"serverProfileButton"_s), Qt::LeftButton);
        QPointer<ServerProfileDialog> profileDialog;
        QTRY_VERIFY((profileDialog = page->findChild<ServerProfileDialog *>()) && profileDialog->isVisible());
        QVERIFY2(profileDialog->profile().isSet(), qPrintable(profileDialog->problem()));
        QVERIFY(
            named<QLabel>(profileDialog, u"suggestionLabel"_s)->text().startsWith(u"The probe suggests"_s));
        QVERIFY2(profileDialog->profile().canStopStart(), qPrintable(profileDialog->profile().summary()));
        QVERIFY2(!profileDialog->profile().stopCommand.isEmpty(),
                 qPrintable(profileDialog->profile().summary()));
        // The user completes what the probe could not know and saves.
        named<QLineEdit>(profileDialog, u"logFileEdit"_s)->setText(m_host->logPath());
        named<QLineEdit>(profileDialog, u"readyLineEdit"_s)->setText(u"ready to roll"_s);
        named<QLineEdit>(profileDialog, u"persistentEdit"_s)->setText(u"/srv/moe-configs"_s);
        QCOMPARE(profileDialog->problem(), QString());
        const ServerProfile typed = profileDialog->profile();
        QTest::mouseClick(
            named<QDialogButtonBox>(profileDialog, u"buttonBox"_s)->button(QDialogButtonBox::Save),
            Qt::LeftButton);
        QTRY_VERIFY(!profileDialog || !profileDialog->isVisible());
        QCOMPARE(window->hostRegistry()->localHost().serverProfile, typed);
        QCOMPARE(window->hostRegistry()->localHost().serverProfile.persistentConfigDir,
                 u"/srv/moe-configs"_s);
        QVERIFY2(page->bannerText().contains(u"Server profile of"_s), qPrintable(page->bannerText()));

        // "Tune the served model": the Tune page opens with the job the probe implies.
        auto *tuneServed = named<QPushButton>(page, u"tuneServedButton"_s);
        QVERIFY(tuneServed->isEnabled());
        QTest::mouseClick(tuneServed, Qt::LeftButton);
        auto *tunePage = window->findChild<TunePage *>(u"tunePage"_s);
        QVERIFY(tunePage);
        // The host's log is diagnosed first (issue 45 point 1: the same job as Tune This on it).
        QTRY_COMPARE_WITH_TIMEOUT(window->page(window->currentPage()), static_cast<QWidget *>(tunePage),
                                  120000);
        QCOMPARE(tunePage->hostAlias(), HostListModel::localAlias());
        QCOMPARE(tunePage->spec().experts, 128);
        QCOMPARE(tunePage->spec().n, 768);
        QCOMPARE(tunePage->spec().hiddenSize, 2048);
        QCOMPARE(tunePage->spec().topk, 8);
        QCOMPARE(tunePage->validation(), QString());
        window->setCurrentPage(hostsIndex);

        // MOETUNE_HOSTS_SCREENSHOT=file.png: a picture of the probed page for the docs (fake host, see
        // above).
        if (const QString shot = qEnvironmentVariable("MOETUNE_HOSTS_SCREENSHOT"); !shot.isEmpty()) {
            HostConfig other;
            other.alias = u"gpu-7"_s;
            other.hostName = u"gpu-7.example.com"_s;
            other.user = u"ubuntu"_s;
            other.logSource = {LogSource::Kind::Command, u"journalctl -u sglang -n 20000"_s};
            page->saveHost(other);
            QVERIFY(page->selectHost(HostListModel::localAlias()));
            window->resize(1440, 900);
            QTest::qWait(300);
            QVERIFY(window->grab().save(shot, "PNG"));
        }

        // Diagnose host: fetch the log, open it in the Diagnose page with the probe merged, switch pages.
        QSignalSpy opened(page, &HostsPage::logFetched);
        page->diagnoseHost();
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 60000);
        QCOMPARE(opened.at(0).at(0).toString(), HostListModel::localAlias());
        QCOMPARE(window->currentPage(), 0);
        DiagnosePage *diagnose = window->findChild<DiagnosePage *>();
        QTRY_VERIFY_WITH_TIMEOUT(!diagnose->isBusy(), 30000);
        const Diagnosis &d = diagnose->diagnosis();
        bool folderConfirmed = false;
        bool servedModel = false;
        bool fallbackFromLog = false;
        for (const Finding &f : d.findings) {
            folderConfirmed = folderConfirmed || f.rule == u"host-triton-folder-missing"_s;
            servedModel = servedModel || f.rule == u"host-served-model"_s;
            fallbackFromLog = fallbackFromLog || f.rule.contains(u"fallback"_s);
        }
        QVERIFY2(folderConfirmed, qPrintable(d.toMarkdown()));
        QVERIFY2(servedModel, qPrintable(d.toMarkdown()));
        QVERIFY2(fallbackFromLog, qPrintable(d.toMarkdown()));
        QCOMPARE(diagnose->hostLabel(), u"Local machine"_s);
        QVERIFY(diagnose->findChild<QLabel *>(u"sourceLabel"_s)->text().contains(u"Local machine"_s));
        // One name for the host: the fetched file and the merged summary say "Local machine" too.
        const QString fetched = QFileInfo(opened.at(0).at(1).toString()).fileName();
        QVERIFY2(fetched.startsWith(u"Local_machine-"_s), qPrintable(fetched));
        QVERIFY2(d.summary.startsWith(u"Local machine: "_s), qPrintable(d.summary));
        QVERIFY2(page->bannerText().contains(u"Fetched"_s), qPrintable(page->bannerText()));
        if (const QString shot = qEnvironmentVariable("MOETUNE_HOSTS_SCREENSHOT"); !shot.isEmpty()) {
            QTest::qWait(300);
            QVERIFY(window->grab().save(QString(shot).replace(u".png"_s, u"-diagnose.png"_s), "PNG"));
        }

        // Opening another log drops the host context: its findings are the log's alone.
        diagnose->loadDemo();
        QVERIFY(diagnose->hostLabel().isEmpty());
        page->disconnectHost();
        QTRY_COMPARE(hostModel(page)->index(row, 0).data(HostListModel::StateRole).toInt(),
                     int(Transport::State::Disconnected));
    }

    // Issue 18: Diagnose host is one flow below both shells: the app's findings are those of the CLI's
    // path (HostSessionSync::diagnoseHost, as `moetune-cli diagnose --host local` runs it).
    void diagnoseHostSameAsTheCli() {
        HostsPage *page = nullptr;
        auto window = makeWindow(&page);
        HostConfig local = hostModel(page)->entry(HostListModel::localAlias())->host;
        local.logSource = {LogSource::Kind::File, m_host->logPath()};
        page->saveHost(local);
        QVERIFY(page->selectHost(HostListModel::localAlias()));
        QSignalSpy opened(page, &HostsPage::logFetched);
        page->diagnoseHost();
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 60000);
        DiagnosePage *diagnose = window->findChild<DiagnosePage *>();
        QTRY_VERIFY_WITH_TIMEOUT(!diagnose->isBusy(), 30000);
        const Diagnosis app = diagnose->diagnosis();

        HostSession::Environment env;
        env.localHome = m_host->homePath();
        env.agentPath = m_agent;
        HostSessionSync cli(local, {}, env);
        QString error;
        QVERIFY2(cli.connect(&error), qPrintable(error));
        QTemporaryDir tmp;
        const auto viaCli =
            cli.diagnoseHost(64 << 20, tmp.filePath(u"cli.log"_s), diagnose->diagnoser(), &error);
        QVERIFY2(viaCli, qPrintable(error));
        QStringList appFindings;
        QStringList cliFindings;
        for (const Finding &f : app.findings)
            appFindings << f.id + u' ' + f.title;
        for (const Finding &f : viaCli->findings)
            cliFindings << f.id + u' ' + f.title;
        QVERIFY(appFindings.size() > 1);
        QCOMPARE(appFindings, cliFindings);
        QCOMPARE(app.summary, viaCli->summary);
        QCOMPARE(app.targets.size(), viaCli->targets.size());
    }

    void fetchShowsProgressAndCancels() {
        HostsPage *page = nullptr;
        auto window = makeWindow(&page);
        window->show();
        const int hostsIndex = pageIndexOf(*window, page);
        window->setCurrentPage(hostsIndex);
        HostConfig local = hostModel(page)->entry(HostListModel::localAlias())->host;
        // A log command that never ends (a stuck journalctl): the fetch must be cancellable.
        local.logSource = {LogSource::Kind::Command, u"echo partial; sleep 60"_s};
        page->saveHost(local);
        QVERIFY(page->selectHost(HostListModel::localAlias()));
        QSignalSpy opened(page, &HostsPage::logFetched);
        page->diagnoseHost();
        QVERIFY(named<QProgressBar>(page, u"fetchProgress"_s)->isVisible());
        QVERIFY(named<QPushButton>(page, u"cancelButton"_s)->isVisible());
        QTest::qWait(300);
        QTest::mouseClick(named<QPushButton>(page, u"cancelButton"_s), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(page->bannerText().contains(u"cancelled"_s), 20000);
        QVERIFY(!named<QProgressBar>(page, u"fetchProgress"_s)->isVisible());
        QVERIFY(!named<QPushButton>(page, u"cancelButton"_s)->isVisible());
        QCOMPARE(opened.count(), 0);
        QCOMPARE(window->currentPage(), hostsIndex);
    }

    void followLiveAppendsNewLines() {
        HostsPage *page = nullptr;
        auto window = makeWindow(&page);
        QVERIFY(page->selectHost(HostListModel::localAlias()));
        const QString log = m_host->root() + u"/logs/follow.log"_s;
        {
            QFile f(log);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("[2026-11-29 10:00:00] starting\n");
        }
        HostConfig local = hostModel(page)->entry(HostListModel::localAlias())->host;
        local.logSource = {LogSource::Kind::File, log};
        page->saveHost(local);
        QVERIFY(page->selectHost(HostListModel::localAlias()));
        page->setFollowing(true);
        QVERIFY(named<QPushButton>(page, u"followButton"_s)->isChecked());
        DiagnosePage *diagnose = window->findChild<DiagnosePage *>();
        QCOMPARE(window->currentPage(), 0);
        // tail -F starts at the end of the file, whenever it starts: keep writing until a line arrives.
        QTimer writer;
        connect(&writer, &QTimer::timeout, this, [log] {
            QFile f(log);
            if (f.open(QIODevice::Append))
                f.write(
                    "[2026-11-29 10:00:09 TP0] Using default MoE kernel config. Performance might be "
                    "sub-optimal! Config file not found at /x/configs/triton_3_6_0/"
                    "E=64,N=1408,device_name=NVIDIA_H200.json, you can create them with "
                    "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n");
        });
        writer.start(300);
        // The server keeps writing; lines arrive in batches and the page diagnoses between them.
        QTRY_VERIFY_WITH_TIMEOUT(
            named<LogEdit>(diagnose, u"logEdit"_s)->toPlainText().contains(u"E=64,N=1408"_s), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!diagnose->diagnosis().targets.isEmpty(), 20000);
        writer.stop();
        QCOMPARE(diagnose->diagnosis().targets.first().name.experts, 64);
        // The diagnosis knows its host: "Tune this" runs there.
        QCOMPARE(diagnose->diagnosis().host, HostListModel::localAlias());
        // The Diagnose page says that it follows, and its Stop ends Follow Live on the Hosts page too.
        auto *banner = named<Banner>(diagnose, u"followBanner"_s);
        QVERIFY(!banner->isHidden());
        QVERIFY2(banner->text().contains(u"Following the log of Local machine"_s),
                 qPrintable(banner->text()));
        QVERIFY(diagnose->isFollowing());
        emit banner->actionTriggered(); // its Stop button
        QVERIFY(!diagnose->isFollowing());
        QVERIFY(banner->isHidden());
        QVERIFY(!named<QPushButton>(page, u"followButton"_s)->isChecked());
        QVERIFY2(page->bannerText().contains(u"Stopped following"_s), qPrintable(page->bannerText()));
        QTRY_VERIFY(!window->hostRegistry()->connection(HostListModel::localAlias())->isFollowing());
    }
};

QTEST_MAIN(TestHosts)
#include "tst_hosts.moc"
