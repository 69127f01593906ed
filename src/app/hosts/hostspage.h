#pragma once

#include "core/tuning/hostprobe.h"
#include "remote/hostconfig.h"
#include "remote/sshoptions.h"
#include "remote/transport.h"

#include <QHash>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <memory>

class QLabel;
class QProgressBar;
class QPushButton;
class QSettings;
class QSpinBox;
class QTreeView;

namespace moetune {

class Banner;
class DiagnosePage;
class HostSession;
class HostListModel;
class HostOverview;
class HostStore;

// The Hosts page: the hosts of ~/.ssh/config and the app's own (plus "Local machine"), connect to any
// number of them at once, probe one into an overview, and "Diagnose host": fetch its server log into the
// Diagnose page with the host's facts merged into the findings. Nothing here waits on a host.
class HostsPage : public QWidget {
    Q_OBJECT
public:
    static constexpr int defaultFetchMiB = 16;
    // Followed lines reach the Diagnose page at most this often, so it re-diagnoses between batches.
    static constexpr int followFlushMs = 1000;

    explicit HostsPage(DiagnosePage *diagnosePage, QWidget *parent = nullptr);
    ~HostsPage() override;

    // Where hosts come from and how connections are made (tests point these at temporary files).
    // settings: the app's settings (nullptr = QSettings()); sshConfig: ~/.ssh/config by default.
    void setSources(QSettings *settings, const QString &sshConfigPath);
    void setSshTemplate(const SshOptions &options); // known_hosts, ssh dir, agent use
    void setLocalHome(const QString &home);         // "~" of the Local machine entry ("" = real home)
    void setAgentPath(const QString &path);         // the moetune-agent.pyz to deploy
    QString agentPath() const { return m_agentPath; }
    void reload();

    HostListModel *hostModel() const { return m_model; }
    QTreeView *hostView() const { return m_view; }
    HostOverview *overview() const { return m_overview; }
    QProgressBar *progressBar() const { return m_progress; }
    QSpinBox *fetchSizeSpin() const { return m_fetchMiB; }
    QPushButton *cancelButton() const { return m_cancel; }
    QPushButton *followButton() const { return m_follow; }
    HostSession *connection(const QString &alias) const;
    QString currentAlias() const;
    bool selectHost(const QString &alias);
    QString bannerText() const;

    // The actions of the buttons, on the selected host.
    void addHost();  // opens the dialog
    void editHost(); // opens the dialog
    bool removeHost();
    void connectHost();
    void disconnectHost();
    void probeHost();
    void diagnoseHost();
    void setFollowing(bool follow);
    void cancelFetch();

    // Saves without a dialog (also used by the dialogs).
    void saveHost(const HostConfig &host, const QString &previousAlias = {});

signals:
    // The fetched log was opened in the Diagnose page: the window shows that page.
    void diagnosisOpened();

private:
    HostSession *ensureConnection(const QString &alias);
    std::optional<HostConfig> hostConfig(const QString &alias) const;
    HostConfig localHost() const;
    void onSelectionChanged();
    void updateActions();
    void showHostMessage(const QString &alias, int kind, const QString &text);
    void showCurrentMessage();
    void onStateChanged(const QString &alias, Transport::State state, const QString &message);
    void onHostKeyUnknown(const QString &alias, const QString &keyType, const QString &fingerprint);
    void onSecretRequested(const QString &alias, int kind, const QStringList &prompts,
                           const QString &instruction);
    void onProbed(const QString &alias, const HostProbe &probe);
    void onLogFetched(const QString &alias, const QString &path, const HostProbe &probe);
    QString fetchFilePath(const QString &alias) const;
    QString labelFor(const QString &alias) const;

    struct Message {
        int kind = 0; // Banner::Kind
        QString text;
    };

    QPointer<DiagnosePage> m_diagnose;
    QSettings *m_settings = nullptr;
    std::unique_ptr<QSettings> m_ownSettings;
    std::unique_ptr<HostStore> m_store;
    QString m_sshConfigPath;
    SshOptions m_sshTemplate;
    QString m_localHome;
    QString m_agentPath;
    QHash<QString, HostSession *> m_connections;
    QHash<QString, Message> m_messages;
    QString m_following; // alias whose log streams into the Diagnose page
    QStringList m_followBuffer;
    QTimer m_followFlush;
    QString m_fetching; // alias whose log is being fetched for the Diagnose page

    HostListModel *m_model;
    QTreeView *m_view = nullptr;
    HostOverview *m_overview = nullptr;
    Banner *m_banner = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_subtitle = nullptr;
    QPushButton *m_add = nullptr;
    QPushButton *m_edit = nullptr;
    QPushButton *m_remove = nullptr;
    QPushButton *m_connect = nullptr;
    QPushButton *m_disconnect = nullptr;
    QPushButton *m_probe = nullptr;
    QPushButton *m_diagnoseButton = nullptr;
    QPushButton *m_follow = nullptr;
    QSpinBox *m_fetchMiB = nullptr;
    QProgressBar *m_progress = nullptr;
    QPushButton *m_cancel = nullptr;
    QLabel *m_progressLabel = nullptr;
};

} // namespace moetune
