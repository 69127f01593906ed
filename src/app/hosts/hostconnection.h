#pragma once

#include "core/tuning/hostprobe.h"
#include "remote/hostconfig.h"
#include "remote/remotejob.h"
#include "remote/sshoptions.h"
#include "remote/sshtransport.h"
#include "remote/transport.h"

#include <QObject>
#include <QPointer>
#include <QStringList>

#include <optional>

namespace moetune {

class AgentClient;
class CredentialStore;

// One host as the Hosts page drives it: its transport (SSH, or this machine), the agent on it, the
// last probe and the log jobs. Everything is asynchronous; the page only reacts to the signals.
class HostConnection : public QObject {
    Q_OBJECT
public:
    // local: this machine through LocalTransport (localHome = its "~"), else SSH with sshTemplate's files.
    HostConnection(const HostConfig &host, bool local, const SshOptions &sshTemplate,
                   const QString &localHome, const QString &agentPath, QObject *parent = nullptr);
    ~HostConnection() override;

    const HostConfig &host() const { return m_host; }
    // Settings edited while connected take effect at the next command (the connection stays).
    void setHost(const HostConfig &host);
    bool isLocal() const { return m_local; }
    Transport *transport() const { return m_transport; }
    Transport::State state() const;
    QString stateMessage() const;

    void connectToHost();
    void disconnectFromHost();
    void answerHostKey(bool accept);
    void provideSecret(const QStringList &answers, bool remember);
    void cancelSecret();

    void probe();
    bool isProbing() const { return m_probeJob != 0; }
    const std::optional<HostProbe> &lastProbe() const { return m_probe; }

    // The last maxBytes of the log source into localFile; probes too when no probe is known yet, so
    // logFetched() always comes with the host's facts.
    bool fetchLog(qint64 maxBytes, const QString &localFile, QString *error);
    bool isFetching() const { return m_fetchJob != 0 || m_fetchPending; }
    void cancelFetch();

    bool startFollow(QString *error);
    void stopFollow();
    bool isFollowing() const { return m_followJob != 0; }

signals:
    void stateChanged(moetune::Transport::State state, const QString &message);
    void hostKeyUnknown(const QString &keyType, const QString &fingerprint);
    void secretRequested(moetune::SshTransport::SecretKind kind, const QStringList &prompts,
                         const QString &instruction);
    void probeStarted();
    void probed(const moetune::HostProbe &probe);
    void probeFailed(const QString &error);
    void fetchProgress(qint64 done, qint64 total);
    void logFetched(const QString &localFile, const moetune::HostProbe &probe);
    void fetchFailed(const QString &error);
    void followLines(const QStringList &lines);
    void followStopped(const QString &error);
    // The desktop keyring could not be used or refused a remembered secret; the connection goes on.
    void keyringProblem(const QString &message);

private:
    void createAgent();
    void refreshAgent();
    void onCommandFinished(JobId id, bool ok, const QString &error);
    void maybeFinishFetch();
    void onSecretRequested(SshTransport::SecretKind kind, const QStringList &prompts,
                           const QString &instruction);
    void onKeyringRead(const QString &key, bool found, const QString &secret, const QString &error);
    void onTransportState(Transport::State state);

    HostConfig m_host;
    bool m_local;
    QPointer<Transport> m_transport;
    AgentClient *m_agent = nullptr;
    QString m_agentPath;
    bool m_agentDirty = false;
    std::optional<HostProbe> m_probe;
    JobId m_probeJob = 0;
    JobId m_fetchJob = 0;
    JobId m_followJob = 0;
    bool m_fetchPending = false; // the log is here, the probe is not yet
    bool m_fetchWantsProbe = false;
    QString m_fetchFile;
    QString m_fetchError;

    // Keyring (qtkeychain builds): the secret asked now, the one given from the keyring (deleted when
    // refused) and the one to remember once authenticated.
    CredentialStore *m_keyring = nullptr;
    SshTransport::SecretKind m_askedKind = SshTransport::SecretKind::Password;
    QString m_askedKey;
    QStringList m_askedPrompts;
    QString m_askedInstruction;
    QString m_keyringKey;
    QString m_pendingKey;
    QString m_pendingSecret;
    bool m_skipKeyring = false;
};

} // namespace moetune
