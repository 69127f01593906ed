// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// What a new user without a GPU met on the Tune page and in the host dialogs (issue 21), offscreen:
// Start tuning stays off after Check GPUs said the job cannot run there; the agent's command-line words
// shown as GUI sentences; K and top-k from the list of common MoE models when the log names the model;
// the host dialog's Browse for the log file and a layout that does not move while typing; Save of an
// unusable server profile stays off. The agent runs for real on the Local machine (no GPU here).
#include "app/hosts/hostdialog.h"
#include "app/tune/agentsentence.h"
#include "app/tune/tunepage.h"
#include "app/widgets/serverprofiledialog.h"
#include "core/diagnosis/diagnoser.h"
#include "core/moe/moemodelcatalog.h"
#include "core/util/coreresources.h"
#include "findchild.h"
#include "remote/flows/hostregistry.h"

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;
using moetune::test::named;

namespace {

const QByteArray fallbackLog =
    "[2026-11-29 10:00:01] server_args=ServerArgs(model_path='/models/Qwen3-30B-A3B-Instruct-2507', "
    "tp_size=2, port=30000)\n"
    "[2026-11-29 10:00:09 TP0] Config file not found at "
    "/srv/cfg/triton_3_6_0/E=128,N=384,device_name=NVIDIA_H200.json. "
    "Fallback to triton version 3.4.0 and use MoE kernel config from /srv/cfg/triton_3_4_0/"
    "E=128,N=384,device_name=NVIDIA_H200.json. Performance might be sub-optimal!\n";

} // namespace

class TestNewUser : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        // No GPU on this "host": the probe finds no nvidia-smi (whatever this machine has).
        qputenv("MOETUNE_NVIDIA_SMI", m_home.filePath(u"no-nvidia-smi"_s).toUtf8());
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QDir().mkpath(m_home.path() + u"/.ssh"_s);
    }
    void cleanupTestCase() { QSettings().clear(); }

    void startOffAfterCheckGpusSaysNo() {
        HostRegistry registry;
        registry.setLocalHome(m_home.path());
        registry.setAgentPath(QStringLiteral(MOETUNE_AGENT_PYZ));
        TunePage page(&registry);
        page.show();
        const Diagnosis d = Diagnoser().diagnoseText(fallbackLog);
        QCOMPARE(d.targets.size(), 1);
        page.tuneTarget(HostRegistry::localAlias(), d.targets.first(), d);
        named<QLineEdit>(&page, u"batchSizesEdit"_s)->setText(u"1"_s);
        auto *start = named<QPushButton>(&page, u"startButton"_s);
        QVERIFY(start->isEnabled());
        QTest::mouseClick(named<QPushButton>(&page, u"preflightButton"_s), Qt::LeftButton);
        auto *preflight = named<QPlainTextEdit>(&page, u"preflightText"_s);
        QTRY_VERIFY_WITH_TIMEOUT(!preflight->toPlainText().isEmpty(), 120000);
        QVERIFY2(preflight->toPlainText().contains(u"only the synthetic backend can run here"_s),
                 qPrintable(preflight->toPlainText()));
        QVERIFY2(!start->isEnabled(), "Start tuning stayed enabled after Check GPUs said no");
        // The synthetic backend can run here: Start is on again for that job.
        auto *backend = named<QComboBox>(&page, u"backendCombo"_s);
        backend->setCurrentIndex(backend->findData(u"synthetic"_s));
        QVERIFY(start->isEnabled());
        backend->setCurrentIndex(backend->findData(u"auto"_s));
        QVERIFY(!start->isEnabled());
    }

    void agentWordsBecomeGuiSentences_data() {
        QTest::addColumn<QString>("agent");
        QTest::addColumn<QString>("gui");
        QTest::newRow("no GPU backend")
            << u"no GPU backend here: sglang is not importable and torch+triton are missing; run with the "
               u"server's Python (--python / spec 'python') or set \"backend\": \"synthetic\" for a "
               u"simulated "
               u"run"_s
            << u"Backend: synthetic"_s;
        QTest::newRow("bad python")
            << u"spec 'python': /opt/venv/bin/python is not an executable interpreter"_s
            << u"Hosts page (Edit...)"_s;
        QTest::newRow("simulated refusal")
            << u"x.json holds simulated results (synthetic backend): refusing to install numbers that were "
               u"never measured on a GPU (only a test fixture's fake server tree, marked by a "
               u".moetune-test-double file at its top, accepts them)"_s
            << u"only the practice server"_s;
    }
    void agentWordsBecomeGuiSentences() {
        QFETCH(QString, agent);
        QFETCH(QString, gui);
        const QString s = agentSentenceForGui(agent, u"gpu-7"_s);
        QVERIFY2(s.contains(gui), qPrintable(s));
        for (const QString &cli :
             {u"--python"_s, u"spec 'python'"_s, u"\"backend\""_s, u"test fixture"_s, u"install-config"_s})
            QVERIFY2(!s.contains(cli), qPrintable(s));
    }

    void runErrorInGuiWords() {
        // Start with backend auto where no GPU backend exists: the run fails with the agent's sentence,
        // which the page shows in its own words.
        HostRegistry registry;
        registry.setLocalHome(m_home.path());
        registry.setAgentPath(QStringLiteral(MOETUNE_AGENT_PYZ));
        TunePage page(&registry);
        page.show();
        const Diagnosis d = Diagnoser().diagnoseText(fallbackLog);
        page.tuneTarget(HostRegistry::localAlias(), d.targets.first(), d);
        named<QLineEdit>(&page, u"batchSizesEdit"_s)->setText(u"1"_s);
        auto *label = named<QLabel>(&page, u"runLabel"_s);
        QTest::mouseClick(named<QPushButton>(&page, u"startButton"_s), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(label->text().contains(u"Backend: synthetic"_s), 180000);
        QVERIFY2(!label->text().contains(u"--python"_s) && !label->text().contains(u"spec 'python'"_s),
                 qPrintable(label->text()));
    }

    void modelList_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("fileExperts");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("topk");
        QTest::newRow("Qwen3-30B-A3B, a variant")
            << u"Qwen/Qwen3-30B-A3B-Instruct-2507"_s << 128 << 2048 << 8;
        QTest::newRow("Qwen3-235B-A22B") << u"/models/Qwen3-235B-A22B-FP8/"_s << 128 << 4096 << 8;
        QTest::newRow("longest name wins") << u"zai-org/GLM-4.5-Air-FP8"_s << 128 << 4096 << 8;
        QTest::newRow("GLM-4.5") << u"zai-org/GLM-4.5"_s << 160 << 5120 << 8;
        QTest::newRow("fused shared expert") << u"deepseek-ai/DeepSeek-R1-0528"_s << 257 << 7168 << 8;
        QTest::newRow("Mixtral") << u"mistralai/Mixtral-8x7B-Instruct-v0.1"_s << 8 << 4096 << 2;
        QTest::newRow("other experts: not this model") << u"Qwen/Qwen3-30B-A3B"_s << 64 << 0 << 0;
        QTest::newRow("unknown") << u"my-own-moe"_s << 128 << 0 << 0;
    }
    void modelList() {
        QFETCH(QString, model);
        QFETCH(int, fileExperts);
        QFETCH(int, k);
        QFETCH(int, topk);
        QStringList errors;
        const MoeModelCatalog c = MoeModelCatalog::load(&errors);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
        const auto m = c.findForShape(model, fileExperts);
        QCOMPARE(m ? m->hiddenSize : 0, k);
        QCOMPARE(m ? m->topk : 0, topk);
    }

    void modelListExtendedByTheUser() {
        // A file in the user's folder adds models and wins over the bundled list.
        QDir().mkpath(MoeModelCatalog::userFolder());
        QFile f(MoeModelCatalog::userFolder() + u"/mine.json"_s);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "moetune-moe-models", "version": 1, "models": [
            {"names": ["my-own-moe"], "hidden_size": 1024, "experts": 32, "top_k": 4},
            {"names": ["Qwen3-30B-A3B"], "hidden_size": 4242, "experts": 128, "top_k": 6}]})");
        f.close();
        const MoeModelCatalog c = MoeModelCatalog::load();
        QFile::remove(f.fileName());
        QCOMPARE(c.findForShape(u"my-own-moe-v2"_s, 32)->hiddenSize, 1024);
        QCOMPARE(c.findForShape(u"Qwen/Qwen3-30B-A3B"_s, 128)->hiddenSize, 4242);
    }

    void tuneThisFillsKFromTheLog() {
        // The demo log names its model (Qwen3-30B-A3B): Tune this fills K and top-k without a probe.
        HostRegistry registry;
        registry.setLocalHome(m_home.path());
        TunePage page(&registry);
        ensureCoreResources();
        QFile demo(demoLogPath());
        QVERIFY(demo.open(QIODevice::ReadOnly));
        const Diagnosis d = Diagnoser().diagnoseText(demo.readAll());
        QCOMPARE(d.targets.size(), 1);
        QCOMPARE(d.starts.constLast().model, u"Qwen/Qwen3-30B-A3B"_s);
        page.tuneTarget(QString(), d.targets.first(), d);
        QCOMPARE(named<QSpinBox>(&page, u"kSpin"_s)->value(), 2048);
        QCOMPARE(named<QSpinBox>(&page, u"topkSpin"_s)->value(), 8);
        QVERIFY(named<QLabel>(&page, u"sourceLabel"_s)->text().contains(u"list of common MoE models"_s));
        QCOMPARE(page.validation(), QString());
    }

    void hostDialogLogBrowseAndSteadyLayout() {
        HostConfig local;
        local.alias = HostRegistry::localAlias();
        local.local = true;
        HostDialog forLocal(HostDialog::Mode::EditSettingsOnly, local, {});
        forLocal.show();
        QVERIFY(named<QPushButton>(&forLocal, u"logBrowseButton"_s)->isVisible());
        HostConfig remote;
        remote.alias = u"gpu-7"_s;
        HostDialog dialog(HostDialog::Mode::EditApp, remote, {});
        dialog.show();
        QVERIFY(!named<QPushButton>(&dialog, u"logBrowseButton"_s)->isVisible()); // the file is there
        auto *alias = named<QLineEdit>(&dialog, u"aliasEdit"_s);
        auto *buttons = named<QDialogButtonBox>(&dialog, u"buttons"_s);
        QTRY_VERIFY(dialog.isVisible());
        const QSize size = dialog.size();
        const QPoint field = named<QLineEdit>(&dialog, u"pythonEdit"_s)->mapTo(&dialog, QPoint());
        const QPoint ok = buttons->mapTo(&dialog, QPoint());
        alias->setText(u"has space"_s); // a sentence appears
        QApplication::processEvents();
        dialog.layout()->activate();
        QVERIFY(!dialog.validationError().isEmpty());
        QCOMPARE(dialog.size(), size);
        QCOMPARE(named<QLineEdit>(&dialog, u"pythonEdit"_s)->mapTo(&dialog, QPoint()), field);
        QCOMPARE(buttons->mapTo(&dialog, QPoint()), ok);
        alias->setText(u"gpu-8"_s); // and goes
        QApplication::processEvents();
        dialog.layout()->activate();
        QCOMPARE(dialog.size(), size);
        QCOMPARE(buttons->mapTo(&dialog, QPoint()), ok);
    }

    void unusableProfileCannotBeSaved() {
        ServerProfile p;
        p.kind = ServerProfile::Kind::Command;
        p.logFile = u"/srv/sglang.log"_s;
        ServerProfileDialog dialog(u"gpu-7"_s, p, std::nullopt);
        dialog.show();
        auto *save = named<QDialogButtonBox>(&dialog, u"buttonBox"_s)->button(QDialogButtonBox::Save);
        QVERIFY(save);
        QVERIFY(!dialog.problem().isEmpty());
        QVERIFY2(!save->isEnabled(), qPrintable(dialog.problem()));
        p.stopCommand = u"kill -TERM \"$(cat /srv/sglang.pid)\""_s;
        p.startCommand = u"cd /srv && nohup python3 -m sglang.launch_server >> /srv/sglang.log 2>&1 &"_s;
        p.readyLine = u"ready to roll"_s;
        dialog.setProfile(p);
        QCOMPARE(dialog.problem(), QString());
        QVERIFY(save->isEnabled());
    }
};

QTEST_MAIN(TestNewUser)
#include "tst_newuser.moc"
