// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "core/job/tunespec.h"
#include "remote/hosts/hostconfig.h"
#include "remote/transport/transport.h"

#include <QHash>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class QPushButton;

namespace Ui {
class HostsPage;
}

namespace moetune {

class HostSession;
class HostListModel;
class HostRegistry;

// The Hosts page: the hosts of ~/.ssh/config and the app's own (plus "Local machine"), connect to any
// number of them at once, probe one into an overview, and "Diagnose host": fetch its server log for the
// Diagnose page with the host's facts. It knows no other page: what leaves it are signals that
// MainWindow connects. Nothing here waits on a host.
class HostsPage : public QWidget {
    Q_OBJECT
public:
    static constexpr int defaultFetchMiB = 16;
    // Followed lines leave the page at most this often, so the Diagnose page re-diagnoses between batches.
    static constexpr int followFlushMs = 1000;

    explicit HostsPage(HostRegistry *registry, QWidget *parent = nullptr);
    ~HostsPage() override;

    HostRegistry *registry() const { return m_registry; }
    QString currentAlias() const;
    bool selectHost(const QString &alias);
    // The hosts selected in the list (several with Ctrl / Shift), in the list's order.
    QStringList selectedAliases() const;
    // "Diagnose All": the selected hosts, to the Fleet view (fleetDiagnoseRequested).
    void diagnoseSelected();
    QString bannerText() const;

    // The actions of the buttons, on the selected host.
    void addHost(); // opens the dialog
    // The practice server (sandbox, remote/practiceserver.h): created (again) and started, then selected.
    bool addPracticeServer();
    void editHost();   // opens the dialog
    void removeHost(); // asks first
    bool removeHostNow();
    void connectHost();
    void disconnectHost();
    void probeHost();
    // "Diagnose host": the session's diagnoseHost flow (fetch + fresh probe + diagnosis with the probe
    // merged, as `moetune-cli diagnose --host`), with the rules the Diagnose page uses (setDiagnoser).
    void diagnoseHost();
    void setDiagnoser(std::function<Diagnoser()> diagnoser) { m_diagnoser = std::move(diagnoser); }
    // While logFetched() is emitted: the host diagnosis of that log (nullopt for a plain fetch).
    const std::optional<Diagnosis> &fetchedDiagnosis() const { return m_fetchedDiagnosis; }
    void setFollowing(bool follow);
    void stopFollowing();
    QString followingAlias() const { return m_following; }
    void cancelFetch();
    // "Tune the served model": the job the probe implies, for the Tune page (a sentence when none).
    void tuneServedModel();
    // The server profile dialog of the selected host, prefilled from the probe's suggestion.
    void editServerProfile();
    // The server every flow of the host acts on (the Server choice): "port N" or "pid N", kept in the
    // host's server profile.
    void chooseServer(const QString &alias, const QString &choice);

    // Saves without a dialog (also used by the dialogs).
    void saveHost(const HostConfig &host, const QString &previousAlias = {});

signals:
    // The log of a host was fetched to path (with the host's facts): MainWindow opens it for diagnosis.
    void logFetched(const QString &alias, const QString &path, const moetune::HostProbe &probe);
    // Follow Live: started (the registry's connection has the facts known so far), new lines (batched),
    // stopped (error, or "" when asked to).
    void followStarted(const QString &alias);
    void followLines(const QString &alias, const QStringList &lines);
    void followStopped(const QString &alias, const QString &error);
    // A host was probed: pages that show its log can merge the facts.
    void hostProbed(const QString &alias, const moetune::HostProbe &probe);
    // "Tune the served model" on a probed host: MainWindow opens the Tune page with this job.
    void tuneSpecRequested(const QString &alias, const moetune::TuneSpec &spec);
    // "Diagnose All" on several selected hosts: MainWindow opens the Fleet view, which diagnoses them.
    void fleetDiagnoseRequested(const QStringList &aliases);

private:
    void wireConnection(const QString &alias, HostSession *c);
    void onHostsChanged();
    void onSelectionChanged();
    void updateActions();
    void showHostMessage(const QString &alias, int kind, const QString &text);
    void showCurrentMessage();
    void onStateChanged(const QString &alias, Transport::State state, const QString &message);
    void onHostKeyUnknown(const QString &alias, const QString &keyType, const QString &fingerprint);
    void onSecretRequested(const QString &alias, int kind, const QStringList &prompts,
                           const QString &instruction);
    void onProbed(const QString &alias, const HostProbe &probe);
    void onLogFetched(const QString &alias, const QString &path, const HostProbe &probe,
                      const std::optional<Diagnosis> &diagnosis = std::nullopt);
    QString fetchFilePath(const QString &alias) const;
    QString labelFor(const QString &alias) const;
    HostSession *connection(const QString &alias) const;
    void flushFollowed();

    struct Message {
        int kind = 0; // Banner::Kind
        QString text;
    };

    std::unique_ptr<Ui::HostsPage> m_ui;
    HostRegistry *m_registry;
    HostListModel *m_model;
    QHash<QString, Message> m_messages;
    QString m_following; // alias whose log streams out of this page
    QStringList m_followBuffer;
    QTimer m_followFlush;
    QString m_fetching;  // alias whose log is being fetched
    QString m_fetchFile; // where it goes
    std::function<Diagnoser()> m_diagnoser;
    std::optional<Diagnosis> m_fetchedDiagnosis;
    QPushButton *m_diagnoseAllButton = nullptr;
};

} // namespace moetune
