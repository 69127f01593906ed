// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The Hosts page against a real OpenSSH sshd on 127.0.0.1 (tests/support's fixture): an unknown host
// key is asked in a dialog showing its SHA256 fingerprint and recorded only when accepted, a changed key
// is refused inline with the explanation, and probe + Diagnose host work over SSH. "Remember in the
// desktop keyring": with a real secret service (gnome-keyring under dbus-run-session, the ctest entry
// tst_hosts_ssh_keyring sets MOETUNE_TEST_SECRET_SERVICE) a remembered passphrase is used without a dialog
// and a refused one is deleted and asked; without one, an inline keyring error and the connection works.
#include "fakesglanghost.h"

#include "app/diagnose/diagnosepage.h"
#include "app/hosts/hostkeydialog.h"
#include "app/hosts/hostlistmodel.h"
#include "app/hosts/hostoverview.h"
#include "app/hosts/hostsecretdialog.h"
#include "app/hosts/hostspage.h"
#include "app/mainwindow.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/hostregistry.h"
#include "remote/flows/hostsession.h"
#ifdef MOETUNE_HAVE_KEYCHAIN
#include "remote/hosts/credentialstore.h"
#endif
#include "sshdfixture.h"
#include "waitforchild.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

class TestHostsSsh : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;
    test::SshdFixture m_sshd;
    std::unique_ptr<test::FakeSglangHost> m_host;
    std::unique_ptr<QSettings> m_settings;
    const QString m_alias = u"sshd-test"_s;

    // A main window (it wires the Hosts page to the Diagnose page) on this test's settings and sshd.
    std::unique_ptr<MainWindow> makeWindow() {
        auto window = std::make_unique<MainWindow>();
        HostRegistry *registry = window->hostRegistry();
        registry->setSources(m_settings.get(), m_home.path() + u"/no-ssh-config"_s);
        registry->setSshTemplate(m_sshd.options());
        HostsPage *page = hostsOf(window.get());
        HostConfig h;
        h.alias = m_alias;
        h.hostName = u"127.0.0.1"_s;
        h.port = m_sshd.port();
        h.user = m_sshd.userName();
        h.logSource = {LogSource::Kind::File, m_host->logPath()};
        page->saveHost(h);
        return window;
    }

    static HostsPage *hostsOf(MainWindow *window) { return window->findChild<HostsPage *>(); }
    static DiagnosePage *diagnoseOf(MainWindow *window) { return window->findChild<DiagnosePage *>(); }
    static HostListModel *hostModel(HostsPage *page) {
        return page->findChild<HostListModel *>(u"hostListModel"_s);
    }
    static HostOverview *overview(HostsPage *page) {
        return page->findChild<HostOverview *>(u"hostOverview"_s);
    }

    // The page set up to log in only with the encrypted key, connecting.
    std::unique_ptr<MainWindow> makePassphraseWindow() {
        auto window = makeWindow();
        HostsPage *page = hostsOf(window.get());
        window->hostRegistry()->setSshTemplate(m_sshd.options(false));
        HostConfig h = hostModel(page)->entry(m_alias)->host;
        h.identityFiles = {m_sshd.encryptedUserKey()};
        page->saveHost(h);
        page->selectHost(m_alias);
        page->connectHost();
        return window;
    }

#ifdef MOETUNE_HAVE_KEYCHAIN
    // What the keyring holds for the encrypted key's passphrase (empty: nothing).
    QString keyringPassphrase(HostsPage *page) {
        CredentialStore store;
        QSignalSpy read(&store, &CredentialStore::readFinished);
        store.read(CredentialStore::keyFor(hostModel(page)->entry(m_alias)->host, u"passphrase"_s));
        if (!read.wait(10000))
            return u"(no answer)"_s;
        return read.first().at(2).toString();
    }
#endif

    int state(HostsPage *page) const {
        return hostModel(page)
            ->index(hostModel(page)->rowOf(m_alias), 0)
            .data(HostListModel::StateRole)
            .toInt();
    }

private slots:
    void initTestCase() {
        QVERIFY(m_home.isValid());
        qputenv("HOME", m_home.path().toUtf8());
        qunsetenv("SSH_AUTH_SOCK");
        // Never the developer's own keyring: either the test's secret service or a bus that is not there.
        if (!qEnvironmentVariableIsSet("MOETUNE_TEST_SECRET_SERVICE"))
            qputenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=" + QFile::encodeName(m_home.path()) + "/no-bus");
        QStandardPaths::setTestModeEnabled(true);
        m_settings = std::make_unique<QSettings>(m_home.path() + u"/settings.ini"_s, QSettings::IniFormat);
        m_host = std::make_unique<test::FakeSglangHost>();
        QString error;
        QVERIFY2(m_host->create(&error), qPrintable(error));
        QVERIFY2(!AgentClient::defaultLocalAgentPath().isEmpty(), "moetune-agent.pyz not found");
        if (!m_sshd.start(&error))
            QFAIL(qPrintable(u"sshd fixture: "_s + error));
    }

    void unknownKeyRejectedRecordsNothing() {
        auto window = makeWindow();
        HostsPage *page = hostsOf(window.get());
        QVERIFY(page->selectHost(m_alias));
        page->connectHost();
        HostKeyDialog *dialog = test::waitForChild<HostKeyDialog>(page);
        QVERIFY(dialog);
        QVERIFY2(dialog->findChild<QLabel *>(u"hostKeyText"_s)->text().contains(m_sshd.hostKeyFingerprint()),
                 qPrintable(dialog->findChild<QLabel *>(u"hostKeyText"_s)->text()));
        dialog->findChild<QPushButton *>(u"rejectButton"_s)->click();
        QTRY_VERIFY_WITH_TIMEOUT(state(page) == int(Transport::State::Failed) ||
                                     state(page) == int(Transport::State::Disconnected),
                                 20000);
        QVERIFY2(page->bannerText().contains(u"not accepted"_s) || page->bannerText().contains(u"key"_s),
                 qPrintable(page->bannerText()));
        QFile kh(m_sshd.knownHostsFile());
        QVERIFY(!kh.exists() || kh.size() == 0);
    }

    void acceptKeyProbeAndDiagnose() {
        auto window = makeWindow();
        HostsPage *page = hostsOf(window.get());
        DiagnosePage &diagnose = *diagnoseOf(window.get());
        QAbstractItemModelTester tester(hostModel(page),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(page->selectHost(m_alias));
        page->connectHost();
        HostKeyDialog *dialog = test::waitForChild<HostKeyDialog>(page);
        QVERIFY(dialog);
        QVERIFY2(dialog->findChild<QLabel *>(u"hostKeyText"_s)->text().contains(m_sshd.hostKeyFingerprint()),
                 qPrintable(dialog->findChild<QLabel *>(u"hostKeyText"_s)->text()));
        dialog->findChild<QPushButton *>(u"acceptButton"_s)->click();
        QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Connected), 20000);
        QFile kh(m_sshd.knownHostsFile());
        QVERIFY(kh.open(QIODevice::ReadOnly));
        QVERIFY(kh.readAll().contains("127.0.0.1"));

        // Several hosts at once, one transport each: this machine connects beside the SSH host.
        QVERIFY(page->selectHost(HostListModel::localAlias()));
        page->connectHost();
        const int localRow = hostModel(page)->rowOf(HostListModel::localAlias());
        QTRY_COMPARE(hostModel(page)->index(localRow, 0).data(HostListModel::StateRole).toInt(),
                     int(Transport::State::Connected));
        QCOMPARE(state(page), int(Transport::State::Connected));
        QVERIFY(window->hostRegistry()->connection(m_alias)->transport() !=
                window->hostRegistry()->connection(HostListModel::localAlias())->transport());
        QVERIFY(page->selectHost(m_alias));

        page->probeHost();
        QTRY_VERIFY_WITH_TIMEOUT(overview(page)->hasProbe() || page->bannerText().contains(u"failed"_s),
                                 60000);
        QVERIFY2(overview(page)->hasProbe(), qPrintable(page->bannerText()));
        QVERIFY(!overview(page)->field(u"python"_s).isEmpty());

        QSignalSpy opened(page, &HostsPage::logFetched);
        page->diagnoseHost();
        QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!diagnose.isBusy(), 30000);
        bool fallback = false;
        for (const Finding &f : diagnose.diagnosis().findings)
            fallback = fallback || f.rule == u"moe-fallback"_s;
        QVERIFY2(fallback, qPrintable(diagnose.diagnosis().toMarkdown()));
        QCOMPARE(diagnose.hostLabel(), m_alias);
        page->disconnectHost();
        QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Disconnected), 20000);
    }

    void passphraseAskedInDialog_data() {
        QTest::addColumn<QString>("passphrase");
        QTest::addColumn<bool>("connects");
        QTest::newRow("right passphrase") << u"correct horse"_s << true;
        QTest::newRow("dialog cancelled") << QString() << false;
    }

    void passphraseAskedInDialog() {
        QFETCH(QString, passphrase);
        QFETCH(bool, connects);
        QString error;
        QVERIFY2(m_sshd.trustHostKey(&error), qPrintable(error));
        auto window = makeWindow();
        HostsPage *page = hostsOf(window.get());
        // No default key and no agent: only the configured, encrypted key can log in.
        window->hostRegistry()->setSshTemplate(m_sshd.options(false));
        HostConfig h = hostModel(page)->entry(m_alias)->host;
        h.identityFiles = {m_sshd.encryptedUserKey()};
        page->saveHost(h);
        QVERIFY(page->selectHost(m_alias));
        page->connectHost();
        HostSecretDialog *dialog = nullptr;
        QVERIFY((dialog = test::waitForChild<HostSecretDialog>(page, 20000)) != nullptr);
        QCOMPARE(dialog->findChildren<QLineEdit *>().size(), 1);
        QCOMPARE(dialog->findChild<QLineEdit *>(u"secretField0"_s)->echoMode(), QLineEdit::Password);
#ifdef MOETUNE_HAVE_KEYCHAIN
        QVERIFY(dialog->findChild<QCheckBox *>(u"rememberBox"_s));
#else
        QVERIFY(!dialog->findChild<QCheckBox *>(u"rememberBox"_s));
#endif
        if (connects) {
            dialog->findChild<QLineEdit *>(u"secretField0"_s)->setText(passphrase);
            dialog->accept();
            QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Connected), 20000);
        } else {
            dialog->reject();
            QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Failed), 20000);
            QVERIFY2(page->bannerText().contains(u"cancelled"_s), qPrintable(page->bannerText()));
        }
        page->disconnectHost();
    }

    void rememberInKeyring() {
#ifndef MOETUNE_HAVE_KEYCHAIN
        QSKIP("built without QtKeychain: there is no Remember checkbox");
#else
        const bool service = qEnvironmentVariableIsSet("MOETUNE_TEST_SECRET_SERVICE");
        QString error;
        QVERIFY2(m_sshd.trustHostKey(&error), qPrintable(error));
        {
            auto window = makePassphraseWindow();
            HostsPage *page = hostsOf(window.get());
            HostSecretDialog *dialog = nullptr;
            QVERIFY((dialog = test::waitForChild<HostSecretDialog>(page, 20000)) != nullptr);
            QVERIFY(dialog->findChild<QCheckBox *>(u"rememberBox"_s));
            dialog->findChild<QCheckBox *>(u"rememberBox"_s)->setChecked(true);
            dialog->findChild<QLineEdit *>(u"secretField0"_s)->setText(u"correct horse"_s);
            dialog->accept();
            QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Connected), 20000);
            if (service) {
                QTRY_COMPARE_WITH_TIMEOUT(keyringPassphrase(page), u"correct horse"_s, 20000);
            } else {
                // No secret service: said in the page, and the connection is kept for this session.
                QTRY_VERIFY_WITH_TIMEOUT(page->bannerText().contains(u"Could not use the desktop keyring"_s),
                                         20000);
                QVERIFY2(page->bannerText().contains(u"this session only"_s), qPrintable(page->bannerText()));
                QCOMPARE(state(page), int(Transport::State::Connected));
            }
            page->disconnectHost();
            QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Disconnected), 20000);
        }
        if (!service)
            return;
        {
            // A new page (a new session, nothing in memory): the keyring answers, no dialog.
            auto window = makePassphraseWindow();
            HostsPage *page = hostsOf(window.get());
            QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Connected), 20000);
            QVERIFY(!page->findChild<HostSecretDialog *>());
            page->disconnectHost();
            QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Disconnected), 20000);
        }
        {
            // A remembered passphrase that no longer works is deleted and asked for.
            auto window = makeWindow();
            HostsPage *page = hostsOf(window.get());
            CredentialStore store;
            QSignalSpy written(&store, &CredentialStore::writeFinished);
            HostConfig h = hostModel(page)->entry(m_alias)->host;
            store.write(CredentialStore::keyFor(h, u"passphrase"_s), u"stale"_s);
            QVERIFY(written.wait(10000));
            QCOMPARE(written.first().at(1).toString(), QString());
            window.reset();
            window = makePassphraseWindow();
            page = hostsOf(window.get());
            HostSecretDialog *dialog = nullptr;
            QVERIFY((dialog = test::waitForChild<HostSecretDialog>(page, 30000)) != nullptr);
            QTRY_COMPARE_WITH_TIMEOUT(keyringPassphrase(page), QString(), 20000);
            dialog->findChild<QLineEdit *>(u"secretField0"_s)->setText(u"correct horse"_s);
            dialog->accept();
            QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Connected), 20000);
            page->disconnectHost();
        }
#endif
    }

    // Issue 12 point 9: Connect goes to the HostName typed in the dialog, also after an edit of a host
    // that was already tried under another HostName.
    void editedHostNameIsWhatConnects() {
        QString error;
        QVERIFY2(m_sshd.trustHostKey(&error), qPrintable(error));
        auto window = makeWindow();
        HostsPage *page = hostsOf(window.get());
        HostConfig h = hostModel(page)->entry(m_alias)->host;
        h.hostName = u"no-such-host.invalid"_s;
        page->saveHost(h);
        QVERIFY(page->selectHost(m_alias));
        page->connectHost();
        QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Failed), 30000);
        QVERIFY2(page->bannerText().contains(u"no-such-host.invalid"_s), qPrintable(page->bannerText()));
        h.hostName = u"127.0.0.1"_s;
        page->saveHost(h);
        QVERIFY2(page->bannerText().isEmpty() || !page->bannerText().contains(u"no-such-host"_s),
                 qPrintable(page->bannerText())); // the failure of the old HostName is gone with it
        QVERIFY(page->selectHost(m_alias));
        page->connectHost();
        QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Connected), 20000);
        page->disconnectHost();
        QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Disconnected), 20000);
    }

    void changedKeyRefusedInline() {
        QString error;
        QVERIFY2(m_sshd.restartWithNewHostKey(&error), qPrintable(error));
        auto window = makeWindow();
        HostsPage *page = hostsOf(window.get());
        QVERIFY(page->selectHost(m_alias));
        page->connectHost();
        QTRY_COMPARE_WITH_TIMEOUT(state(page), int(Transport::State::Failed), 20000);
        // Refused with the explanation in the page itself; no dialog offers to accept the new key.
        QVERIFY2(page->bannerText().contains(u"changed"_s), qPrintable(page->bannerText()));
        QVERIFY(!page->findChild<HostKeyDialog *>());
    }
};

QTEST_MAIN(TestHostsSsh)
#include "tst_hosts_ssh.moc"
